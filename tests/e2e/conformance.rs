//! Behaviour the OpenID Foundation's certification plans check, one test per plan module (the
//! module's name with `_` for `-`), driven over real HTTP with the software authenticator. The
//! official suite needs artefacts this machine cannot fetch; docs/conformance.md maps every module
//! of the Basic, Config, RP-Initiated Logout and Back-Channel Logout plans to the test that covers
//! it here or elsewhere in the suite, or says why none does yet.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;

use crate::oidc_support::*;
use crate::support::*;

/// `at_hash` as Core §3.1.3.6 defines it for RS256: the left half of SHA-256, base64url.
fn expected_at_hash(access_token: &str) -> String {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, access_token.as_bytes());
    URL_SAFE_NO_PAD.encode(&digest.as_ref()[..16])
}

/// Where the "Back to the app" link of a step-up the user cannot give leads: its query.
fn back_to_app(page: &Http) -> Vec<(String, String)> {
    assert_eq!(page.status, 403, "{}", page.body);
    assert!(page.body.contains("A stronger sign-in is needed"), "{}", page.body);
    let start = page.body.find("id=\"back-to-app\"").unwrap();
    let href = &page.body[start..];
    let href = &href[href.find("href=\"").unwrap() + 6..];
    let href = href[..href.find('"').unwrap()].replace("&amp;", "&");
    let q = href.split_once('?').map(|(_, q)| q).unwrap_or("");
    url::form_urlencoded::parse(q.as_bytes()).into_owned().collect()
}

/// The refusal an authorization request got, as the application receives it.
fn refused_with(r: &Http) -> Option<String> {
    param(&location_params(r), "error").map(str::to_owned)
}

#[test]
fn oidcc_server() {
    // The ID token of a code exchange: the required claims, `sid` naming the session, and
    // `at_hash` binding it to the access token issued with it.
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, cookie) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let t = exchange(&site, &web, &code, &p).json();
    let (_, id) = jwt_parts(t["id_token"].as_str().unwrap());
    for claim in ["iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "sid", "at_hash"] {
        assert!(id.get(claim).is_some(), "{claim} in {id}");
    }
    assert_eq!(id["at_hash"].as_str(), Some(expected_at_hash(t["access_token"].as_str().unwrap()).as_str()));
    let sid = id["sid"].as_str().unwrap().to_owned();
    assert_eq!(URL_SAFE_NO_PAD.decode(&sid).map(|b| b.len()).ok(), Some(16), "opaque: {sid}");

    // The same session, for another application and after a refresh: the same sid, each ID
    // token with its own access token's at_hash.
    let spa = app(&site, "spa", &[]);
    let again = get(&authorize_url(&site, &spa, &p, &[]), Some(&cookie));
    let code2 = param(&location_params(&again), "code").unwrap().to_owned();
    let (_, id2) = jwt_parts(exchange(&site, &spa, &code2, &p).json()["id_token"].as_str().unwrap());
    assert_eq!(id2["sid"], sid.as_str());
    let refreshed =
        token(&site, &web, &[("grant_type", "refresh_token"), ("refresh_token", t["refresh_token"].as_str().unwrap())])
            .json();
    let (_, id3) = jwt_parts(refreshed["id_token"].as_str().unwrap());
    assert_eq!(id3["sid"], sid.as_str());
    assert_eq!(id3["at_hash"].as_str(), Some(expected_at_hash(refreshed["access_token"].as_str().unwrap()).as_str()));

    // Another sign-in is another session: another sid.
    d.clock.advance(2);
    let (code4, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let (_, id4) = jwt_parts(exchange(&site, &web, &code4, &p).json()["id_token"].as_str().unwrap());
    assert_ne!(id4["sid"], sid.as_str());
}

