//! Users at scale: roles into tokens, the user lifecycle (disable, enable, delete).

use serde_json::json;

use crate::oidc_support::*;
use crate::support::*;

#[test]
fn roles_flow_into_tokens_that_jose_verifies() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    d.cli(&["role", "create", "--tenant", "acme", "admin", "--description", "Administrators"]).ok();
    d.cli(&["role", "create", "--tenant", "acme", "team:billing"]).ok();
    let before = d.snapshot();
    for (args, code) in [
        (vec!["role", "create", "--tenant", "acme", "Admin"], "invalid_name"),
        (vec!["role", "create", "--tenant", "acme", "admin"], "role_exists"),
        (vec!["role", "assign", "--tenant", "acme", "nope", "ada@acme.test"], "unknown_role"),
        (
            vec!["user", "invite", "--tenant", "acme", "--email", "x@acme.test", "--name", "X", "--role", "ghost"],
            "unknown_role",
        ),
    ] {
        let r = d.cli(&args);
        assert_eq!(r.code, 1, "{args:?}");
        assert!(r.stderr.contains(code), "{args:?}: {}", r.stderr);
    }
    assert_eq!(d.snapshot(), before);

    // Invited with one role, given another later.
    let inv = d
        .cli(&[
            "user",
            "invite",
            "--tenant",
            "acme",
            "--email",
            "ada@acme.test",
            "--name",
            "Ada",
            "--role",
            "admin",
            "-o",
            "json",
        ])
        .ok()
        .json();
    let token = inv["invite_url"].as_str().unwrap().rsplit('/').next().unwrap().to_owned();
    let mut soft = crate::authenticator::Soft::new(&site.origin);
    assert_eq!(site.register(&mut soft, "ada@acme.test", Some(&token), None, &Default::default()).status, 201);
    // An unknown user anywhere in the list changes nobody.
    let r = d.cli(&["role", "assign", "--tenant", "acme", "team:billing", "ada@acme.test", "nobody@acme.test"]);
    assert!(r.stderr.contains("user_not_found"), "{}", r.stderr);
    let changed =
        d.cli(&["role", "assign", "--tenant", "acme", "team:billing", "ada@acme.test", "-o", "json"]).ok().json();
    assert_eq!(changed["changed"], json!(["ada@acme.test"]));
    let roles = d.cli(&["role", "list", "--tenant", "acme", "-o", "json"]).ok().json();
    assert_eq!(roles[0]["name"], "admin");
    assert_eq!(roles[0]["users"], 1);
    let users = d.cli(&["user", "list", "--tenant", "acme", "--role", "team:billing", "-o", "json"]).ok().json();
    assert_eq!(users[0]["email"], "ada@acme.test");
    assert_eq!(users[0]["roles"], json!(["admin", "team:billing"]));
    assert_eq!(users[0]["status"], "active");

    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let t = exchange(&site, &web, &code, &p).json();
    let (_, id) = jwt_parts(t["id_token"].as_str().unwrap());
    assert_eq!(id["roles"], json!(["admin", "team:billing"]));
    let v = node(
        "verify-jwt.mjs",
        &[
            &format!("{}/.well-known/jwks.json", site.base),
            t["access_token"].as_str().unwrap(),
            &site.base,
            &web.client_id,
        ],
    );
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["payload"]["roles"], json!(["admin", "team:billing"]));
    d.cli(&["role", "unassign", "--tenant", "acme", "admin", "ada@acme.test"]).ok();
    let info = userinfo(&site, t["access_token"].as_str().unwrap()).json();
    assert_eq!(info["roles"], json!(["team:billing"]), "userinfo shows current roles");
    d.cli(&["role", "delete", "--tenant", "acme", "team:billing", "--yes"]).ok();
    let info = userinfo(&site, t["access_token"].as_str().unwrap()).json();
    assert!(info.get("roles").is_none());
}

#[test]
fn a_disabled_user_is_signed_out_everywhere_at_once() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, cookie) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let t = exchange(&site, &web, &code, &p).json();
    let refresh = t["refresh_token"].as_str().unwrap();
    let access = t["access_token"].as_str().unwrap();

    let u = d.cli(&["user", "disable", "--tenant", "acme", "ada@acme.test", "-o", "json"]).ok().json();
    assert_eq!(u["status"], "disabled");
    let r = token(&site, &web, &[("grant_type", "refresh_token"), ("refresh_token", refresh)]);
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (400, "invalid_grant"));
    assert_eq!(site.api("GET", "/api/credentials", None, &cookie, None).status, 401, "session ended");
    assert_eq!(userinfo(&site, access).status, 401, "access token no longer accepted here");
    // Cannot sign in again: the options look like an unknown user's, and finish refuses.
    let options = site.auth_start(None);
    let assertion = soft.get(&options, &Default::default());
    let r = site.post("/auth/finish", &json!({"assertion": assertion, "challenge": options["challenge"]}), None);
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (403, "user_disabled"));
    let shown = d.cli(&["user", "show", "--tenant", "acme", "ada@acme.test", "-o", "json"]).ok().json();
    assert_eq!(shown["status"], "disabled");
    assert_eq!(shown["credentials"], 1);

    let u = d.cli(&["user", "enable", "--tenant", "acme", "ada@acme.test", "-o", "json"]).ok().json();
    assert_eq!(u["status"], "active");
    assert_eq!(site.sign_in(&mut soft, Some("ada@acme.test"), &Default::default()).status, 200);
    let r = token(&site, &web, &[("grant_type", "refresh_token"), ("refresh_token", refresh)]);
    assert_eq!(r.status, 400, "enabling does not bring revoked tokens back");

    let refused = d.cli(&["user", "delete", "--tenant", "acme", "ada@acme.test"]);
    assert_eq!(refused.code, 2);
    d.cli(&["user", "delete", "--tenant", "acme", "ada@acme.test", "--yes"]).ok();
    for table in ["users", "credentials", "sessions", "refresh_tokens", "authorization_codes"] {
        let n = d.sql().i64(&format!("SELECT count(*) FROM {table}"));
        assert_eq!(n, 0, "{table} emptied by the deletion");
    }
    let r = d.cli(&["user", "show", "--tenant", "acme", "ada@acme.test"]);
    assert!(r.stderr.contains("user_not_found"));
}
