//! Social login: what the daemon parses and checks of an upstream provider's answers (untrusted:
//! any provider an operator enables can be hostile) and of the browser's return to the callback.
//!
//! First byte: the mode; the second: the HTTP status of the answer (see [`status`]) or the mode's
//! switches; the rest is the mode's input:
//! 0. a discovery document for the issuer (second byte bit 6: configured with a trailing slash):
//!    `social::client::parse`, `oidc::check_discovery`, `social::callable_url` on every endpoint,
//!    `oidc::authorize_url`;
//! 1. a key set (JWKS): `client::parse`, `oidc::decode_keys`, then each key checks a signed token;
//! 2. the token endpoint's answer: `oidc::id_token_of`, then the ID token as in mode 4;
//! 3. `header JSON \0 claims JSON` of an ID token the target signs (second byte bit 0: with the
//!    provider's P-256 key, else its RSA key; bit 1: a Google provider; bit 2: the discovery
//!    document spells the issuer with a trailing slash), then `oidc::id_token_header` and
//!    `oidc::check_id_token` with the key its `kid` names, as `verify` does after the cache; an
//!    accepted token is checked against the claims it was made of;
//! 4. an ID token as text, checked as in mode 3;
//! 5. GitHub's answer to the code exchange: `github::access_token_of`;
//! 6. `/user \0 /user/emails \0 membership` bodies: `client::parse` of each, then
//!    `github::github_user`, checked against the e-mail list;
//! 7. the callback's `query \0 Cookie header[\0 Cookie header…]`: `http::social::callback_of`.

#![no_main]

use std::collections::HashMap;
use std::sync::OnceLock;

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use hyper::header::{COOKIE, HeaderMap, HeaderValue};
use jsonwebtoken::DecodingKey;
use jsonwebtoken::jwk::{JwkSet, KeyAlgorithm};
use latchkey_fuzz::{b64, split_at_byte};
use latchkey_domain::oidc::keys::{SigningKey, generate};
use latchkey_domain::params::Params;
use latchkey_domain::social::client::parse;
use latchkey_domain::social::github::{self, Email, Membership, User};
use latchkey_domain::social::oidc::{self, Discovery, Exchange};
use libfuzzer_sys::fuzz_target;
use serde::Deserialize;
use serde_json::{Value, json};

const ISSUER: &str = "https://idp.example.test";
const CLIENT_ID: &str = "latchkey-client";
const NONCE: &str = "n-0S6_WzA2Mj";
const NOW: i64 = 1_800_000_000;
/// `exp` may be this far in the past (the daemon's leeway).
const LEEWAY: f64 = 60.0;

/// The provider's two signing keys and its key set as the daemon decodes it.
struct Provider {
    rsa: SigningKey,
    ec: EcdsaKeyPair,
    keys: HashMap<String, (DecodingKey, Option<KeyAlgorithm>)>,
}

fn provider() -> &'static Provider {
    static P: OnceLock<Provider> = OnceLock::new();
    P.get_or_init(|| {
        let g = generate(2048).expect("RSA key");
        let rsa = SigningKey::from_pkcs8("rsa1", 2048, &g.pkcs8).expect("RSA signing key");
        let ec = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).expect("P-256 key");
        let point = ec.public_key().as_ref();
        let set = json!({"keys": [
            serde_json::to_value(&rsa.jwk).expect("RSA JWK"),
            {"kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": "ec1",
             "x": b64(&point[1..33]), "y": b64(&point[33..65])},
        ]});
        let set: JwkSet = serde_json::from_value(set).expect("key set");
        let keys = oidc::decode_keys(&set);
        assert_eq!(keys.len(), 2, "both fixture keys decode");
        Provider { rsa, ec, keys }
    })
}

/// HTTP statuses a provider may answer with; most inputs get 200.
fn status(b: u8) -> u16 {
    const OTHER: [u16; 12] = [201, 204, 299, 300, 302, 400, 401, 403, 404, 429, 500, 503];
    if b & 0x80 == 0 { 200 } else { OTHER[usize::from(b & 0x7f) % OTHER.len()] }
}

fn exchange(issuer: &str, google: bool) -> Exchange<'_> {
    Exchange {
        issuer,
        client_id: CLIENT_ID,
        client_secret: "secret",
        code: "code",
        verifier: "verifier",
        redirect_uri: "http://localhost:8080/acme/login/idp/callback",
        nonce: NONCE,
        google,
        now: NOW,
    }
}

