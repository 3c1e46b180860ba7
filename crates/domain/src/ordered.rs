//! Identifiers and one-time tokens made so that storing them appends to their indexes.
//!
//! Each of them is found through a unique B-tree index. Purely random values go anywhere in it:
//! a `user import` of 10,000 rows then touched nearly every leaf page of four indexes in each
//! commit, and every such page is written again (over ten times the bytes of the same import
//! with keys that append: bench/README.md, "Measurements behind the design"); a busy
//! token endpoint split a random leaf of the refresh-token index in most commits. A value that
//! begins with the time it was made goes in at the right-hand edge of its index instead (the
//! reason for UUIDv7, RFC 9562 §6.10), and a commit writes a few pages whatever the size of the
//! table. What follows the time is random, so none of them becomes guessable; they reveal when
//! they were made, as a Unix-time UUID or a JWT's `iat` does.
//!
//! Used for users' public ids and WebAuthn handles ([`crate::ids`]), invitation and
//! recovery tokens, authorization codes and refresh tokens. Values made by earlier releases (16
//! random bytes, 43-character tokens stored as their SHA-256) stay valid beside these: the formats
//! have different lengths, so they never clash, and a lookup works for both.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::crypto::{CryptoError, b64url, b64url_decode, random_bytes, sha256};

/// Milliseconds since the Unix epoch. The wall clock, not the daemon's clock: only the order
/// matters, and a clock set back merely costs locality.
fn unix_millis() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// The 48 bits of [`unix_millis`] that begin each token.
fn unix_ms() -> [u8; 6] {
    let b = unix_millis().to_be_bytes();
    [b[2], b[3], b[4], b[5], b[6], b[7]]
}

/// A UUIDv7 (RFC 9562): 48 bits of Unix time in milliseconds, the version and variant bits, and
/// 74 random bits (from aws-lc's generator; the `uuid` crate lays the fields out).
pub fn uuid_v7() -> Result<[u8; 16], CryptoError> {
    Ok(uuid_v7_from(random_bytes::<16>()?))
}

/// A UUIDv7 whose random bits come from `b` (its first ten bytes).
pub(crate) fn uuid_v7_from(b: [u8; 16]) -> [u8; 16] {
    let mut random = [0u8; 10];
    random.copy_from_slice(&b[..10]);
    uuid::Builder::from_unix_timestamp_millis(unix_millis(), &random).into_uuid().into_bytes()
}

/// A UUID's lowercase hyphenated text form (`01890a5d-ac96-774b-bcce-b302099a8057`).
pub fn uuid_text(b: &[u8; 16]) -> String {
    uuid::Uuid::from_bytes(*b).hyphenated().to_string()
}

/// Bytes of time that begin a token, and of random secret that follow.
const PREFIX: usize = 6;
pub(crate) const SECRET: usize = 32;
/// A token's bytes, and the length of its stored key.
const TOKEN_BYTES: usize = PREFIX + SECRET;

/// A new one-time token (invitation, recovery, authorization code, refresh token) and the key that stores it (see [`token_key`]). The token
/// is base64url of 6 bytes of time and 32 random bytes (256 bits of secret): 51 characters.
pub fn token() -> Result<(String, Vec<u8>), CryptoError> {
    let token = new_token()?;
    let key = token_key(&token);
    Ok((token, key))
}

/// A new token of [`token`]'s format, for callers that derive its key where they store it.
pub fn new_token() -> Result<String, CryptoError> {
    Ok(b64url(&token_bytes()?))
}

fn token_bytes() -> Result<[u8; TOKEN_BYTES], CryptoError> {
    Ok(token_bytes_from(&random_bytes::<SECRET>()?))
}

pub(crate) fn token_bytes_from(secret: &[u8]) -> [u8; TOKEN_BYTES] {
    let mut raw = [0u8; TOKEN_BYTES];
    raw[..PREFIX].copy_from_slice(&unix_ms());
    raw[PREFIX..].copy_from_slice(secret);
    raw
}

/// The key under which a token is stored and looked up (`invites`, `sessions` and `refresh_tokens`
/// `.token_hash`, `authorization_codes.code_hash`): for a token of
/// [`token`]'s format, its 6 bytes of time followed by the SHA-256 of the whole token (38 bytes),
/// so that new keys are ordered; for any other text, as for the 43-character tokens of earlier
/// releases, the SHA-256 of the token (32 bytes), as they were stored. The secret itself is never
/// stored, and a key is found only by the token it was made from.
pub fn token_key(token: &str) -> Vec<u8> {
    let hash = sha256(token.as_bytes());
    match b64url_decode(token) {
        Some(raw) if raw.len() == PREFIX + SECRET => {
            let mut key = Vec::with_capacity(PREFIX + hash.len());
            key.extend_from_slice(&raw[..PREFIX]);
            key.extend_from_slice(&hash);
            key
        }
        _ => hash.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_v7_in_time_order() {
        let a = uuid_v7().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = uuid_v7().unwrap();
        assert!(a < b, "later values sort after earlier ones");
        assert_eq!((a[6] >> 4, a[8] >> 6), (7, 0b10), "version 7, RFC 9562 variant");
        assert_ne!(a[6..], b[6..]);
        assert_eq!(uuid_text(&[0xab; 16]), "abababab-abab-abab-abab-abababababab");
    }

    #[test]
    fn token_keys_are_ordered_and_found_only_by_their_token() {
        let (t1, k1) = token().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let (t2, k2) = token().unwrap();
        assert_ne!(t1[8..], t2[8..]);
        assert_eq!(t1.len(), 51);
        assert!(t1.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'), "{t1}");
        assert_eq!(k1.len(), 38);
        assert!(k1 < k2, "keys of later tokens sort after earlier ones");
        assert_eq!(token_key(&t1), k1);
        assert_eq!(&k1[6..], &sha256(t1.as_bytes()), "only a hash of the secret is stored");
        // Another secret with the same time prefix is another key.
        let mut forged = t1.clone();
        forged.replace_range(40..41, if &t1[40..41] == "A" { "B" } else { "A" });
        assert_ne!(token_key(&forged), k1);
    }

    #[test]
    fn tokens_of_earlier_releases_keep_their_key() {
        // 43 characters, 32 random bytes: stored as SHA-256(token).
        let old = b64url(&[7u8; 32]);
        assert_eq!(token_key(&old), sha256(old.as_bytes()).to_vec());
        // Anything else is hashed likewise, and matches nothing stored.
        assert_eq!(token_key("not a token"), sha256(b"not a token").to_vec());
        assert_eq!(token_key(""), sha256(b"").to_vec());
    }
}
