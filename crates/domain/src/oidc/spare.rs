//! Spare signing keys: RSA key generation takes 50–150 ms of one core, far more than everything
//! else a tenant creation or key rotation does. One key is kept generated ahead, so creating a
//! tenant or rotating takes milliseconds; a background thread replaces it after each use.
//!
//! On SQLite the spare key outlives a restart: at shutdown an unused one is sealed into a file
//! beside the database ([`SpareFile`]), and the next start moves it back into memory (a rename, a
//! read, a removal and a directory sync: about a millisecond) before it loads the tenants. So the
//! first tenant created right after a restart takes a ready key, and the start generates none:
//! when every start generated its spare, a creation right after the start waited for that
//! generation. A daemon's first start, or one after a crash, has no
//! reserve and generates as before. On PostgreSQL nodes keep no files; their spare lives in
//! memory only.
//!
//! A spare key is never written anywhere in the clear: it is sealed when a tenant takes it or the
//! shutdown keeps it.
//!
//! Replacements are generated on a thread of their own at idle scheduling priority. At normal
//! priority, the new thread took the CPU from the request that had just taken the spare key
//! (a wakeup preemption costs up to a scheduler slice) and from the writer committing it: a
//! creation spent part of its time waiting behind the key generation it had started itself
//! (figures in bench/README.md, "Measurements behind the design").

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, TryLockError};

use super::keys::{self, GeneratedKey};
use super::spare_file::SpareFile;
use crate::error::Error;

/// How many keys to keep ready in memory.
const SPARE: usize = 1;

#[derive(Default)]
pub struct SpareKeys {
    ready: Mutex<Vec<(u32, GeneratedKey)>>,
    filling: AtomicBool,
    /// Where an unused spare waits for the next start (SQLite only).
    reserve: Option<SpareFile>,
}

impl std::fmt::Debug for SpareKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SpareKeys")
    }
}

impl SpareKeys {
    /// Spare keys that outlive a restart in `file` ([`SpareKeys::keep`], [`SpareKeys::prefill`]).
    pub fn with_reserve(file: SpareFile) -> SpareKeys {
        SpareKeys { reserve: Some(file), ..SpareKeys::default() }
    }

    /// A new key of `bits`: a spare one if ready, else generated now on a blocking thread. Either
    /// way a replacement is started in the background.
    pub async fn take(self: &std::sync::Arc<Self>, bits: u32) -> Result<GeneratedKey, Error> {
        match self.try_take(bits) {
            Some(k) => Ok(k),
            None => Ok(tokio::task::spawn_blocking(move || keys::generate(bits)).await.map_err(Error::internal)??),
        }
    }

    /// A spare key of `bits` if one is ready now (a replacement is then started); never
    /// generates one here.
    pub fn try_take(self: &std::sync::Arc<Self>, bits: u32) -> Option<GeneratedKey> {
        let spare = self.try_ready().and_then(|mut ready| take_ready(&mut ready, bits));
        self.refill(bits);
        spare
    }

