#![allow(dead_code)]

//! Helpers for OpenID Connect tests: an application of a test tenant, PKCE, the authorize → login
//! → code round trip with the software authenticator, and token requests.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use latchkey::admin::SigningAlg;
use latchkey_domain::oidc::keys::{SigningKey, generate_for};
use serde_json::{Value, json};

use crate::authenticator::{Soft, Tamper};
use crate::support::*;

#[derive(Clone)]
pub struct App {
    pub client_id: String,
    pub secret: Option<String>,
    pub redirect: String,
}

pub fn app(site: &Site, kind: &str, extra: &[&str]) -> App {
    let redirect = "https://app.example.com/oidc-callback".to_owned();
    // App names are unique per tenant: the first is "Portal", the next "Portal 2", …
    let existing = site.d.cli(&["app", "list", "--tenant", &site.slug, "-o", "json"]).ok().json();
    let n = existing.as_array().map_or(0, Vec::len);
    let name = if n == 0 { "Portal".to_owned() } else { format!("Portal {}", n + 1) };
    let mut args = vec!["app", "create", "--tenant", &site.slug, "--name", &name, "--type", kind, "-o", "json"];
    if kind != "m2m" {
        args.extend_from_slice(&["--redirect-uri", &redirect]);
    }
    args.extend_from_slice(extra);
    let a = site.d.cli(&args).ok().json();
    App {
        client_id: a["client_id"].as_str().unwrap().to_owned(),
        secret: a["client_secret"].as_str().map(str::to_owned),
        redirect,
    }
}

pub struct Pkce {
    pub verifier: String,
    pub challenge: String,
}

pub fn pkce() -> Pkce {
    let mut raw = [0u8; 32];
    aws_lc_rs::rand::SecureRandom::fill(&aws_lc_rs::rand::SystemRandom::new(), &mut raw).unwrap();
    let verifier = URL_SAFE_NO_PAD.encode(raw);
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, verifier.as_bytes());
    Pkce { challenge: URL_SAFE_NO_PAD.encode(digest.as_ref()), verifier }
}

pub fn query(pairs: &[(&str, &str)]) -> String {
    let mut s = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        s.append_pair(k, v);
    }
    s.finish()
}

/// GET without following redirects, with an optional cookie.
pub fn get(url: &str, cookie: Option<&str>) -> Http {
    let headers: Vec<(&str, &str)> = cookie.map(|c| vec![("Cookie", c)]).unwrap_or_default();
    send_raw("GET", url, None, vec![], &headers)
}

pub fn authorize_url(site: &Site, app: &App, pkce: &Pkce, extra: &[(&str, &str)]) -> String {
    let mut pairs = vec![
        ("response_type", "code"),
        ("client_id", app.client_id.as_str()),
        ("redirect_uri", app.redirect.as_str()),
        ("scope", "openid profile email"),
        ("state", "st-123"),
        ("nonce", "n-456"),
        ("code_challenge", pkce.challenge.as_str()),
        ("code_challenge_method", "S256"),
    ];
    for (k, v) in extra {
        pairs.retain(|(n, _)| n != k);
        if !v.is_empty() {
            pairs.push((k, v));
        }
    }
    format!("{}/authorize?{}", site.base, query(&pairs))
}

/// The pending request id on a login page.
pub fn request_id(page: &Http) -> String {
    let marker = "data-request=\"";
    let start = page.body.find(marker).unwrap_or_else(|| panic!("not a login page: {}", page.body)) + marker.len();
    page.body[start..].split('"').next().unwrap().to_owned()
}

/// Query parameters of a redirect's Location.
pub fn location_params(r: &Http) -> Vec<(String, String)> {
    let loc = r.header("location").unwrap_or_else(|| panic!("no redirect: {} {}", r.status, r.body));
    let q = loc.split_once('?').map(|(_, q)| q).unwrap_or("");
    url::form_urlencoded::parse(q.as_bytes()).into_owned().collect()
}

pub fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// authorize → login page → passkey sign-in → resume: returns the code and the session cookie.
pub fn code_flow(
    site: &Site,
    soft: &mut Soft,
    user: &str,
    app: &App,
    pkce: &Pkce,
    extra: &[(&str, &str)],
) -> (String, String) {
    let (back, cookie) = browser_sign_in(site, &authorize_url(site, app, pkce, extra), soft, user);
    let params = location_params(&back);
    assert!(back.header("location").unwrap().starts_with(&app.redirect));
    assert_eq!(param(&params, "state"), Some("st-123"));
    assert_eq!(param(&params, "iss"), Some(site.base.as_str()));
    (param(&params, "code").expect("code").to_owned(), cookie)
}

/// The browser's part of a sign-in started at `url`: the login page, a passkey sign-in, and the
/// redirect back with a code. The redirect's `Location`.
pub fn sign_in_at(site: &Site, url: &str, soft: &mut Soft, user: &str) -> String {
    browser_sign_in(site, url, soft, user).0.header("location").unwrap().to_owned()
}

/// [`sign_in_at`]'s steps: the redirect back (a 302) and the session cookie.
fn browser_sign_in(site: &Site, url: &str, soft: &mut Soft, user: &str) -> (Http, String) {
    let page = get(url, None);
    assert_eq!(page.status, 200, "{}", page.body);
    let id = request_id(&page);
    let r = site.sign_in(soft, Some(user), &Tamper::default());
    assert_eq!(r.status, 200, "{}", r.body);
    let cookie = r.session_cookie().unwrap();
    let back = get(&format!("{}/authorize/resume?request={id}", site.base), Some(&cookie));
    assert_eq!(back.status, 302, "{}", back.body);
    (back, cookie)
}

