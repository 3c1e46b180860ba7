//! A tenant's first RS256 key, made after the tenant exists. Generating an RSA-2048 key costs
//! 50–150 ms of one core, far more than the rest of a tenant's creation; `apply` of ten thousand
//! tenants would wait ten minutes for them. So a tenant may be stored without a key ("keyless":
//! no current RS256 key): it routes, serves discovery, its pages and passkey ceremonies at once,
//! and its JWKS lists only the keys it has. Its key is made here:
//!
//! - in the background, one thread per core at idle priority (they never take the CPU from a
//!   request), for every tenant queued: by `tenant create` when no spare key was ready, by
//!   `apply`, and at start for every keyless tenant in the database;
//! - at once, at normal priority, by the first token request that needs it
//!   ([`ready_to_sign`]): it waits for that one key (up to [`KeyMaker::wait`]) and never fails
//!   for want of it. A JWKS request moves its tenant to the front of the queue.
//!
//! A key is installed in the two steps of `key rotate`: published first (in every node's JWKS),
//! then made current, so no relying party meets a token signed by a key it cannot find. Each step
//! is one transaction; a stop between them leaves a published key that the next attempt promotes
//! instead of making another. Whoever comes second (a thread and a request, two nodes, a rotation)
//! finds a current key and hands its own to the spare pool.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use latchkey::codes;
use tokio::sync::Notify;

use super::keys::{self, GeneratedKey};
use crate::error::{Error, Kind};
use crate::registry::{TenantRuntime, not_found};
use crate::state::State;
use crate::store::{self, SigningAlg, TenantId};
use crate::tenants::seal_key;

/// How long a token request waits for its tenant's first key by default: a generation at normal
/// priority takes well under a second, an RSA-4096 one a few seconds on a slow core.
pub const WAIT: Duration = Duration::from_secs(20);

/// How often held key making looks whether it was released.
const HELD_POLL: Duration = Duration::from_millis(200);

/// The queue of keyless tenants and the threads that make their keys.
#[derive(Debug)]
pub struct KeyMaker {
    queue: Mutex<Queue>,
    work: Condvar,
    /// Woken after each attempt to install a key: waiting token requests look again.
    installed: Notify,
    /// Tenants whose key a token request is making now.
    urgent: Mutex<HashSet<TenantId>>,
    /// While true, no key is made and no spare key handed to a new tenant (tests hold it to see
    /// keyless tenants).
    hold: Arc<AtomicBool>,
    stop: AtomicBool,
    /// How long a token request waits for its tenant's first key before answering 503.
    pub wait: Duration,
}

#[derive(Debug, Default)]
struct Queue {
    order: VecDeque<(TenantId, String)>,
    queued: HashSet<TenantId>,
    /// Taken by a thread, key being made: not queued again meanwhile (a JWKS polled while its
    /// key is made would otherwise have the other thread make a second one).
    making: HashSet<TenantId>,
}

impl KeyMaker {
    pub fn new(hold: Arc<AtomicBool>, wait: Duration) -> KeyMaker {
        KeyMaker {
            queue: Mutex::default(),
            work: Condvar::new(),
            installed: Notify::new(),
            urgent: Mutex::default(),
            hold,
            stop: AtomicBool::new(false),
            wait,
        }
    }

    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether key making is held (tests).
    pub fn held(&self) -> bool {
        self.hold.load(Ordering::Acquire)
    }

    /// How many tenants wait for a key.
    pub fn pending(&self) -> usize {
        self.queue().order.len()
    }

    /// Queues tenants for a key, after those already waiting.
    pub fn enqueue(&self, tenants: impl IntoIterator<Item = (TenantId, String)>) {
        let mut q = self.queue();
        for (id, slug) in tenants {
            if !q.making.contains(&id) && q.queued.insert(id) {
                q.order.push_back((id, slug));
            }
        }
        self.work.notify_all();
    }