#[test]
fn oidcc_id_token_hint() {
    // prompt=none with the ID token of the signed-in user: a code. With another user's, or a
    // token that is not this issuer's: refused, nothing issued.
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, cookie) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let ada_id = exchange(&site, &web, &code, &p).json()["id_token"].as_str().unwrap().to_owned();

    let r = get(&authorize_url(&site, &web, &p, &[("prompt", "none"), ("id_token_hint", &ada_id)]), Some(&cookie));
    assert_eq!(r.status, 302, "{}", r.body);
    assert!(param(&location_params(&r), "code").is_some(), "{:?}", r.header("location"));

    // Carol's session with Ada's hint: not Carol's to use.
    let mut carol = site.user_with_passkey("carol@acme.test").0;
    let (_, carol_cookie) = code_flow(&site, &mut carol, "carol@acme.test", &web, &p, &[]);
    let r =
        get(&authorize_url(&site, &web, &p, &[("prompt", "none"), ("id_token_hint", &ada_id)]), Some(&carol_cookie));
    assert_eq!(refused_with(&r).as_deref(), Some("login_required"));
    // Without prompt=none, the login page: the user may sign in as the one the app expects.
    let r = get(&authorize_url(&site, &web, &p, &[("id_token_hint", &ada_id)]), Some(&carol_cookie));
    assert_eq!(r.status, 200, "the login page");

    // A forged hint (the payload changed, the signature kept) is refused.
    let mut parts: Vec<String> = ada_id.split('.').map(str::to_owned).collect();
    let mut claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(&parts[1]).unwrap()).unwrap();
    claims["sub"] = "someone-else".into();
    parts[1] = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims).unwrap());
    let forged = parts.join(".");
    let before = d.snapshot_of(OIDC_TABLES);
    let r = get(&authorize_url(&site, &web, &p, &[("prompt", "none"), ("id_token_hint", &forged)]), Some(&cookie));
    assert_eq!(refused_with(&r).as_deref(), Some("invalid_request"));
    assert_eq!(d.snapshot_of(OIDC_TABLES), before, "nothing stored");
}

#[test]
fn oidcc_prompt_unknown_values_are_refused() {
    // Not a plan module of its own: the plans' prompt modules assume a refused value is an
    // error, and Core §3.1.2.1 names the values.
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let web = app(&site, "web", &[]);
    let p = pkce();
    let before = d.snapshot_of(OIDC_TABLES);
    for bad in ["sometimes", "login nonsense", "none consent"] {
        let r = get(&authorize_url(&site, &web, &p, &[("prompt", bad)]), None);
        assert_eq!(refused_with(&r).as_deref(), Some("invalid_request"), "prompt={bad}");
        assert_eq!(param(&location_params(&r), "state"), Some("st-123"));
    }
    assert_eq!(d.snapshot_of(OIDC_TABLES), before, "nothing stored");
}

#[test]
fn oidcc_userinfo_post_body_and_never_the_query() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let access = exchange(&site, &web, &code, &p).json()["access_token"].as_str().unwrap().to_owned();
    let form = |body: String| {
        send_raw(
            "POST",
            &format!("{}/userinfo", site.base),
            Some("application/x-www-form-urlencoded"),
            body.into_bytes(),
            &[],
        )
    };
    let r = form(format!("access_token={access}"));
    assert_eq!((r.status, r.json()["email"].as_str()), (200, Some("ada@acme.test")), "{}", r.body);
    let header = send_raw(
        "POST",
        &format!("{}/userinfo", site.base),
        None,
        vec![],
        &[("Authorization", &format!("Bearer {access}"))],
    );
    assert_eq!(header.status, 200, "oidcc-userinfo-post-header: {}", header.body);
    // RFC 6750 §2.3 is not offered: a token in the query is no token.
    let query = get(&format!("{}/userinfo?access_token={access}", site.base), None);
    assert_eq!(query.status, 401, "{}", query.body);
}

/// A whole code flow with `extra` authorization parameters, which must not get in its way:
/// returns the login page the user saw and the ID token.
fn flow_with(extra: &[(&str, &str)]) -> (String, Value) {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let page = get(&authorize_url(&site, &web, &p, extra), None);
    assert_eq!(page.status, 200, "{extra:?}: {}", page.body);
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, extra);
    let r = exchange(&site, &web, &code, &p);
    assert_eq!(r.status, 200, "{extra:?}: {}", r.body);
    (page.body, jwt_parts(r.json()["id_token"].as_str().unwrap()).1)
}

