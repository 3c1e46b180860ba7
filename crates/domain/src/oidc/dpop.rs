//! DPoP, sender-constrained tokens (RFC 9449). A client proves that it holds a key by signing a
//! short JWT for each request (the `DPoP` header); tokens issued with a proof are bound to that
//! key (`cnf.jkt`, its RFC 7638 thumbprint) and accepted only with a fresh proof of it.
//!
//! A proof is checked here: `typ` `dpop+jwt`; RS256, ES256 or EdDSA (or `Ed25519`) with the
//! public JWK of its header, which must fit the algorithm; `htm` and `htu` the request's method
//! and URL; `iat` within [`MAX_AGE_SECS`] of our clock; `ath` the hash of the access token
//! presented with it; a server nonce when one is required, and a valid one whenever one is sent.
//! Its `jti` is then spent in the database ([`spend`]), so a proof is accepted once on any node.
//!
//! Nonces are stateless: the time window and an HMAC of the tenant and window under a key derived
//! from the key-encryption key, so every node issues and accepts the same ones. A nonce is
//! accepted in its own window and the next ([`NONCE_WINDOW_SECS`] each).

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Deserialize;
use serde_json::Value;

use super::client_assertion::{ASSERTION_ALGS, parse_jwk};
use super::error::{OAuthCode, OAuthError};
use super::keys::Jwk;
use super::tokens::Confirmation;
use crate::clock::Timestamp;
use crate::crypto::{Kek, b64url, b64url_decode, sha256};
use crate::state::State;
use crate::store::{self, TenantId, WriteCost};

/// The proof's `typ` header (RFC 9449 §4.2).
pub const PROOF_TYP: &str = "dpop+jwt";
/// How far a proof's `iat` may be from our clock, either way.
pub const MAX_AGE_SECS: i64 = 60;
/// A nonce is accepted in the window it was issued in and the next.
pub const NONCE_WINDOW_SECS: i64 = 60;
/// Larger proofs are refused before they are parsed (an RSA-8192 JWK fits with room to spare).
const MAX_PROOF_BYTES: usize = 8 * 1024;

/// A DPoP key's RFC 7638 thumbprint (SHA-256): what tokens are bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Jkt(pub [u8; 32]);

impl Jkt {
    /// As `cnf.jkt` and the `dpop_jkt` column hold it: base64url.
    pub fn text(&self) -> String {
        b64url(&self.0)
    }
}

/// A proof whose signature and claims checked out, not yet spent.
#[derive(Debug, Clone)]
pub struct Proof {
    pub jkt: Jkt,
    /// SHA-256 of the key's thumbprint and the `jti`: the proof's name in `dpop_proofs`.
    name: [u8; 32],
    /// Its `iat`: it is accepted until `iat + MAX_AGE_SECS`.
    iat: Timestamp,
}

/// What a proof must be for.
pub struct Target<'a> {
    /// `htm`: the request's method.
    pub method: &'a str,
    /// `htu`: the endpoint's URL, without query or fragment.
    pub url: &'a str,
    /// At a resource: the access token presented with the proof, whose hash `ath` must be.
    pub access_token: Option<&'a str>,
    /// Whether a proof without a nonce is refused with `use_dpop_nonce`.
    pub nonce_required: bool,
    /// Proofs dated (`iat`) at or before this are refused: on SQLite the daemon's start
    /// ([`Spent::issued_after`]), `Timestamp::MIN` on PostgreSQL.
    pub issued_after: Timestamp,
}

#[derive(Deserialize)]
struct Header {
    typ: String,
    alg: String,
    jwk: Value,
    #[serde(default)]
    crit: Option<Value>,
}

#[derive(Deserialize)]
struct Claims {
    jti: String,
    htm: String,
    htu: String,
    iat: Timestamp,
    #[serde(default)]
    ath: Option<String>,
    #[serde(default)]
    nonce: Option<String>,
}

/// `invalid_dpop_proof` (RFC 9449 §5, §7.1), saying why.
pub fn invalid(why: &str) -> OAuthError {
    OAuthError::new(OAuthCode::InvalidDpopProof, format!("the DPoP proof is not valid: {why}"))
}

