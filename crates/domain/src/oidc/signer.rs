//! Where tokens get their RS256 signatures: one at a time with aws-lc (the default), or, when
//! `[signing] rsa_engine = "ifma-pairs"` asks for it and the CPU has AVX-512 IFMA, in pairs with
//! the vector signer (`latchkey_rsa_ifma`).
//!
//! The engine is chosen once at start ([`effective`], kept in `State::rsa_engine`) and handed to
//! each key as the tenant's keys are loaded ([`SigningKey::from_pkcs8_with`]): only a key made for
//! the pair signer keeps the copy of its DER that the pair signer is prepared from, so with aws-lc
//! no key is ever prepared ([`SigningKey::ifma`] is `None`) and the functions below sign each
//! token alone, at once, as plain aws-lc does. No process-wide switch: daemons with different
//! engines can share a process (the tests do).
//!
//! A grant that issues two tokens (an ID token and an access token) signs them as a pair. A grant
//! that issues one (client credentials, a grant without `openid`) parks its signing input and
//! yields to the runtime: when another request reaches its own signature meanwhile (on either
//! worker thread), that request signs both and hands the parked one its signature; when none
//! does, the parked request takes its input back and signs alone with aws-lc, having waited one
//! turn of the scheduler. Nothing waits on a timer, so a lone request is not delayed, and under
//! load most signatures are paired without a thread of their own (a signing thread cost two
//! thread switches per grant and a longer tail; see `grants.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::config::RsaEngine;
use crate::crypto::CryptoError;
use crate::registry::Hot;
use crate::store::SigningAlg;

use super::keys::SigningKey;

/// The engine that signs when `asked` is configured: the pair signer needs AVX-512 IFMA.
pub fn effective(asked: RsaEngine) -> RsaEngine {
    let can = latchkey_rsa_ifma::available();
    if asked == RsaEngine::IfmaPairs && can { RsaEngine::IfmaPairs } else { RsaEngine::AwsLc }
}

/// The engine in words, for the start-up log line.
pub fn describe(engine: RsaEngine) -> &'static str {
    match engine {
        RsaEngine::AwsLc => "aws-lc, one at a time",
        RsaEngine::IfmaPairs => {
            "two at a time with AVX-512 IFMA (blinded, each checked by aws-lc) for RSA-2048 keys; aws-lc for others"
        }
    }
}

/// Token signatures made in vector pairs, and one at a time with aws-lc (`/metrics`).
static PAIRED: AtomicU64 = AtomicU64::new(0);
static ALONE: AtomicU64 = AtomicU64::new(0);

/// (signatures made in pairs, signatures made alone) since the process started.
pub fn counts() -> (u64, u64) {
    (PAIRED.load(Ordering::Relaxed), ALONE.load(Ordering::Relaxed))
}

/// One signature with aws-lc, counted.
fn alone(key: &SigningKey, message: &[u8]) -> Result<Vec<u8>, CryptoError> {
    ALONE.fetch_add(1, Ordering::Relaxed);
    key.sign(message)
}

/// A signing input signed with aws-lc, `.signature` appended.
fn signed_alone(key: &SigningKey, input: String) -> Result<String, CryptoError> {
    let sig = alone(key, input.as_bytes())?;
    Ok(finish(input, &sig))
}

/// Signs one JWS signing input (`header.claims`) with `key`, one of `hot`'s, and appends
/// `.signature`. Only the tenant's RS256 key may wait for a partner: ES256 and EdDSA keys sign
/// at once (a few microseconds).
pub async fn sign_one(hot: &Arc<Hot>, key: &SigningKey, input: String) -> Result<String, CryptoError> {
    if key.alg == SigningAlg::RS256 && hot.rs256().is_some_and(|k| k.ifma().is_some()) {
        return parking::sign(hot, input).await;
    }
    signed_alone(key, input)
}