#[test]
fn oidcc_login_hint() {
    let (page, _) = flow_with(&[("login_hint", "ada@acme.test")]);
    assert!(page.contains("value=\"ada@acme.test\""), "the login page is filled in: {page}");
}

#[test]
fn oidcc_ui_locales() {
    flow_with(&[("ui_locales", "de-CH de en")]);
}

#[test]
fn oidcc_claims_locales() {
    flow_with(&[("claims_locales", "de-CH de en")]);
}

#[test]
fn oidcc_display_page() {
    flow_with(&[("display", "page")]);
}

#[test]
fn oidcc_display_popup() {
    flow_with(&[("display", "popup")]);
}

#[test]
fn oidcc_ensure_request_with_unknown_parameter_succeeds() {
    flow_with(&[("extra_parameter", "ignored")]);
}

#[test]
fn oidcc_ensure_request_without_nonce_succeeds_for_code_flow() {
    let (_, id) = flow_with(&[("nonce", "")]);
    assert!(id.get("nonce").is_none(), "{id}");
}

#[test]
fn oidcc_ensure_request_with_acr_values_succeeds() {
    flow_with(&[("acr_values", "phr phrh")]);
}

#[test]
fn oidcc_ensure_other_scope_order_succeeds() {
    let (_, id) = flow_with(&[("scope", "email openid")]);
    assert_eq!(id["email"], "ada@acme.test");
}

#[test]
fn oidcc_unsigned_request_object_supported_correctly_or_rejected_as_unsupported() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let web = app(&site, "web", &[]);
    let p = pkce();
    let before = d.snapshot_of(OIDC_TABLES);
    let object = format!("eyJhbGciOiJub25lIn0.{}.", URL_SAFE_NO_PAD.encode(br#"{"scope":"openid"}"#));
    let r = get(&authorize_url(&site, &web, &p, &[("request", &object)]), None);
    assert_eq!(refused_with(&r).as_deref(), Some("request_not_supported"));
    let r = get(&authorize_url(&site, &web, &p, &[("request_uri", "https://rp.example/request.jwt")]), None);
    assert_eq!(refused_with(&r).as_deref(), Some("request_uri_not_supported"));
    assert_eq!(d.snapshot_of(OIDC_TABLES), before, "nothing stored");
}

/// RP-Initiated Logout: a signed-in user of an app with a registered post-logout URI, the app's
/// ID token, and the session cookie.
struct LoggedIn<'a> {
    site: Site<'a>,
    web: App,
    id_token: String,
    cookie: String,
}

const BYE: &str = "https://app.example.com/bye";

fn logged_in(d: &TestDaemon) -> LoggedIn<'_> {
    let site = Site::new(d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &["--post-logout-redirect-uri", BYE]);
    let p = pkce();
    let (code, cookie) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let id_token = exchange(&site, &web, &code, &p).json()["id_token"].as_str().unwrap().to_owned();
    LoggedIn { site, web, id_token, cookie }
}

impl LoggedIn<'_> {
    fn logout(&self, params: &[(&str, &str)]) -> Http {
        get(&format!("{}/logout?{}", self.site.base, query(params)), Some(&self.cookie))
    }

    fn signed_in(&self) -> bool {
        self.site.api("GET", "/api/credentials", None, &self.cookie, None).status == 200
    }

    /// Asked to confirm, not sent anywhere, still signed in.
    fn asked(&self, r: &Http) {
        assert_eq!(r.status, 200, "{}", r.body);
        assert!(r.body.contains("Sign out?"), "{}", r.body);
        assert!(r.header("location").is_none(), "no redirect");
        assert!(self.signed_in());
    }
}

#[test]
fn oidcc_rp_initiated_logout_discovery_endpoint_verification() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let disco = get(&format!("{}/.well-known/openid-configuration", site.base), None).json();
    assert_eq!(disco["end_session_endpoint"], format!("{}/logout", site.base));
}

