//! The spare signing key kept across a restart, in a file beside the SQLite database
//! (`<database>.spare-key`, mode 0600), sealed with the key-encryption key like the keys in the
//! database. A shutdown writes the unused spare there and the next start takes it back, so the
//! first tenant created (or key rotated) after a restart does not wait for a generation of
//! 50–150 ms that the start has only just begun.
//!
//! A key leaves the file before it can be used: the file is renamed to a name of the claiming
//! caller's own, read, removed and the directory synced, and only then is the key handed out.
//! A crash can therefore lose a kept key, never give one key to two tenants. The file names the
//! key's id and size in the clear (both are public once the key signs); the private key is
//! sealed, bound to both.

use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use super::keys::GeneratedKey;
use crate::crypto::Kek;

const HEADER: &str = "latchkey spare signing key v1";

pub struct SpareFile {
    path: PathBuf,
    kek: Arc<Kek>,
}

impl std::fmt::Debug for SpareFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpareFile").field("path", &self.path).finish_non_exhaustive()
    }
}

/// What binds a sealed spare key to its size and id.
fn aad(bits: u32, kid: &str) -> Vec<u8> {
    format!("latchkey-spare-signing-key/{bits}/{kid}").into_bytes()
}

impl SpareFile {
    /// The reserve of the SQLite database at `database`.
    pub fn beside(database: &Path, kek: Arc<Kek>) -> SpareFile {
        let mut name = database.file_name().map(|n| n.to_os_string()).unwrap_or_default();
        name.push(".spare-key");
        SpareFile { path: database.with_file_name(name), kek }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `key` as the reserve: to a temporary file (0600), synced, then renamed into place.
    pub fn store(&self, bits: u32, key: &GeneratedKey) -> std::io::Result<()> {
        let sealed = self.kek.seal(&aad(bits, &key.kid), &key.pkcs8).map_err(std::io::Error::other)?;
        let text = format!("{HEADER}\nbits {bits}\nkid {}\nsealed {}\n", key.kid, STANDARD.encode(sealed));
        let tmp = self.sibling(&format!("tmp-{}", std::process::id()));
        let _ = fs::remove_file(&tmp);
        let written = (|| {
            let mut f = fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            fs::rename(&tmp, &self.path)
        })();
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written
    }

    /// Takes the reserve key out of the file for this caller: `None` when there is none, or when
    /// it is not a key of `bits` sealed with this daemon's key-encryption key (such a file is
    /// removed). The file is first renamed to a name of this caller's own, so two callers never
    /// both get the key, and its removal is durable before the key is returned.
    pub fn claim(&self, bits: u32) -> std::io::Result<Option<GeneratedKey>> {
        static CLAIMS: AtomicU64 = AtomicU64::new(0);
        let mine = self.sibling(&format!("claim-{}-{}", std::process::id(), CLAIMS.fetch_add(1, Ordering::Relaxed)));
        match fs::rename(&self.path, &mine) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        }
        let text = fs::read(&mine);
        fs::remove_file(&mine)?;
        sync_dir(&self.path)?;
        Ok(self.parse(&text?, bits))
    }

    /// `<database>.spare-key.<suffix>`.
    fn sibling(&self, suffix: &str) -> PathBuf {
        let mut name = self.path.as_os_str().to_os_string();
        name.push(".");
        name.push(suffix);
        PathBuf::from(name)
    }

    fn parse(&self, text: &[u8], bits: u32) -> Option<GeneratedKey> {
        let text = std::str::from_utf8(text).ok()?;
        let mut lines = text.lines();
        if lines.next()? != HEADER {
            return None;
        }
        let stored_bits: u32 = lines.next()?.strip_prefix("bits ")?.parse().ok()?;
        let kid = lines.next()?.strip_prefix("kid ")?;
        let sealed = STANDARD.decode(lines.next()?.strip_prefix("sealed ")?).ok()?;
        if stored_bits != bits {
            return None;
        }
        let pkcs8 = self.kek.open(&aad(bits, kid), &sealed).ok()?;
        Some(GeneratedKey { kid: kid.to_owned(), alg: crate::store::SigningAlg::RS256, bits, pkcs8 })
    }
}

/// Makes a removal or rename in the file's directory durable.
fn sync_dir(file: &Path) -> std::io::Result<()> {
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;
    use crate::oidc::keys::generate;

    fn kek() -> Arc<Kek> {
        Arc::new(Kek::from_bytes(&[7u8; 32]).unwrap())
    }

    #[test]
    fn a_stored_key_is_claimed_once_and_the_file_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let file = SpareFile::beside(&dir.path().join("latchkey.db"), kek());
        assert_eq!(file.path(), dir.path().join("latchkey.db.spare-key"));
        assert!(file.claim(2048).unwrap().is_none(), "no file, no key");
        let key = generate(2048).unwrap();
        file.store(2048, &key).unwrap();
        let mode = fs::metadata(file.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let text = fs::read_to_string(file.path()).unwrap();
        assert!(text.contains(&key.kid), "the id is in the clear");
        let claimed = file.claim(2048).unwrap().expect("the stored key");
        assert_eq!((claimed.kid.as_str(), claimed.pkcs8.as_slice()), (key.kid.as_str(), key.pkcs8.as_slice()));
        assert!(!file.path().exists(), "claimed means gone");
        assert!(file.claim(2048).unwrap().is_none(), "a key is claimed once");
        let left: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "no temporary file is left: {left:?}");
    }

    #[test]
    fn callers_claiming_at_once_get_the_key_once() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("latchkey.db");
        for _ in 0..5 {
            SpareFile::beside(&db, kek()).store(2048, &generate(2048).unwrap()).unwrap();
            let got: usize = std::thread::scope(|s| {
                let claims: Vec<_> =
                    (0..8).map(|_| s.spawn(|| SpareFile::beside(&db, kek()).claim(2048).unwrap())).collect();
                claims.into_iter().filter_map(|c| c.join().unwrap()).count()
            });
            assert_eq!(got, 1);
            assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0, "no claimed file is left");
        }
    }

    #[test]
    fn a_key_of_another_size_or_another_kek_or_a_damaged_file_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("latchkey.db");
        let key = generate(2048).unwrap();

        SpareFile::beside(&db, kek()).store(2048, &key).unwrap();
        assert!(SpareFile::beside(&db, kek()).claim(3072).unwrap().is_none(), "another size");
        assert!(!SpareFile::beside(&db, kek()).path().exists(), "and the file is gone");

        SpareFile::beside(&db, kek()).store(2048, &key).unwrap();
        let other = Arc::new(Kek::from_bytes(&[8u8; 32]).unwrap());
        assert!(SpareFile::beside(&db, other).claim(2048).unwrap().is_none(), "another key-encryption key");

        // The id is bound to the sealed key: a file edited to name another id does not open.
        SpareFile::beside(&db, kek()).store(2048, &key).unwrap();
        let path = SpareFile::beside(&db, kek()).path().to_owned();
        let edited = fs::read_to_string(&path).unwrap().replace(&key.kid, "another-kid");
        fs::write(&path, edited).unwrap();
        assert!(SpareFile::beside(&db, kek()).claim(2048).unwrap().is_none(), "an edited id");

        fs::write(&path, "not a key").unwrap();
        assert!(SpareFile::beside(&db, kek()).claim(2048).unwrap().is_none(), "a damaged file");
        assert!(!path.exists());
    }
}