/// `use_dpop_nonce` (RFC 9449 §8, §9): the answer carries the nonce to use.
fn use_nonce(why: &str) -> OAuthError {
    OAuthError::new(
        OAuthCode::UseDpopNonce,
        format!("{why}: sign the proof again with the nonce of the DPoP-Nonce header"),
    )
}

/// The nonce a tenant's clients should use now (the `DPoP-Nonce` header).
pub fn nonce(kek: &Kek, tenant: TenantId, now: Timestamp) -> String {
    let window = now.div_euclid(NONCE_WINDOW_SECS);
    let mut bytes = window.to_be_bytes().to_vec();
    bytes.extend_from_slice(&kek.dpop_nonce_tag(tenant, window));
    b64url(&bytes)
}

/// Whether `given` is a nonce of this tenant's from this window or the one before.
fn nonce_ok(kek: &Kek, tenant: TenantId, given: &str, now: Timestamp) -> bool {
    let Some(bytes) = b64url_decode(given).filter(|b| b.len() == 24) else { return false };
    let (window, tag) = bytes.split_at(8);
    let window = i64::from_be_bytes(window.try_into().unwrap_or_default());
    let current = now.div_euclid(NONCE_WINDOW_SECS);
    (window == current || window == current - 1)
        && aws_lc_rs::constant_time::verify_slices_are_equal(tag, &kek.dpop_nonce_tag(tenant, window)).is_ok()
}

/// The one `DPoP` header's value, if any: two or more (or one that is not visible ASCII) are
/// refused (RFC 9449 §4.3).
pub fn one_header<'a>(values: impl Iterator<Item = &'a [u8]>) -> Result<Option<&'a str>, OAuthError> {
    let mut values = values;
    let Some(first) = values.next() else { return Ok(None) };
    if values.next().is_some() {
        return Err(invalid("send exactly one DPoP header"));
    }
    std::str::from_utf8(first).map(Some).map_err(|_| invalid("it is not a compact JWS"))
}

/// The RFC 7638 thumbprint of a public JWK that [`parse_jwk`] accepted: the SHA-256 of its
/// required members in lexical order, as the client computes it from the same JWK.
fn thumbprint(jwk: &Value) -> Result<Jkt, OAuthError> {
    let text = |name: &str| jwk.get(name).and_then(Value::as_str).unwrap_or_default();
    let (kty, crv) = match (text("kty"), text("crv")) {
        ("RSA", _) => ("RSA", ""),
        ("EC", "P-256") => ("EC", "P-256"),
        ("OKP", "Ed25519") => ("OKP", "Ed25519"),
        _ => return Err(invalid("its jwk is not an RSA, EC P-256 or OKP Ed25519 key")),
    };
    // The header's own members, in the form our published keys' `kid`s are computed from.
    let key = Jwk {
        kty,
        crv,
        n: text("n").to_owned(),
        e: text("e").to_owned(),
        x: text("x").to_owned(),
        y: text("y").to_owned(),
        ..Jwk::default()
    };
    Ok(Jkt(sha256(key.canonical().as_bytes())))
}

/// The URL `htu` names, compared without query and fragment (RFC 9449 §4.3) after the URL
/// standard's normalisation (scheme and host case, default port, an empty path).
fn same_url(htu: &str, endpoint: &str) -> bool {
    // What clients send: the endpoint as discovery names it (no parsing needed).
    if htu == endpoint {
        return true;
    }
    let strip = |u: &str| {
        url::Url::parse(u).ok().map(|mut u| {
            u.set_query(None);
            u.set_fragment(None);
            u
        })
    };
    matches!((strip(htu), strip(endpoint)), (Some(a), Some(b)) if a == b)
}