#[test]
fn oidcc_rp_initiated_logout() {
    let d = TestDaemon::start();
    let l = logged_in(&d);
    let r = l.logout(&[("id_token_hint", &l.id_token), ("post_logout_redirect_uri", BYE), ("state", "s-1")]);
    assert_eq!((r.status, r.header("location")), (302, Some("https://app.example.com/bye?state=s-1")), "{}", r.body);
    assert!(!l.signed_in(), "the session ended");
    // `client_id`, `logout_hint` and `ui_locales` may come along (RP-Initiated Logout §2).
    let d2 = TestDaemon::start();
    let l = logged_in(&d2);
    let r = l.logout(&[
        ("id_token_hint", &l.id_token),
        ("client_id", &l.web.client_id),
        ("logout_hint", "ada@acme.test"),
        ("ui_locales", "fr en"),
        ("post_logout_redirect_uri", BYE),
    ]);
    assert_eq!((r.status, r.header("location")), (302, Some(BYE)), "{}", r.body);
}

#[test]
fn oidcc_rp_initiated_logout_bad_post_logout_redirect_uri() {
    let d = TestDaemon::start();
    let l = logged_in(&d);
    let r = l.logout(&[("id_token_hint", &l.id_token), ("post_logout_redirect_uri", "https://evil.example/bye")]);
    assert!(r.header("location").is_none(), "never to an unregistered place: {:?}", r.header("location"));
    assert_eq!(r.status, 200, "{}", r.body);
}

#[test]
fn oidcc_rp_initiated_logout_modified_id_token_hint() {
    let d = TestDaemon::start();
    let l = logged_in(&d);
    let mut forged = l.id_token.clone();
    forged.pop();
    forged.push(if l.id_token.ends_with('A') { 'B' } else { 'A' });
    l.asked(&l.logout(&[("id_token_hint", &forged), ("post_logout_redirect_uri", BYE), ("state", "s-1")]));
}

#[test]
fn oidcc_rp_initiated_logout_no_id_token_hint() {
    let d = TestDaemon::start();
    let l = logged_in(&d);
    l.asked(&l.logout(&[("post_logout_redirect_uri", BYE), ("state", "s-1")]));
}

#[test]
fn oidcc_rp_initiated_logout_no_params() {
    let d = TestDaemon::start();
    let l = logged_in(&d);
    l.asked(&l.logout(&[]));
}

#[test]
fn oidcc_rp_initiated_logout_no_post_logout_redirect_uri() {
    let d = TestDaemon::start();
    let l = logged_in(&d);
    let r = l.logout(&[("id_token_hint", &l.id_token), ("state", "s-1")]);
    assert_eq!(r.status, 200, "the signed-out page: {}", r.body);
    assert!(r.header("location").is_none());
    assert!(!l.signed_in(), "the session ended");
}

#[test]
fn oidcc_rp_initiated_logout_no_state() {
    let d = TestDaemon::start();
    let l = logged_in(&d);
    let r = l.logout(&[("id_token_hint", &l.id_token), ("post_logout_redirect_uri", BYE)]);
    assert_eq!((r.status, r.header("location")), (302, Some(BYE)), "{}", r.body);
}

#[test]
fn oidcc_rp_initiated_logout_only_state() {
    let d = TestDaemon::start();
    let l = logged_in(&d);
    l.asked(&l.logout(&[("state", "s-1")]));
}

#[test]
fn oidcc_prompt_none_logged_in() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (_, cookie) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let r = get(&authorize_url(&site, &web, &p, &[("prompt", "none")]), Some(&cookie));
    assert_eq!(r.status, 302, "{}", r.body);
    let code = param(&location_params(&r), "code").unwrap().to_owned();
    assert_eq!(exchange(&site, &web, &code, &p).status, 200);
}

#[test]
fn oidcc_max_age_1() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, cookie) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let first = jwt_parts(exchange(&site, &web, &code, &p).json()["id_token"].as_str().unwrap()).1;
    d.clock.advance(2);
    // The session is two seconds old: a fresh sign-in is asked, and its auth_time is later.
    let page = get(&authorize_url(&site, &web, &p, &[("max_age", "1")]), Some(&cookie));
    assert_eq!(page.status, 200, "the login page: {}", page.body);
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[("max_age", "1")]);
    let second = jwt_parts(exchange(&site, &web, &code, &p).json()["id_token"].as_str().unwrap()).1;
    assert!(second["auth_time"].as_i64() > first["auth_time"].as_i64(), "{first} then {second}");
}

