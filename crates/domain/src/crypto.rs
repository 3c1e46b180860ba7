//! Small cryptographic building blocks over aws-lc-rs: randomness, hashing of high-entropy
//! secrets, and the key-encryption key that seals signing keys at rest.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

pub fn b64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

pub fn b64url_decode(text: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(text).ok()
}

/// `n` bytes from the operating system's CSPRNG.
pub fn random_bytes<const N: usize>() -> Result<[u8; N], CryptoError> {
    let mut buf = [0u8; N];
    SystemRandom::new().fill(&mut buf).map_err(|_| CryptoError::Random)?;
    Ok(buf)
}

/// Seeds aws-lc's random generator on a thread of its own, at normal priority, and returns at
/// once. The first use of randomness in a process costs tens of milliseconds of CPU (aws-lc
/// gathers the entropy for its seed), and every other thread that needs randomness
/// meanwhile waits for it. Started first thing, the seeding overlaps the start instead of falling
/// on whoever needs a random value first: a request, or a spare-key generation at idle priority
/// that any other work on the machine delays while it holds the seeding (after a restart, the
/// first tenant creation waited for it: figures in bench/README.md, "Measurements behind the
/// design").
pub fn seed_random() {
    let seeding = std::thread::Builder::new().name("latchkey-seed".into()).spawn(|| {
        if random_bytes::<16>().is_err() {
            tracing::warn!("the random generator failed at start");
        }
    });
    if let Err(e) = seeding {
        tracing::debug!("the random generator seeds on first use instead: {e}");
    }
}

/// A 256-bit random token, base64url without padding (43 characters).
pub fn random_token() -> Result<String, CryptoError> {
    Ok(b64url(&random_bytes::<32>()?))
}

/// SHA-256 of a secret. The secrets we hash (tokens, client secrets) carry 256 bits of
/// entropy, so a fast hash is the right tool: there is nothing for a slow KDF to protect.
/// Lower-case hex, as digests are shown (`logo_sha256`, a metadata BLOB's `sha256`).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn sha256(data: &[u8]) -> [u8; 32] {
    let d = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, data);
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

/// Compares two byte strings in time independent of where they differ.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && aws_lc_rs::constant_time::verify_slices_are_equal(a, b).is_ok()
}

#[derive(Debug, thiserror::Error)]
pub enum CryptoError {
    #[error("the system random number generator failed")]
    Random,
    #[error("key-encryption key file {path}: {message}")]
    KekFile { path: PathBuf, message: String },
    #[error("a sealed value could not be opened: wrong key-encryption key, or the database was altered")]
    Open,
    #[error("sealing failed")]
    Seal,
    #[error("signing key generation failed")]
    KeyGen,
    #[error("a stored signing key could not be parsed")]
    KeyParse,
}

/// The key-encryption key: AES-256-GCM over each signing key at rest. Its `Debug` shows nothing.
pub struct Kek {
    key: LessSafeKey,
    /// Derived from the KEK: keys the stand-in credential ids that `/auth/start` returns for
    /// unknown usernames, so they are stable per username and unguessable.
    decoy: aws_lc_rs::hmac::Key,
    /// Derived from the KEK: keys the ID tokens' `sid` claims ([`SessionIds`]).
    session_ids: SessionIds,
    /// Derived from the KEK: keys the DPoP nonces (`oidc::dpop`), so that every node issues
    /// and accepts the same ones without storing them.
    dpop_nonces: aws_lc_rs::hmac::Key,
}

/// Names a session to the applications (the ID token's `sid`, and the back-channel logout token's
/// that ends it): stable for the session, the same on every node (derived from the KEK), and
/// telling nothing of the session's row or how many there are.
#[derive(Clone)]
pub struct SessionIds(aws_lc_rs::hmac::Key);

