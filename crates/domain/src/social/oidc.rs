//! Google and any OpenID Connect provider: discovery, the authorization URL, the code exchange
//! and the ID token check (signature against the provider's JWKS with an algorithm allow-list,
//! `iss`, `aud`, `azp`, `exp`, `nonce`). Discovery documents and key sets are cached per issuer
//! and fetched again, at most every [`REFRESH_AT_MOST_EVERY`], when a token names an unknown key.
//! The endpoints a discovery document names must be the issuer's own ([`own_endpoint`]): the
//! code and the client secret go nowhere else.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;

use super::client::{Upstream, UpstreamError};
use crate::clock::Timestamp;

/// Signature algorithms accepted in upstream ID tokens: never `none`, never HMAC.
const ALLOWED: &[Algorithm] =
    &[Algorithm::RS256, Algorithm::RS384, Algorithm::RS512, Algorithm::PS256, Algorithm::ES256, Algorithm::ES384];
/// How long (seconds of the daemon's clock) discovery and keys are used before being fetched
/// again anyway.
const MAX_AGE: i64 = 3600;
/// An unknown `kid` fetches the key set again, but no more often than this many seconds (a flood
/// of forged tokens must not turn into a flood of requests to the provider).
pub const REFRESH_AT_MOST_EVERY: i64 = 5;
/// Clock skew tolerated on `exp`.
const LEEWAY: i64 = 60;
/// Google's discovery document names endpoints on googleapis.com beside its issuer's host
/// (token, keys, userinfo): allowed for that issuer only, over https on the default port.
const GOOGLE_HOSTS: &[&str] =
    &["accounts.google.com", "oauth2.googleapis.com", "www.googleapis.com", "openidconnect.googleapis.com"];

/// Whether `endpoint`, named by the discovery document of `issuer`, may be called: it must be at
/// the issuer's own origin, that is the same scheme, host and port (an https issuer's endpoints
/// are https; plain http only where the issuer itself is on loopback, as `social enable` allows,
/// and then at the issuer's very port, not another service on the same machine), with no user
/// name in it. Google's fixed hosts are the one exception. A hostile or tampered document could
/// otherwise send the authorization code and the client secret wherever it likes.
pub fn own_endpoint(issuer: &str, endpoint: &str) -> Result<(), String> {
    let iss = url::Url::parse(issuer).map_err(|_| format!("the issuer {issuer:?} is not a URL"))?;
    let url = url::Url::parse(endpoint).map_err(|_| format!("{endpoint:?} is not an absolute URL"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!("{endpoint:?} carries a user name"));
    }
    let google = issuer.trim_end_matches('/') == super::GOOGLE_ISSUER
        && url.scheme() == "https"
        && url.port().is_none()
        && url.host_str().is_some_and(|h| GOOGLE_HOSTS.contains(&h));
    let same_origin = url.scheme() == iss.scheme()
        && url.host() == iss.host()
        && url.port_or_known_default() == iss.port_or_known_default();
    if google || same_origin {
        return Ok(());
    }
    Err(format!("{endpoint:?} is not at the issuer's own origin {}", iss.origin().ascii_serialization()))
}

/// Refuses a discovery document whose endpoints are not the issuer's own ([`own_endpoint`]).
fn own_endpoints(issuer: &str, d: &Discovery) -> Result<(), Refused> {
    for (name, endpoint) in [
        ("authorization_endpoint", &d.authorization_endpoint),
        ("token_endpoint", &d.token_endpoint),
        ("jwks_uri", &d.jwks_uri),
    ] {
        own_endpoint(issuer, endpoint)
            .map_err(|why| refused("discovery_endpoint_refused", format!("{name}: {why}")))?;
    }
    Ok(())
}

#[derive(Debug, Clone, Deserialize)]
pub struct Discovery {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub jwks_uri: String,
}

struct Entry {
    discovery: Discovery,
    keys: HashMap<String, (DecodingKey, Option<jsonwebtoken::jwk::KeyAlgorithm>)>,
    /// When it was fetched, by the daemon's clock.
    fetched: Timestamp,
}

/// Per issuer: its discovery document and keys.
#[derive(Default)]
pub struct Cache {
    entries: Mutex<HashMap<String, Arc<Entry>>>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("oidc::Cache")
    }
}

/// Why an ID token was refused: a fixed reason (logged and audited) and the detail for the log.
#[derive(Debug)]
pub struct Refused {
    pub reason: &'static str,
    pub detail: String,
}

pub(super) fn refused(reason: &'static str, detail: impl std::fmt::Display) -> Refused {
    Refused { reason, detail: detail.to_string() }
}

