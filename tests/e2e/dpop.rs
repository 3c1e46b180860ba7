//! DPoP (RFC 9449): `openid-client` (npm) binds a public client's tokens to its key through a
//! code flow, userinfo and a refresh, and gets client-credentials tokens for an app that
//! requires DPoP (answering our nonce); bound tokens work at the credentials API and userinfo
//! only with a fresh proof of their key; and every refused proof (replayed, for another URL or
//! method, stale, without `ath`, signed by another key) stores nothing.

use latchkey::admin::SigningAlg;
use latchkey_domain::clock::Clock;
use serde_json::{Value, json};

use crate::oidc_support::*;
use crate::support::*;

/// `POST /token` of a confidential app (HTTP Basic) with `form` and the `DPoP` headers given.
fn token_with(site: &Site, app: &App, form: &[(&str, &str)], proofs: &[&str]) -> Http {
    let auth = basic_auth(&app.client_id, app.secret.as_deref().unwrap());
    let mut headers = vec![("Authorization", auth.as_str())];
    headers.extend(proofs.iter().map(|p| ("DPoP", *p)));
    let body = query(form).into_bytes();
    send_raw("POST", &format!("{}/token", site.base), Some("application/x-www-form-urlencoded"), body, &headers)
}

fn client_credentials(site: &Site, app: &App, proofs: &[&str]) -> Http {
    token_with(site, app, &[("grant_type", "client_credentials")], proofs)
}

/// A resource call with `Authorization: <scheme> <token>` and the proofs given.
fn resource(method: &str, url: &str, scheme: &str, token: &str, proofs: &[&str]) -> Http {
    let auth = format!("{scheme} {token}");
    let mut headers = vec![("Authorization", auth.as_str())];
    headers.extend(proofs.iter().map(|p| ("DPoP", *p)));
    send_raw(method, url, None, vec![], &headers)
}

fn error_of(r: &Http) -> (u16, String) {
    (r.status, r.json()["error"].as_str().unwrap_or_default().to_owned())
}

