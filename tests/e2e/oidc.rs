//! The OpenID Connect provider over real HTTP: the code flow with PKCE through the hosted login
//! page (signed in with the software authenticator), tokens and their claims, userinfo, refresh,
//! client credentials, logout, revocation, introspection.

use serde_json::json;

use crate::oidc_support::*;
use crate::support::*;

#[test]
fn code_flow_tokens_userinfo_refresh() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);

    let r = exchange(&site, &web, &code, &p);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let t = r.json();
    assert_eq!(t["token_type"], "Bearer");
    assert_eq!(t["expires_in"], 3600);
    assert_eq!(t["scope"], "openid profile email");

    let (h, id) = jwt_parts(t["id_token"].as_str().unwrap());
    assert_eq!(h["alg"], "RS256");
    let kid = d.cli(&["key", "list", "--tenant", "acme", "-o", "json"]).ok().json()[0]["kid"].clone();
    assert_eq!(h["kid"], kid);
    assert_eq!(id["iss"], site.base.as_str());
    assert_eq!(id["aud"], web.client_id.as_str());
    assert_eq!(id["nonce"], "n-456");
    assert_eq!(id["name"], "Test User");
    assert_eq!(id["email"], "ada@acme.test");
    assert_eq!(id["email_verified"], true);
    assert!(id["picture"].as_str().unwrap().starts_with(&format!("{}/avatars/", site.base)));
    assert_eq!(id["amr"], json!(["hwk", "user"]));
    assert!(id["auth_time"].as_i64().unwrap() <= id["iat"].as_i64().unwrap());
    assert!(id.get("roles").is_none(), "no roles, no claim");
    let sub = id["sub"].as_str().unwrap().to_owned();
    assert!(!sub.contains('@'), "sub is opaque");

    let (ah, at) = jwt_parts(t["access_token"].as_str().unwrap());
    assert_eq!(ah["typ"], "at+jwt");
    assert_eq!(at["sub"], sub.as_str());
    assert_eq!(at["aud"], web.client_id.as_str());
    assert_eq!(at["client_id"], web.client_id.as_str());
    assert_eq!(at["scope"], "openid profile email");
    assert!(at["jti"].is_string());
    assert_eq!(at["roles"], json!([]), "the access token always carries roles, empty here");

    let avatar = get(id["picture"].as_str().unwrap(), None);
    assert_eq!(avatar.status, 200);
    assert!(avatar.body.contains("<svg") && avatar.body.contains(">TU<"), "initials: {}", avatar.body);

    let info = userinfo(&site, t["access_token"].as_str().unwrap());
    assert_eq!(info.status, 200, "{}", info.body);
    let info = info.json();
    assert_eq!(info["sub"], sub.as_str());
    assert_eq!(info["email"], "ada@acme.test");
    assert_eq!(info["name"], "Test User");
    let post = send_raw(
        "POST",
        &format!("{}/userinfo", site.base),
        Some("application/x-www-form-urlencoded"),
        format!("access_token={}", t["access_token"].as_str().unwrap()).into_bytes(),
        &[],
    );
    assert_eq!(post.status, 200, "userinfo also answers POST");

    // Refresh rotates; the old refresh token then revokes the whole family.
    let old_refresh = t["refresh_token"].as_str().unwrap().to_owned();
    let r = token(&site, &web, &[("grant_type", "refresh_token"), ("refresh_token", &old_refresh)]);
    assert_eq!(r.status, 200, "{}", r.body);
    let t2 = r.json();
    let new_refresh = t2["refresh_token"].as_str().unwrap().to_owned();
    assert_ne!(new_refresh, old_refresh);
    let (_, id2) = jwt_parts(t2["id_token"].as_str().unwrap());
    assert_eq!(id2["sub"], sub.as_str());
    let r = token(&site, &web, &[("grant_type", "refresh_token"), ("refresh_token", &old_refresh)]);
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (400, "invalid_grant"));
    let r = token(&site, &web, &[("grant_type", "refresh_token"), ("refresh_token", &new_refresh)]);
    assert_eq!(r.status, 400, "reuse of a rotated token revoked the family: {}", r.body);
}