/// Signs two JWS signing inputs of the same key, as a pair when it can. (A code exchange's ID
/// token carries the access token's `at_hash`, so the two are signed one after the other, each
/// paired with another request's when one comes: this is for the tests of pairing.)
#[cfg(test)]
pub fn sign_two(key: &SigningKey, a: String, b: String) -> Result<(String, String), CryptoError> {
    if let Some(k) = key.ifma() {
        let [sa, sb] = pair(key, k, a.as_bytes(), key, k, b.as_bytes());
        return Ok((finish(a, &sa?), finish(b, &sb?)));
    }
    Ok((signed_alone(key, a)?, signed_alone(key, b)?))
}

fn finish(mut input: String, sig: &[u8]) -> String {
    input.push('.');
    input.push_str(&crate::crypto::b64url(sig));
    input
}

/// Two signatures with the vector signer; one whose check failed (never expected: it would be a
/// fault or a bug; or the random generator failed to give a blinding) is made again with aws-lc
/// and logged, and its key signs with aws-lc from then on.
fn pair(
    ka: &SigningKey,
    ia: &latchkey_rsa_ifma::IfmaKey,
    a: &[u8],
    kb: &SigningKey,
    ib: &latchkey_rsa_ifma::IfmaKey,
    b: &[u8],
) -> [Result<Vec<u8>, CryptoError>; 2] {
    let [sa, sb] = latchkey_rsa_ifma::sign_pair([(ia, a), (ib, b)]);
    let checked = |sig: Option<[u8; 256]>, key: &SigningKey, message: &[u8]| match sig {
        Some(sig) => {
            PAIRED.fetch_add(1, Ordering::Relaxed);
            Ok(sig.to_vec())
        }
        None => {
            tracing::error!(
                kid = %key.kid,
                "a vector RSA signature failed its check (or could not be blinded); signed again with aws-lc, as this \
                 key's signatures will be"
            );
            key.ifma_failed();
            alone(key, message)
        }
    };
    [checked(sa, ka, a), checked(sb, kb, b)]
}