#[test]
fn openid_client_binds_a_public_clients_tokens_to_its_key() {
    let d = TestDaemon::start();
    past_start(&d);
    let site = Site::new(&d, "acme", &[]);
    let discovery = get(&format!("{}/.well-known/openid-configuration", site.base), None).json();
    assert_eq!(discovery["dpop_signing_alg_values_supported"], json!(["RS256", "ES256", "EdDSA", "Ed25519"]));
    let spa = app(&site, "spa", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let started = node("dpop-rp.mjs", &["url", &site.base, &spa.client_id, &spa.redirect]);
    let url = started["url"].as_str().unwrap_or_else(|| panic!("openid-client made no URL: {started}")).to_owned();
    let location = sign_in_at(&site, &url, &mut soft, "ada@acme.test");
    let s = |k: &str| started[k].as_str().unwrap().to_owned();
    let args = ["exchange", &site.base, &spa.client_id, &location, &s("verifier"), &s("state"), &s("nonce"), "ES256"];
    let done = node("dpop-rp.mjs", &args);
    assert_eq!(done["ok"], true, "openid-client with DPoP: {done}");
    assert!(done["token_type"].as_str().unwrap().eq_ignore_ascii_case("DPoP"), "{done}");
    assert_eq!(done["cnf"]["jkt"], done["jkt"], "the access token is bound to the client's key: {done}");
    assert_eq!(done["userinfo"]["email"], "ada@acme.test");
    // The same token with another key's proof, and the refresh token rotated with another key:
    // refused, and the refresh token still rotates with the right key afterwards.
    assert_eq!(done["other_key"]["userinfo"]["ok"], false, "{done}");
    assert_eq!(done["other_key"]["refresh"]["error"], "invalid_dpop_proof", "{done}");
    assert!(done["refreshed"]["token_type"].as_str().unwrap().eq_ignore_ascii_case("DPoP"));
    assert_eq!(done["refreshed"]["cnf"]["jkt"], done["jkt"]);
    assert_eq!(done["userinfo_after_refresh"]["email"], "ada@acme.test");
    // A bound token presented as a Bearer token is refused.
    let bound = done["access_token"].as_str().unwrap();
    let r = userinfo(&site, bound);
    assert_eq!(error_of(&r), (401, "invalid_token".to_owned()), "{}", r.body);
    assert!(r.body.contains("DPoP-bound"), "{}", r.body);
}

#[test]
fn an_app_that_requires_dpop_gets_bound_tokens_with_a_nonce() {
    let d = TestDaemon::start();
    past_start(&d);
    let site = Site::new(&d, "acme", &[]);
    let other_site = Site::new(&d, "other", &[]);
    let m2m = app(&site, "m2m", &["--require-dpop"]);
    let shown = d.cli(&["app", "show", "--tenant", "acme", &m2m.client_id, "-o", "json"]).ok().json();
    assert_eq!(shown["require_dpop"], true);
    // openid-client answers our use_dpop_nonce and gets a bound token, with each algorithm.
    for alg in ["ES256", "EdDSA", "RS256"] {
        let secret = m2m.secret.as_deref().unwrap();
        let js = node("dpop-rp.mjs", &["cc", &site.base, &m2m.client_id, secret, alg]);
        assert_eq!(js["ok"], true, "openid-client with {alg}: {js}");
        assert_eq!(js["cnf"]["jkt"], js["jkt"], "{js}");
    }
    let before = d.snapshot();
    let r = client_credentials(&site, &m2m, &[]);
    assert_eq!(error_of(&r), (400, "invalid_dpop_proof".to_owned()), "no proof: {}", r.body);
    let k = holder(SigningAlg::ES256);
    let htu = format!("{}/token", site.base);
    let r = client_credentials(&site, &m2m, &[&k.proof(&d, "POST", &htu, json!({}))]);
    assert_eq!(error_of(&r), (400, "use_dpop_nonce".to_owned()), "no nonce: {}", r.body);
    let nonce = r.header("DPoP-Nonce").expect("a nonce with use_dpop_nonce").to_owned();
    // Another tenant's nonce is not this one's.
    let theirs = client_credentials(&other_site, &m2m, &[&k.proof(&d, "POST", &htu, json!({}))]);
    let their_nonce = theirs.header("DPoP-Nonce").unwrap().to_owned();
    let r = client_credentials(&site, &m2m, &[&k.proof(&d, "POST", &htu, json!({"nonce": their_nonce}))]);
    assert_eq!(error_of(&r), (400, "use_dpop_nonce".to_owned()), "{}", r.body);
    assert_eq!(before, d.snapshot(), "refused proofs store nothing");
    let r = client_credentials(&site, &m2m, &[&k.proof(&d, "POST", &htu, json!({"nonce": nonce}))]);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["token_type"], "DPoP");
    assert!(r.header("DPoP-Nonce").is_some(), "every answer to a proof carries the next nonce");
    let (_, claims) = jwt_parts(r.json()["access_token"].as_str().unwrap());
    assert_eq!(claims["cnf"]["jkt"], k.jkt());
    // A nonce lasts its minute and the next; then the client is told the new one.
    d.clock.advance(121);
    let r = client_credentials(&site, &m2m, &[&k.proof(&d, "POST", &htu, json!({"nonce": nonce}))]);
    assert_eq!(error_of(&r), (400, "use_dpop_nonce".to_owned()), "{}", r.body);
    assert_ne!(r.header("DPoP-Nonce"), Some(nonce.as_str()));
    // A minute after the start, proofs are remembered in memory: a replay is still refused.
    let fresh = k.proof(&d, "POST", &htu, json!({"nonce": r.header("DPoP-Nonce").unwrap()}));
    assert_eq!(client_credentials(&site, &m2m, &[&fresh]).status, 200);
    let r = client_credentials(&site, &m2m, &[&fresh]);
    assert_eq!(error_of(&r), (400, "invalid_dpop_proof".to_owned()), "a replay: {}", r.body);
    // Without --require-dpop the app may send proofs or not.
    d.cli(&["app", "update", "--tenant", "acme", &m2m.client_id, "--require-dpop", "false"]).ok();
    let r = client_credentials(&site, &m2m, &[]);
    assert_eq!((r.status, r.json()["token_type"].as_str()), (200, Some("Bearer")), "{}", r.body);
    let r = client_credentials(&site, &m2m, &[&k.proof(&d, "POST", &htu, json!({}))]);
    assert_eq!((r.status, r.json()["token_type"].as_str()), (200, Some("DPoP")), "{}", r.body);
}