/// What `oidc::verify` does once the discovery document is fetched: the header, the key its
/// `kid` names (an unknown one is refused), the signature and the claims. The claims of an
/// accepted token are checked against `made_of` when the target made the token.
fn check_token(token: &str, google: bool, trailing_slash: bool, made_of: Option<&[u8]>) {
    let p = provider();
    let issuer = if trailing_slash { format!("{ISSUER}/") } else { ISSUER.to_owned() };
    let Ok((alg, kid)) = oidc::id_token_header(token) else { return };
    let Some((key, _)) = p.keys.get(&kid) else { return };
    let x = exchange(ISSUER, google);
    let checked = oidc::check_id_token(&x, &issuer, token, alg, key);
    if latchkey_fuzz::verbose() {
        eprintln!("social: ID token: {checked:?}");
    }
    let Ok(claims) = checked else { return };
    // An accepted token keeps every promise of `check_id_token`'s doc, read here from the JSON
    // the target signed.
    let Some(made_of) = made_of else { return };
    let fail =
        |what: &str| -> ! { panic!("social: accepted an ID token {what}: {}", String::from_utf8_lossy(made_of)) };
    // Only the members read are decoded, as the daemon decodes them: members it does not read
    // are not validated (not even as UTF-8) by either, and are signed by the provider.
    let raw: Seen = serde_json::from_slice(made_of).unwrap_or_else(|e| fail(&format!("that does not decode ({e})")));
    if raw.nonce.as_ref().is_none_or(|n| n != NONCE) {
        fail("without our nonce");
    }
    if raw.sub.as_ref().and_then(Value::as_str) != Some(claims.sub.as_str()) || claims.sub.is_empty() {
        fail("whose sub is not the one reported, or empty");
    }
    let iss = raw.iss.as_ref().and_then(Value::as_str).unwrap_or_else(|| fail("without iss"));
    let without_scheme = issuer.split_once("://").map_or(issuer.as_str(), |(_, rest)| rest);
    if iss != issuer && !(google && iss == without_scheme) {
        fail("of another issuer");
    }
    if raw.exp.as_ref().and_then(Value::as_f64).is_none_or(|exp| exp + LEEWAY < NOW as f64) {
        fail("expired or without exp");
    }
    let aud_ok = match &raw.aud {
        Some(Value::String(a)) => a == CLIENT_ID,
        Some(Value::Array(a)) => a.iter().any(|v| v == CLIENT_ID),
        _ => false,
    };
    if !aud_ok {
        fail("not meant for us (aud)");
    }
    if raw.azp.as_ref().is_some_and(|azp| azp != CLIENT_ID) {
        fail("authorised for another party (azp)");
    }
    let verified = match &raw.email_verified {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s == "true",
        _ => false,
    };
    if claims.email_verified != verified || claims.email.as_deref() != raw.email.as_ref().and_then(Value::as_str) {
        fail("whose e-mail or its verification is not the one reported");
    }
}

/// The claims `check_id_token` decides on, each as it was sent (`null` reads as absent).
#[derive(Deserialize)]
struct Seen {
    iss: Option<Value>,
    sub: Option<Value>,
    aud: Option<Value>,
    exp: Option<Value>,
    azp: Option<Value>,
    nonce: Option<Value>,
    email: Option<Value>,
    email_verified: Option<Value>,
}

fn sign(header: &[u8], claims: &[u8], ec: bool) -> String {
    let p = provider();
    let mut token = format!("{}.{}", b64(header), b64(claims));
    let sig = if ec {
        p.ec.sign(&SystemRandom::new(), token.as_bytes()).map(|s| s.as_ref().to_vec()).unwrap_or_default()
    } else {
        p.rsa.sign_rs256(token.as_bytes()).unwrap_or_default()
    };
    token.push('.');
    token.push_str(&b64(&sig));
    token
}

fn discovery(body: &[u8], status: u16, trailing_slash: bool) {
    let issuer = if trailing_slash { format!("{ISSUER}/") } else { ISSUER.to_owned() };
    let url = format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/'));
    let Ok(d) = parse::<Discovery>(&url, status, body) else { return };
    if oidc::check_discovery(&issuer, &d).is_err() {
        return;
    }
    assert_eq!(d.issuer.trim_end_matches('/'), ISSUER, "social: a discovery document of another issuer passed");
    for endpoint in [&d.authorization_endpoint, &d.token_endpoint, &d.jwks_uri] {
        if let Ok(u) = latchkey_domain::social::callable_url(endpoint) {
            assert!(u.scheme() == "https" || u.scheme() == "http", "social: callable {endpoint:?}");
        }
    }
    let url = oidc::authorize_url(&d, CLIENT_ID, "http://localhost:8080/cb", "st&ate", "chal", NONCE);
    assert!(url.starts_with(&d.authorization_endpoint), "social: the authorization URL lost its endpoint");
}