#[test]
fn oidcc_max_age_10000() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (_, cookie) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    d.clock.advance(2);
    let r = get(&authorize_url(&site, &web, &p, &[("max_age", "10000")]), Some(&cookie));
    assert_eq!(r.status, 302, "the session is young enough: {}", r.body);
    let code = param(&location_params(&r), "code").unwrap().to_owned();
    let id = jwt_parts(exchange(&site, &web, &code, &p).json()["id_token"].as_str().unwrap()).1;
    assert!(id["auth_time"].is_i64(), "{id}");
}

#[test]
fn oidcc_scope_profile() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[("scope", "openid profile")]);
    let access = exchange(&site, &web, &code, &p).json()["access_token"].as_str().unwrap().to_owned();
    let info = userinfo(&site, &access).json();
    assert_eq!(info["name"], "Test User");
    assert!(info["picture"].is_string(), "{info}");
    assert!(info.get("email").is_none(), "email is not in the profile scope: {info}");
}

#[test]
fn oidcc_scope_email() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[("scope", "openid email")]);
    let access = exchange(&site, &web, &code, &p).json()["access_token"].as_str().unwrap().to_owned();
    let info = userinfo(&site, &access).json();
    assert_eq!((info["email"].as_str(), info["email_verified"].as_bool()), (Some("ada@acme.test"), Some(true)));
    assert!(info.get("name").is_none(), "{info}");
}

#[test]
fn oidcc_server_client_secret_post() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let r = client_post(
        &site,
        &web,
        "token",
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", &web.redirect),
            ("code_verifier", &p.verifier),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.json()["id_token"].is_string());
}

#[test]
fn oidcc_codereuse_30seconds() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let first = exchange(&site, &web, &code, &p).json();
    let access = first["access_token"].as_str().unwrap().to_owned();
    assert_eq!(userinfo(&site, &access).status, 200);
    d.clock.advance(30);
    let again = exchange(&site, &web, &code, &p);
    assert_eq!((again.status, again.json()["error"].as_str()), (400, Some("invalid_grant")));
    // The reuse revokes what the code was exchanged for (RFC 6749 §4.1.2).
    assert_eq!(userinfo(&site, &access).status, 401, "the first access token no longer works");
    let refresh = first["refresh_token"].as_str().unwrap();
    let r = token(&site, &web, &[("grant_type", "refresh_token"), ("refresh_token", refresh)]);
    assert_eq!(r.json()["error"], "invalid_grant", "nor its refresh token");
}

#[test]
fn oidcc_claims_essential() {
    // `scope=openid` alone, the e-mail asked for in the ID token and the name at userinfo.
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let claims = r#"{"id_token":{"email":{"essential":true},"shoe_size":null},"userinfo":{"name":null}}"#;
    let extra = [("scope", "openid"), ("claims", claims)];
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &extra);
    let t = exchange(&site, &web, &code, &p).json();
    let (_, id) = jwt_parts(t["id_token"].as_str().unwrap());
    assert_eq!(id["email"], "ada@acme.test", "{id}");
    assert!(id.get("name").is_none() && id.get("shoe_size").is_none(), "only what was asked for there: {id}");
    let info = userinfo(&site, t["access_token"].as_str().unwrap()).json();
    assert_eq!(info["name"], "Test User", "{info}");
    assert!(info.get("email").is_none(), "the e-mail was asked for in the ID token only: {info}");
    // A refresh keeps the request.
    let refreshed =
        token(&site, &web, &[("grant_type", "refresh_token"), ("refresh_token", t["refresh_token"].as_str().unwrap())])
            .json();
    let (_, id2) = jwt_parts(refreshed["id_token"].as_str().unwrap());
    assert_eq!(id2["email"], "ada@acme.test");
    let disco = get(&format!("{}/.well-known/openid-configuration", site.base), None).json();
    assert_eq!(disco["claims_parameter_supported"], true);

    // Malformed: refused back to the application, nothing stored.
    let before = d.snapshot_of(OIDC_TABLES);
    for bad in ["{", "[1]", r#"{"id_token":["email"]}"#, r#"{"userinfo":{"email":{"essential":"yes"}}}"#] {
        let r = get(&authorize_url(&site, &web, &p, &[("claims", bad)]), None);
        assert_eq!(refused_with(&r).as_deref(), Some("invalid_request"), "{bad}");
    }
    assert_eq!(d.snapshot_of(OIDC_TABLES), before, "nothing stored");
}

