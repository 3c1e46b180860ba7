//! Compact JWS signing (RS256, ES256 or EdDSA: the key's own algorithm) with a cached key.
//! jsonwebtoken's `encode` re-parses the DER key on every call; signing here uses the
//! [`SigningKey`] parsed once.

use serde::Serialize;

use super::keys::SigningKey;
use crate::crypto::{CryptoError, b64url};

#[derive(Serialize)]
struct Header<'a> {
    alg: &'static str,
    typ: &'a str,
    kid: &'a str,
}

/// The JWS signing input of `claims` with header `{alg, typ, kid}` (`alg` the key's):
/// `header.claims`, with room for the signature that [`super::signer`] appends.
pub fn signing_input<T: Serialize>(key: &SigningKey, typ: &str, claims: &T) -> Result<String, CryptoError> {
    let header =
        serde_json::to_vec(&Header { alg: key.alg.as_str(), typ, kid: &key.kid }).map_err(|_| CryptoError::Seal)?;
    let body = serde_json::to_vec(claims).map_err(|_| CryptoError::Seal)?;
    let mut token = String::with_capacity(64 + body.len() * 4 / 3 + 350);
    token.push_str(&b64url(&header));
    token.push('.');
    token.push_str(&b64url(&body));
    Ok(token)
}

/// Signs `claims` as a JWT with header `{alg, typ, kid}`, with aws-lc on this thread.
pub fn sign<T: Serialize>(key: &SigningKey, typ: &str, claims: &T) -> Result<String, CryptoError> {
    let mut token = signing_input(key, typ, claims)?;
    let sig = key.sign(token.as_bytes())?;
    token.push('.');
    token.push_str(&b64url(&sig));
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oidc::keys::generate;

    #[test]
    fn jsonwebtoken_verifies_our_tokens() {
        let g = generate(2048).unwrap();
        let key = SigningKey::from_pkcs8(&g.kid, 2048, &g.pkcs8).unwrap();
        let token = sign(&key, "JWT", &serde_json::json!({"sub": "u", "exp": 4_000_000_000u64, "iss": "i"})).unwrap();
        let dk = jsonwebtoken::DecodingKey::from_rsa_components(&key.jwk.n, &key.jwk.e).unwrap();
        let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
        v.set_issuer(&["i"]);
        v.validate_aud = false;
        let data = jsonwebtoken::decode::<serde_json::Value>(&token, &dk, &v).unwrap();
        assert_eq!(data.claims["sub"], "u");
        assert_eq!(data.header.kid.as_deref(), Some(g.kid.as_str()));
    }
}
