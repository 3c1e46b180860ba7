//! Adversarial OpenID Connect requests, each asserting the outcome and that nothing was stored.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::json;

use crate::oidc_support::*;
use crate::support::*;

#[test]
fn redirect_uri_must_match_exactly_and_errors_never_redirect_there() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let web = app(&site, "web", &[]);
    let p = pkce();
    let before = d.snapshot_of(OIDC_TABLES);
    for bad in [
        "https://app.example.com/oidc-callback/extra",
        "https://app.example.com/oidc",
        "https://app.example.com/OIDC-CALLBACK",
        "https://APP.example.com/oidc-callback",
        "https://app.example.com/oidc-callback/",
        "https://app.example.com/oidc-callback?next=/admin",
        "https://app.example.com/oidc-callback#frag",
        "https://user@app.example.com/oidc-callback",
        "https://app.example.com.evil.test/oidc-callback",
        "http://app.example.com/oidc-callback",
    ] {
        let r = get(&authorize_url(&site, &web, &p, &[("redirect_uri", bad)]), None);
        assert_eq!(r.status, 400, "{bad}");
        assert!(r.header("location").is_none(), "{bad}: never redirected");
        assert!(r.body.contains("Invalid redirect URI"), "{bad}: {}", r.body);
        assert!(r.header("content-security-policy").unwrap().contains("frame-ancestors 'none'"));
    }
    let r = get(
        &authorize_url(
            &site,
            &App { client_id: "nobody".into(), secret: None, redirect: web.redirect.clone() },
            &p,
            &[],
        ),
        None,
    );
    assert_eq!(r.status, 400);
    assert!(r.body.contains("Invalid redirect URI"));
    // The same client id in another tenant is unknown there.
    let other = Site::new(&d, "other", &[]);
    let r = get(&authorize_url(&other, &web, &p, &[]), None);
    assert_eq!(r.status, 400);
    assert_eq!(d.snapshot_of(OIDC_TABLES), before);
}

#[test]
fn authorize_errors_go_back_with_error_and_state() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let spa = App { redirect: "https://app.example.com/oidc-callback".into(), ..app(&site, "spa", &[]) };
    let p = pkce();
    let before = d.snapshot_of(OIDC_TABLES);
    for (extra, error) in [
        (vec![("code_challenge", ""), ("code_challenge_method", "")], "invalid_request"),
        (vec![("code_challenge_method", "plain")], "invalid_request"),
        (vec![("code_challenge", "too-short")], "invalid_request"),
        (vec![("code_challenge_method", "S512")], "invalid_request"),
        (vec![("response_type", "token")], "unsupported_response_type"),
        (vec![("response_type", "")], "invalid_request"),
        (vec![("scope", "openid admin")], "invalid_scope"),
        (vec![("max_age", "-1")], "invalid_request"),
        (vec![("prompt", "none login")], "invalid_request"),
        (vec![("prompt", "none")], "login_required"),
        // What discovery says is unsupported is refused, not ignored.
        (vec![("response_mode", "fragment")], "invalid_request"),
        (vec![("response_mode", "form_post")], "invalid_request"),
        (vec![("request", "eyJhbGciOiJub25lIn0.e30.")], "request_not_supported"),
        (vec![("request_uri", "https://app.example.com/r/1")], "request_uri_not_supported"),
        // Bounded, since a pending request keeps them.
        (vec![("nonce", &"n".repeat(2049))], "invalid_request"),
        (vec![("login_hint", &format!("{}@x.test", "a".repeat(320)))], "invalid_request"),
    ] {
        let r = get(&authorize_url(&site, &spa, &p, &extra), None);
        assert_eq!(r.status, 302, "{extra:?}: {}", r.body);
        let params = location_params(&r);
        assert_eq!(param(&params, "error"), Some(error), "{extra:?}");
        assert_eq!(param(&params, "state"), Some("st-123"), "{extra:?}");
    }
    let long_state = "s".repeat(2049);
    let r = get(&authorize_url(&site, &spa, &p, &[("state", &long_state)]), None);
    assert_eq!(param(&location_params(&r), "error"), Some("invalid_request"));
    let m2m = App { redirect: "https://app.example.com/oidc-callback".into(), ..app(&site, "m2m", &[]) };
    let _ = m2m;
    assert_eq!(d.snapshot_of(OIDC_TABLES), before);
    // response_mode=query, the default, said outright.
    let r = get(&authorize_url(&site, &spa, &p, &[("response_mode", "query")]), None);
    assert_eq!(r.status, 200, "the login page: {}", r.body);
}