impl SessionIds {
    pub fn sid(&self, tenant: crate::store::TenantId, session: i64) -> String {
        let tag = aws_lc_rs::hmac::sign(&self.0, format!("{tenant}/{session}").as_bytes());
        b64url(&tag.as_ref()[..16])
    }

    /// The `jti` of the logout token of outbox row `id`: the same on every attempt and every
    /// node, so that a receiver sent it twice (a retry after a lost answer) can tell.
    pub fn logout_jti(&self, tenant: crate::store::TenantId, id: i64) -> String {
        let tag = aws_lc_rs::hmac::sign(&self.0, format!("{tenant}/logout/{id}").as_bytes());
        b64url(&tag.as_ref()[..16])
    }
}

impl std::fmt::Debug for SessionIds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionIds([redacted])")
    }
}

impl std::fmt::Debug for Kek {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Kek([redacted])")
    }
}

impl Kek {
    /// Loads the key from `path`, creating it (32 random bytes, base64, mode 0600) when the
    /// file does not exist. A key file that group or others can read is refused: whoever reads
    /// it can decrypt every signing key in the database.
    pub fn load_or_create(path: &Path) -> Result<Kek, CryptoError> {
        let err = |message: String| CryptoError::KekFile { path: path.to_owned(), message };
        if !path.exists() {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                fs::create_dir_all(dir).map_err(|e| err(format!("cannot create its directory: {e}")))?;
            }
            let key = random_bytes::<32>()?;
            let mut f = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
                .map_err(|e| err(format!("cannot create: {e}")))?;
            writeln!(f, "{}", STANDARD.encode(key)).map_err(|e| err(format!("cannot write: {e}")))?;
            f.sync_all().map_err(|e| err(format!("cannot sync: {e}")))?;
        }
        Kek::load(path)
    }

    /// Reads an existing key file: mode 0600 (or stricter), 32 bytes raw or in base64.
    pub fn load(path: &Path) -> Result<Kek, CryptoError> {
        let err = |message: String| CryptoError::KekFile { path: path.to_owned(), message };
        let meta = fs::metadata(path).map_err(|e| err(format!("cannot read: {e}")))?;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(err(format!("mode is {mode:04o}, readable by others; run `chmod 600 {}`", path.display())));
        }
        let text = fs::read(path).map_err(|e| err(format!("cannot read: {e}")))?;
        let bytes = if text.len() == 32 {
            text
        } else {
            let s = String::from_utf8_lossy(&text);
            STANDARD.decode(s.trim()).map_err(|_| err("is neither 32 raw bytes nor base64 of 32 bytes".into()))?
        };
        Kek::from_bytes(&bytes).map_err(|_| err("must hold exactly 32 bytes (AES-256)".into()))
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Kek, CryptoError> {
        let unbound = UnboundKey::new(&AES_256_GCM, bytes).map_err(|_| CryptoError::Seal)?;
        let derive = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, bytes);
        let decoy_key = aws_lc_rs::hmac::sign(&derive, b"latchkey/decoy-credential-ids");
        let decoy = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, decoy_key.as_ref());
        let sid_key = aws_lc_rs::hmac::sign(&derive, b"latchkey/session-ids");
        let session_ids = SessionIds(aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, sid_key.as_ref()));
        let nonce_key = aws_lc_rs::hmac::sign(&derive, b"latchkey/dpop-nonces");
        let dpop_nonces = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, nonce_key.as_ref());
        Ok(Kek { key: LessSafeKey::new(unbound), decoy, session_ids, dpop_nonces })
    }

    /// What names sessions in ID tokens ([`SessionIds`]).
    pub fn session_ids(&self) -> SessionIds {
        self.session_ids.clone()
    }

    /// The tag of a tenant's DPoP nonce for one time window: what only this deployment makes.
    pub fn dpop_nonce_tag(&self, tenant: crate::store::TenantId, window: i64) -> [u8; 16] {
        let tag = aws_lc_rs::hmac::sign(&self.dpop_nonces, format!("{tenant}/{window}").as_bytes());
        let mut out = [0; 16];
        out.copy_from_slice(&tag.as_ref()[..16]);
        out
    }

    /// A stable, secret-keyed stand-in credential id for a username that has no credentials.
    pub fn decoy_credential_id(&self, tenant: crate::store::TenantId, username: &str) -> Vec<u8> {
        let tag = aws_lc_rs::hmac::sign(&self.decoy, format!("{tenant}/{username}").as_bytes());
        tag.as_ref().to_vec()
    }

    /// Encrypts `plaintext`, bound to `aad` (what the value belongs to, so a sealed value cannot
    /// be moved to another row). Output: nonce ‖ ciphertext ‖ tag.
    pub fn seal(&self, aad: &[u8], plaintext: &[u8]) -> Result<Vec<u8>, CryptoError> {
        let nonce_bytes = random_bytes::<NONCE_LEN>()?;
        let mut buf = plaintext.to_vec();
        self.key
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce_bytes), Aad::from(aad), &mut buf)
            .map_err(|_| CryptoError::Seal)?;
        let mut out = nonce_bytes.to_vec();
        out.extend_from_slice(&buf);
        Ok(out)
    }

    pub fn open(&self, aad: &[u8], sealed: &[u8]) -> Result<Vec<u8>, CryptoError> {
        if sealed.len() < NONCE_LEN {
            return Err(CryptoError::Open);
        }
        let (nonce, body) = sealed.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| CryptoError::Open)?;
        // The plaintext is a private key: the working copy is wiped, only the returned one stays.
        let mut buf = zeroize::Zeroizing::new(body.to_vec());
        let plain = self.key.open_in_place(nonce, Aad::from(aad), &mut buf).map_err(|_| CryptoError::Open)?;
        Ok(plain.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_stable_per_session_and_keyed() {
        use crate::store::TenantId;
        let ids = Kek::from_bytes(&[1; 32]).unwrap().session_ids();
        let sid = ids.sid(TenantId(1), 7);
        assert_eq!(sid, ids.sid(TenantId(1), 7), "stable");
        assert_eq!(sid.len(), 22, "16 bytes, base64url: {sid}");
        assert_ne!(sid, ids.sid(TenantId(1), 8), "another session");
        assert_ne!(sid, ids.sid(TenantId(2), 7), "another tenant's session of the same row id");
        assert_ne!(sid, Kek::from_bytes(&[2; 32]).unwrap().session_ids().sid(TenantId(1), 7), "another KEK");
        assert_eq!(format!("{ids:?}"), "SessionIds([redacted])");
    }

    #[test]
    fn seal_open_round_trip_and_binding() {
        let kek = Kek::from_bytes(&[7u8; 32]).unwrap();
        let sealed = kek.seal(b"tenant-1/kid", b"secret").unwrap();
        assert_eq!(kek.open(b"tenant-1/kid", &sealed).unwrap(), b"secret");
        assert!(kek.open(b"tenant-2/kid", &sealed).is_err());
        let other = Kek::from_bytes(&[8u8; 32]).unwrap();
        assert!(other.open(b"tenant-1/kid", &sealed).is_err());
    }

    #[test]
    fn kek_file_created_0600_and_refused_when_readable() {
        let dir = std::env::temp_dir().join(format!("lk-kek-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let path = dir.join("kek");
        let a = Kek::load_or_create(&path).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        let b = Kek::load_or_create(&path).unwrap();
        let sealed = a.seal(b"x", b"y").unwrap();
        assert_eq!(b.open(b"x", &sealed).unwrap(), b"y");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let err = Kek::load_or_create(&path).unwrap_err().to_string();
        assert!(err.contains("chmod 600"), "{err}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn tokens_are_43_chars() {
        assert_eq!(random_token().unwrap().len(), 43);
        assert_ne!(random_token().unwrap(), random_token().unwrap());
    }
}