/// Checks a proof's form, signature and claims for `target` (nothing is stored; see [`spend`]).
pub fn check(
    kek: &Kek,
    tenant: TenantId,
    proof: &str,
    target: &Target<'_>,
    now: Timestamp,
) -> Result<Proof, OAuthError> {
    if proof.len() > MAX_PROOF_BYTES {
        return Err(invalid(&format!("it is larger than {MAX_PROOF_BYTES} bytes")));
    }
    let (input, sig) = proof.rsplit_once('.').ok_or_else(|| invalid("it is not a compact JWS"))?;
    let (header, payload) = input.split_once('.').ok_or_else(|| invalid("it is not a compact JWS"))?;
    let header: Header = b64url_decode(header)
        .and_then(|h| serde_json::from_slice(&h).ok())
        .ok_or_else(|| invalid("its header must name typ, alg and jwk"))?;
    if header.typ != PROOF_TYP {
        return Err(invalid("its typ must be dpop+jwt"));
    }
    if header.crit.is_some() {
        return Err(invalid("it names critical extensions (crit), which are not supported"));
    }
    if !ASSERTION_ALGS.contains(&header.alg.as_str()) {
        return Err(invalid("it must be signed with ES256, EdDSA or RS256"));
    }
    let key = parse_jwk(&header.jwk).map_err(|why| invalid(&format!("its jwk is not usable: {why}")))?;
    let sig = b64url_decode(sig).ok_or_else(|| invalid("its signature is not base64url"))?;
    if !key.key.fits(&header.alg) || !key.key.verifies(input.as_bytes(), &sig) {
        return Err(invalid("its signature does not verify with the key of its header"));
    }
    let claims: Claims = b64url_decode(payload)
        .and_then(|p| serde_json::from_slice(&p).ok())
        .ok_or_else(|| invalid("its claims must include jti, htm, htu and iat (a number)"))?;
    if claims.htm != target.method {
        return Err(invalid(&format!("its htm must be {}", target.method)));
    }
    if !same_url(&claims.htu, target.url) {
        return Err(invalid(&format!("its htu must be {}", target.url)));
    }
    if claims.iat.abs_diff(now) > MAX_AGE_SECS.unsigned_abs() {
        return Err(invalid("its iat is more than 60 seconds from the server's time"));
    }
    if claims.iat <= target.issued_after {
        return Err(invalid("it was made before the server started: make a new one"));
    }
    if claims.jti.is_empty() || claims.jti.len() > 256 || crate::params::has_control(&claims.jti) {
        return Err(invalid("its jti must be 1 to 256 printable characters"));
    }
    if let Some(token) = target.access_token {
        let expected = b64url(&sha256(token.as_bytes()));
        if claims.ath.as_deref() != Some(expected.as_str()) {
            return Err(invalid("its ath must be the hash of the access token"));
        }
    }
    match claims.nonce.as_deref() {
        Some(n) if !nonce_ok(kek, tenant, n, now) => return Err(use_nonce("its nonce is not current")),
        None if target.nonce_required => return Err(use_nonce("a nonce is required")),
        _ => {}
    }
    let jkt = thumbprint(&header.jwk)?;
    let name = sha256(format!("{}.{}", jkt.text(), claims.jti).as_bytes());
    Ok(Proof { jkt, name, iat: claims.iat })
}

/// Whether a token with these claims may be used with this proof (RFC 9449 §7.1): a bound token
/// only with a proof of its key, an unbound one only without a proof (as a Bearer token).
pub fn check_binding(cnf: Option<&Confirmation>, proof: Option<&Proof>) -> Result<(), OAuthError> {
    match (cnf, proof) {
        (None, None) => Ok(()),
        (Some(c), Some(p)) if c.jkt == p.jkt.text() => Ok(()),
        // RFC 9449 §7.1's own answer to a proof of another key.
        (Some(_), Some(_)) => Err(OAuthError::invalid_dpop_token(
            "invalid DPoP key binding: the proof is signed by another key than the one the token is bound to",
        )),
        (Some(_), None) => Err(OAuthError::invalid_dpop_token(
            "the access token is DPoP-bound: send it as Authorization: DPoP with a proof",
        )),
        (None, Some(_)) => {
            Err(OAuthError::invalid_dpop_token("the access token is not DPoP-bound: send it as Authorization: Bearer"))
        }
    }
}