    /// Moves a tenant to the front of the queue (queuing it if it was not): someone asked for it.
    pub fn soon(&self, id: TenantId, slug: &str) {
        let mut q = self.queue();
        if q.making.contains(&id) {
            return;
        }
        if q.queued.insert(id) {
            q.order.push_front((id, slug.to_owned()));
        } else if let Some(i) = q.order.iter().position(|(t, _)| *t == id)
            && let Some(entry) = q.order.remove(i)
        {
            q.order.push_front(entry);
        }
        self.work.notify_all();
    }

    /// The next tenant to make a key for, marked as being made until [`KeyMaker::made`]; blocks
    /// while the queue is empty or held. None once stopping.
    fn next(&self) -> Option<(TenantId, String)> {
        let mut q = self.queue();
        loop {
            if self.stop.load(Ordering::Acquire) {
                return None;
            }
            if !self.held()
                && let Some((id, slug)) = q.order.pop_front()
            {
                q.queued.remove(&id);
                q.making.insert(id);
                return Some((id, slug));
            }
            q = if self.held() {
                // Released by a flag alone: looked at twice a second.
                self.work.wait_timeout(q, HELD_POLL).unwrap_or_else(PoisonError::into_inner).0
            } else {
                self.work.wait(q).unwrap_or_else(PoisonError::into_inner)
            };
        }
    }

    /// The thread that took `id` is done with it.
    fn made(&self, id: TenantId) {
        self.queue().making.remove(&id);
    }

    /// Stops the threads after the key each is making (never waited for: a key not yet stored is
    /// made again by the next start).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        let _queue = self.queue();
        self.work.notify_all();
    }

    fn claim(self: &Arc<Self>, id: TenantId) -> Option<Claim> {
        let mut urgent = self.urgent.lock().unwrap_or_else(PoisonError::into_inner);
        urgent.insert(id).then(|| Claim { maker: self.clone(), id })
    }

    fn claimed(&self, id: TenantId) -> bool {
        self.urgent.lock().unwrap_or_else(PoisonError::into_inner).contains(&id)
    }
}

/// A token request's claim on making one tenant's key; released when dropped (also when the
/// request is abandoned), waking the others that wait for that key.
struct Claim {
    maker: Arc<KeyMaker>,
    id: TenantId,
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.maker.urgent.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.id);
        self.maker.installed.notify_waiters();
    }
}

/// Starts one key-making thread per core, and queues the tenants that have no key yet (in random
/// order, so that nodes starting together on one PostgreSQL database rarely make the same key).
pub async fn start(state: &Arc<State>) -> Result<(), Error> {
    let mut keyless = state.db.read(|tx| store::keys::keyless(tx)).await?;
    shuffle(&mut keyless);
    if !keyless.is_empty() {
        tracing::info!(tenants = keyless.len(), "making the first signing key of tenants created without one");
    }
    state.keygen.enqueue(keyless);
    let threads = std::thread::available_parallelism().map(usize::from).unwrap_or(1);
    let handle = tokio::runtime::Handle::current();
    for _ in 0..threads {
        let (weak, handle, bits) = (Arc::downgrade(state), handle.clone(), state.config.rsa_bits);
        let maker = state.keygen.clone();
        let spawned = std::thread::Builder::new()
            .name("latchkey-firstkey".into())
            .spawn(move || make_keys(&maker, &weak, &handle, bits));
        if let Err(e) = spawned {
            // Token requests still make their tenant's key themselves.
            tracing::warn!("cannot start a thread to make signing keys: {e}");
        }
    }
    Ok(())
}

fn shuffle<T>(list: &mut [T]) {
    for i in (1..list.len()).rev() {
        let r = crate::crypto::random_bytes::<8>().map(u64::from_le_bytes).unwrap_or(i as u64);
        list.swap(i, (r % (i as u64 + 1)) as usize);
    }
}

/// A key-making thread: generates at idle priority, installs on the runtime (at normal priority,
/// so that it never holds the registry's refresh lock while starved).
fn make_keys(maker: &KeyMaker, state: &Weak<State>, handle: &tokio::runtime::Handle, bits: u32) {
    if let Err(e) = crate::sys::idle_priority() {
        tracing::debug!("first signing keys are made at normal priority: {e}");
    }
    while let Some((id, slug)) = maker.next() {
        let go_on = make_one(maker, state, handle, bits, id, slug);
        maker.made(id);
        if !go_on {
            return;
        }
    }
}

