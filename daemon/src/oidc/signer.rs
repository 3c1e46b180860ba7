//! Where tokens get their RS256 signatures: in pairs with the vector signer ([`super::rsa_ifma`])
//! when the CPU has AVX-512 IFMA, one at a time with aws-lc otherwise.
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

use crate::crypto::CryptoError;
use crate::tenants::Hot;

use super::keys::SigningKey;

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
    key.sign_rs256(message)
}

/// A signing input signed with aws-lc, `.signature` appended.
fn signed_alone(key: &SigningKey, input: String) -> Result<String, CryptoError> {
    let sig = alone(key, input.as_bytes())?;
    Ok(finish(input, &sig))
}

/// Signs one JWS signing input (`header.claims`) and appends `.signature`.
pub async fn sign_one(hot: &Arc<Hot>, input: String) -> Result<String, CryptoError> {
    #[cfg(target_arch = "x86_64")]
    if hot.signer.ifma().is_some() {
        return parking::sign(hot, input).await;
    }
    signed_alone(&hot.signer, input)
}

/// Signs two JWS signing inputs of the same key, as a pair when it can.
pub fn sign_two(key: &SigningKey, a: String, b: String) -> Result<(String, String), CryptoError> {
    #[cfg(target_arch = "x86_64")]
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
/// fault or a bug) is made again with aws-lc and logged, and its key signs with aws-lc from then on.
#[cfg(target_arch = "x86_64")]
fn pair(
    ka: &SigningKey,
    ia: &super::rsa_ifma::IfmaKey,
    a: &[u8],
    kb: &SigningKey,
    ib: &super::rsa_ifma::IfmaKey,
    b: &[u8],
) -> [Result<Vec<u8>, CryptoError>; 2] {
    let [sa, sb] = super::rsa_ifma::sign_pair([(ia, a), (ib, b)]);
    let checked = |sig: Option<[u8; 256]>, key: &SigningKey, message: &[u8]| match sig {
        Some(sig) => {
            PAIRED.fetch_add(1, Ordering::Relaxed);
            Ok(sig.to_vec())
        }
        None => {
            tracing::error!(
                kid = %key.kid,
                "a vector RSA signature failed its check; signed again with aws-lc, as this key's signatures will be"
            );
            key.ifma_failed();
            alone(key, message)
        }
    };
    [checked(sa, ka, a), checked(sb, kb, b)]
}

#[cfg(target_arch = "x86_64")]
mod parking {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex, PoisonError};

    use tokio::sync::oneshot;

    use super::{finish, pair, signed_alone};
    use crate::crypto::CryptoError;
    use crate::tenants::Hot;

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
            return signed_alone(&hot.signer, parked.input);
        }
        // A partner took it and is signing both.
        answer.await.unwrap_or(Err(CryptoError::Seal))
    }

    /// Signs `input` (this request's) with the parked partner's, answers the partner, returns ours.
    fn sign_with(hot: &Arc<Hot>, input: String, partner: Parked) -> Result<String, CryptoError> {
        let Parked { hot: their_hot, input: their_input, reply, .. } = partner;
        let (Some(mine), Some(theirs)) = (hot.signer.ifma(), their_hot.signer.ifma()) else {
            let _ = reply.send(signed_alone(&their_hot.signer, their_input));
            return signed_alone(&hot.signer, input);
        };
        let [ours, theirs] =
            pair(&hot.signer, mine, input.as_bytes(), &their_hot.signer, theirs, their_input.as_bytes());
        let _ = reply.send(theirs.map(|sig| finish(their_input, &sig)));
        ours.map(|sig| finish(input, &sig))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oidc::keys::generate;
    use crate::store::TenantId;
    use crate::store::tenants::TenantRow;
    use crate::tenants::TenantRuntime;

    fn tenant(id: i64) -> Arc<Hot> {
        let g = generate(2048).unwrap();
        let key = SigningKey::from_pkcs8(&g.kid, 2048, &g.pkcs8).unwrap();
        let row = TenantRow {
            id: TenantId(id),
            slug: format!("t{id}"),
            name: format!("t{id}"),
            base_url: format!("https://id.example.com/t{id}"),
            rp_id: "id.example.com".into(),
            registration: crate::store::Registration::Invite,
            created_at: 0,
        };
        TenantRuntime::build(&row, vec![key], "https://id.example.com").unwrap().hot_shared().unwrap()
    }

    fn verifies(hot: &Hot, token: &str) -> bool {
        let Some((input, sig)) = token.rsplit_once('.') else { return false };
        let sig = crate::crypto::b64url_decode(sig).unwrap_or_default();
        let (n, e) = (&hot.signer.jwk.n, &hot.signer.jwk.e);
        let (n, e) = (crate::crypto::b64url_decode(n).unwrap(), crate::crypto::b64url_decode(e).unwrap());
        aws_lc_rs::signature::RsaPublicKeyComponents { n: &n, e: &e }
            .verify(&aws_lc_rs::signature::RSA_PKCS1_2048_8192_SHA256, input.as_bytes(), &sig)
            .is_ok()
    }

    /// Lone signatures from many requests at once on two workers, for two tenants (pairs may mix
    /// keys): every token verifies under its own tenant's key and no other.
    #[test]
    fn concurrent_lone_signatures_pair_up_and_each_verifies_under_its_own_key() {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
        let (a, b) = (tenant(1), tenant(2));
        let tokens = rt.block_on(async {
            let tasks: Vec<_> = (0..200)
                .map(|i| {
                    let hot = if i % 3 == 0 { b.clone() } else { a.clone() };
                    tokio::spawn(async move {
                        let input = format!("eyJhbGciOiJSUzI1NiJ9.{i}");
                        let token = sign_one(&hot, input.clone()).await.unwrap();
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
        for (i, token) in tokens {
            let (own, other) = if i % 3 == 0 { (&b, &a) } else { (&a, &b) };
            assert!(verifies(own, &token), "token {i}");
            assert!(!verifies(other, &token), "token {i} under the other key");
        }
    }

    /// A key whose vector signature once failed its check signs with aws-lc from then on; a
    /// retired key's DER is wiped, so it is never prepared.
    #[test]
    fn a_key_that_failed_or_was_retired_signs_with_aws_lc() {
        let a = tenant(4);
        a.signer.ifma_failed();
        #[cfg(target_arch = "x86_64")]
        assert!(a.signer.ifma().is_none());
        let (x, y) = sign_two(&a.signer, "eyJ4Ijox.e30".into(), "eyJ5Ijoy.e30".into()).unwrap();
        assert!(verifies(&a, &x) && verifies(&a, &y));
        let g = generate(2048).unwrap();
        let retired = SigningKey::from_pkcs8(&g.kid, 2048, &g.pkcs8).unwrap();
        retired.forget_pkcs8();
        #[cfg(target_arch = "x86_64")]
        assert!(retired.ifma().is_none());
    }

    #[test]
    fn two_tokens_sign_as_a_pair() {
        let a = tenant(3);
        let (x, y) = sign_two(&a.signer, "eyJ4Ijox.e30".into(), "eyJ5Ijoy.e30".into()).unwrap();
        assert!(verifies(&a, &x) && verifies(&a, &y));
        assert!(x.starts_with("eyJ4Ijox.e30.") && y.starts_with("eyJ5Ijoy.e30."));
    }
}