fn jwks(body: &[u8], status: u16) {
    let Ok(set) = parse::<JwkSet>("https://idp.example.test/jwks", status, body) else { return };
    let keys = oidc::decode_keys(&set);
    let (rsa, ec) = (
        sign(br#"{"alg":"RS256","kid":"rsa1"}"#, br#"{"sub":"1"}"#, false),
        sign(br#"{"alg":"ES256","kid":"ec1"}"#, br#"{"sub":"1"}"#, true),
    );
    let x = exchange(ISSUER, false);
    for (key, _) in keys.values() {
        for token in [&rsa, &ec] {
            if let Ok((alg, _)) = oidc::id_token_header(token) {
                let _ = oidc::check_id_token(&x, ISSUER, token, alg, key);
            }
        }
    }
}

fn github_user(rest: &[u8]) {
    let (user, rest) = split_at_byte(rest, 0);
    let (emails, membership) = split_at_byte(rest, 0);
    let Ok(user) = parse::<User>("https://api.github.com/user", 200, user) else { return };
    let Ok(list) = parse::<Vec<Email>>("https://api.github.com/user/emails", 200, emails) else { return };
    let active = parse::<Membership>("https://api.github.com/user/memberships/orgs/acme", 200, membership)
        .is_ok_and(|m| m.is_active());
    let orgs = if active { vec!["acme".to_owned()] } else { vec![] };
    let who = github::github_user(user, list, orgs);
    // The e-mail reported is the first one both primary and verified, or none. (Decoded again
    // with the members read only: members not read are not validated, not even as UTF-8.)
    #[derive(Deserialize)]
    struct Seen {
        email: String,
        primary: Option<bool>,
        verified: Option<bool>,
    }
    let seen: Vec<Seen> = serde_json::from_slice(emails).expect("the e-mail list decodes again");
    let expected = seen.into_iter().find(|e| e.primary == Some(true) && e.verified == Some(true)).map(|e| e.email);
    assert_eq!(
        who.verified_email,
        expected,
        "social: GitHub e-mail chosen wrongly from {}",
        String::from_utf8_lossy(emails)
    );
    assert!(!who.id.is_empty() && who.id.bytes().all(|b| b.is_ascii_digit()), "social: GitHub id {:?}", who.id);
}

fn callback(rest: &[u8]) {
    let (query, cookies) = split_at_byte(rest, 0);
    let mut headers = HeaderMap::new();
    let mut cookies = cookies;
    while !cookies.is_empty() {
        let (one, more) = split_at_byte(cookies, 0);
        if let Ok(v) = HeaderValue::from_bytes(one) {
            headers.append(COOKIE, v);
        }
        cookies = more;
    }
    let cb = latchkeyd::http::social::callback_of(query, &headers, "latchkey_social", None);
    let q = Params::parse(query);
    for (name, got) in [("code", &cb.code), ("state", &cb.state), ("error", &cb.error)] {
        assert_eq!(got.as_deref(), q.get(name).ok().flatten(), "social: callback parameter {name}");
    }
    if let Some(b) = &cb.browser {
        assert!(!b.is_empty() && !b.contains(';'), "social: browser cookie {b:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    let [mode, second, rest @ ..] = data else { return };
    match mode % 8 {
        0 => discovery(rest, status(*second), second & 0x40 != 0),
        1 => jwks(rest, status(*second)),
        2 => {
            let Ok(answer) = serde_json::from_slice::<Value>(rest) else { return };
            if let Ok(token) = oidc::id_token_of(status(*second), &answer) {
                check_token(token, second & 2 != 0, second & 4 != 0, None);
            }
        }
        3 => {
            let (header, claims) = split_at_byte(rest, 0);
            let token = sign(header, claims, second & 1 != 0);
            check_token(&token, second & 2 != 0, second & 4 != 0, Some(claims));
        }
        4 => {
            if let Ok(token) = std::str::from_utf8(rest) {
                check_token(token, second & 2 != 0, second & 4 != 0, None);
            }
        }
        5 => {
            if let Ok(answer) = serde_json::from_slice::<Value>(rest) {
                let _ = github::access_token_of(status(*second), &answer);
            }
        }
        6 => github_user(rest),
        _ => callback(rest),
    }
});