#[test]
fn prompt_select_account_offers_the_signed_in_account_or_another() {
    // Not a module of the four plans (Core §3.1.2.1 names the value): the account chooser.
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut ada, _) = site.user_with_passkey("ada@acme.test");
    let (mut bob, _) = site.user_with_passkey("bob@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (_, cookie) = code_flow(&site, &mut ada, "ada@acme.test", &web, &p, &[]);
    let select = [("prompt", "select_account")];
    let disco = get(&format!("{}/.well-known/openid-configuration", site.base), None).json();
    assert!(disco["prompt_values_supported"].as_array().unwrap().iter().any(|v| v == "select_account"));

    // Signed in: the chooser, naming the account.
    let page = get(&authorize_url(&site, &web, &p, &select), Some(&cookie));
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("Continue as Test User") && page.body.contains("ada@acme.test"), "{}", page.body);
    let link = |page: &Http, id: &str| {
        let start = page.body.find(&format!("id=\"{id}\"")).unwrap();
        let href = &page.body[start..];
        let href = &href[href.find("href=\"").unwrap() + 6..];
        format!("{}{}", site.origin, href[..href.find('"').unwrap()].replace("&amp;", "&"))
    };
    // "Continue as": the code, for Ada.
    let go = get(&link(&page, "continue-as"), Some(&cookie));
    assert_eq!(go.status, 302, "{}", go.body);
    let code = param(&location_params(&go), "code").unwrap().to_owned();
    let (_, id) = jwt_parts(exchange(&site, &web, &code, &p).json()["id_token"].as_str().unwrap());
    assert_eq!(id["email"], "ada@acme.test");

    // "Use another account": the login page; Ada's session no longer answers for this request,
    // Bob's new sign-in does.
    let page = get(&authorize_url(&site, &web, &p, &select), Some(&cookie));
    let other = get(&link(&page, "another-account"), Some(&cookie));
    assert_eq!(other.status, 200, "{}", other.body);
    let request = request_id(&other);
    let resume = format!("{}/authorize/resume?request={request}", site.base);
    assert_eq!(get(&resume, Some(&cookie)).status, 200, "Ada's session does not count");
    let bobs = site.sign_in(&mut bob, Some("bob@acme.test"), &Default::default()).session_cookie().unwrap();
    let back = get(&resume, Some(&bobs));
    assert_eq!(back.status, 302, "{}", back.body);
    let code = param(&location_params(&back), "code").unwrap().to_owned();
    let (_, id) = jwt_parts(exchange(&site, &web, &code, &p).json()["id_token"].as_str().unwrap());
    assert_eq!(id["email"], "bob@acme.test");

    // Not signed in: the login page.
    let r = get(&authorize_url(&site, &web, &p, &select), None);
    assert_eq!(r.status, 200);
    request_id(&r);
}

#[test]
fn acr_names_how_phishing_resistant_the_sign_in_was() {
    // OpenID EAP ACR Values: a device-bound passkey (no backup eligibility) earns `phrh` and amr
    // `hwk`; a synced one `phr` and `swk`.
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (mut bound, _) = site.user_with_passkey("ada@acme.test");
    let token = site.invite("bob@acme.test", "Bob");
    let mut synced = crate::authenticator::Soft::new(&site.origin);
    synced.flags |= crate::authenticator::BE | crate::authenticator::BS;
    assert_eq!(site.register(&mut synced, "bob@acme.test", Some(&token), None, &Default::default()).status, 201);
    for (soft, user, acr, amr) in
        [(&mut bound, "ada@acme.test", "phrh", "hwk"), (&mut synced, "bob@acme.test", "phr", "swk")]
    {
        let (code, _) = code_flow(&site, soft, user, &web, &p, &[]);
        let (_, id) = jwt_parts(exchange(&site, &web, &code, &p).json()["id_token"].as_str().unwrap());
        assert_eq!((id["acr"].as_str(), id["amr"][0].as_str()), (Some(acr), Some(amr)), "{user}: {id}");
    }
    let disco = get(&format!("{}/.well-known/openid-configuration", site.base), None).json();
    assert!(disco["claims_supported"].as_array().unwrap().iter().any(|c| c == "acr"));
}

