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
    assert_eq!(seen["loginHeading"], "Sign in to Portal");
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

#[test]
fn openid_client_drives_consent_prompts_logout_and_back_channel_logout() {
    // The certification plans' consent, prompt, claims and logout behaviour, as an outside
    // relying-party library sees it (tests/js/oidc-conformance-rp.mjs).
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let token = site.invite("ada@acme.test", "Ada Lovelace");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let rp = format!("http://127.0.0.1:{port}");
    let (redirect, signed_out, bcl) = (format!("{rp}/oidc-callback"), format!("{rp}/signed-out"), format!("{rp}/bcl"));
    let web = d
        .cli(&[
            "app",
            "create",
            "--tenant",
            "acme",
            "--name",
            "Partner",
            "--type",
            "web",
            "--redirect-uri",
            &redirect,
            "--post-logout-redirect-uri",
            &signed_out,
            "--consent",
            "explicit",
            "--backchannel-logout-uri",
            &bcl,
            "--backchannel-logout-session-required",
            "-o",
            "json",
        ])
        .ok()
        .json();
    let out: Run = Command::new("node")
        .arg(repo_root().join("tests/js/oidc-conformance-rp.mjs"))
        .args([
            site.base.as_str(),
            web["client_id"].as_str().unwrap(),
            web["client_secret"].as_str().unwrap(),
            &port.to_string(),
            &format!("{}/invite/{token}", site.base),
        ])
        .output()
        .expect("node")
        .into();
    let seen: serde_json::Value = serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("relying party output is not JSON ({e}): {}\n{}", out.stdout, out.stderr));
    assert_eq!(seen["ok"], true, "{seen:#}\n{}", out.stderr);
    let disco = &seen["discovery"];
    assert_eq!(
        (&disco["backchannel"], &disco["backchannelSession"], &disco["claimsParameter"]),
        (&true.into(), &true.into(), &true.into())
    );
    assert!(disco["prompts"].as_array().unwrap().iter().any(|p| p == "consent"), "{disco}");
    assert_eq!(seen["consent"]["heading"], "Allow Partner?");
    assert_eq!(seen["consent"]["scopes"], serde_json::json!(["openid", "profile"]));
    let id = &seen["idToken"];
    assert_eq!(id["email"], "ada@acme.test", "the essential claim beyond the scopes");
    assert_eq!(id["acr"], "phrh", "a virtual platform passkey is device-bound");
    assert!(id["sid"].is_string() && id["auth_time"].is_number(), "{id}");
    assert_eq!(seen["promptNone"]["sameSid"], true);
    assert_eq!(seen["denied"], "access_denied");
    assert_eq!(seen["signedOutState"], "bye-123");
    assert_eq!(seen["backchannelType"], "application/x-www-form-urlencoded");
    let lt = &seen["logoutToken"];
    assert_eq!((&lt["typ"], &lt["sub"], &lt["sid"]), (&"logout+jwt".into(), &id["sub"], &id["sid"]));
    assert_eq!((&lt["event"], &lt["nonce"]), (&true.into(), &false.into()));
    assert_eq!(seen["refreshAfterLogout"], "invalid_grant");
}
