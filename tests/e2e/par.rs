//! Pushed authorization requests (RFC 9126): `openid-client` (npm) pushes its request to
//! `/par` and signs in with the `request_uri` it gets, for an app that requires it; a
//! `request_uri` is single use, its client's only and short-lived, and a pushed request is
//! checked before it is stored.

use serde_json::Value;

use crate::oidc_support::*;
use crate::support::*;

/// `POST /par` with the app's client authentication (HTTP Basic) and `form`.
fn push(site: &Site, app: &App, secret: &str, form: &[(&str, &str)]) -> Http {
    send_raw(
        "POST",
        &format!("{}/par", site.base),
        Some("application/x-www-form-urlencoded"),
        query(form).into_bytes(),
        &[("Authorization", &basic_auth(&app.client_id, secret))],
    )
}

fn request(app: &App) -> Vec<(&str, &str)> {
    vec![
        ("response_type", "code"),
        ("redirect_uri", app.redirect.as_str()),
        ("scope", "openid email"),
        ("state", "st-123"),
        ("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"),
        ("code_challenge_method", "S256"),
    ]
}

fn authorize_with(site: &Site, client_id: &str, request_uri: &str) -> Http {
    get(&format!("{}/authorize?{}", site.base, query(&[("client_id", client_id), ("request_uri", request_uri)])), None)
}

#[test]
fn openid_client_pushes_its_request_and_signs_in() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    d.cli(&["key", "rotate", "--tenant", "acme", "--alg", "ES256"]).ok();
    let web = app(&site, "web", &["--require-par", "--signing-alg", "ES256"]);
    let shown = d.cli(&["app", "show", "--tenant", "acme", &web.client_id, "-o", "json"]).ok().json();
    assert_eq!(shown["require_par"], true);
    let discovery = get(&format!("{}/.well-known/openid-configuration", site.base), None).json();
    assert_eq!(discovery["pushed_authorization_request_endpoint"], format!("{}/par", site.base));
    assert_eq!(discovery["require_pushed_authorization_requests"], false);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let secret = web.secret.clone().unwrap();
    let pushed = node("par-rp.mjs", &["push", &site.base, &web.client_id, &secret, &web.redirect, "ES256"]);
    let url = pushed["url"].as_str().unwrap_or_else(|| panic!("openid-client did not push: {pushed}")).to_owned();
    // The browser's URL carries the request_uri and the Client ID, nothing of the request.
    assert!(url.contains("request_uri=urn%3Aietf%3Aparams%3Aoauth%3Arequest_uri%3A"), "{url}");
    assert!(!url.contains("redirect_uri") && !url.contains("code_challenge") && !url.contains("state"), "{url}");
    let location = sign_in_at(&site, &url, &mut soft, "ada@acme.test");
    assert!(location.starts_with(&web.redirect), "{location}");
    let s = |k: &str| pushed[k].as_str().unwrap().to_owned();
    let done = node(
        "par-rp.mjs",
        &[
            "exchange",
            &site.base,
            &web.client_id,
            &secret,
            &location,
            &s("verifier"),
            &s("state"),
            &s("nonce"),
            "ES256",
        ],
    );
    assert_eq!(done["ok"], true, "openid-client: {done}");
    assert_eq!(done["alg"], "ES256");
    assert_eq!(done["claims"]["email"], "ada@acme.test");
    // The request_uri served once.
    let again = get(&url, None);
    assert_eq!(again.status, 400, "{}", again.body);
    assert!(again.body.contains("used already"), "{}", again.body);
}

