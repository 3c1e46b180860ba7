//! New users' identifiers: the `public_id` (`sub` of tokens) and the WebAuthn user handle, both
//! UUIDv7, and the first invitation token of an imported user, made in time order so that
//! storing them appends to their indexes ([`crate::ordered`] says why).

use crate::crypto::{CryptoError, b64url, random_bytes};
use crate::ordered::{SECRET, token_bytes_from, uuid_v7, uuid_v7_from};
pub use crate::ordered::{token, token_key, uuid_text};

/// A new user's WebAuthn user handle: a UUIDv7 as 16 bytes. WebAuthn wants an opaque handle of at
/// most 64 bytes without personal data; webauthn-rs takes it as a UUID, so exactly 16 bytes.
pub fn user_handle() -> Result<[u8; 16], CryptoError> {
    uuid_v7()
}

/// A new user's public id (the `sub` of tokens): a UUIDv7 in its lowercase hyphenated text form,
/// which sorts in time order both byte by byte (SQLite) and in the collations of PostgreSQL
/// (digits before lowercase letters, hyphens at fixed places).
pub fn public_id() -> Result<String, CryptoError> {
    Ok(uuid_text(&uuid_v7()?))
}

/// A new user of a bulk import: public id, user handle, and first invitation token with its
/// stored key, from one call to the random generator instead of three (each call has a fixed
/// cost that showed in the writer thread's profile).
pub struct NewUserIds {
    pub public_id: String,
    pub handle: [u8; 16],
    pub token: String,
    pub token_key: Vec<u8>,
}

pub fn new_user() -> Result<NewUserIds, CryptoError> {
    let r = random_bytes::<{ 16 + 16 + SECRET }>()?;
    let (a, rest) = r.split_at(16);
    let (b, secret) = rest.split_at(16);
    let mut public = [0u8; 16];
    public.copy_from_slice(a);
    let mut handle = [0u8; 16];
    handle.copy_from_slice(b);
    let token = b64url(&token_bytes_from(secret));
    let token_key = token_key(&token);
    Ok(NewUserIds { public_id: uuid_text(&uuid_v7_from(public)), handle: uuid_v7_from(handle), token, token_key })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_and_public_ids_are_uuid_v7_in_time_order() {
        let a = user_handle().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = user_handle().unwrap();
        assert!(a < b, "later handles sort after earlier ones");
        assert_eq!((a[6] >> 4, a[8] >> 6), (7, 0b10), "version 7, RFC 9562 variant");

        let p = public_id().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let q = public_id().unwrap();
        assert!(p < q);
        assert_eq!(p.len(), 36);
        assert!(p.chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c) || c == '-'), "{p}");
        assert_eq!((&p[8..9], &p[13..14], &p[14..15], &p[18..19], &p[23..24]), ("-", "-", "7", "-", "-"));
        // Earlier releases made 22-character ids and 16-byte handles: no new value equals one.
        assert_ne!(p.len(), b64url(&[0u8; 16]).len());
    }

    #[test]
    fn an_imported_user_gets_ordered_ids_and_a_token_with_its_key() {
        let n = new_user().unwrap();
        assert_eq!((n.token.len(), token_key(&n.token)), (51, n.token_key.clone()));
        assert_eq!((n.public_id.len(), n.handle[6] >> 4), (36, 7));
        assert!(n.public_id[..13] <= uuid_text(&n.handle)[..13], "both begin with the time");
    }
}