#[test]
fn code_redemption_rules() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let other_site = Site::new(&d, "other", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let web2 = app(&site, "web", &[]);
    let p = pkce();

    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let refused = |r: Http, status: u16, error: &str| {
        assert_eq!((r.status, r.json()["error"].as_str().unwrap_or("")), (status, error), "{}", r.body);
    };
    let before = d.snapshot_of(OIDC_TABLES);
    // Wrong verifier, no verifier, wrong redirect_uri, another client, another tenant, bad secret.
    refused(exchange(&site, &web, &code, &pkce()), 400, "invalid_grant");
    refused(
        token(&site, &web, &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", &web.redirect)]),
        400,
        "invalid_grant",
    );
    refused(
        token(
            &site,
            &web,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", "https://app.example.com/other"),
                ("code_verifier", &p.verifier),
            ],
        ),
        400,
        "invalid_grant",
    );
    refused(exchange(&site, &web2, &code, &p), 400, "invalid_grant");
    refused(exchange(&other_site, &web, &code, &p), 401, "invalid_client");
    let wrong = App {
        secret: Some("not-the-secret".into()),
        ..App { client_id: web.client_id.clone(), secret: None, redirect: web.redirect.clone() }
    };
    let r = exchange(&site, &wrong, &code, &p);
    refused(r, 401, "invalid_client");
    refused(
        token(&site, &web, &[("grant_type", "password"), ("username", "ada"), ("password", "x")]),
        400,
        "unsupported_grant_type",
    );
    refused(token(&site, &web, &[("code", &code)]), 400, "invalid_request");
    let not_form =
        send_json("POST", &format!("{}/token", site.base), &json!({"grant_type": "client_credentials"}), &[]);
    refused(not_form, 400, "invalid_request");
    assert_eq!(d.snapshot_of(OIDC_TABLES), before, "failed redemptions change nothing");

    // Reuse: the first redemption works; the second fails and revokes what the first issued,
    // rotations of its refresh token included (the code's row names the grant's family).
    let first = exchange(&site, &web, &code, &p).json();
    let refresh = |t: &str| token(&site, &web, &[("grant_type", "refresh_token"), ("refresh_token", t)]);
    let rotated = refresh(first["refresh_token"].as_str().unwrap()).json();
    refused(exchange(&site, &web, &code, &p), 400, "invalid_grant");
    assert_eq!(userinfo(&site, first["access_token"].as_str().unwrap()).status, 401, "access token revoked");
    assert_eq!(userinfo(&site, rotated["access_token"].as_str().unwrap()).status, 401, "and the rotated one");
    refused(refresh(rotated["refresh_token"].as_str().unwrap()), 400, "invalid_grant");

    // Expired: 61 s on the daemon's clock.
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    d.clock.advance(61);
    let before = d.snapshot_of(OIDC_TABLES);
    refused(exchange(&site, &web, &code, &p), 400, "invalid_grant");
    assert_eq!(d.snapshot_of(OIDC_TABLES), before);
}

#[test]
fn a_replayed_code_redeemed_before_its_row_named_the_family_still_revokes_the_grant() {
    // Codes redeemed by a release before migration 0009 have no family in their row: a replay
    // then finds the grant through the refresh tokens the code issued.
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let first = exchange(&site, &web, &code, &p).json();
    let refresh = |t: &str| token(&site, &web, &[("grant_type", "refresh_token"), ("refresh_token", t)]);
    let rotated = refresh(first["refresh_token"].as_str().unwrap()).json();
    let sql = d.store.sql();
    assert_eq!(sql.i64("SELECT count(*) FROM authorization_codes WHERE family IS NOT NULL"), 1);
    sql.exec("UPDATE authorization_codes SET family = NULL");

    let r = exchange(&site, &web, &code, &p);
    assert_eq!((r.status, r.json()["error"].as_str().unwrap_or("")), (400, "invalid_grant"), "{}", r.body);
    assert_eq!(userinfo(&site, first["access_token"].as_str().unwrap()).status, 401, "access token revoked");
    assert_eq!(userinfo(&site, rotated["access_token"].as_str().unwrap()).status, 401, "and the rotated one");
    let r = refresh(rotated["refresh_token"].as_str().unwrap());
    assert_eq!((r.status, r.json()["error"].as_str().unwrap_or("")), (400, "invalid_grant"), "{}", r.body);
}

#[test]
fn a_verifier_for_a_code_issued_without_a_challenge_is_refused() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, _) = code_flow(
        &site,
        &mut soft,
        "ada@acme.test",
        &web,
        &p,
        &[("code_challenge", ""), ("code_challenge_method", "")],
    );
    let before = d.snapshot_of(OIDC_TABLES);
    let r = exchange(&site, &web, &code, &p);
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (400, "invalid_grant"));
    assert_eq!(d.snapshot_of(OIDC_TABLES), before);
    // Without a verifier, this confidential client's code is good.
    let r =
        token(&site, &web, &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", &web.redirect)]);
    assert_eq!(r.status, 200, "{}", r.body);
}

#[test]
fn twenty_parallel_redemptions_of_one_code_yield_one_success() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let statuses: Vec<u16> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..20).map(|_| s.spawn(|| exchange(&site, &web, &code, &p).status)).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 1, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 400).count(), 19, "{statuses:?}");
    let families = d.sql().i64("SELECT count(DISTINCT family) FROM refresh_tokens");
    assert_eq!(families, 1);
}