/// Records the proof as used; a proof seen before (on any node) is refused.
///
/// On PostgreSQL, where several nodes share the database, in `dpop_proofs` (one statement that
/// commits by itself, one round trip), kept 5 minutes past the proof's last second so that nodes
/// whose clocks differ a little agree. On SQLite there is one daemon per database, and a durable
/// write per proof cost more than the proof's verification (figures in bench/README.md): once
/// the daemon has run a minute, a proof dated at or before the daemon's time is remembered in
/// memory only ([`Spent`]). After a restart none of those can come back: they are dated before
/// the start, and proofs dated up to the start's second are refused ([`Spent::issued_after`]).
/// The others (dated ahead of the daemon's clock, or within a minute of its start) are written
/// durably too, so a restart cannot forget them.
pub async fn spend(state: &State, tenant: TenantId, proof: &Proof) -> Result<(), OAuthError> {
    let (name, iat, now) = (proof.name, proof.iat, state.clock.now());
    let kept = iat + MAX_AGE_SECS + 300;
    let record = move |tx: &store::WriteTx<'_>| store::dpop_proofs::first_use(tx, tenant, &name, kept);
    let first = if state.db.write_cost() == WriteCost::RoundTrips {
        state.db.write_one(record).await?
    } else if state.dpop_spent.in_memory_only(iat, now) {
        state.dpop_spent.first_use(tenant, name, iat, now)?
    } else {
        let recorded = state.db.write(record).await?;
        state.dpop_spent.first_use(tenant, name, iat, now)? && recorded
    };
    if !first {
        return Err(invalid("it was used before (its jti)"));
    }
    Ok(())
}

/// The proofs a daemon on SQLite has accepted, until they are too old to be accepted anyway.
pub struct Spent {
    /// The daemon's start, by its clock.
    started_at: Timestamp,
    names: Mutex<SpentNames>,
}

impl std::fmt::Debug for Spent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.names.lock().map(|s| s.names.len()).unwrap_or_default();
        write!(f, "Spent({n} proofs)")
    }
}

#[derive(Default)]
struct SpentNames {
    /// By tenant and proof name: the proof's `iat`.
    names: HashMap<(TenantId, [u8; 32]), Timestamp>,
    swept_at: Timestamp,
}

/// At most this many proofs are remembered (about 100 MB with the map's own overhead: 8,000
/// proofs a second for two minutes); beyond that new proofs are refused until old ones expire.
const MAX_SPENT: usize = 1_000_000;

impl Spent {
    pub fn new(started_at: Timestamp) -> Spent {
        Spent { started_at, names: Mutex::default() }
    }

    /// Proofs dated (`iat`) at or before this are refused by a daemon on SQLite: a proof of the
    /// previous run's last second may be in no record.
    pub fn issued_after(&self) -> Timestamp {
        self.started_at
    }

    /// Whether a proof dated `iat` may be remembered in memory only: one not dated ahead of the
    /// clock (every proof of an earlier run that is still acceptable is then dated before this
    /// run's start, and refused), and not dated within a minute of the start (one of those may
    /// have been dated ahead when an earlier run accepted it, and so be in `dpop_proofs`).
    fn in_memory_only(&self, iat: Timestamp, now: Timestamp) -> bool {
        iat <= now && iat > self.started_at + MAX_AGE_SECS
    }

