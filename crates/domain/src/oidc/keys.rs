//! Signing keys: RSA (RS256, every tenant has one), P-256 (ES256) and Ed25519 (EdDSA), generated
//! per tenant, sealed at rest, parsed once into a [`SigningKey`] that signs every token of its
//! algorithm until rotation. All three are aws-lc's.

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rsa::{KeyPair as RsaKeyPair, KeySize};
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair as _};
use serde::Serialize;

use crate::config::RsaEngine;
use crate::crypto::{CryptoError, Kek, b64url, sha256};
use crate::store::keys::KeyRow;
use crate::store::{SigningAlg, TenantId};

/// The private half of a [`SigningKey`].
enum Pair {
    Rsa(RsaKeyPair),
    Es256(EcdsaKeyPair),
    EdDsa(Ed25519KeyPair),
}

/// A parsed private key, ready to sign. Parsing happens once per key per daemon start (or
/// rotation), never per request.
pub struct SigningKey {
    pub kid: String,
    pub alg: SigningAlg,
    /// The RSA modulus's size; 256 for ES256 and EdDSA keys.
    pub bits: u32,
    pair: Pair,
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

/// A public key as published in the JWKS: `n` and `e` for RSA (`kty` RSA), `crv`, `x` and `y`
/// for P-256 (EC), `crv` and `x` for Ed25519 (OKP, RFC 8037); the others are left out.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Jwk {
    pub kty: &'static str,
    #[serde(rename = "use")]
    pub use_: &'static str,
    pub alg: &'static str,
    pub kid: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub n: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub e: String,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub crv: &'static str,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub x: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub y: String,
}

impl Jwk {
    /// The RFC 7638 thumbprint's input: the required members, in lexical order.
    pub(crate) fn canonical(&self) -> String {
        match self.kty {
            "RSA" => format!(r#"{{"e":"{}","kty":"RSA","n":"{}"}}"#, self.e, self.n),
            "EC" => format!(r#"{{"crv":"{}","kty":"EC","x":"{}","y":"{}"}}"#, self.crv, self.x, self.y),
            _ => format!(r#"{{"crv":"{}","kty":"{}","x":"{}"}}"#, self.crv, self.kty, self.x),
        }
    }

    /// RFC 7638 JWK thumbprint (RFC 8037 §2 for OKP keys): a stable key id derived from the
    /// public key.
    pub fn thumbprint(&self) -> String {
        b64url(&sha256(self.canonical().as_bytes()))
    }

    /// The public key for verifying with jsonwebtoken, with the one algorithm it verifies.
    pub fn decoding(&self) -> Result<(jsonwebtoken::Algorithm, jsonwebtoken::DecodingKey), CryptoError> {
        let bad = |_| CryptoError::KeyParse;
        Ok(match self.kty {
            "RSA" => (
                jsonwebtoken::Algorithm::RS256,
                jsonwebtoken::DecodingKey::from_rsa_components(&self.n, &self.e).map_err(bad)?,
            ),
            "EC" => (
                jsonwebtoken::Algorithm::ES256,
                jsonwebtoken::DecodingKey::from_ec_components(&self.x, &self.y).map_err(bad)?,
            ),
            _ => (jsonwebtoken::Algorithm::EdDSA, jsonwebtoken::DecodingKey::from_ed_components(&self.x).map_err(bad)?),
        })
    }
}

#[derive(Serialize)]
pub struct Jwks<'a> {
    pub keys: Vec<&'a Jwk>,
}

/// A freshly generated key: its id and PKCS#8 DER (plaintext, to be sealed at once).
pub struct GeneratedKey {
    pub kid: String,
    pub alg: SigningAlg,
    pub bits: u32,
    pub pkcs8: Vec<u8>,
}

/// The `bits` of ES256 and EdDSA keys (their curves' size).
pub const CURVE_BITS: u32 = 256;

fn key_size(bits: u32) -> Result<KeySize, CryptoError> {
    match bits {
        2048 => Ok(KeySize::Rsa2048),
        3072 => Ok(KeySize::Rsa3072),
        4096 => Ok(KeySize::Rsa4096),
        _ => Err(CryptoError::KeyGen),
    }
}

/// A new RSA key of `bits` (what RS256 signs with).
pub fn generate(bits: u32) -> Result<GeneratedKey, CryptoError> {
    let pair = RsaKeyPair::generate(key_size(bits)?).map_err(|_| CryptoError::KeyGen)?;
    let der = AsDer::<aws_lc_rs::encoding::Pkcs8V1Der<'static>>::as_der(&pair).map_err(|_| CryptoError::KeyGen)?;
    let (n, e) = public_parts(&pair);
    Ok(GeneratedKey { kid: thumbprint(&n, &e), alg: SigningAlg::RS256, bits, pkcs8: der.as_ref().to_vec() })
}

/// A new key for `alg`: RSA of `rsa_bits` for RS256 (milliseconds: the spare-key pool makes them
/// ahead), P-256 or Ed25519 otherwise (microseconds).
pub fn generate_for(alg: SigningAlg, rsa_bits: u32) -> Result<GeneratedKey, CryptoError> {
    let pkcs8 = match alg {
        SigningAlg::RS256 => return generate(rsa_bits),
        SigningAlg::ES256 => EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING)
            .and_then(|p| p.to_pkcs8v1())
            .map_err(|_| CryptoError::KeyGen)?,
        SigningAlg::EdDSA => {
            Ed25519KeyPair::generate().and_then(|p| p.to_pkcs8v1()).map_err(|_| CryptoError::KeyGen)?
        }
    };
    let pkcs8 = pkcs8.as_ref().to_vec();
    let (_, jwk) = parse(alg, &pkcs8)?;
    Ok(GeneratedKey { kid: jwk.thumbprint(), alg, bits: CURVE_BITS, pkcs8 })
}

/// Parses a PKCS#8 DER as a key of `alg`, with its public JWK (its `kid` left empty).
fn parse(alg: SigningAlg, der: &[u8]) -> Result<(Pair, Jwk), CryptoError> {
    let jwk = |kty, crv| Jwk { kty, use_: "sig", alg: alg.as_str(), crv, ..Jwk::default() };
    Ok(match alg {
        SigningAlg::RS256 => {
            let pair = RsaKeyPair::from_pkcs8(der).map_err(|_| CryptoError::KeyParse)?;
            let (n, e) = public_parts(&pair);
            (Pair::Rsa(pair), Jwk { n, e, ..jwk("RSA", "") })
        }
        SigningAlg::ES256 => {
            let pair =
                EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der).map_err(|_| CryptoError::KeyParse)?;
            // The uncompressed point: 0x04 || X || Y, 32 bytes each.
            let point = pair.public_key().as_ref().to_vec();
            if point.len() != 65 || point[0] != 4 {
                return Err(CryptoError::KeyParse);
            }
            let (x, y) = (b64url(&point[1..33]), b64url(&point[33..]));
            (Pair::Es256(pair), Jwk { x, y, ..jwk("EC", "P-256") })
        }
        SigningAlg::EdDSA => {
            let pair = Ed25519KeyPair::from_pkcs8(der).map_err(|_| CryptoError::KeyParse)?;
            let x = b64url(pair.public_key().as_ref());
            (Pair::EdDsa(pair), Jwk { x, ..jwk("OKP", "Ed25519") })
        }
    })
}