#[test]
fn forged_and_foreign_tokens_are_refused() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let other = Site::new(&d, "other", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let t = exchange(&site, &web, &code, &p).json();
    let access = t["access_token"].as_str().unwrap();
    let (header, claims) = jwt_parts(access);
    let b64 = |v: &serde_json::Value| URL_SAFE_NO_PAD.encode(serde_json::to_vec(v).unwrap());

    // alg: none
    let none = format!("{}.{}.", b64(&json!({"alg": "none", "typ": "at+jwt"})), b64(&claims));
    // HS256 signed with the tenant's public key as the HMAC secret (the classic confusion attack).
    let jwks = get(&format!("{}/.well-known/jwks.json", site.base), None).json();
    let n = jwks["keys"][0]["n"].as_str().unwrap();
    let hs_header = json!({"alg": "HS256", "typ": "at+jwt", "kid": header["kid"]});
    let signing_input = format!("{}.{}", b64(&hs_header), b64(&claims));
    let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, n.as_bytes());
    let tag = aws_lc_rs::hmac::sign(&key, signing_input.as_bytes());
    let hs256 = format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(tag.as_ref()));
    // Tampered claims with the original signature.
    let mut elevated = claims.clone();
    elevated["scope"] = json!("openid profile email credentials");
    let parts: Vec<&str> = access.split('.').collect();
    let tampered = format!("{}.{}.{}", parts[0], b64(&elevated), parts[2]);
    // A token of another tenant (its own key and issuer) presented here, and ours presented there.
    let (other_soft_user, _) = other.user_with_passkey("bob@other.test");
    let _ = other_soft_user;
    for (what, bad, at) in [
        ("alg none", none.as_str(), &site),
        ("HS256 with the public key", hs256.as_str(), &site),
        ("tampered claims", tampered.as_str(), &site),
        ("our token at another tenant", access, &other),
        ("garbage", "not.a.jwt", &site),
    ] {
        let r = userinfo(at, bad);
        assert_eq!(r.status, 401, "{what}: {}", r.body);
        assert!(r.header("www-authenticate").unwrap().contains("error=\"invalid_token\""), "{what}");
    }
    // The ID token is not an access token.
    assert_eq!(userinfo(&site, t["id_token"].as_str().unwrap()).status, 401);
    // Expired: an hour and a bit later.
    d.clock.advance(3601);
    assert_eq!(userinfo(&site, access).status, 401);
}

#[test]
fn cors_only_for_configured_origins() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    app(&site, "spa", &["--cors-origin", "https://app.example.com"]);
    let pre = |origin: &str| {
        send_raw(
            "OPTIONS",
            &format!("{}/token", site.base),
            None,
            vec![],
            &[("Origin", origin), ("Access-Control-Request-Method", "POST")],
        )
    };
    let ok = pre("https://app.example.com");
    assert_eq!(ok.status, 204);
    assert_eq!(ok.header("access-control-allow-origin"), Some("https://app.example.com"));
    // The methods the endpoint takes: the token endpoint is POST only.
    assert_eq!(ok.header("access-control-allow-methods"), Some("POST, OPTIONS"));
    let no = pre("https://evil.example");
    assert!(no.header("access-control-allow-origin").is_none());
    let authz =
        send_raw("GET", &format!("{}/authorize", site.base), None, vec![], &[("Origin", "https://app.example.com")]);
    assert!(authz.header("access-control-allow-origin").is_none(), "no CORS on /authorize");
}

#[test]
fn the_authorization_endpoint_takes_a_form_post_as_it_takes_a_get() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let post = |url: &str, cookie: Option<&str>| {
        let (_, form) = url.split_once('?').unwrap();
        let headers: Vec<(&str, &str)> = cookie.map(|c| ("Cookie", c)).into_iter().collect();
        send_raw(
            "POST",
            &format!("{}/authorize", site.base),
            Some("application/x-www-form-urlencoded"),
            form.as_bytes().to_vec(),
            &headers,
        )
    };
    // Without a session (a cross-site POST carries no Lax cookie): the login page.
    let page = post(&authorize_url(&site, &web, &p, &[]), None);
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(!request_id(&page).is_empty());
    // With one: straight back with a code, which redeems.
    let (_, cookie) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let back = post(&authorize_url(&site, &web, &p, &[]), Some(&cookie));
    assert_eq!(back.status, 302, "{}", back.body);
    let params = location_params(&back);
    assert_eq!(param(&params, "state"), Some("st-123"));
    let code = param(&params, "code").expect("code").to_owned();
    assert_eq!(exchange(&site, &web, &code, &p).status, 200);
    // The same rules: a redirect URI not registered is an error page, never a redirect.
    let bad = post(&authorize_url(&site, &web, &p, &[("redirect_uri", "https://evil.example/cb")]), Some(&cookie));
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert!(bad.header("location").is_none());
}