impl From<UpstreamError> for Refused {
    fn from(e: UpstreamError) -> Refused {
        refused("provider_unreachable", e)
    }
}

/// What the provider says about the user, once the ID token is verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    pub sub: String,
    pub email: Option<String>,
    pub email_verified: bool,
    pub name: Option<String>,
    /// Google Workspace domain.
    pub hd: Option<String>,
}

#[derive(Deserialize)]
struct RawClaims {
    sub: String,
    iss: String,
    exp: i64,
    /// A string or an array of strings (jsonwebtoken has checked that the client id is one).
    aud: serde_json::Value,
    #[serde(default)]
    azp: Option<String>,
    #[serde(default)]
    nonce: Option<String>,
    #[serde(default)]
    email: Option<String>,
    /// Booleans, or "true" strings from some providers.
    #[serde(default)]
    email_verified: Option<serde_json::Value>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    hd: Option<String>,
}

/// Checks a discovery document fetched for `issuer` before anything in it is used.
pub fn check_discovery(issuer: &str, discovery: &Discovery) -> Result<(), Refused> {
    // The document must be the issuer's own (OIDC Discovery §4.3).
    if discovery.issuer.trim_end_matches('/') != issuer.trim_end_matches('/') {
        return Err(refused("discovery_mismatch", format!("discovery names issuer {:?}", discovery.issuer)));
    }
    // Before anything is sent to them (the key set is fetched next, the code and the secret at
    // the callback): the caller caches nothing that is refused.
    own_endpoints(issuer, discovery)
}

/// The usable keys of a provider's key set, by `kid` (keys without one, or that do not decode, are
/// left out).
pub fn decode_keys(set: &JwkSet) -> HashMap<String, (DecodingKey, Option<jsonwebtoken::jwk::KeyAlgorithm>)> {
    set.keys
        .iter()
        .filter_map(|jwk| {
            let kid = jwk.common.key_id.clone()?;
            let key = DecodingKey::from_jwk(jwk).ok()?;
            Some((kid, (key, jwk.common.key_algorithm)))
        })
        .collect()
}

impl Cache {
    async fn load(&self, up: &Upstream, issuer: &str, now: Timestamp) -> Result<Arc<Entry>, Refused> {
        let url = format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/'));
        let discovery: Discovery = up.get_json(&url, None).await?;
        check_discovery(issuer, &discovery)?;
        let set: JwkSet = up.get_json(&discovery.jwks_uri, None).await?;
        let entry = Arc::new(Entry { keys: decode_keys(&set), discovery, fetched: now });
        self.put(issuer, entry.clone());
        Ok(entry)
    }

    fn put(&self, issuer: &str, entry: Arc<Entry>) {
        let mut map = match self.entries.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        map.insert(issuer.to_owned(), entry);
    }

    fn cached(&self, issuer: &str) -> Option<Arc<Entry>> {
        let map = match self.entries.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        map.get(issuer).cloned()
    }

    /// The issuer's discovery document (cached).
    pub async fn discovery(&self, up: &Upstream, issuer: &str, now: Timestamp) -> Result<Discovery, Refused> {
        match self.cached(issuer).filter(|e| now - e.fetched < MAX_AGE) {
            Some(e) => Ok(e.discovery.clone()),
            None => Ok(self.load(up, issuer, now).await?.discovery.clone()),
        }
    }

    /// The key `kid` of the issuer; an unknown key fetches the set again (rate-limited).
    async fn key(
        &self,
        up: &Upstream,
        issuer: &str,
        kid: &str,
        now: Timestamp,
    ) -> Result<(DecodingKey, Option<jsonwebtoken::jwk::KeyAlgorithm>), Refused> {
        let entry = match self.cached(issuer) {
            Some(e) => e,
            None => self.load(up, issuer, now).await?,
        };
        if let Some(k) = entry.keys.get(kid) {
            return Ok(k.clone());
        }
        if now - entry.fetched < REFRESH_AT_MOST_EVERY {
            return Err(refused("unknown_key", format!("kid {kid:?} (key set fetched moments ago)")));
        }
        let entry = self.load(up, issuer, now).await?;
        entry.keys.get(kid).cloned().ok_or_else(|| refused("unknown_key", format!("kid {kid:?}")))
    }
}

/// The URL that sends the browser to the provider.
pub fn authorize_url(
    d: &Discovery,
    client_id: &str,
    redirect_uri: &str,
    state: &str,
    challenge: &str,
    nonce: &str,
) -> String {
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("response_type", "code")
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", redirect_uri)
        .append_pair("scope", "openid email profile")
        .append_pair("state", state)
        .append_pair("nonce", nonce)
        .append_pair("code_challenge", challenge)
        .append_pair("code_challenge_method", "S256")
        .finish();
    let sep = if d.authorization_endpoint.contains('?') { '&' } else { '?' };
    format!("{}{sep}{query}", d.authorization_endpoint)
}

