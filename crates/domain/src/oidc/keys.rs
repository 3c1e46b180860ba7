//! RSA signing keys: generated per tenant, sealed at rest, parsed once into a [`SigningKey`]
//! that signs every token of the tenant until rotation.

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rsa::{KeyPair as RsaKeyPair, KeySize};
use aws_lc_rs::signature::KeyPair as _;
use serde::Serialize;

use crate::config::RsaEngine;
use crate::crypto::{CryptoError, Kek, b64url, sha256};
use crate::store::TenantId;
use crate::store::keys::KeyRow;

/// A parsed private key, ready to sign. Parsing happens once per key per daemon start (or
/// rotation), never per request.
pub struct SigningKey {
    pub kid: String,
    pub bits: u32,
    pair: RsaKeyPair,
    pub jwk: Jwk,
    /// The key for the vector pair signer, prepared once (about 1 ms: when the tenant's keys are
    /// loaded, for the current key only); `None` inside when this CPU or key cannot use it, or
    /// when the engine is aws-lc.
    ifma: std::sync::OnceLock<Option<latchkey_rsa_ifma::IfmaKey>>,
    /// The PKCS#8 DER until that preparation (or [`SigningKey::forget_pkcs8`]) takes it; wiped.
    /// Kept only when the engine is the pair signer and could use this key: with aws-lc no copy
    /// is made, so nothing is ever prepared and no request ever parks.
    pkcs8: std::sync::Mutex<Option<Vec<u8>>>,
    /// Set when a vector signature failed its check: this key then signs with aws-lc only.
    ifma_failed: std::sync::atomic::AtomicBool,
}

impl Drop for SigningKey {
    fn drop(&mut self) {
        self.forget_pkcs8();
    }
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey").field("kid", &self.kid).finish_non_exhaustive()
    }
}

/// A public key as published in the JWKS: RSA public parameters only.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Jwk {
    pub kty: &'static str,
    #[serde(rename = "use")]
    pub use_: &'static str,
    pub alg: &'static str,
    pub kid: String,
    pub n: String,
    pub e: String,
}

#[derive(Serialize)]
pub struct Jwks<'a> {
    pub keys: Vec<&'a Jwk>,
}

/// A freshly generated key: its id and PKCS#8 DER (plaintext, to be sealed at once).
pub struct GeneratedKey {
    pub kid: String,
    pub pkcs8: Vec<u8>,
}

fn key_size(bits: u32) -> Result<KeySize, CryptoError> {
    match bits {
        2048 => Ok(KeySize::Rsa2048),
        3072 => Ok(KeySize::Rsa3072),
        4096 => Ok(KeySize::Rsa4096),
        _ => Err(CryptoError::KeyGen),
    }
}

pub fn generate(bits: u32) -> Result<GeneratedKey, CryptoError> {
    let pair = RsaKeyPair::generate(key_size(bits)?).map_err(|_| CryptoError::KeyGen)?;
    let der = AsDer::<aws_lc_rs::encoding::Pkcs8V1Der<'static>>::as_der(&pair).map_err(|_| CryptoError::KeyGen)?;
    let (n, e) = public_parts(&pair);
    Ok(GeneratedKey { kid: thumbprint(&n, &e), pkcs8: der.as_ref().to_vec() })
}

fn public_parts(pair: &RsaKeyPair) -> (String, String) {
    let public = pair.public_key();
    (
        b64url(public.modulus().big_endian_without_leading_zero()),
        b64url(public.exponent().big_endian_without_leading_zero()),
    )
}

