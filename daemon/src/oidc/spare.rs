//! Spare signing keys: RSA key generation takes 50–150 ms of one core, far more than everything
//! else a tenant creation or key rotation does. One key is kept generated ahead, so creating a
//! tenant or rotating takes milliseconds; a background thread replaces it after each use.
//!
//! The pool starts empty and fills only after its first use: a daemon that never creates tenants
//! never spends a core on keys it will not need. Spare keys live in memory only, like the loaded
//! signing keys; they are sealed when a tenant takes one.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

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
        let spare = {
            let mut ready = self.ready.lock().unwrap_or_else(|p| p.into_inner());
            ready.iter().position(|(b, _)| *b == bits).map(|i| ready.swap_remove(i).1)
        };
        let key = match spare {
            Some(k) => k,
            None => tokio::task::spawn_blocking(move || keys::generate(bits)).await.map_err(Error::internal)??,
        };
        self.refill(bits);
        Ok(key)
    }

    fn refill(self: &std::sync::Arc<Self>, bits: u32) {
        if self.filling.swap(true, Ordering::AcqRel) {
            return;
        }
        let pool = self.clone();
        tokio::task::spawn_blocking(move || {
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_taken_key_is_replaced_in_the_background() {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        rt.block_on(async {
            let pool = Arc::new(SpareKeys::default());
            let first = pool.take(2048).await.unwrap();
            for _ in 0..200 {
                if pool.ready.lock().unwrap().len() == SPARE {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            assert_eq!(pool.ready.lock().unwrap().len(), SPARE);
            let second = pool.take(2048).await.unwrap();
            assert_ne!(first.kid, second.kid);
        });
    }
}