/// What the code exchange needs.
pub struct Exchange<'a> {
    pub issuer: &'a str,
    pub client_id: &'a str,
    pub client_secret: &'a str,
    pub code: &'a str,
    pub verifier: &'a str,
    pub redirect_uri: &'a str,
    pub nonce: &'a str,
    /// Google sends `iss` with or without its scheme.
    pub google: bool,
    pub now: Timestamp,
}

/// Redeems the code at the token endpoint and verifies the ID token it returns.
pub async fn exchange(up: &Upstream, cache: &Cache, x: &Exchange<'_>) -> Result<Claims, Refused> {
    let d = cache.discovery(up, x.issuer, x.now).await?;
    let form = [
        ("grant_type", "authorization_code"),
        ("code", x.code),
        ("redirect_uri", x.redirect_uri),
        ("code_verifier", x.verifier),
    ];
    let (status, answer) = up.post_form(&d.token_endpoint, &form, Some((x.client_id, x.client_secret))).await?;
    let id_token = id_token_of(status, &answer)?;
    verify(up, cache, x, &d.issuer, id_token).await
}

/// The ID token of the token endpoint's answer (its HTTP status and JSON body).
pub fn id_token_of(status: u16, answer: &serde_json::Value) -> Result<&str, Refused> {
    if status != 200 || answer.get("error").is_some() {
        return Err(refused("token_refused", format!("HTTP {status}: {answer}")));
    }
    answer["id_token"].as_str().ok_or_else(|| refused("no_id_token", "the answer has no id_token"))
}

/// `issuer` is the discovery document's own spelling of the issuer (it matched the configured
/// one, trailing slash aside, when fetched): `iss` must equal it exactly, and providers differ on
/// the slash (Auth0's issuers end with one, Google's and Keycloak's do not).
async fn verify(up: &Upstream, cache: &Cache, x: &Exchange<'_>, issuer: &str, token: &str) -> Result<Claims, Refused> {
    let (alg, kid) = id_token_header(token)?;
    let (key, _) = cache.key(up, x.issuer, &kid, x.now).await?;
    check_id_token(x, issuer, token, alg, &key)
}

/// The ID token's algorithm (one of those accepted) and key id, read before its key is looked up.
pub fn id_token_header(token: &str) -> Result<(Algorithm, String), Refused> {
    let header = jsonwebtoken::decode_header(token).map_err(|e| refused("invalid_id_token", e))?;
    if !ALLOWED.contains(&header.alg) {
        return Err(refused("invalid_id_token", format!("algorithm {:?} is not accepted", header.alg)));
    }
    let kid = header.kid.ok_or_else(|| refused("invalid_id_token", "no kid"))?;
    Ok((header.alg, kid))
}