    /// Whether the proof is new; it is then remembered until it is too old to be accepted.
    fn first_use(&self, tenant: TenantId, name: [u8; 32], iat: Timestamp, now: Timestamp) -> Result<bool, OAuthError> {
        let mut spent = self.names.lock().map_err(|_| OAuthError::server_error("the DPoP proof list is poisoned"))?;
        // Once a second: what is too old to be accepted is forgotten.
        if now > spent.swept_at {
            spent.names.retain(|_, iat| *iat + MAX_AGE_SECS >= now);
            spent.swept_at = now;
        }
        if spent.names.len() >= MAX_SPENT {
            return Err(OAuthError::new(
                OAuthCode::TemporarilyUnavailable,
                "too many DPoP proofs in the last two minutes; try again shortly",
            ));
        }
        Ok(spent.names.insert((tenant, name), iat).is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_lc_rs::rand::SystemRandom;
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
    use serde_json::json;

    const URL: &str = "https://id.example.com/acme/token";

    fn key() -> EcdsaKeyPair {
        EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap()
    }

    fn jwk(k: &EcdsaKeyPair) -> Value {
        let point = k.public_key().as_ref();
        json!({"kty": "EC", "crv": "P-256", "x": b64url(&point[1..33]), "y": b64url(&point[33..])})
    }

    fn sign(k: &EcdsaKeyPair, header: Value, claims: Value) -> String {
        let input = format!("{}.{}", b64url(header.to_string().as_bytes()), b64url(claims.to_string().as_bytes()));
        let sig = k.sign(&SystemRandom::new(), input.as_bytes()).unwrap();
        format!("{input}.{}", b64url(sig.as_ref()))
    }

    fn proof(k: &EcdsaKeyPair, claims: Value) -> String {
        sign(k, json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk(k)}), claims)
    }