    /// The ready keys, unless the lock is taken: never waited for, since the generating thread
    /// holds it for a moment only but at idle priority a busy machine may not run it again for a
    /// while. Contended means no spare.
    fn try_ready(&self) -> Option<std::sync::MutexGuard<'_, Vec<(u32, GeneratedKey)>>> {
        match self.ready.try_lock() {
            Ok(ready) => Some(ready),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Takes back a key generated for a use that did not need it (a tenant's first key made
    /// twice): it becomes the spare if there is none, else it is dropped.
    pub fn give(&self, bits: u32, key: GeneratedKey) {
        // Contended, the key is dropped.
        let Some(mut ready) = self.try_ready() else { return };
        if ready.iter().filter(|(b, _)| *b == bits).count() < SPARE {
            ready.push((bits, key));
        }
    }

    /// Makes a spare key of `bits` ready: the one the previous run kept, moved into memory here
    /// (about a millisecond) so that a tenant created the moment the daemon is ready finds it;
    /// else one generated in the background. Returns without waiting for a generation.
    pub fn prefill(self: &std::sync::Arc<Self>, bits: u32) {
        if self.ready_count(bits) < SPARE
            && let Some(k) = self.claim_reserve(bits)
        {
            self.push(bits, k);
        }
        self.refill(bits);
    }

    /// The reserve's key, if there is a usable one (a claim that fails is logged).
    fn claim_reserve(&self, bits: u32) -> Option<GeneratedKey> {
        match self.reserve.as_ref()?.claim(bits) {
            Ok(key) => key,
            Err(e) => {
                tracing::warn!("cannot take the reserve signing key: {e}");
                None
            }
        }
    }

    fn refill(self: &std::sync::Arc<Self>, bits: u32) {
        if self.filling.swap(true, Ordering::AcqRel) {
            return;
        }
        let pool = self.clone();
        let spawned = std::thread::Builder::new().name("latchkey-keygen".into()).spawn(move || {
            idle_priority();
            pool.fill(bits);
            pool.filling.store(false, Ordering::Release);
        });
        if let Err(e) = spawned {
            tracing::warn!("cannot start generating a spare signing key: {e}");
            self.filling.store(false, Ordering::Release);
        }
    }

    fn ready_count(&self, bits: u32) -> usize {
        self.ready.lock().unwrap_or_else(|p| p.into_inner()).iter().filter(|(b, _)| *b == bits).count()
    }

    fn push(&self, bits: u32, key: GeneratedKey) {
        self.ready.lock().unwrap_or_else(|p| p.into_inner()).push((bits, key));
    }

    /// Generates keys until memory holds [`SPARE`]. Runs on the background thread.
    fn fill(&self, bits: u32) {
        while self.ready_count(bits) < SPARE {
            match keys::generate(bits) {
                Ok(k) => self.push(bits, k),
                Err(e) => {
                    tracing::warn!("cannot generate a spare signing key: {e}");
                    return;
                }
            }
        }
    }

    /// At shutdown: an unused spare key of `bits` is sealed into the reserve file for the next
    /// start (nothing on PostgreSQL). A key still being generated is dropped, never waited for.
    pub fn keep(&self, bits: u32) {
        let Some(reserve) = &self.reserve else { return };
        let Some(key) = take_ready(&mut self.ready.lock().unwrap_or_else(|p| p.into_inner()), bits) else { return };
        if let Err(e) = reserve.store(bits, &key) {
            // The next start generates its spare, as on PostgreSQL.
            tracing::warn!("cannot keep the spare signing key in {}: {e}", reserve.path().display());
        }
    }
}

fn take_ready(ready: &mut Vec<(u32, GeneratedKey)>, bits: u32) -> Option<GeneratedKey> {
    ready.iter().position(|(b, _)| *b == bits).map(|i| ready.swap_remove(i).1)
}

/// Puts the calling thread in the `SCHED_IDLE` class: it runs only on a core nothing else wants,
/// and never preempts a request. Under sustained load a spare key may then come late; `take`
/// generates one itself meanwhile, at normal priority.
fn idle_priority() {
    if let Err(e) = crate::sys::idle_priority() {
        tracing::debug!("spare keys generate at normal priority: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Waits until the pool holds [`SPARE`] keys (generated at idle priority: on a busy test
    /// machine that can take a while).
    async fn until_full(pool: &SpareKeys) {
        for _ in 0..3000 {
            if pool.ready.lock().unwrap().len() == SPARE {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert_eq!(pool.ready.lock().unwrap().len(), SPARE);
    }

    #[test]
    fn a_prefilled_pool_gives_its_first_key_without_generating_one() {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        rt.block_on(async {
            let pool = Arc::new(SpareKeys::default());
            pool.prefill(2048);
            until_full(&pool).await;
            let spare = pool.ready.lock().unwrap()[0].1.kid.clone();
            // A second prefill with the pool full leaves the ready key where it is.
            pool.prefill(2048);
            let first = pool.take(2048).await.unwrap();
            assert_eq!(first.kid, spare, "the first key taken is the one generated ahead");
        });
    }

    #[test]
    fn an_unused_spare_outlives_a_restart_and_is_used_once() {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("latchkey.db");
        let kek = Arc::new(crate::crypto::Kek::from_bytes(&[9u8; 32]).unwrap());
        let reserve = || SpareFile::beside(&db, kek.clone());
        rt.block_on(async {
            let first = Arc::new(SpareKeys::with_reserve(reserve()));
            first.prefill(2048);
            until_full(&first).await;
            let spare = first.ready.lock().unwrap()[0].1.kid.clone();
            first.keep(2048);
            assert!(first.ready.lock().unwrap().is_empty(), "the kept key leaves memory");
            assert!(reserve().path().exists());
            drop(first);

            // The next start has the key in memory before prefill returns, and the file is gone.
            let second = Arc::new(SpareKeys::with_reserve(reserve()));
            second.prefill(2048);
            assert_eq!(second.ready.lock().unwrap()[0].1.kid, spare);
            assert!(!reserve().path().exists());
            assert_eq!(second.take(2048).await.unwrap().kid, spare);
            until_full(&second).await;
            assert_ne!(second.take(2048).await.unwrap().kid, spare, "a key is handed out once");
        });
    }

    #[test]
    fn a_spare_that_cannot_be_kept_is_dropped_with_a_warning() {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let kek = Arc::new(crate::crypto::Kek::from_bytes(&[9u8; 32]).unwrap());
        let nowhere = std::path::Path::new("/nonexistent-latchkey-dir/latchkey.db");
        rt.block_on(async {
            let pool = Arc::new(SpareKeys::with_reserve(SpareFile::beside(nowhere, kek)));
            pool.prefill(2048);
            until_full(&pool).await;
            pool.keep(2048);
            assert!(!nowhere.with_extension("db.spare-key").exists());
        });
    }

    #[test]
    fn a_taken_key_is_replaced_in_the_background() {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        rt.block_on(async {
            let pool = Arc::new(SpareKeys::default());
            let first = pool.take(2048).await.unwrap();
            until_full(&pool).await;
            let second = pool.take(2048).await.unwrap();
            assert_ne!(first.kid, second.kid);
        });
    }
}