/// Checks the ID token's signature with the provider's `key` (named by the token's `kid`), then
/// its claims; `alg` is the header's, as [`id_token_header`] returned it.
pub fn check_id_token(
    x: &Exchange<'_>,
    issuer: &str,
    token: &str,
    alg: Algorithm,
    key: &DecodingKey,
) -> Result<Claims, Refused> {
    let mut v = Validation::new(alg);
    v.set_audience(&[x.client_id]);
    // Issuer and expiry are checked below: Google's two spellings, and the daemon's own clock.
    v.validate_exp = false;
    v.required_spec_claims = ["sub", "iss", "aud", "exp"].iter().map(|s| s.to_string()).collect();
    let claims: RawClaims = jsonwebtoken::decode(token, key, &v).map_err(|e| refused("invalid_id_token", e))?.claims;
    // Google may send its issuer without the scheme (`accounts.google.com`).
    let without_scheme = issuer.split_once("://").map_or(issuer, |(_, rest)| rest);
    let iss_ok = claims.iss == issuer || (x.google && claims.iss == without_scheme);
    if !iss_ok {
        return Err(refused("invalid_id_token", format!("iss {:?}", claims.iss)));
    }
    if claims.exp + LEEWAY < x.now {
        return Err(refused("invalid_id_token", format!("expired at {}", claims.exp)));
    }
    // OIDC Core §3.1.3.7: a token for several audiences says which party it was issued to, and
    // that party must be us (another audience could otherwise replay a token issued to it).
    let audiences = match &claims.aud {
        serde_json::Value::Array(all) => all.len(),
        _ => 1,
    };
    match claims.azp.as_deref() {
        Some(azp) if azp != x.client_id => return Err(refused("invalid_id_token", format!("azp {azp:?}"))),
        None if audiences > 1 => {
            return Err(refused("invalid_id_token", format!("{audiences} audiences and no azp")));
        }
        _ => {}
    }
    if claims.nonce.as_deref() != Some(x.nonce) {
        return Err(refused("invalid_id_token", "nonce differs from the one sent"));
    }
    if claims.sub.is_empty() {
        return Err(refused("invalid_id_token", "empty sub"));
    }
    let email_verified = match &claims.email_verified {
        Some(serde_json::Value::Bool(b)) => *b,
        Some(serde_json::Value::String(s)) => s == "true",
        _ => false,
    };
    Ok(Claims { sub: claims.sub, email: claims.email, email_verified, name: claims.name, hd: claims.hd })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn discovery_endpoints_must_be_the_issuers_own() {
        let ok = |i: &str, e: &str| own_endpoint(i, e).is_ok();
        assert!(ok("https://sso.example.com", "https://sso.example.com/oauth/token"));
        assert!(ok("https://sso.example.com/realms/a", "https://sso.example.com:443/realms/a/certs"));
        assert!(ok("http://127.0.0.1:9000", "http://127.0.0.1:9000/token"));
        // Another port on the same loopback host is another service.
        assert!(!ok("http://127.0.0.1:9000", "http://127.0.0.1:9001/token"));
        assert!(!ok("http://127.0.0.1:9000", "http://localhost:9000/token"));
        assert!(!ok("https://sso.example.com", "https://sso.example.com:8443/token"));
        assert!(!ok("https://sso.example.com", "http://sso.example.com/token"));
        assert!(!ok("https://sso.example.com", "https://evil.example/token"));
        assert!(!ok("https://sso.example.com", "https://sso.example.com.evil.example/token"));
        assert!(!ok("https://sso.example.com", "https://user@sso.example.com/token"));
        assert!(!ok("https://sso.example.com", "/token"));
        // Google's documented hosts, for Google's issuer only.
        assert!(ok("https://accounts.google.com", "https://oauth2.googleapis.com/token"));
        assert!(ok("https://accounts.google.com", "https://www.googleapis.com/oauth2/v3/certs"));
        assert!(!ok("https://accounts.google.com", "https://storage.googleapis.com/x"));
        assert!(!ok("https://accounts.google.com", "http://oauth2.googleapis.com/token"));
        assert!(!ok("https://sso.example.com", "https://oauth2.googleapis.com/token"));
    }

    fn discovery(issuer: &str) -> Discovery {
        Discovery {
            issuer: issuer.into(),
            authorization_endpoint: format!("{issuer}/authorize"),
            token_endpoint: format!("{issuer}/token"),
            jwks_uri: format!("{issuer}/jwks"),
        }
    }

    #[test]
    fn a_discovery_document_names_its_own_issuer() {
        assert!(check_discovery("https://idp.test", &discovery("https://idp.test")).is_ok());
        assert!(check_discovery("https://idp.test/", &discovery("https://idp.test")).is_ok());
        assert!(check_discovery("https://idp.test", &discovery("https://idp.test/")).is_ok());
        let other = check_discovery("https://idp.test", &discovery("https://evil.test")).unwrap_err();
        assert_eq!(other.reason, "discovery_mismatch");
    }

    #[test]
    fn the_token_answer_must_carry_an_id_token() {
        assert_eq!(id_token_of(200, &json!({"id_token": "a.b.c"})).unwrap(), "a.b.c");
        let reason = |status, answer| id_token_of(status, &answer).unwrap_err().reason;
        assert_eq!(reason(400, json!({"id_token": "a.b.c"})), "token_refused");
        assert_eq!(reason(200, json!({"error": "invalid_grant", "id_token": "a.b.c"})), "token_refused");
        assert_eq!(reason(200, json!({"access_token": "x"})), "no_id_token");
        assert_eq!(reason(200, json!({"id_token": 7})), "no_id_token");
    }

    #[test]
    fn only_accepted_algorithms_with_a_key_id_pass_the_header() {
        let token =
            |header: serde_json::Value| format!("{}.e30.", crate::crypto::b64url(header.to_string().as_bytes()));
        let (alg, kid) = id_token_header(&token(json!({"alg": "ES256", "kid": "k"}))).unwrap();
        assert_eq!((alg, kid.as_str()), (Algorithm::ES256, "k"));
        assert!(id_token_header(&token(json!({"alg": "HS256", "kid": "k"}))).is_err());
        assert!(id_token_header(&token(json!({"alg": "none", "kid": "k"}))).is_err());
        assert!(id_token_header(&token(json!({"alg": "RS256"}))).is_err());
    }
}