/// Makes and installs one tenant's key unless it needs none any more; false once the daemon is
/// stopping.
fn make_one(
    maker: &KeyMaker,
    state: &Weak<State>,
    handle: &tokio::runtime::Handle,
    bits: u32,
    id: TenantId,
    slug: String,
) -> bool {
    if maker.claimed(id) {
        return true;
    }
    let Some(st) = state.upgrade() else { return false };
    // Another node, a request or a rotation may have made it meanwhile.
    let check = handle.spawn(async move { still_keyless(&st, id).await });
    match handle.block_on(check) {
        Ok(Ok(true)) => {}
        Ok(Ok(false)) => return true,
        Ok(Err(e)) => {
            tracing::warn!(tenant = %slug, error = %e, "cannot check whether a tenant needs a signing key");
            return true;
        }
        Err(_) => return false,
    }
    let key = match keys::generate(bits) {
        Ok(key) => key,
        Err(e) => {
            tracing::error!(tenant = %slug, error = %e, "cannot generate a signing key");
            return true;
        }
    };
    let Some(st) = state.upgrade() else { return false };
    let install = handle.spawn(async move {
        let outcome = install(&st, id, &slug, key).await;
        st.keygen.installed.notify_waiters();
        if let Err(e) = outcome {
            tracing::error!(tenant = %slug, error = %e, "cannot store a tenant's first signing key");
        }
    });
    handle.block_on(install).is_ok()
}

/// Whether the tenant still exists and still has no RS256 key.
async fn still_keyless(state: &State, id: TenantId) -> Result<bool, Error> {
    state
        .db
        .read(move |tx| -> Result<_, Error> {
            Ok(store::tenants::by_id(tx, id)?.is_some() && !store::keys::has_current(tx, id, SigningAlg::RS256)?)
        })
        .await
}

/// Installs `key` as a keyless tenant's RS256 key, published before it signs; a key it turns out
/// not to need (the tenant has one, or is gone) goes to the spare pool.
pub async fn install(state: &State, id: TenantId, slug: &str, key: GeneratedKey) -> Result<(), Error> {
    let (kek, now, bits, s) = (state.kek.clone(), state.clock.now(), state.config.rsa_bits, slug.to_owned());
    // Published, or the one a stop left published, or nothing to do.
    let (published, unused) = state
        .db
        .write(move |tx| -> Result<_, Error> {
            store::cluster::admin_lock(tx)?;
            let exists = store::tenants::by_id(tx, id)?.is_some_and(|t| t.slug == s);
            if !exists || store::keys::has_current(tx, id, SigningAlg::RS256)? {
                return Ok((None, Some(key)));
            }
            if let Some(kid) = store::keys::newest_published(tx, id, SigningAlg::RS256)? {
                return Ok((Some((kid, false)), Some(key)));
            }
            let row = seal_key(&kek, id, &key, bits, now)?;
            store::keys::insert_published(tx, id, &row)?;
            Ok((Some((row.kid, true)), None))
        })
        .await?;
    if let Some(key) = unused {
        state.spare_keys.give(bits, key);
    }
    // Made meanwhile elsewhere (another node, a rotation): served here from now on too.
    let Some((kid, ours)) = published else { return state.registry.refresh(slug).await };
    state.registry.publish(slug).await?;
    let s = slug.to_owned();
    state
        .db
        .write(move |tx| -> Result<_, Error> {
            store::cluster::admin_lock(tx)?;
            if !store::keys::has_current(tx, id, SigningAlg::RS256)? {
                store::keys::promote(tx, id, &kid, now)?;
            } else if ours {
                // A rotation (or another node) gave the tenant its key meanwhile.
                store::keys::delete_previous(tx, id, &kid)?;
            }
            tracing::debug!(tenant = %s, kid, "first signing key made");
            Ok(())
        })
        .await?;
    state.registry.publish(slug).await
}