#[test]
fn refused_proofs_at_the_token_endpoint_store_nothing() {
    let d = TestDaemon::start();
    past_start(&d);
    let site = Site::new(&d, "acme", &[]);
    let m2m = app(&site, "m2m", &[]);
    let k = holder(SigningAlg::ES256);
    let htu = format!("{}/token", site.base);
    let now = d.clock.now();
    let good = |extra: Value| k.proof(&d, "POST", &htu, extra);
    let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": k.jwk});
    let claims = json!({"jti": "j-1", "htm": "POST", "htu": htu, "iat": now});
    let with_header = |h: Value| k.sign(&h, &claims);
    let mut private = holder(SigningAlg::ES256);
    private.jwk["d"] = json!("jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI");
    let another = holder(SigningAlg::EdDSA);
    let hs256 = {
        let input = format!(
            "{}.{}",
            b64(json!({"typ": "dpop+jwt", "alg": "HS256", "jwk": k.jwk}).to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, k.jwk.to_string().as_bytes());
        format!("{input}.{}", b64(aws_lc_rs::hmac::sign(&key, input.as_bytes()).as_ref()))
    };
    let mut cases: Vec<(&str, Vec<String>)> = vec![
        ("another URL", vec![k.proof(&d, "POST", &format!("{}/par", site.base), json!({}))]),
        ("another tenant's URL", vec![k.proof(&d, "POST", "http://127.0.0.1:1/other/token", json!({}))]),
        ("another method", vec![k.proof(&d, "GET", &htu, json!({}))]),
        ("a stale iat", vec![good(json!({"iat": now - 61}))]),
        ("an iat ahead", vec![good(json!({"iat": now + 61}))]),
        ("a JWT typ", vec![with_header(json!({"typ": "JWT", "alg": "ES256", "jwk": k.jwk}))]),
        (
            "alg none",
            vec![format!("{}.{}.", b64(br#"{"typ":"dpop+jwt","alg":"none"}"#), b64(claims.to_string().as_bytes()))],
        ),
        ("HS256 keyed with the JWK", vec![hs256]),
        ("signed by another key", vec![another.sign(&header, &claims)]),
        ("EdDSA named for an EC key", vec![with_header(json!({"typ": "dpop+jwt", "alg": "EdDSA", "jwk": k.jwk}))]),
        ("a private key in the header", vec![private.proof(&d, "POST", &htu, json!({}))]),
        ("a stranger's nonce", vec![good(json!({"nonce": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}))]),
        ("two DPoP headers", vec![good(json!({})), good(json!({}))]),
        ("not a JWT", vec!["not-a-jwt".to_owned()]),
    ];
    // A daemon on SQLite refuses proofs dated up to its start (PostgreSQL records them all).
    if backend() == Backend::Sqlite {
        cases.push(("dated at the daemon's start", vec![good(json!({"iat": now - 1}))]));
    }
    let before = d.snapshot();
    for (case, proofs) in &cases {
        let refs: Vec<&str> = proofs.iter().map(String::as_str).collect();
        let r = client_credentials(&site, &m2m, &refs);
        let expected = if case.contains("nonce") { "use_dpop_nonce" } else { "invalid_dpop_proof" };
        assert_eq!(error_of(&r), (400, expected.to_owned()), "{case}: {}", r.body);
        assert!(r.header("WWW-Authenticate").is_none(), "{case}: a 400 at the token endpoint carries no challenge");
    }
    assert_eq!(before, d.snapshot(), "refused proofs store nothing");
    // A good proof is accepted once.
    let proof = good(json!({}));
    let r = client_credentials(&site, &m2m, &[&proof]);
    assert_eq!(r.status, 200, "{}", r.body);
    let r = client_credentials(&site, &m2m, &[&proof]);
    assert_eq!(error_of(&r), (400, "invalid_dpop_proof".to_owned()), "a replay: {}", r.body);
    assert!(r.body.contains("used before"), "{}", r.body);
}

#[test]
fn bound_tokens_need_a_fresh_proof_at_the_credentials_api_and_userinfo() {
    let d = TestDaemon::start();
    past_start(&d);
    let site = Site::new(&d, "acme", &[]);
    let web = app(&site, "web", &["--scope", "openid", "--scope", "email", "--scope", "credentials"]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let pkce = pkce();
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &pkce, &[("scope", "openid email credentials")]);
    let k = holder(SigningAlg::EdDSA);
    let htu = format!("{}/token", site.base);
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", web.redirect.as_str()),
        ("code_verifier", pkce.verifier.as_str()),
    ];
    let r = token_with(&site, &web, &form, &[&k.proof(&d, "POST", &htu, json!({}))]);
    assert_eq!(r.status, 200, "{}", r.body);
    let tokens = r.json();
    assert_eq!(tokens["token_type"], "DPoP");
    let at = tokens["access_token"].as_str().unwrap().to_owned();
    let credentials = format!("{}/api/credentials", site.base);
    let info = format!("{}/userinfo", site.base);
    // With a proof of the key, for this URL and method, with the token's hash.
    let r = resource("GET", &credentials, "DPoP", &at, &[&k.for_resource(&d, "GET", &credentials, &at)]);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.header("DPoP-Nonce").is_some());
    let r = resource("GET", &info, "DPoP", &at, &[&k.for_resource(&d, "GET", &info, &at)]);
    assert_eq!((r.status, r.json()["email"].as_str()), (200, Some("ada@acme.test")), "{}", r.body);
    // Introspection tells a resource server the key.
    let intro = client_post(&site, &web, "introspect", &[("token", &at)]).json();
    assert_eq!(intro["cnf"]["jkt"], k.jkt(), "{intro}");
    // Refusals, each a 401 with a DPoP challenge (or a Bearer one for the scheme), nothing stored.
    let other = holder(SigningAlg::ES256);
    let replayed = k.for_resource(&d, "GET", &credentials, &at);
    assert_eq!(resource("GET", &credentials, "DPoP", &at, &[&replayed]).status, 200);
    let cases: Vec<(&str, &str, Vec<String>, &str)> = vec![
        ("as a Bearer token", "Bearer", vec![], "invalid_token"),
        ("without a proof", "DPoP", vec![], "invalid_dpop_proof"),
        ("without ath", "DPoP", vec![k.proof(&d, "GET", &credentials, json!({}))], "invalid_dpop_proof"),
        ("another token's ath", "DPoP", vec![k.for_resource(&d, "GET", &credentials, "another")], "invalid_dpop_proof"),
        ("for userinfo", "DPoP", vec![k.for_resource(&d, "GET", &info, &at)], "invalid_dpop_proof"),
        ("another key", "DPoP", vec![other.for_resource(&d, "GET", &credentials, &at)], "invalid_token"),
        ("replayed", "DPoP", vec![replayed], "invalid_dpop_proof"),
    ];
    let before = d.snapshot();
    for (case, scheme, proofs, code) in &cases {
        let refs: Vec<&str> = proofs.iter().map(String::as_str).collect();
        let r = resource("GET", &credentials, scheme, &at, &refs);
        assert_eq!(error_of(&r), (401, (*code).to_owned()), "{case}: {}", r.body);
        let challenge = r.header("WWW-Authenticate").unwrap_or_default();
        let scheme_of_challenge = if *code == "invalid_token" { "Bearer " } else { "DPoP " };
        assert!(challenge.starts_with(scheme_of_challenge), "{case}: {challenge}");
    }
    // RFC 9449 §7.1's answer to a proof of another key, with the DPoP challenge.
    let r = resource("GET", &info, "DPoP", &at, &[&other.for_resource(&d, "GET", &info, &at)]);
    assert_eq!(error_of(&r), (401, "invalid_token".to_owned()), "{}", r.body);
    let challenge = r.header("WWW-Authenticate").unwrap_or_default();
    assert!(challenge.starts_with("DPoP error=\"invalid_token\"") && challenge.contains("Ed25519"), "{challenge}");
    let r = resource("GET", &info, "DPoP", &at, &[]);
    assert!(r.header("WWW-Authenticate").unwrap_or_default().starts_with("DPoP error=\"invalid_dpop_proof\""));
    assert_eq!(before, d.snapshot(), "refused proofs store nothing");
    // A confidential client's refresh token is not bound: it rotates without a proof, and its
    // new access token is a Bearer token.
    let r = token_with(
        &site,
        &web,
        &[("grant_type", "refresh_token"), ("refresh_token", tokens["refresh_token"].as_str().unwrap())],
        &[],
    );
    assert_eq!((r.status, r.json()["token_type"].as_str()), (200, Some("Bearer")), "{}", r.body);
    let bearer = r.json()["access_token"].as_str().unwrap().to_owned();
    assert_eq!(resource("GET", &credentials, "Bearer", &bearer, &[]).status, 200);
    // An unbound token with the DPoP scheme is refused.
    let r = resource("GET", &credentials, "DPoP", &bearer, &[&k.for_resource(&d, "GET", &credentials, &bearer)]);
    assert_eq!(error_of(&r), (401, "invalid_token".to_owned()), "{}", r.body);
}
