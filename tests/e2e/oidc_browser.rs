//! An outside relying-party library (openid-client from npm) completes the whole OpenID Connect
//! flow against a running daemon, with headless Chromium signing in on the hosted login page.

use std::process::Command;

use crate::support::*;

#[test]
fn openid_client_signs_in_through_chromium() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let token = site.invite("ada@acme.test", "Ada Lovelace");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let redirect = format!("http://127.0.0.1:{port}/oidc-callback");
    let web = d
        .cli(&[
            "app",
            "create",
            "--tenant",
            "acme",
            "--name",
            "Portal",
            "--type",
            "web",
            "--redirect-uri",
            &redirect,
            "-o",
            "json",
        ])
        .ok()
        .json();
    let m2m = d
        .cli(&[
            "app",
            "create",
            "--tenant",
            "acme",
            "--name",
            "Importer",
            "--type",
            "m2m",
            "--scope",
            "users:invite",
            "-o",
            "json",
        ])
        .ok()
        .json();
    let out: Run = Command::new("node")
        .arg(repo_root().join("tests/js/oidc-rp.mjs"))
        .args([
            site.base.as_str(),
            web["client_id"].as_str().unwrap(),
            web["client_secret"].as_str().unwrap(),
            &port.to_string(),
            &format!("{}/invite/{token}", site.base),
            m2m["client_id"].as_str().unwrap(),
            m2m["client_secret"].as_str().unwrap(),
        ])
        .output()
        .expect("node")
        .into();
    let seen: serde_json::Value = serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("relying party output is not JSON ({e}): {}\n{}", out.stdout, out.stderr));
    assert_eq!(seen["ok"], true, "{seen:#}\n{}", out.stderr);
    assert_eq!(seen["issuer"], site.base.as_str());
    assert!(seen["loginCsp"].as_str().unwrap().contains("frame-ancestors 'none'"));
    assert_eq!(seen["loginHeading"], "Sign in");
    assert_eq!(seen["loginApp"], "Portal");
    assert_eq!(seen["callbackPath"], "/oidc-callback");
    let id = &seen["idToken"];
    assert_eq!(id["iss"], site.base.as_str());
    assert_eq!(id["aud"], web["client_id"]);
    assert_eq!(id["email"], "ada@acme.test");
    assert_eq!(id["email_verified"], true);
    assert_eq!(id["name"], "Ada Lovelace");
    assert!(id["picture"].is_string());
    assert_eq!(seen["idTokenSignature"], "RS256");
    assert_eq!(seen["userinfo"]["sub"], id["sub"]);
    assert_eq!(seen["userinfo"]["email"], "ada@acme.test");
    assert_eq!(seen["refreshed"]["rotated"], true);
    assert_eq!(seen["accessToken"]["sub"], id["sub"]);
    assert_eq!(seen["clientCredentials"]["sub"], m2m["client_id"]);
    assert_eq!(seen["clientCredentials"]["scope"], "users:invite");
}