mod parking {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex, PoisonError};

    use tokio::sync::oneshot;

    use super::{finish, pair, signed_alone};
    use crate::crypto::CryptoError;
    use crate::oidc::keys::SigningKey;
    use crate::registry::Hot;

    /// The RS256 key of a tenant whose signature was parked: it has one (`sign_one` checked).
    fn rs256(hot: &Hot) -> Result<&SigningKey, CryptoError> {
        hot.rs256().ok_or(CryptoError::Seal)
    }

    /// A signing input waiting for a partner, who answers with the signed token.
    struct Parked {
        id: u64,
        hot: Arc<Hot>,
        input: String,
        reply: oneshot::Sender<Result<String, CryptoError>>,
    }

    /// At most one input waits: the next one to come pairs with it.
    static SLOT: Mutex<Option<Parked>> = Mutex::new(None);
    static NEXT_ID: AtomicU64 = AtomicU64::new(0);

    fn slot() -> std::sync::MutexGuard<'static, Option<Parked>> {
        // The slot holds no invariant a panic could break.
        SLOT.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the parked input back if it is still `id`'s.
    fn reclaim(id: u64) -> Option<Parked> {
        let mut slot = slot();
        if slot.as_ref().is_some_and(|p| p.id == id) { slot.take() } else { None }
    }

    /// Takes a request's own input out of the slot if its future is dropped while parked.
    struct Reclaim(u64);

    impl Drop for Reclaim {
        fn drop(&mut self) {
            drop(reclaim(self.0));
        }
    }

    pub(super) async fn sign(hot: &Arc<Hot>, input: String) -> Result<String, CryptoError> {
        let (reply, answer) = oneshot::channel();
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        {
            let mut slot = slot();
            if let Some(partner) = slot.take() {
                drop(slot);
                return sign_with(hot, input, partner);
            }
            *slot = Some(Parked { id, hot: hot.clone(), input, reply });
        }
        let _reclaim = Reclaim(id);
        // One turn of the scheduler: other requests on this worker, and the other worker, may
        // reach their signatures meanwhile.
        tokio::task::yield_now().await;
        if let Some(parked) = reclaim(id) {
            return signed_alone(rs256(hot)?, parked.input);
        }
        // A partner took it and is signing both.
        answer.await.unwrap_or(Err(CryptoError::Seal))
    }

    /// Signs `input` (this request's) with the parked partner's, answers the partner, returns ours.
    fn sign_with(hot: &Arc<Hot>, input: String, partner: Parked) -> Result<String, CryptoError> {
        let Parked { hot: their_hot, input: their_input, reply, .. } = partner;
        let (my_key, their_key) = match (rs256(hot), rs256(&their_hot)) {
            (Ok(a), Ok(b)) => (a, b),
            _ => {
                let _ = reply.send(Err(CryptoError::Seal));
                return Err(CryptoError::Seal);
            }
        };
        let (Some(mine), Some(theirs)) = (my_key.ifma(), their_key.ifma()) else {
            let _ = reply.send(signed_alone(their_key, their_input));
            return signed_alone(my_key, input);
        };
        let [ours, theirs] = pair(my_key, mine, input.as_bytes(), their_key, theirs, their_input.as_bytes());
        let _ = reply.send(theirs.map(|sig| finish(their_input, &sig)));
        ours.map(|sig| finish(input, &sig))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Mutex, MutexGuard, PoisonError};

    use futures_util::FutureExt as _;

    use super::*;
    use crate::oidc::keys::generate;
    use crate::registry::TenantRuntime;
    use crate::store::TenantId;
    use crate::store::tenants::TenantRow;

    /// The counters and the parking slot are the process's: these tests take turns.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn serial() -> MutexGuard<'static, ()> {
        SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether this CPU can run the pair signer (else the `ifma-pairs` tests check aws-lc's work).
    fn pairs() -> bool {
        effective(RsaEngine::IfmaPairs) == RsaEngine::IfmaPairs
    }

    fn tenant(id: i64, engine: RsaEngine) -> Arc<Hot> {
        let g = generate(2048).unwrap();
        let key = SigningKey::from_pkcs8_with(&g.kid, 2048, &g.pkcs8, effective(engine)).unwrap();
        let row = TenantRow {
            id: TenantId(id),
            slug: format!("t{id}"),
            name: format!("t{id}"),
            base_url: format!("https://id.example.com/t{id}"),
            rp_id: "id.example.com".into(),
            registration: crate::store::Registration::Invite,
            created_at: 0,
            brand: Default::default(),
            attestation: Default::default(),
        };
        let ids = crate::crypto::Kek::from_bytes(&[7; 32]).unwrap().session_ids();
        TenantRuntime::build(&row, vec![(crate::store::KeyState::Current, key)], "https://id.example.com", ids)
            .unwrap()
            .hot_shared()
            .unwrap()
    }

    fn verifies(hot: &Hot, token: &str) -> bool {
        let Some((input, sig)) = token.rsplit_once('.') else { return false };
        let sig = crate::crypto::b64url_decode(sig).unwrap_or_default();
        let (n, e) = (&hot.rs256().unwrap().jwk.n, &hot.rs256().unwrap().jwk.e);
        let (n, e) = (crate::crypto::b64url_decode(n).unwrap(), crate::crypto::b64url_decode(e).unwrap());
        aws_lc_rs::signature::RsaPublicKeyComponents { n: &n, e: &e }
            .verify(&aws_lc_rs::signature::RSA_PKCS1_2048_8192_SHA256, input.as_bytes(), &sig)
            .is_ok()
    }

    /// Lone signatures from many requests at once on two workers, for two tenants (pairs may mix
    /// keys): every token verifies under its own tenant's key and no other. Returns how many
    /// signatures were (paired, alone) meanwhile.
    fn concurrent_lone_signatures(engine: RsaEngine) -> (u64, u64) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
        let (a, b) = (tenant(1, engine), tenant(2, engine));
        let before = counts();
        let tokens = rt.block_on(async {
            let tasks: Vec<_> = (0..200)
                .map(|i| {
                    let hot = if i % 3 == 0 { b.clone() } else { a.clone() };
                    tokio::spawn(async move {
                        let input = format!("eyJhbGciOiJSUzI1NiJ9.{i}");
                        let token = sign_one(&hot, hot.rs256().unwrap(), input.clone()).await.unwrap();
                        assert!(token.starts_with(&format!("{input}.")));
                        (i, token)
                    })
                })
                .collect();
            let mut out = Vec::new();
            for t in tasks {
                out.push(t.await.unwrap());
            }
            out
        });
        let after = counts();
        for (i, token) in tokens {
            let (own, other) = if i % 3 == 0 { (&b, &a) } else { (&a, &b) };
            assert!(verifies(own, &token), "token {i}");
            assert!(!verifies(other, &token), "token {i} under the other key");
        }
        (after.0 - before.0, after.1 - before.1)
    }

    #[test]
    fn concurrent_lone_signatures_pair_up_and_each_verifies_under_its_own_key() {
        let _serial = serial();
        let (paired, alone) = concurrent_lone_signatures(RsaEngine::IfmaPairs);
        assert_eq!(paired + alone, 200);
        if !pairs() {
            assert_eq!(paired, 0, "no IFMA on this CPU: aws-lc signs");
        }
    }

    /// With aws-lc (the default) nothing is prepared for the pair signer, no request parks (a
    /// lone signature is ready at its first poll), and every signature counts as `single`.
    #[test]
    fn with_aws_lc_no_key_is_prepared_no_request_parks_and_every_signature_is_single() {
        let _serial = serial();
        let a = tenant(5, RsaEngine::AwsLc);
        assert!(a.rs256().unwrap().ifma().is_none());
        let (paired, alone) = concurrent_lone_signatures(RsaEngine::AwsLc);
        assert_eq!((paired, alone), (0, 200));
        let before = counts();
        let token = sign_one(&a, a.rs256().unwrap(), "eyJ6IjozfQ.e30".into())
            .now_or_never()
            .expect("signed at once, not parked");
        assert!(verifies(&a, &token.unwrap()));
        let (x, y) = sign_two(a.rs256().unwrap(), "eyJ4Ijox.e30".into(), "eyJ5Ijoy.e30".into()).unwrap();
        assert!(verifies(&a, &x) && verifies(&a, &y));
        let after = counts();
        assert_eq!((after.0 - before.0, after.1 - before.1), (0, 3));
        // The pair signer's engine on the same CPU parks a lone signature (when it can run).
        let b = tenant(6, RsaEngine::IfmaPairs);
        let parked = sign_one(&b, b.rs256().unwrap(), "eyJ6IjozfQ.e30".into()).now_or_never();
        assert_eq!(parked.is_none(), pairs(), "ifma-pairs parks a lone signature for one turn");
    }

    /// A key whose vector signature once failed its check signs with aws-lc from then on; a
    /// retired key's DER is wiped, so it is never prepared.
    #[test]
    fn a_key_that_failed_or_was_retired_signs_with_aws_lc() {
        let _serial = serial();
        let a = tenant(4, RsaEngine::IfmaPairs);
        assert_eq!(a.rs256().unwrap().ifma().is_some(), pairs());
        a.rs256().unwrap().ifma_failed();
        assert!(a.rs256().unwrap().ifma().is_none());
        let before = counts();
        let (x, y) = sign_two(a.rs256().unwrap(), "eyJ4Ijox.e30".into(), "eyJ5Ijoy.e30".into()).unwrap();
        assert!(verifies(&a, &x) && verifies(&a, &y));
        assert_eq!(counts().0, before.0);
        let g = generate(2048).unwrap();
        let retired = SigningKey::from_pkcs8_with(&g.kid, 2048, &g.pkcs8, RsaEngine::IfmaPairs).unwrap();
        retired.forget_pkcs8();
        assert!(retired.ifma().is_none());
    }

    #[test]
    fn two_tokens_sign_as_a_pair() {
        let _serial = serial();
        let a = tenant(3, RsaEngine::IfmaPairs);
        let before = counts();
        let (x, y) = sign_two(a.rs256().unwrap(), "eyJ4Ijox.e30".into(), "eyJ5Ijoy.e30".into()).unwrap();
        assert!(verifies(&a, &x) && verifies(&a, &y));
        assert!(x.starts_with("eyJ4Ijox.e30.") && y.starts_with("eyJ5Ijoy.e30."));
        let after = counts();
        let want = if pairs() { (2, 0) } else { (0, 2) };
        assert_eq!((after.0 - before.0, after.1 - before.1), want);
    }
}
