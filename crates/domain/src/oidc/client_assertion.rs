//! `private_key_jwt` client authentication (RFC 7523 §2.2, OpenID Connect Core §9): an
//! application registered with a JWK Set (its JSON, or a `jwks_uri`) authenticates at the token,
//! revocation, introspection and PAR endpoints with a JWT it signs, instead of a secret.
//!
//! The assertion is verified with the application's key its `kid` names (or, without one, each of
//! its keys in turn), with the algorithm its header says only if it is RS256, ES256 or EdDSA and
//! fits that key; then `iss` = `sub` = the Client ID, `aud` the issuer or the token endpoint,
//! `exp` in the future and at most 5 minutes ahead, and a `jti` never seen before, recorded until
//! `exp` in the database so that every node refuses a replay.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use aws_lc_rs::signature::{self, UnparsedPublicKey};
use serde::Deserialize;
use serde_json::Value;

use super::clients::Presented;
use super::error::OAuthError;
use crate::clock::Timestamp;
use crate::crypto::b64url_decode;
use crate::registry::TenantRuntime;
use crate::state::State;
use crate::store::apps::AppRow;
use crate::store::{self, TokenAuth};

/// `client_assertion_type` of a JWT bearer assertion (RFC 7523 §2.2).
pub const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// How far ahead an assertion's `exp` may be.
pub const MAX_LIFETIME_SECS: i64 = 300;
/// How far a client's clock may be ahead of ours for `nbf` (clients commonly set it to their
/// "now").
const CLOCK_SKEW_SECS: i64 = 30;
/// A registered JWK Set: at most this many keys, of this many bytes.
const MAX_KEYS: usize = 10;
const MAX_JWKS_BYTES: usize = 16 * 1024;
/// A fetched JWK Set is used this long; a `kid` it lacks fetches it again, at most this often.
const FETCHED_FOR: Duration = Duration::from_secs(300);
const REFETCH_AFTER: Duration = Duration::from_secs(10);

/// The algorithms of client assertions (and what discovery lists): `Ed25519` is the fully
/// specified name (RFC 9864) of `EdDSA` with an Ed25519 key, which openid-client signs with.
pub const ASSERTION_ALGS: &[&str] = &["RS256", "ES256", "EdDSA", "Ed25519"];

/// A public key of a client, as its JWK gives it, with the one algorithm it verifies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PublicKey {
    /// RS256: modulus and exponent, big-endian.
    Rsa { n: Vec<u8>, e: Vec<u8> },
    /// ES256: the uncompressed point, 0x04 || X || Y.
    P256(Vec<u8>),
    /// EdDSA with Ed25519.
    Ed25519(Vec<u8>),
}

/// One key of a JWK Set.
#[derive(Debug, Clone)]
pub(crate) struct ClientKey {
    pub kid: Option<String>,
    pub key: PublicKey,
}

impl PublicKey {
    /// Whether this key verifies a JWS whose header says `alg`.
    pub(crate) fn fits(&self, alg: &str) -> bool {
        matches!(
            (self, alg),
            (PublicKey::Rsa { .. }, "RS256")
                | (PublicKey::P256(_), "ES256")
                | (PublicKey::Ed25519(_), "EdDSA" | "Ed25519")
        )
    }

    /// Checks `sig` over `input` (a JWS signature: `r || s` for ES256).
    pub(crate) fn verifies(&self, input: &[u8], sig: &[u8]) -> bool {
        match self {
            PublicKey::Rsa { n, e } => signature::RsaPublicKeyComponents { n, e }
                .verify(&signature::RSA_PKCS1_2048_8192_SHA256, input, sig)
                .is_ok(),
            PublicKey::P256(point) => {
                UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point).verify(input, sig).is_ok()
            }
            PublicKey::Ed25519(x) => UnparsedPublicKey::new(&signature::ED25519, x).verify(input, sig).is_ok(),
        }
    }
}