/// `Basic` credentials of a confidential client (client_secret_basic).
pub fn basic_auth(client_id: &str, secret: &str) -> String {
    format!("Basic {}", STANDARD.encode(format!("{client_id}:{secret}")))
}

/// POSTs a form to /token; confidential apps authenticate with HTTP Basic.
pub fn token(site: &Site, app: &App, form: &[(&str, &str)]) -> Http {
    let mut headers: Vec<(&str, String)> = vec![];
    let mut form: Vec<(&str, &str)> = form.to_vec();
    match &app.secret {
        Some(s) => headers.push(("Authorization", basic_auth(&app.client_id, s))),
        None => form.push(("client_id", &app.client_id)),
    }
    let h: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    send_raw(
        "POST",
        &format!("{}/token", site.base),
        Some("application/x-www-form-urlencoded"),
        query(&form).into_bytes(),
        &h,
    )
}

pub fn exchange(site: &Site, app: &App, code: &str, pkce: &Pkce) -> Http {
    token(
        site,
        app,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", &app.redirect),
            ("code_verifier", &pkce.verifier),
        ],
    )
}

/// The decoded (not verified) payload and header of a JWT.
pub fn jwt_parts(token: &str) -> (Value, Value) {
    let mut parts = token.split('.');
    let header = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts.next().unwrap()).unwrap()).unwrap();
    let payload = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts.next().unwrap()).unwrap()).unwrap();
    (header, payload)
}

pub fn userinfo(site: &Site, access_token: &str) -> Http {
    send_raw(
        "GET",
        &format!("{}/userinfo", site.base),
        None,
        vec![],
        &[("Authorization", &format!("Bearer {access_token}"))],
    )
}

pub const OIDC_TABLES: &[&str] =
    &["authorization_codes", "refresh_tokens", "sessions", "authorize_requests", "revoked_access_tokens"];

/// POST to revoke/introspect with a confidential app's client authentication (in the form).
pub fn client_post(site: &Site, app: &App, path: &str, form: &[(&str, &str)]) -> Http {
    let mut form = form.to_vec();
    form.push(("client_id", &app.client_id));
    form.push(("client_secret", app.secret.as_deref().unwrap()));
    send_raw(
        "POST",
        &format!("{}/{path}", site.base),
        Some("application/x-www-form-urlencoded"),
        query(&form).into_bytes(),
        &[],
    )
}

// DPoP (RFC 9449) proofs of a client key, for the DPoP tests and the tokens bench.

/// A client's DPoP key: it signs proofs with its public JWK in their header.
pub struct Holder {
    pub key: SigningKey,
    pub jwk: Value,
}

pub fn holder(alg: SigningAlg) -> Holder {
    let g = generate_for(alg, 2048).unwrap();
    let key = SigningKey::parsed(alg, "dpop", g.bits, &g.pkcs8, latchkey_domain::config::RsaEngine::AwsLc).unwrap();
    let mut jwk = serde_json::to_value(&key.jwk).unwrap();
    for member in ["kid", "use", "alg"] {
        jwk.as_object_mut().unwrap().remove(member);
    }
    Holder { key, jwk }
}

pub fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

pub fn sha256_b64(text: &str) -> String {
    b64(aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, text.as_bytes()).as_ref())
}

impl Holder {
    pub fn alg(&self) -> &'static str {
        match self.jwk["kty"].as_str() {
            Some("EC") => "ES256",
            Some("OKP") => "EdDSA",
            _ => "RS256",
        }
    }

    /// The RFC 7638 thumbprint the tokens are bound to.
    pub fn jkt(&self) -> String {
        let canonical = match self.alg() {
            "ES256" => json!({"crv": self.jwk["crv"], "kty": "EC", "x": self.jwk["x"], "y": self.jwk["y"]}),
            "EdDSA" => json!({"crv": "Ed25519", "kty": "OKP", "x": self.jwk["x"]}),
            _ => json!({"e": self.jwk["e"], "kty": "RSA", "n": self.jwk["n"]}),
        };
        sha256_b64(&canonical.to_string())
    }

    pub fn sign(&self, header: &Value, claims: &Value) -> String {
        let input = format!("{}.{}", b64(header.to_string().as_bytes()), b64(claims.to_string().as_bytes()));
        format!("{input}.{}", b64(&self.key.sign(input.as_bytes()).unwrap()))
    }

    /// A proof for `htm` `htu` at the daemon's time, with `extra` claims (`ath`, `nonce`).
    pub fn proof(&self, d: &TestDaemon, htm: &str, htu: &str, extra: Value) -> String {
        use latchkey_domain::clock::Clock;
        let mut claims = json!({"jti": random_jti(), "htm": htm, "htu": htu, "iat": d.clock.now()});
        for (k, v) in extra.as_object().unwrap() {
            claims[k] = v.clone();
        }
        self.sign(&json!({"typ": "dpop+jwt", "alg": self.alg(), "jwk": self.jwk}), &claims)
    }

    /// A proof for a resource, with the `ath` of `token`.
    pub fn for_resource(&self, d: &TestDaemon, htm: &str, htu: &str, token: &str) -> String {
        self.proof(d, htm, htu, json!({"ath": sha256_b64(token)}))
    }
}

/// A daemon on SQLite refuses DPoP proofs dated up to its start's second (by its clock, and for
/// outside clients by the machine's): moves both past it.
pub fn past_start(d: &TestDaemon) {
    use latchkey_domain::clock::Clock;
    let started = d.clock.now();
    d.clock.advance(1);
    let wall = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    while wall() <= started {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

pub fn random_jti() -> String {
    let mut b = [0u8; 12];
    aws_lc_rs::rand::fill(&mut b).unwrap();
    b64(&b)
}