/// RFC 6749 §6: a refresh may ask for less than was granted, never more. A wider ask is
/// refused with `invalid_scope`, stores nothing and leaves the token usable; a narrower one is
/// granted as asked.
#[test]
fn a_refresh_may_narrow_the_scope_but_never_widen_it() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let t = exchange(&site, &web, &code, &p).json();
    assert_eq!(t["scope"], "openid profile email");
    let refresh = t["refresh_token"].as_str().unwrap().to_owned();
    let ask = |scope: &str| {
        token(&site, &web, &[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("scope", scope)])
    };

    let before = d.snapshot();
    for wider in ["openid profile email offline_access", "openid credentials", "openid root"] {
        let r = ask(wider);
        assert_eq!((r.status, r.json()["error"].clone()), (400, json!("invalid_scope")), "{wider}: {}", r.body);
        assert_eq!(d.snapshot(), before, "{wider}: nothing stored, the token not used");
    }

    let r = ask("openid email");
    assert_eq!(r.status, 200, "the token is still usable: {}", r.body);
    let t2 = r.json();
    assert_eq!(t2["scope"], "openid email");
    let (_, at) = jwt_parts(t2["access_token"].as_str().unwrap());
    assert_eq!(at["scope"], "openid email");
    let (_, id) = jwt_parts(t2["id_token"].as_str().unwrap());
    assert!(id.get("name").is_none() && id["email"] == "ada@acme.test", "profile left out: {id}");
    // Its successor carries the narrower scope: asking back for `profile` is now wider.
    let next = t2["refresh_token"].as_str().unwrap();
    let r =
        token(&site, &web, &[("grant_type", "refresh_token"), ("refresh_token", next), ("scope", "openid profile")]);
    assert_eq!((r.status, r.json()["error"].clone()), (400, json!("invalid_scope")), "{}", r.body);
}

#[test]
fn codes_and_refresh_tokens_begin_with_the_time_and_earlier_refresh_tokens_still_work() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    assert_eq!(code.len(), 51, "6 bytes of time and 32 random bytes, base64url: {code}");
    let r = exchange(&site, &web, &code, &p);
    assert_eq!(r.status, 200, "{}", r.body);
    let refresh = r.json()["refresh_token"].as_str().unwrap().to_owned();
    assert_eq!(refresh.len(), 51);

    // Stored: the token's 6 bytes of time, then the SHA-256 of the whole token.
    let digest = |s: &str| aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, s.as_bytes()).as_ref().to_vec();
    let sql = d.store.sql();
    let key = sql.bytes("SELECT token_hash FROM refresh_tokens");
    assert_eq!(key.len(), 38);
    assert_eq!(key[6..], digest(&refresh)[..], "only a hash of the secret is stored");
    assert_eq!(sql.bytes("SELECT code_hash FROM authorization_codes")[6..], digest(&code)[..]);

    // A refresh token made by an earlier release: 43 characters, stored as its SHA-256.
    let legacy = "Ea9pLNc3kQ0zY7dW1xR5tV8bJm2hF4sG6uK0oP3qZwA";
    let hex: String = digest(legacy).iter().map(|b| format!("{b:02x}")).collect();
    let literal = match backend() {
        Backend::Postgres => format!("'\\x{hex}'::bytea"),
        Backend::Sqlite => format!("x'{hex}'"),
    };
    sql.exec(&format!("UPDATE refresh_tokens SET token_hash = {literal}"));
    let r = token(&site, &web, &[("grant_type", "refresh_token"), ("refresh_token", legacy)]);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["refresh_token"].as_str().unwrap().len(), 51, "rotated to the new format");
}

#[test]
fn a_live_session_goes_straight_back_and_prompt_login_asks_again() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (_, cookie) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let again = get(&authorize_url(&site, &web, &p, &[]), Some(&cookie));
    assert_eq!(again.status, 302, "a valid session skips the login page");
    assert!(param(&location_params(&again), "code").is_some());
    let login = get(&authorize_url(&site, &web, &p, &[("prompt", "login")]), Some(&cookie));
    assert_eq!(login.status, 200, "prompt=login shows the login page");
    let id = request_id(&login);
    let early = get(&format!("{}/authorize/resume?request={id}", site.base), Some(&cookie));
    assert_eq!(early.status, 200, "the old session is not fresh enough for prompt=login");
    d.clock.advance(5);
    let fresh = site.sign_in(&mut soft, Some("ada@acme.test"), &Default::default()).session_cookie().unwrap();
    let done = get(&format!("{}/authorize/resume?request={id}", site.base), Some(&fresh));
    assert_eq!(done.status, 302);
    // max_age=0 needs a sign-in now, even in a session begun this very second; prompt=none
    // without a session answers login_required.
    let zero = get(&authorize_url(&site, &web, &p, &[("max_age", "0")]), Some(&fresh));
    assert_eq!(zero.status, 200, "max_age=0 shows the login page: {}", zero.body);
    let none = get(&authorize_url(&site, &web, &p, &[("prompt", "none")]), None);
    let params = location_params(&none);
    assert_eq!(param(&params, "error"), Some("login_required"));
    assert_eq!(param(&params, "state"), Some("st-123"));
}