/// The tenant, once it has an RS256 key: at once when it has one; else its key is made now (or
/// waited for while another request or thread makes it). 503 `unavailable` after
/// [`KeyMaker::wait`], or when held beyond it; nothing the request holds (a code, a refresh
/// token) has been consumed by then.
pub async fn ready_to_sign(state: &State, tenant: Arc<TenantRuntime>) -> Result<Arc<TenantRuntime>, Error> {
    if tenant.load(&state.registry).await?.rs256().is_some() {
        return Ok(tenant);
    }
    let maker = &state.keygen;
    let deadline = tokio::time::Instant::now() + maker.wait;
    loop {
        let installed = maker.installed.notified();
        tokio::pin!(installed);
        installed.as_mut().enable();
        let now =
            state.registry.get(&tenant.slug).filter(|t| t.id == tenant.id).ok_or_else(|| not_found(&tenant.slug))?;
        if now.load(&state.registry).await?.rs256().is_some() {
            return Ok(now);
        }
        if !maker.held()
            && let Some(_claim) = maker.claim(tenant.id)
        {
            let bits = state.config.rsa_bits;
            let key = tokio::time::timeout_at(deadline, state.spare_keys.take(bits)).await.map_err(|_| waited())??;
            install(state, tenant.id, &tenant.slug, key).await?;
            continue;
        }
        let until = if maker.held() { deadline.min(tokio::time::Instant::now() + HELD_POLL) } else { deadline };
        if tokio::time::timeout_at(until, installed).await.is_err() && until == deadline {
            return Err(waited());
        }
    }
}

fn waited() -> Error {
    Error::new(
        Kind::Unavailable,
        codes::UNAVAILABLE,
        "the tenant's first signing key is still being made; try again in a moment",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(i: i64) -> (TenantId, String) {
        (TenantId(i), format!("t{i}"))
    }

    #[test]
    fn the_queue_keeps_order_takes_no_duplicates_and_moves_asked_tenants_first() {
        let maker = KeyMaker::new(Arc::default(), WAIT);
        maker.enqueue([t(1), t(2), t(3), t(2)]);
        assert_eq!(maker.pending(), 3);
        maker.soon(TenantId(3), "t3");
        maker.soon(TenantId(9), "t9");
        let order: Vec<i64> = (0..4).filter_map(|_| maker.next()).map(|(id, _)| id.0).collect();
        assert_eq!(order, [9, 3, 1, 2]);
        maker.soon(TenantId(9), "t9");
        assert_eq!(maker.pending(), 0, "not queued again while its key is being made");
        for id in [1, 2, 3, 9] {
            maker.made(TenantId(id));
        }
        maker.enqueue([t(1)]);
        assert_eq!(maker.pending(), 1, "a tenant done with may be queued again");
    }

    #[test]
    fn a_held_queue_gives_nothing_and_a_stopped_one_ends_its_threads() {
        let maker = Arc::new(KeyMaker::new(Arc::new(AtomicBool::new(true)), WAIT));
        maker.enqueue([t(1)]);
        let m = maker.clone();
        let thread = std::thread::spawn(move || m.next());
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(maker.pending(), 1, "held: nothing taken");
        maker.hold.store(false, Ordering::Release);
        assert_eq!(thread.join().unwrap().map(|(id, _)| id.0), Some(1));
        let m = maker.clone();
        let thread = std::thread::spawn(move || m.next());
        maker.stop();
        assert!(thread.join().unwrap().is_none());
    }

    #[test]
    fn a_claim_is_one_requests_and_released_when_dropped() {
        let maker = Arc::new(KeyMaker::new(Arc::default(), WAIT));
        let first = maker.claim(TenantId(1));
        assert!(first.is_some() && maker.claim(TenantId(1)).is_none() && maker.claimed(TenantId(1)));
        drop(first);
        assert!(!maker.claimed(TenantId(1)) && maker.claim(TenantId(1)).is_some());
    }
}