fn public_parts(pair: &RsaKeyPair) -> (String, String) {
    let public = pair.public_key();
    (
        b64url(public.modulus().big_endian_without_leading_zero()),
        b64url(public.exponent().big_endian_without_leading_zero()),
    )
}

/// RFC 7638 JWK thumbprint of an RSA key: a stable, collision-free key id.
fn thumbprint(n: &str, e: &str) -> String {
    Jwk { kty: "RSA", n: n.to_owned(), e: e.to_owned(), ..Jwk::default() }.thumbprint()
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
        SigningKey::parsed(SigningAlg::RS256, kid, bits, der, engine)
    }

    /// A key of `alg` (RSA ones sign with `engine`).
    pub fn parsed(
        alg: SigningAlg,
        kid: &str,
        bits: u32,
        der: &[u8],
        engine: RsaEngine,
    ) -> Result<SigningKey, CryptoError> {
        let (pair, mut jwk) = parse(alg, der)?;
        jwk.kid = kid.to_owned();
        let rsa = matches!(pair, Pair::Rsa(_));
        Ok(SigningKey {
            kid: kid.to_owned(),
            alg,
            bits,
            pair,
            jwk,
            ifma: std::sync::OnceLock::new(),
            pkcs8: std::sync::Mutex::new(
                (rsa && engine == RsaEngine::IfmaPairs && latchkey_rsa_ifma::available() && bits == 2048)
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

    /// Opens a stored key with the key-encryption key and parses it as a key of its row's
    /// algorithm, to sign with `engine`. A row whose algorithm and key disagree does not load
    /// (the key does not parse as the other kind), and an ES256 or EdDSA key's `kid` must be its
    /// thumbprint, as every key this release makes.
    pub fn unseal(kek: &Kek, tenant: TenantId, row: &KeyRow, engine: RsaEngine) -> Result<SigningKey, CryptoError> {
        let der = zeroize::Zeroizing::new(kek.open(&aad(tenant, &row.kid), &row.sealed_private_key)?);
        let key = SigningKey::parsed(row.alg, &row.kid, row.bits, &der, engine)?;
        if key.alg != SigningAlg::RS256 && key.jwk.thumbprint() != row.kid {
            return Err(CryptoError::KeyParse);
        }
        Ok(key)
    }

    /// The JWS signature of `message` with this key's algorithm: RSASSA-PKCS1-v1_5 with SHA-256,
    /// ECDSA P-256 with SHA-256 (`r || s`, 64 bytes, as JWS wants), or Ed25519.
    pub fn sign(&self, message: &[u8]) -> Result<Vec<u8>, CryptoError> {
        let rng = aws_lc_rs::rand::SystemRandom::new();
        match &self.pair {
            Pair::Rsa(pair) => {
                let mut sig = vec![0u8; pair.public_modulus_len()];
                pair.sign(&aws_lc_rs::signature::RSA_PKCS1_SHA256, &rng, message, &mut sig)
                    .map_err(|_| CryptoError::Seal)?;
                Ok(sig)
            }
            Pair::Es256(pair) => Ok(pair.sign(&rng, message).map_err(|_| CryptoError::Seal)?.as_ref().to_vec()),
            Pair::EdDsa(pair) => Ok(pair.sign(message).as_ref().to_vec()),
        }
    }

    /// RSASSA-PKCS1-v1_5 with SHA-256 over `message` (an RSA key's [`SigningKey::sign`]).
    pub fn sign_rs256(&self, message: &[u8]) -> Result<Vec<u8>, CryptoError> {
        match self.pair {
            Pair::Rsa(_) => self.sign(message),
            _ => Err(CryptoError::Seal),
        }
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
    fn es256_and_eddsa_keys_sign_what_jsonwebtoken_verifies_under_their_own_algorithm_only() {
        for alg in [SigningAlg::ES256, SigningAlg::EdDSA] {
            let g = generate_for(alg, 2048).unwrap();
            assert_eq!((g.alg, g.bits), (alg, CURVE_BITS));
            let k = SigningKey::parsed(alg, &g.kid, g.bits, &g.pkcs8, RsaEngine::AwsLc).unwrap();
            assert_eq!(k.jwk.thumbprint(), g.kid);
            assert!(k.ifma().is_none());
            let token = crate::oidc::jwt::sign(&k, "JWT", &serde_json::json!({"sub": "u", "iss": "i"})).unwrap();
            let (input, sig) = token.rsplit_once('.').unwrap();
            assert_eq!(crate::crypto::b64url_decode(sig).unwrap().len(), 64);
            assert!(input.len() > 10);
            let (want, dk) = k.jwk.decoding().unwrap();
            let mut v = jsonwebtoken::Validation::new(want);
            v.validate_exp = false;
            v.validate_aud = false;
            v.required_spec_claims.clear();
            assert!(jsonwebtoken::decode::<serde_json::Value>(&token, &dk, &v).is_ok(), "{alg}");
            for other in [jsonwebtoken::Algorithm::RS256, jsonwebtoken::Algorithm::ES384] {
                let mut v = v.clone();
                v.algorithms = vec![other];
                assert!(jsonwebtoken::decode::<serde_json::Value>(&token, &dk, &v).is_err(), "{alg} as {other:?}");
            }
            // Not an RSA key, and not a key of another algorithm.
            assert!(k.sign_rs256(b"m").is_err());
            let wrong = if alg == SigningAlg::ES256 { SigningAlg::EdDSA } else { SigningAlg::ES256 };
            assert!(SigningKey::parsed(wrong, &g.kid, 256, &g.pkcs8, RsaEngine::AwsLc).is_err());
            assert!(SigningKey::parsed(SigningAlg::RS256, &g.kid, 256, &g.pkcs8, RsaEngine::AwsLc).is_err());
        }
        let es = generate_for(SigningAlg::ES256, 2048).unwrap();
        let k = SigningKey::parsed(SigningAlg::ES256, &es.kid, 256, &es.pkcs8, RsaEngine::AwsLc).unwrap();
        let v = serde_json::to_value(&k.jwk).unwrap();
        let mut fields: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        fields.sort();
        assert_eq!(fields, ["alg", "crv", "kid", "kty", "use", "x", "y"]);
        assert_eq!(
            (v["kty"].as_str(), v["crv"].as_str(), v["alg"].as_str()),
            (Some("EC"), Some("P-256"), Some("ES256"))
        );
    }

    #[test]
    fn rfc8037_okp_thumbprint() {
        // RFC 8037 appendix A.3.
        let jwk = Jwk {
            kty: "OKP",
            crv: "Ed25519",
            x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo".into(),
            ..Jwk::default()
        };
        assert_eq!(jwk.thumbprint(), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
    }

    #[test]
    fn rfc7638_example_thumbprint() {
        // The example key of RFC 7638 §3.1.
        let n = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw";
        assert_eq!(thumbprint(n, "AQAB"), "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs");
    }
}