    fn target(nonce_required: bool) -> Target<'static> {
        Target { method: "POST", url: URL, access_token: None, nonce_required, issued_after: Timestamp::MIN }
    }

    fn kek() -> Kek {
        Kek::from_bytes(&[9; 32]).unwrap()
    }

    #[test]
    fn a_proof_binds_to_its_keys_thumbprint_and_checks_every_claim() {
        let (k, kek, t, now) = (key(), kek(), TenantId(1), 1_000_000);
        let good = json!({"jti": "j1", "htm": "POST", "htu": URL, "iat": now});
        let p = check(&kek, t, &proof(&k, good.clone()), &target(false), now).unwrap();
        assert_eq!(p.jkt, thumbprint(&jwk(&k)).unwrap());
        assert_eq!(p.iat, now);
        // The query of htu is not compared; the URL's normal form is.
        let q = json!({"jti": "j", "htm": "POST", "htu": "HTTPS://ID.example.com:443/acme/token?x=1", "iat": now});
        assert!(check(&kek, t, &proof(&k, q), &target(false), now).is_ok());
        let refused = |claims: Value| check(&kek, t, &proof(&k, claims), &target(false), now).unwrap_err().description;
        assert!(refused(json!({"jti": "j", "htm": "GET", "htu": URL, "iat": now})).contains("htm"));
        assert!(
            refused(json!({"jti": "j", "htm": "POST", "htu": "https://id.example.com/acme/userinfo", "iat": now}))
                .contains("htu")
        );
        assert!(refused(json!({"jti": "j", "htm": "POST", "htu": URL, "iat": now - 61})).contains("iat"));
        assert!(refused(json!({"jti": "j", "htm": "POST", "htu": URL, "iat": now + 61})).contains("iat"));
        assert!(refused(json!({"jti": "", "htm": "POST", "htu": URL, "iat": now})).contains("jti"));
        let started = Target { issued_after: now - 1, ..target(false) };
        let before = proof(&k, json!({"jti": "j", "htm": "POST", "htu": URL, "iat": now - 1}));
        assert!(check(&kek, t, &before, &started, now).unwrap_err().description.contains("before the server started"));
        assert!(refused(json!({"htm": "POST", "htu": URL, "iat": now})).contains("claims"));
        // The header: typ, alg, a public key that fits the algorithm, no crit.
        let header =
            |h: Value| check(&kek, t, &sign(&k, h, good.clone()), &target(false), now).unwrap_err().description;
        assert!(header(json!({"typ": "JWT", "alg": "ES256", "jwk": jwk(&k)})).contains("typ"));
        assert!(header(json!({"typ": "dpop+jwt", "alg": "HS256", "jwk": jwk(&k)})).contains("signed with"));
        assert!(header(json!({"typ": "dpop+jwt", "alg": "EdDSA", "jwk": jwk(&k)})).contains("signature"));
        assert!(header(json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk(&key())})).contains("signature"));
        assert!(header(json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk(&k), "crit": ["x"]})).contains("crit"));
        let mut private = jwk(&k);
        private["d"] = json!("AAAA");
        assert!(header(json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": private})).contains("private"));
    }

    #[test]
    fn ath_must_be_the_presented_tokens_hash() {
        let (k, kek, t, now) = (key(), kek(), TenantId(1), 1_000_000);
        let at = Target {
            method: "GET",
            url: URL,
            access_token: Some("token-a"),
            nonce_required: false,
            issued_after: Timestamp::MIN,
        };
        let ath = b64url(&sha256(b"token-a"));
        let claims = |ath: Option<&str>| json!({"jti": "j", "htm": "GET", "htu": URL, "iat": now, "ath": ath});
        assert!(check(&kek, t, &proof(&k, claims(Some(&ath))), &at, now).is_ok());
        assert!(check(&kek, t, &proof(&k, claims(None)), &at, now).is_err());
        let other = b64url(&sha256(b"token-b"));
        assert!(check(&kek, t, &proof(&k, claims(Some(&other))), &at, now).is_err());
    }

    #[test]
    fn nonces_are_the_tenants_own_and_last_two_windows() {
        let (k, kek, now) = (key(), kek(), 1_000_000);
        let n = nonce(&kek, TenantId(1), now);
        let with_at = |n: &str, iat: i64| json!({"jti": "j", "htm": "POST", "htu": URL, "iat": iat, "nonce": n});
        let with = |n: &str| with_at(n, now);
        let code =
            |p: &str, t: i64, at: i64| check(&kek, TenantId(t), p, &target(true), at).map(|_| ()).map_err(|e| e.code);
        assert_eq!(code(&proof(&k, with(&n)), 1, now), Ok(()));
        assert_eq!(code(&proof(&k, with(&n)), 1, now + NONCE_WINDOW_SECS), Ok(()), "the next window");
        let (late, other) = (now + 2 * NONCE_WINDOW_SECS, Err(OAuthCode::UseDpopNonce));
        assert_eq!(code(&proof(&k, with_at(&n, late)), 1, late), other, "two windows on");
        assert_eq!(code(&proof(&k, with(&n)), 2, now), other, "another tenant's");
        assert_eq!(code(&proof(&k, with("bm9uY2U")), 1, now), other, "made up");
        let without = json!({"jti": "j", "htm": "POST", "htu": URL, "iat": now});
        assert_eq!(code(&proof(&k, without), 1, now), other, "required");
        assert_ne!(n, nonce(&Kek::from_bytes(&[8; 32]).unwrap(), TenantId(1), now), "another deployment's");
    }

    #[test]
    fn a_daemon_on_sqlite_remembers_each_proof_until_it_is_too_old() {
        let spent = Spent::new(0);
        let (a, b) = (TenantId(1), TenantId(2));
        assert!(spent.first_use(a, [1; 32], 100, 100).unwrap());
        assert!(!spent.first_use(a, [1; 32], 100, 100).unwrap(), "a replay");
        assert!(spent.first_use(b, [1; 32], 100, 100).unwrap(), "another tenant's");
        assert!(!spent.first_use(a, [1; 32], 100, 160).unwrap(), "still remembered at iat + 60");
        assert!(spent.first_use(a, [2; 32], 161, 161).unwrap());
        assert_eq!(format!("{spent:?}"), "Spent(1 proofs)", "the expired ones are forgotten");
        // Memory alone only for proofs not dated ahead, and not within a minute of the start.
        let started = Spent::new(1000);
        assert!(started.in_memory_only(1061, 1061));
        assert!(!started.in_memory_only(1060, 1061), "dated within the start's minute");
        assert!(!started.in_memory_only(1062, 1061), "dated ahead of the clock");
    }

    #[test]
    fn thumbprints_follow_rfc_7638() {
        // RFC 7638 §3.1's example key and thumbprint.
        let jwk = json!({"kty": "RSA", "e": "AQAB", "alg": "RS256", "kid": "2011-04-29",
            "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"});
        assert_eq!(thumbprint(&jwk).unwrap().text(), "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs");
    }
}
