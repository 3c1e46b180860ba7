//! Spare signing keys: RSA key generation takes 50–150 ms of one core, far more than everything
//! else a tenant creation or key rotation does. One key is kept generated ahead, so creating a
//! tenant or rotating takes milliseconds; a background thread replaces it after each use.
//!
//! The pool fills while the daemon starts ([`SpareKeys::prefill`]), so that the first tenant
//! created after a start does not wait for a generation: when it started empty and filled only
//! after its first use, that first creation took 150–200 ms while the others took 2 ms (the
//! 10,000-tenant bench hid it as its slowest sample). The cost is one key generated per start,
//! 25–200 ms of an otherwise idle core. Spare keys live in memory only, like the loaded signing
//! keys; they are sealed when a tenant takes one.
//!
//! The replacement is generated on a thread of its own at idle scheduling priority. At normal
//! priority, the new thread took the CPU from the request that had just taken the spare key
//! (a wakeup preemption costs up to a 3 ms scheduler slice) and from the writer committing it:
//! on 2 cores, tenant creation one at a time measured p50 4.5 ms and p99 9–12 ms, of which
//! 1–4 ms were spent waiting behind the key generation it had started itself.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, TryLockError};

use super::keys::{self, GeneratedKey};
use crate::error::Error;

/// How many keys to keep ready.
const SPARE: usize = 1;

#[derive(Default)]
pub struct SpareKeys {
    ready: Mutex<Vec<(u32, GeneratedKey)>>,
    filling: AtomicBool,
}

impl std::fmt::Debug for SpareKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SpareKeys")
    }
}

impl SpareKeys {
    /// A new key of `bits`: a spare one if ready, else generated now on a blocking thread. Either
    /// way a replacement is started in the background.
    pub async fn take(self: &std::sync::Arc<Self>, bits: u32) -> Result<GeneratedKey, Error> {
        // Never waits for the lock: the generating thread holds it for a moment only, but at idle
        // priority a busy machine may not run it again for a while. Contended means no spare.
        let spare = match self.ready.try_lock() {
            Ok(mut ready) => take_ready(&mut ready, bits),
            Err(TryLockError::Poisoned(p)) => take_ready(&mut p.into_inner(), bits),
            Err(TryLockError::WouldBlock) => None,
        };
        let key = match spare {
            Some(k) => k,
            None => tokio::task::spawn_blocking(move || keys::generate(bits)).await.map_err(Error::internal)??,
        };
        self.refill(bits);
        Ok(key)
    }

    /// Starts generating the spare keys of `bits` in the background, unless they are ready or
    /// already being generated. Returns at once.
    pub fn prefill(self: &std::sync::Arc<Self>, bits: u32) {
        self.refill(bits);
    }

    fn refill(self: &std::sync::Arc<Self>, bits: u32) {
        if self.filling.swap(true, Ordering::AcqRel) {
            return;
        }
        let pool = self.clone();
        let spawned = std::thread::Builder::new().name("latchkey-keygen".into()).spawn(move || {
            idle_priority();
            loop {
                let have =
                    pool.ready.lock().unwrap_or_else(|p| p.into_inner()).iter().filter(|(b, _)| *b == bits).count();
                if have >= SPARE {
                    break;
                }
                match keys::generate(bits) {
                    Ok(k) => pool.ready.lock().unwrap_or_else(|p| p.into_inner()).push((bits, k)),
                    Err(e) => {
                        tracing::warn!("cannot generate a spare signing key: {e}");
                        break;
                    }
                }
            }
            pool.filling.store(false, Ordering::Release);
        });
        if let Err(e) = spawned {
            tracing::warn!("cannot start generating a spare signing key: {e}");
            self.filling.store(false, Ordering::Release);
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
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param for SCHED_IDLE.
        if unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } != 0 {
            tracing::debug!("spare keys generate at normal priority: {}", std::io::Error::last_os_error());
        }
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