/// One public JWK: RSA, EC P-256 or OKP Ed25519, with no private member, its `alg` (if any)
/// its type's.
pub(crate) fn parse_jwk(k: &Value) -> Result<ClientKey, String> {
    const PRIVATE: [&str; 8] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];
    if PRIVATE.iter().any(|m| k.get(m).is_some()) {
        return Err("it holds private or secret key material: register the public keys only".into());
    }
    let field = |name: &str| -> Result<Vec<u8>, String> {
        k.get(name)
            .and_then(Value::as_str)
            .and_then(b64url_decode)
            .ok_or_else(|| format!("its {name:?} is missing or not base64url"))
    };
    let text = |name: &str| k.get(name).and_then(Value::as_str);
    let key = match (text("kty"), text("crv")) {
        (Some("RSA"), _) => {
            let (n, e) = (field("n")?, field("e")?);
            if n.len() < 256 || n.len() > 1024 {
                return Err("an RSA key has 2048 to 8192 bits".into());
            }
            PublicKey::Rsa { n, e }
        }
        (Some("EC"), Some("P-256")) => {
            let (x, y) = (field("x")?, field("y")?);
            if x.len() != 32 || y.len() != 32 {
                return Err("a P-256 key's x and y are 32 bytes each".into());
            }
            let mut point = vec![4];
            point.extend(x);
            point.extend(y);
            PublicKey::P256(point)
        }
        (Some("OKP"), Some("Ed25519")) => {
            let x = field("x")?;
            if x.len() != 32 {
                return Err("an Ed25519 key's x is 32 bytes".into());
            }
            PublicKey::Ed25519(x)
        }
        _ => return Err("each key must be an RSA, EC P-256 or OKP Ed25519 key".into()),
    };
    if let Some(alg) = text("alg")
        && !key.fits(alg)
    {
        return Err(format!("its alg {alg:?} is not one its key type verifies (RS256, ES256, EdDSA)"));
    }
    Ok(ClientKey { kid: text("kid").map(str::to_owned), key })
}

/// The keys of a JWK Set's JSON.
fn parse_jwks(text: &str) -> Result<Vec<ClientKey>, String> {
    if text.len() > MAX_JWKS_BYTES {
        return Err(format!("the JWK Set is larger than {MAX_JWKS_BYTES} bytes"));
    }
    let raw: Value = serde_json::from_str(text).map_err(|e| format!("the JWK Set is not JSON ({e})"))?;
    let keys = raw.get("keys").and_then(Value::as_array).ok_or("a JWK Set is a JSON object with \"keys\", an array")?;
    if keys.is_empty() || keys.len() > MAX_KEYS {
        return Err(format!("a JWK Set holds 1 to {MAX_KEYS} keys"));
    }
    keys.iter().enumerate().map(|(i, k)| parse_jwk(k).map_err(|why| format!("key {}: {why}", i + 1))).collect()
}

/// Checks a JWK Set an application registers: public RSA, P-256 or Ed25519 keys, each usable.
/// Returns their `kid`s (some may have none).
pub fn check_jwks(text: &str) -> Result<Vec<String>, String> {
    Ok(parse_jwks(text)?.into_iter().filter_map(|k| k.kid).collect())
}

/// A `jwks_uri`'s last fetch: when it was tried, and the keys of the last one that worked.
#[derive(Clone)]
struct Fetched {
    tried: Instant,
    keys: Option<(Instant, Arc<Vec<ClientKey>>)>,
}

/// Fetched JWK Sets by URL, shared by the process's daemons (the URL says what the set is). At
/// most [`MAX_FETCHED`]: the one tried longest ago goes first.
static FETCHED: LazyLock<Mutex<HashMap<String, Fetched>>> = LazyLock::new(Mutex::default);
const MAX_FETCHED: usize = 1024;