#[test]
fn an_authorization_code_commits_without_an_fsync_and_its_exchange_with_one() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (_, cookie) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let sqlite = backend() == Backend::Sqlite;
    // PostgreSQL commits every write on its own, each one durable.
    let unsynced = |quiet: (u64, u64)| if sqlite { (quiet.0 + 1, quiet.1 + 1) } else { (quiet.0 + 1, 0) };
    // Reading the audit trail writes out what is still queued for it: nothing else writes now.
    d.cli(&["audit", "--tenant", "acme", "-o", "json"]).ok();
    let quiet = commits(&d);
    let r = get(&authorize_url(&site, &web, &p, &[]), Some(&cookie));
    assert_eq!(r.status, 302, "{}", r.body);
    let code = param(&location_params(&r), "code").expect("code").to_owned();
    let issued = commits(&d);
    assert_eq!(issued, unsynced(quiet), "a signed-in browser's code: one commit, without an fsync");

    // The login page's pending request and the code its resumption issues: the same.
    let page = get(&authorize_url(&site, &web, &p, &[("prompt", "login")]), Some(&cookie));
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(commits(&d), unsynced(issued), "the pending request");
    let id = request_id(&page);
    d.clock.advance(5);
    let fresh = site.sign_in(&mut soft, Some("ada@acme.test"), &Default::default()).session_cookie().unwrap();
    d.cli(&["audit", "--tenant", "acme", "-o", "json"]).ok();
    let signed_in = commits(&d);
    let back = get(&format!("{}/authorize/resume?request={id}", site.base), Some(&fresh));
    assert_eq!(back.status, 302, "{}", back.body);
    assert_eq!(commits(&d), unsynced(signed_in), "the resumed request's code");

    // The exchange that consumes the code waits for its fsync, which makes the code durable too.
    let before = commits(&d);
    let r = exchange(&site, &web, &code, &p);
    assert_eq!(r.status, 200, "{}", r.body);
    let after = commits(&d);
    assert!(after.0 > before.0);
    assert_eq!(after.1, before.1, "the exchange's commit was synced");
    assert_eq!(exchange(&site, &web, &code, &p).status, 400, "the code was consumed once");
}

#[test]
fn a_machine_client_is_refused_as_soon_as_it_is_changed_rotated_or_deleted() {
    // The grant keeps applications in memory between requests; every change must reach it
    // before the admin command returns.
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let m2m = app(&site, "m2m", &["--scope", "users:invite"]);
    let grant = |app: &App| token(&site, app, &[("grant_type", "client_credentials")]);
    let scope = |r: &Http| r.json()["scope"].as_str().unwrap().to_owned();
    assert_eq!(scope(&grant(&m2m)), "users:invite");
    assert_eq!(scope(&grant(&m2m)), "users:invite");

    d.cli(&["app", "update", "--tenant", "acme", &m2m.client_id, "--add-scope", "introspect"]).ok();
    assert_eq!(scope(&grant(&m2m)), "users:invite introspect");

    let rotated = d.cli(&["app", "rotate-secret", "--tenant", "acme", &m2m.client_id, "-o", "json"]).ok().json();
    let r = grant(&m2m);
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (401, "invalid_client"), "the old secret");
    let new = App { secret: rotated["client_secret"].as_str().map(str::to_owned), ..m2m.clone() };
    assert_eq!(grant(&new).status, 200);
    let wrong = App { secret: Some("not-the-secret".into()), ..m2m.clone() };
    assert_eq!(grant(&wrong).status, 401);

    // Another tenant with an app of the same Client ID does not see this one.
    let other = Site::new(&d, "other", &[]);
    let foreign = App { ..new.clone() };
    assert_eq!(token(&other, &foreign, &[("grant_type", "client_credentials")]).status, 401);

    d.cli(&["app", "delete", "--tenant", "acme", &m2m.client_id, "--yes"]).ok();
    assert_eq!(grant(&new).status, 401, "a deleted app");
    let again = app(&site, "m2m", &[]);
    assert_eq!(grant(&again).status, 200);
    d.cli(&["tenant", "delete", "acme", "--yes"]).ok();
    assert_eq!(grant(&again).status, 404, "a deleted tenant");
}