/// RFC 7638 JWK thumbprint: a stable, collision-free key id derived from the public key.
fn thumbprint(n: &str, e: &str) -> String {
    let canonical = format!(r#"{{"e":"{e}","kty":"RSA","n":"{n}"}}"#);
    b64url(&sha256(canonical.as_bytes()))
}

/// Additional authenticated data binding a sealed key to its tenant and kid.
pub fn aad(tenant: TenantId, kid: &str) -> Vec<u8> {
    format!("latchkey-signing-key/{tenant}/{kid}").into_bytes()
}

impl SigningKey {
    /// A key that signs with aws-lc (the default engine).
    pub fn from_pkcs8(kid: &str, bits: u32, der: &[u8]) -> Result<SigningKey, CryptoError> {
        SigningKey::from_pkcs8_with(kid, bits, der, RsaEngine::AwsLc)
    }

    /// A key that signs with `engine`: the effective one ([`super::signer::effective`]), since
    /// only an RSA-2048 key of an `ifma-pairs` daemon on a CPU with IFMA keeps what the pair
    /// signer needs.
    pub fn from_pkcs8_with(kid: &str, bits: u32, der: &[u8], engine: RsaEngine) -> Result<SigningKey, CryptoError> {
        let pair = RsaKeyPair::from_pkcs8(der).map_err(|_| CryptoError::KeyParse)?;
        let (n, e) = public_parts(&pair);
        let jwk = Jwk { kty: "RSA", use_: "sig", alg: "RS256", kid: kid.to_owned(), n, e };
        Ok(SigningKey {
            kid: kid.to_owned(),
            bits,
            pair,
            jwk,
            ifma: std::sync::OnceLock::new(),
            pkcs8: std::sync::Mutex::new(
                (engine == RsaEngine::IfmaPairs && latchkey_rsa_ifma::available() && bits == 2048)
                    .then(|| der.to_vec()),
            ),
            ifma_failed: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// This key prepared for the pair signer, when its engine is the pair signer and this CPU
    /// and key can use it.
    pub fn ifma(&self) -> Option<&latchkey_rsa_ifma::IfmaKey> {
        if self.ifma_failed.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        self.ifma
            .get_or_init(|| {
                let mut der = self.pkcs8.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()?;
                let key = latchkey_rsa_ifma::IfmaKey::from_pkcs8(&der);
                zeroize::Zeroize::zeroize(&mut der);
                if key.is_none() {
                    tracing::warn!(kid = %self.kid, "this key cannot use the AVX-512 IFMA signer; signing with aws-lc");
                }
                key
            })
            .as_ref()
    }

    /// Stops using the pair signer for this key (one of its signatures failed its check).
    pub fn ifma_failed(&self) {
        self.ifma_failed.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Wipes the kept DER of a key that will not sign (a retired key): nothing prepares it.
    pub fn forget_pkcs8(&self) {
        if let Some(mut der) = self.pkcs8.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
            zeroize::Zeroize::zeroize(&mut der);
        }
    }

    /// Opens a stored key with the key-encryption key and parses it, to sign with `engine`.
    pub fn unseal(kek: &Kek, tenant: TenantId, row: &KeyRow, engine: RsaEngine) -> Result<SigningKey, CryptoError> {
        let der = zeroize::Zeroizing::new(kek.open(&aad(tenant, &row.kid), &row.sealed_private_key)?);
        SigningKey::from_pkcs8_with(&row.kid, row.bits, &der, engine)
    }

    /// RSASSA-PKCS1-v1_5 with SHA-256 over `message`.
    pub fn sign_rs256(&self, message: &[u8]) -> Result<Vec<u8>, CryptoError> {
        let mut sig = vec![0u8; self.pair.public_modulus_len()];
        let rng = aws_lc_rs::rand::SystemRandom::new();
        self.pair
            .sign(&aws_lc_rs::signature::RSA_PKCS1_SHA256, &rng, message, &mut sig)
            .map_err(|_| CryptoError::Seal)?;
        Ok(sig)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generate_parse_and_thumbprint() {
        let g = generate(2048).unwrap();
        let k = SigningKey::from_pkcs8(&g.kid, 2048, &g.pkcs8).unwrap();
        assert_eq!(k.jwk.e, "AQAB");
        assert_eq!(k.kid, thumbprint(&k.jwk.n, &k.jwk.e));
        assert_eq!(k.sign_rs256(b"m").unwrap().len(), 256);
    }

    #[test]
    fn rfc7638_example_thumbprint() {
        // The example key of RFC 7638 §3.1.
        let n = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw";
        assert_eq!(thumbprint(n, "AQAB"), "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs");
    }
}