/// The application's keys: registered, or from its `jwks_uri`.
async fn keys_of(state: &State, app: &AppRow, kid: Option<&str>) -> Result<Arc<Vec<ClientKey>>, OAuthError> {
    if let Some(text) = &app.jwks {
        return Ok(Arc::new(parse_jwks(text).map_err(OAuthError::server_error)?));
    }
    let Some(uri) = &app.jwks_uri else {
        return Err(OAuthError::server_error("a private_key_jwt application without keys"));
    };
    // Fetched at most every REFETCH_AFTER, whether the last fetch worked or not, and by one
    // request at a time (the attempt is noted before it is made); meanwhile the last keys that
    // worked serve while fresh.
    let fresh = |f: &Fetched| f.keys.as_ref().filter(|(at, _)| at.elapsed() < FETCHED_FOR).map(|(_, k)| k.clone());
    let lacks = |keys: &[ClientKey]| kid.is_some_and(|k| !keys.iter().any(|c| c.kid.as_deref() == Some(k)));
    let previous = {
        let mut m = FETCHED.lock().map_err(|_| OAuthError::server_error("the JWK Set cache is poisoned"))?;
        let entry = m.get(uri).cloned();
        if let Some(e) = &entry {
            match fresh(e) {
                Some(keys) if !lacks(&keys) => return Ok(keys),
                keys if e.tried.elapsed() < REFETCH_AFTER => {
                    return keys.ok_or_else(|| refused("the application's jwks_uri could not be fetched lately"));
                }
                _ => {}
            }
        }
        if m.len() >= MAX_FETCHED
            && let Some(oldest) = m.iter().min_by_key(|(_, f)| f.tried).map(|(u, _)| u.clone())
        {
            m.remove(&oldest);
        }
        let keys = entry.and_then(|e| e.keys);
        m.insert(uri.clone(), Fetched { tried: Instant::now(), keys: keys.clone() });
        keys
    };
    let fetched: Result<Value, _> = state.upstream.get_json(uri, None).await;
    match fetched.map_err(|e| e.to_string()).and_then(|v| parse_jwks(&v.to_string())) {
        Ok(k) => {
            let keys = Arc::new(k);
            if let Ok(mut m) = FETCHED.lock() {
                m.insert(uri.clone(), Fetched { tried: Instant::now(), keys: Some((Instant::now(), keys.clone())) });
            }
            Ok(keys)
        }
        // An application whose keys cannot be had now is not authenticated; the last set that
        // worked serves while it is fresh.
        Err(why) => {
            tracing::warn!(jwks_uri = %uri, error = %why, "an application's JWK Set cannot be used");
            previous
                .filter(|(at, _)| at.elapsed() < FETCHED_FOR)
                .map(|(_, k)| k)
                .ok_or_else(|| refused("the application's jwks_uri cannot be fetched or used now"))
        }
    }
}

#[derive(Deserialize)]
struct Header {
    alg: String,
    #[serde(default)]
    kid: Option<String>,
    /// Extensions the signer says must be understood (RFC 7515 §4.1.11): none are.
    #[serde(default)]
    crit: Option<Value>,
}

#[derive(Deserialize)]
struct Claims {
    iss: String,
    sub: String,
    aud: Value,
    exp: Timestamp,
    #[serde(default)]
    nbf: Option<Timestamp>,
    jti: String,
}

/// Every refusal answers the same (so that Client IDs and how they authenticate cannot be
/// probed); the reason goes to the log.
fn refused(why: &str) -> OAuthError {
    tracing::info!(reason = why, "a client assertion was refused");
    OAuthError::invalid_client(super::clients::AUTH_FAILED)
}

/// A compact JWS split: header, payload (decoded), signing input, signature.
fn split(jws: &str) -> Option<(Header, Vec<u8>, &str, Vec<u8>)> {
    let (input, sig) = jws.rsplit_once('.')?;
    let (header, payload) = input.split_once('.')?;
    let header: Header = serde_json::from_slice(&b64url_decode(header)?).ok()?;
    Some((header, b64url_decode(payload)?, input, b64url_decode(sig)?))
}