/// A rotated secret is refused at once by code exchanges and refreshes too, and a refused
/// exchange leaves its code unused, to be redeemed with the new secret.
#[test]
fn a_web_client_is_refused_at_the_token_endpoint_as_soon_as_its_secret_is_rotated_or_it_is_deleted() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, cookie) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let r = exchange(&site, &web, &code, &p);
    assert_eq!(r.status, 200, "{}", r.body);
    let refresh = r.json()["refresh_token"].as_str().unwrap().to_owned();
    let fresh_code = || {
        let r = get(&authorize_url(&site, &web, &p, &[]), Some(&cookie));
        param(&location_params(&r), "code").unwrap().to_owned()
    };
    let code = fresh_code();

    let rotated = d.cli(&["app", "rotate-secret", "--tenant", "acme", &web.client_id, "-o", "json"]).ok().json();
    let new = App { secret: rotated["client_secret"].as_str().map(str::to_owned), ..web.clone() };
    let refused = |r: Http, what: &str| {
        assert_eq!(
            (r.status, r.json()["error"].as_str().unwrap().to_owned()),
            (401, "invalid_client".into()),
            "{what}"
        );
    };
    let unused = || d.sql().i64("SELECT count(*) FROM authorization_codes WHERE used_at IS NULL");
    let before = unused();
    refused(exchange(&site, &web, &code, &p), "a code exchange with the old secret");
    assert_eq!(unused(), before, "the refused exchange left its code unused");
    refused(token(&site, &web, &[("grant_type", "refresh_token"), ("refresh_token", &refresh)]), "a refresh");
    let r = exchange(&site, &new, &code, &p);
    assert_eq!(r.status, 200, "the same code with the new secret: {}", r.body);
    let r = token(&site, &new, &[("grant_type", "refresh_token"), ("refresh_token", &refresh)]);
    assert_eq!(r.status, 200, "the refresh token with the new secret: {}", r.body);

    let code = fresh_code();
    d.cli(&["app", "delete", "--tenant", "acme", &web.client_id, "--yes"]).ok();
    refused(exchange(&site, &new, &code, &p), "a deleted app");
}

#[test]
fn client_credentials_for_machines() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let m2m = app(&site, "m2m", &["--scope", "users:invite"]);
    let r = token(&site, &m2m, &[("grant_type", "client_credentials")]);
    assert_eq!(r.status, 200, "{}", r.body);
    let t = r.json();
    assert!(t.get("refresh_token").is_none() && t.get("id_token").is_none());
    let (_, at) = jwt_parts(t["access_token"].as_str().unwrap());
    assert_eq!(at["sub"], m2m.client_id.as_str());
    assert_eq!(at["aud"], m2m.client_id.as_str());
    assert_eq!(at["scope"], "users:invite");
    assert_eq!(at["roles"], json!([]));
    let r = token(&site, &m2m, &[("grant_type", "client_credentials"), ("scope", "credentials")]);
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (400, "invalid_scope"));
    // A client token has no user for userinfo.
    assert_eq!(userinfo(&site, t["access_token"].as_str().unwrap()).status, 401);
    // Only m2m apps may use the grant.
    let web = app(&site, "web", &[]);
    let r = token(&site, &web, &[("grant_type", "client_credentials")]);
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (400, "unauthorized_client"));
    // Introspection by a confidential client.
    let intro = send_raw(
        "POST",
        &format!("{}/introspect", site.base),
        Some("application/x-www-form-urlencoded"),
        query(&[
            ("token", t["access_token"].as_str().unwrap()),
            ("client_id", &m2m.client_id),
            ("client_secret", m2m.secret.as_deref().unwrap()),
        ])
        .into_bytes(),
        &[],
    );
    assert_eq!(intro.status, 200, "{}", intro.body);
    assert_eq!(intro.json()["active"], true);
    assert_eq!(intro.json()["scope"], "users:invite");
}