#[test]
fn pushed_requests_are_single_use_their_clients_only_and_checked() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let web = app(&site, "web", &["--require-par"]);
    let other = app(&site, "web", &[]);
    let m2m = app(&site, "m2m", &[]);
    let secret = web.secret.clone().unwrap();
    let ok = push(&site, &web, &secret, &request(&web));
    assert_eq!(ok.status, 201, "{}", ok.body);
    assert_eq!(ok.header("cache-control"), Some("no-store"));
    let body = ok.json();
    assert_eq!(body["expires_in"], 60);
    let uri = body["request_uri"].as_str().unwrap().to_owned();
    assert!(uri.starts_with("urn:ietf:params:oauth:request_uri:"), "{uri}");
    assert_eq!(d.sql().i64("SELECT count(*) FROM pushed_requests"), 1);
    assert_eq!(d.sql().i64(&format!("SELECT count(*) FROM pushed_requests WHERE params LIKE '%{secret}%'")), 0);

    // Another application cannot use it.
    let r = authorize_with(&site, &other.client_id, &uri);
    assert_eq!(r.status, 400);
    assert!(r.body.contains("another application"), "{}", r.body);
    // (Another's attempt does not spend it: the client that pushed it still may use it.)
    assert_eq!(authorize_with(&site, &web.client_id, &uri).status, 200, "not spent by another");
    assert_eq!(authorize_with(&site, &web.client_id, &uri).status, 400, "spent");
    // Used once; its parameters, not the URL's, are the request's.
    let uri = push(&site, &web, &secret, &request(&web)).json()["request_uri"].as_str().unwrap().to_owned();
    let page = get(
        &format!(
            "{}/authorize?{}",
            site.base,
            query(&[("client_id", &web.client_id), ("request_uri", &uri), ("redirect_uri", "https://evil.example/cb")])
        ),
        None,
    );
    assert_eq!(page.status, 200, "the pushed redirect_uri stands: {}", page.body);
    assert_eq!(authorize_with(&site, &web.client_id, &uri).status, 400, "used");
    // Expired after 60 s.
    let uri = push(&site, &web, &secret, &request(&web)).json()["request_uri"].as_str().unwrap().to_owned();
    d.clock.advance(61);
    let r = authorize_with(&site, &web.client_id, &uri);
    assert_eq!(r.status, 400);
    assert!(r.body.contains("expired"), "{}", r.body);
    assert_eq!(authorize_with(&site, &web.client_id, "urn:ietf:params:oauth:request_uri:nope").status, 400);
    assert_eq!(authorize_with(&site, &web.client_id, "").status, 400, "no redirect_uri: nothing to send back to");
    // A request object's URL is not a pushed request: answered as before, at the redirect URI.
    let elsewhere =
        format!("{}&request_uri=https%3A%2F%2Frp.example%2Freq.jwt", authorize_url(&site, &other, &pkce(), &[]));
    let r = get(&elsewhere, None);
    assert_eq!(r.status, 302, "{}", r.body);
    assert_eq!(param(&location_params(&r), "error"), Some("request_uri_not_supported"));
    // A --require-par app's plain request goes back refused.
    let plain = get(&authorize_url(&site, &web, &pkce(), &[]), None);
    assert_eq!(plain.status, 302, "{}", plain.body);
    let params = location_params(&plain);
    assert_eq!(param(&params, "error"), Some("invalid_request"));
    assert!(param(&params, "error_description").unwrap().contains("/par"));
    // Another app still may send plain requests.
    assert_eq!(get(&authorize_url(&site, &other, &pkce(), &[]), None).status, 200);

    // Refused pushes store nothing.
    d.sql().exec("DELETE FROM pushed_requests");
    let before = d.snapshot();
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut f = request(&web);
        f.extend_from_slice(extra);
        f.into_iter().map(|(k, v)| (k, v.to_owned())).collect::<Vec<(&str, String)>>()
    };
    let cases: Vec<(Http, u16, &str)> = vec![
        (push(&site, &web, "wrong", &request(&web)), 401, "invalid_client"),
        (
            send_raw(
                "POST",
                &format!("{}/par", site.base),
                Some("application/x-www-form-urlencoded"),
                query(&request(&web)).into_bytes(),
                &[],
            ),
            401,
            "invalid_client",
        ),
        (push(&site, &web, &secret, &as_refs(&with(&[("request_uri", "urn:x")]))), 400, "invalid_request"),
        (push(&site, &web, &secret, &as_refs(&with(&[("request", "eyJ.x.y")]))), 400, "request_not_supported"),
        (push(&site, &web, &secret, &as_refs(&with(&[("scope", "openid")]))), 400, "invalid_request"),
        (
            push(&site, &web, &secret, &[("response_type", "code"), ("redirect_uri", "https://evil.example/cb")]),
            400,
            "invalid_request",
        ),
        (
            push(&site, &web, &secret, &[("response_type", "token"), ("redirect_uri", web.redirect.as_str())]),
            400,
            "unsupported_response_type",
        ),
        (push(&site, &m2m, m2m.secret.as_deref().unwrap(), &request(&web)), 400, "unauthorized_client"),
    ];
    for (i, (r, status, code)) in cases.iter().enumerate() {
        assert_eq!(r.status, *status, "case {i}: {}", r.body);
        assert_eq!(r.json()["error"], *code, "case {i}: {}", r.body);
    }
    assert_eq!(d.snapshot(), before, "nothing stored by a refused push");
    let r = d.cli(&["app", "create", "--tenant", "acme", "--name", "M", "--type", "m2m", "--require-par"]);
    assert!(r.code == 1 && r.stderr.contains("invalid_input"), "{}", r.stderr);
    // The flag can be turned off again.
    let off = d.cli(&["app", "update", "--tenant", "acme", &web.client_id, "--require-par", "false", "-o", "json"]);
    assert_eq!(off.ok().json()["require_par"], Value::Bool(false));
    assert_eq!(get(&authorize_url(&site, &web, &pkce(), &[]), None).status, 200);
}

fn as_refs<'a>(v: &'a [(&'a str, String)]) -> Vec<(&'a str, &'a str)> {
    v.iter().map(|(k, s)| (*k, s.as_str())).collect()
}