#[test]
fn acr_values_phrh_asks_for_a_device_bound_passkey() {
    // Step-up: acr_values=phrh (or an essential acr claim) takes only a device-bound passkey.
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let web = app(&site, "web", &[]);
    let p = pkce();
    let synced_soft = |email: &str| {
        let token = site.invite(email, "Test User");
        let mut soft = crate::authenticator::Soft::new(&site.origin);
        soft.flags |= crate::authenticator::BE | crate::authenticator::BS;
        assert_eq!(site.register(&mut soft, email, Some(&token), None, &Default::default()).status, 201);
        soft
    };
    let step_up = [("acr_values", "phrh")];
    let disco = get(&format!("{}/.well-known/openid-configuration", site.base), None).json();
    assert_eq!(disco["acr_values_supported"], serde_json::json!(["phr", "phrh"]));

    // A device-bound passkey: straight through, acr phrh.
    let (mut bound, _) = site.user_with_passkey("ada@acme.test");
    let page = get(&authorize_url(&site, &web, &p, &step_up), None);
    assert!(page.body.contains("id=\"step-up\""), "the login page says what it asks for: {}", page.body);
    let (code, ada) = code_flow(&site, &mut bound, "ada@acme.test", &web, &p, &step_up);
    let (_, id) = jwt_parts(exchange(&site, &web, &code, &p).json()["id_token"].as_str().unwrap());
    assert_eq!(id["acr"], "phrh");
    let again = get(&authorize_url(&site, &web, &p, &step_up), Some(&ada));
    assert_eq!(again.status, 302, "a device-bound session satisfies it");

    // Only a synced passkey: refused with access_denied, nothing issued.
    let mut synced = synced_soft("bob@acme.test");
    let page = get(&authorize_url(&site, &web, &p, &[("acr_values", "phrh")]), None);
    let request = request_id(&page);
    let bob = site.sign_in(&mut synced, Some("bob@acme.test"), &Default::default()).session_cookie().unwrap();
    let back = get(&format!("{}/authorize/resume?request={request}", site.base), Some(&bob));
    let denied = back_to_app(&back);
    assert_eq!((param(&denied, "error"), param(&denied, "state")), (Some("access_denied"), Some("st-123")));
    // `phr phrh` lists both as acceptable: the synced session will do.
    let either = get(&authorize_url(&site, &web, &p, &[("acr_values", "phr phrh")]), Some(&bob));
    assert!(param(&location_params(&either), "code").is_some(), "{:?}", either.header("location"));
    // prompt=none with the synced session: login_required; without acr_values: a code, acr phr.
    let none = get(&authorize_url(&site, &web, &p, &[("acr_values", "phrh"), ("prompt", "none")]), Some(&bob));
    assert_eq!(param(&location_params(&none), "error"), Some("login_required"));
    let plain = get(&authorize_url(&site, &web, &p, &[]), Some(&bob));
    let code = param(&location_params(&plain), "code").unwrap().to_owned();
    let (_, id) = jwt_parts(exchange(&site, &web, &code, &p).json()["id_token"].as_str().unwrap());
    assert_eq!(id["acr"], "phr");

    // Both kinds, signed in with the synced one: asked again, then the device-bound one passes.
    // An essential acr claim asks the same.
    let (mut carol_bound, _) = site.user_with_passkey("carol@acme.test");
    let mut carol_synced = crate::authenticator::Soft::new(&site.origin);
    carol_synced.flags |= crate::authenticator::BE | crate::authenticator::BS;
    let cookie = site.sign_in(&mut carol_bound, Some("carol@acme.test"), &Default::default()).session_cookie().unwrap();
    let add = site.register(&mut carol_synced, "carol@acme.test", None, Some(&cookie), &Default::default());
    assert_eq!(add.status, 201, "{}", add.body);
    let essential = [("claims", r#"{"id_token":{"acr":{"essential":true,"values":["phrh"]}}}"#)];
    let page = get(&authorize_url(&site, &web, &p, &essential), None);
    let request = request_id(&page);
    let weak = site.sign_in(&mut carol_synced, Some("carol@acme.test"), &Default::default()).session_cookie().unwrap();
    let resume = format!("{}/authorize/resume?request={request}", site.base);
    let asked = get(&resume, Some(&weak));
    assert_eq!(asked.status, 200, "the login page again: {}", asked.body);
    assert!(asked.body.contains("id=\"step-up\""));
    let strong = site.sign_in(&mut carol_bound, Some("carol@acme.test"), &Default::default()).session_cookie().unwrap();
    let back = get(&resume, Some(&strong));
    let code = param(&location_params(&back), "code").unwrap().to_owned();
    let (_, id) = jwt_parts(exchange(&site, &web, &code, &p).json()["id_token"].as_str().unwrap());
    assert_eq!(id["acr"], "phrh");
}

#[test]
fn an_app_created_with_require_acr_asks_it_of_every_sign_in() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let p = pkce();
    // Refused values store nothing.
    let before = d.snapshot();
    let r = d.cli(&[
        "app",
        "create",
        "--tenant",
        "acme",
        "--name",
        "Bad",
        "--type",
        "web",
        "--redirect-uri",
        "https://app.example.com/cb",
        "--require-acr",
        "gold",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("phr") && r.stderr.contains("invalid_input"), "{}", r.stderr);
    assert_eq!(d.snapshot(), before);

    let admin = app(&site, "web", &["--require-acr", "phrh"]);
    let shown = d.cli(&["app", "show", "--tenant", "acme", &admin.client_id, "-o", "json"]).ok().json();
    assert_eq!(shown["require_acr"], "phrh");
    let exported = d.cli(&["export", "--tenant", "acme"]).ok().stdout;
    assert!(exported.contains("require_acr = \"phrh\""), "{exported}");

    // A synced passkey only: access_denied, with no acr_values in the request.
    let token = site.invite("bob@acme.test", "Bob");
    let mut synced = crate::authenticator::Soft::new(&site.origin);
    synced.flags |= crate::authenticator::BE | crate::authenticator::BS;
    assert_eq!(site.register(&mut synced, "bob@acme.test", Some(&token), None, &Default::default()).status, 201);
    let page = get(&authorize_url(&site, &admin, &p, &[]), None);
    assert!(page.body.contains("id=\"step-up\""), "{}", page.body);
    let request = request_id(&page);
    let bob = site.sign_in(&mut synced, Some("bob@acme.test"), &Default::default()).session_cookie().unwrap();
    let back = get(&format!("{}/authorize/resume?request={request}", site.base), Some(&bob));
    assert_eq!(param(&back_to_app(&back), "error"), Some("access_denied"));
    // A device-bound passkey: signed in, acr phrh.
    let (mut bound, _) = site.user_with_passkey("ada@acme.test");
    let (code, _) = code_flow(&site, &mut bound, "ada@acme.test", &admin, &p, &[]);
    let (_, id) = jwt_parts(exchange(&site, &admin, &code, &p).json()["id_token"].as_str().unwrap());
    assert_eq!(id["acr"], "phrh");

    // Relaxed to phr: Bob's synced passkey will do; none removes the requirement.
    d.cli(&["app", "update", "--tenant", "acme", &admin.client_id, "--require-acr", "phr"]).ok();
    let r = get(&authorize_url(&site, &admin, &p, &[]), Some(&bob));
    assert!(param(&location_params(&r), "code").is_some(), "{:?}", r.header("location"));
    let updated =
        d.cli(&["app", "update", "--tenant", "acme", &admin.client_id, "--require-acr", "none", "-o", "json"]);
    assert_eq!(updated.ok().json()["require_acr"], serde_json::Value::Null);
}