#[test]
fn logout_revocation_and_introspection() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &["--post-logout-redirect-uri", "https://app.example.com/bye"]);
    let p = pkce();
    let (code, cookie) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let t = exchange(&site, &web, &code, &p).json();
    let id_token = t["id_token"].as_str().unwrap();

    // An unregistered post-logout URI: signed out, no redirect.
    let (code2, cookie2) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let t2 = exchange(&site, &web, &code2, &p).json();
    let out = get(
        &format!(
            "{}/logout?{}",
            site.base,
            query(&[("id_token_hint", id_token), ("post_logout_redirect_uri", "https://evil.example/")])
        ),
        Some(&cookie2),
    );
    assert_eq!(out.status, 200);
    assert!(out.header("location").is_none());
    assert!(out.set_cookie().unwrap().contains("Max-Age=0"));
    let r = token(
        &site,
        &web,
        &[("grant_type", "refresh_token"), ("refresh_token", t2["refresh_token"].as_str().unwrap())],
    );
    assert_eq!(r.status, 400, "logout revoked the refresh tokens of the session");

    // A registered one redirects with state.
    let out = get(
        &format!(
            "{}/logout?{}",
            site.base,
            query(&[
                ("id_token_hint", id_token),
                ("post_logout_redirect_uri", "https://app.example.com/bye"),
                ("state", "s1")
            ])
        ),
        Some(&cookie),
    );
    assert_eq!(out.status, 302);
    assert_eq!(out.header("location"), Some("https://app.example.com/bye?state=s1"));
    assert_eq!(site.api("GET", "/api/credentials", None, &cookie, None).status, 401, "the session ended");

    // RFC 7009 revocation of an access token; RFC 7662 then says inactive.
    let (code3, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let t3 = exchange(&site, &web, &code3, &p).json();
    let access = t3["access_token"].as_str().unwrap();
    assert_eq!(userinfo(&site, access).status, 200);
    let r = client_post(&site, &web, "revoke", &[("token", access)]);
    assert_eq!(r.status, 200);
    let info = userinfo(&site, access);
    assert_eq!(info.status, 401);
    assert!(info.header("www-authenticate").unwrap().contains("invalid_token"));
    let intro = client_post(&site, &web, "introspect", &[("token", access)]);
    assert_eq!(intro.json()["active"], false);
    let intro = client_post(&site, &web, "introspect", &[("token", t3["refresh_token"].as_str().unwrap())]);
    assert_eq!(intro.json()["active"], true);
    assert_eq!(intro.json()["token_type"], "refresh_token");
}

#[test]
fn discovery_lists_exactly_what_is_implemented() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let doc = get(&format!("{}/.well-known/openid-configuration", site.base), None).json();
    for field in [
        "authorization_endpoint",
        "token_endpoint",
        "userinfo_endpoint",
        "end_session_endpoint",
        "revocation_endpoint",
        "introspection_endpoint",
    ] {
        let url = doc[field].as_str().unwrap();
        let r = send_raw("OPTIONS", url, None, vec![], &[]);
        assert_ne!(r.status, 404, "{field} {url} is served");
    }
}

#[test]
fn a_relying_backend_accepts_only_its_own_tokens() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let other = Site::new(&d, "other", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let access = exchange(&site, &web, &code, &p).json()["access_token"].as_str().unwrap().to_owned();
    let (mut bob, _) = other.user_with_passkey("bob@other.test");
    let other_app = app(&other, "web", &[]);
    let (code, _) = code_flow(&other, &mut bob, "bob@other.test", &other_app, &p, &[]);
    let foreign = exchange(&other, &other_app, &code, &p).json()["access_token"].as_str().unwrap().to_owned();

    let jwks = |s: &Site| format!("{}/.well-known/jwks.json", s.base);
    let verify = |jwks: &str, token: &str, iss: &str, aud: &str| node("verify-jwt.mjs", &[jwks, token, iss, aud]);
    assert_eq!(verify(&jwks(&site), &access, &site.base, &web.client_id)["ok"], true);
    // Another audience, another tenant's token, the wrong key set: the protected API says 401.
    assert_eq!(verify(&jwks(&site), &access, &site.base, "some-other-client")["ok"], false);
    assert_eq!(verify(&jwks(&site), &foreign, &site.base, &other_app.client_id)["ok"], false);
    assert_eq!(verify(&jwks(&other), &access, &site.base, &web.client_id)["ok"], false);
    assert_eq!(verify(&jwks(&site), &access, &other.base, &web.client_id)["ok"], false);
}