/// Verifies the client's assertion, if it sent one, and marks it authenticated. A client that
/// sent none is returned as it came (its secret, or none, is checked later).
pub async fn verify(state: &State, tenant: &TenantRuntime, p: Presented) -> Result<Presented, OAuthError> {
    let Some(assertion) = p.assertion.clone() else { return Ok(p) };
    let (t, cid) = (tenant.id, p.client_id.clone());
    // From the store's in-memory copy when current, as the grants read it: no read per assertion.
    let app = state.db.app_for_grant(t, &cid).await?;
    let Some(app) = app.filter(|a| a.token_auth == TokenAuth::PrivateKeyJwt) else {
        return Err(refused("no private_key_jwt application has this Client ID"));
    };
    let (header, payload, input, sig) = split(&assertion).ok_or_else(|| refused("it is not a signed JWT"))?;
    if header.crit.is_some() {
        return Err(refused("it names critical extensions (crit), which are not supported"));
    }
    if !ASSERTION_ALGS.contains(&header.alg.as_str()) {
        return Err(refused("it must be signed with RS256, ES256 or EdDSA (Ed25519)"));
    }
    let keys = keys_of(state, &app, header.kid.as_deref()).await?;
    // The key its kid names (or, without one, any), with the algorithm that key verifies only.
    let verified = keys
        .iter()
        .filter(|k| header.kid.is_none() || k.kid == header.kid)
        .any(|k| k.key.fits(&header.alg) && k.key.verifies(input.as_bytes(), &sig));
    if !verified {
        return Err(refused("its signature does not verify with the application's key its kid names"));
    }
    let claims: Claims =
        serde_json::from_slice(&payload).map_err(|_| refused("iss, sub, aud, exp and jti are required"))?;
    let now = state.clock.now();
    if claims.iss != app.client_id || claims.sub != app.client_id {
        return Err(refused("iss and sub must be the Client ID"));
    }
    // The issuer or the token endpoint; and the PAR endpoint, where RFC 9126 §2 lets a client
    // address its assertion.
    let (token_endpoint, par_endpoint) = (format!("{}/token", tenant.base_url), format!("{}/par", tenant.base_url));
    let audiences: Vec<&str> = match &claims.aud {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    if !audiences.iter().any(|a| *a == tenant.base_url || *a == token_endpoint || *a == par_endpoint) {
        return Err(refused("aud must be the issuer, the token endpoint or the PAR endpoint"));
    }
    if claims.exp <= now {
        return Err(refused("it has expired"));
    }
    if claims.exp > now + MAX_LIFETIME_SECS {
        return Err(refused("its exp is more than 5 minutes ahead"));
    }
    if claims.nbf.is_some_and(|nbf| nbf > now + CLOCK_SKEW_SECS) {
        return Err(refused("it is not valid yet (nbf)"));
    }
    if claims.jti.is_empty() || claims.jti.len() > 256 || crate::params::has_control(&claims.jti) {
        return Err(refused("jti must be 1 to 256 printable characters"));
    }
    let (cid, jti, exp) = (app.client_id.clone(), claims.jti, claims.exp);
    let first = state.db.write(move |tx| store::client_assertions::first_use(tx, t, &cid, &jti, exp)).await?;
    if !first {
        return Err(refused("its jti was used before (a replay)"));
    }
    Ok(p.authenticated_by_assertion())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_jwk_sets_hold_usable_public_keys_only() {
        let ec = r#"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","kid":"e1"}"#;
        let okp = r#"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","alg":"EdDSA"}"#;
        assert_eq!(check_jwks(&format!(r#"{{"keys":[{ec},{okp}]}}"#)).unwrap(), ["e1"]);
        let private = r#"{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","d":"jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"}]}"#;
        assert!(check_jwks(private).unwrap_err().contains("private"));
        assert!(check_jwks(r#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#).is_err());
        assert!(check_jwks(r#"{"keys":[]}"#).is_err());
        assert!(check_jwks("[]").is_err());
        assert!(check_jwks("not json").is_err());
        let wrong_alg = r#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","alg":"RS256"}]}"#;
        assert!(check_jwks(wrong_alg).is_err(), "a key whose alg is not its type's");
    }
}