#[test]
fn credentials_api_accepts_a_bearer_token_with_the_credentials_scope() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let spa = App {
        redirect: "https://app.example.com/oidc-callback".into(),
        ..app(&site, "spa", &["--scope", "credentials"])
    };
    let p = pkce();
    let bearer = |token: &str, method: &str, path: &str| {
        send_raw(
            method,
            &format!("{}{path}", site.base),
            None,
            vec![],
            &[("Authorization", &format!("Bearer {token}"))],
        )
    };
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &spa, &p, &[("scope", "openid credentials")]);
    let t = exchange(&site, &spa, &code, &p).json();
    let list = bearer(t["access_token"].as_str().unwrap(), "GET", "/api/credentials");
    assert_eq!(list.status, 200, "{}", list.body);
    assert_eq!(list.json().as_array().unwrap().len(), 1);
    // Without the scope: 403 insufficient_scope.
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &spa, &p, &[("scope", "openid")]);
    let t = exchange(&site, &spa, &code, &p).json();
    let r = bearer(t["access_token"].as_str().unwrap(), "GET", "/api/credentials");
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (403, "insufficient_scope"));
    // RFC 6750 §3: the resource server says so in its challenge too.
    let challenge = r.header("www-authenticate").unwrap_or_default();
    assert!(challenge.starts_with("Bearer error=\"insufficient_scope\""), "{challenge:?}");
    let r = bearer("garbage", "GET", "/api/credentials");
    assert_eq!(r.status, 401);
}

#[test]
fn offline_access_outlives_the_session_and_nothing_else() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let offline = app(&site, "web", &["--scope", "offline_access"]);
    let plain = app(&site, "web", &[]);
    let p = pkce();
    let scope = [("scope", "openid offline_access")];
    let (code, cookie) = code_flow(&site, &mut soft, "ada@acme.test", &offline, &p, &scope);
    let kept = exchange(&site, &offline, &code, &p).json();
    assert_eq!(kept["scope"], "openid offline_access");
    let again = get(&authorize_url(&site, &plain, &p, &scope), Some(&cookie));
    let code = param(&location_params(&again), "code").unwrap().to_owned();
    let bound = exchange(&site, &plain, &code, &p).json();
    assert_eq!(bound["scope"], "openid", "an app not configured for it does not get offline_access");
    let refresh = |app: &App, t: &serde_json::Value| {
        token(&site, app, &[("grant_type", "refresh_token"), ("refresh_token", t["refresh_token"].as_str().unwrap())])
    };

    // The user signs out: the session-bound grant ends, the offline one goes on, same sid.
    let out = send_raw(
        "POST",
        &format!("{}/logout", site.base),
        Some("application/x-www-form-urlencoded"),
        vec![],
        &[("Cookie", &cookie)],
    );
    assert_eq!(out.status, 200);
    assert_eq!(refresh(&plain, &bound).json()["error"], "invalid_grant");
    let r = refresh(&offline, &kept);
    assert_eq!(r.status, 200, "{}", r.body);
    let next = r.json();
    let sid = |t: &serde_json::Value| jwt_parts(t["id_token"].as_str().unwrap()).1["sid"].clone();
    assert_eq!(sid(&next), sid(&kept));

    // A session that expires (8 h) ends its session-bound grants too; offline ones live 90 days
    // from their last use.
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &plain, &p, &[]);
    let bound = exchange(&site, &plain, &code, &p).json();
    d.clock.advance(8 * 3600 + 1);
    let r = refresh(&plain, &bound);
    assert_eq!(r.json()["error"], "invalid_grant", "{}", r.body);
    assert!(r.json()["error_description"].as_str().unwrap().contains("session"), "{}", r.body);
    let r = refresh(&offline, &next);
    assert_eq!(r.status, 200, "{}", r.body);
    let next = r.json();
    d.clock.advance(89 * 86400);
    let r = refresh(&offline, &next);
    assert_eq!(r.status, 200, "within 90 days of its last use: {}", r.body);
    let next = r.json();
    d.clock.advance(91 * 86400);
    assert_eq!(refresh(&offline, &next).json()["error"], "invalid_grant", "past tokens.offline_ttl");

    // A fresh offline grant ends when the user is disabled.
    let (mut soft2, _) = site.user_with_passkey("bob@acme.test");
    let (code, _) = code_flow(&site, &mut soft2, "bob@acme.test", &offline, &p, &scope);
    let bobs = exchange(&site, &offline, &code, &p).json();
    d.cli(&["user", "disable", "--tenant", "acme", "bob@acme.test"]).ok();
    assert_eq!(refresh(&offline, &bobs).json()["error"], "invalid_grant");
}
