//! A tenant's first RS256 key, made after the tenant exists. Generating an RSA-2048 key costs
//! 50–150 ms of one core, far more than the rest of a tenant's creation; `apply` of ten thousand
//! tenants would wait ten minutes for them. So a tenant may be stored without a key ("keyless":
//! no current RS256 key): it routes, serves discovery, its pages and passkey ceremonies at once,
//! and its JWKS lists only the keys it has. Its key is made here:
//!
//! - in the background, one thread per core at idle priority (they never take the CPU from a
//!   request), for every tenant queued: by `tenant create` when no spare key was ready, by
//!   `apply`, at start for every keyless tenant in the database, and on PostgreSQL every
//!   30 s again (tenants another node created or left);
//! - at once, at normal priority, by the first token request of an authenticated client, `key
//!   list` or `key rotate` ([`ready_to_sign`]): it waits for that one key (up to
//!   [`KeyMaker::wait`]). A JWKS request moves its tenant to the front of the queue.
//!
//! Request handlers never wait for a lock an idle-priority thread may hold (`KeyMaker::change`,
//! `SpareKeys::give`): on a busy machine such a thread may not run again for a while.
//!
//! A key is installed in the two steps of `key rotate`: published first (in every node's JWKS),
//! then made current, so no relying party meets a token signed by a key it cannot find. Each step
//! is one transaction; a stop between them leaves a published key that the next attempt promotes
//! instead of making another. Whoever comes second (a thread and a request, two nodes, a rotation)
//! finds a current key and hands its own to the spare pool.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, TryLockError, Weak};
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

/// How often each node on PostgreSQL looks for tenants without a key.
const RESCAN: Duration = Duration::from_secs(30);

/// How long a thread waits before it takes a tenant whose key it could not make.
const AGAIN: Duration = Duration::from_secs(1);

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
    /// The queue's length, for `/metrics`.
    pending: AtomicUsize,
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
            pending: AtomicUsize::new(0),
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

    /// How many tenants wait for a key (as last counted: never waits for the queue's lock).
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::Relaxed)
    }

    /// Queues tenants for a key, after those already waiting.
    pub fn enqueue(self: &Arc<Self>, tenants: Vec<(TenantId, String)>) {
        self.change(move |q| {
            for (id, slug) in tenants {
                if !q.making.contains(&id) && q.queued.insert(id) {
                    q.order.push_back((id, slug));
                }
            }
        });
    }

    /// Moves a tenant to the front of the queue (queuing it if it was not): someone asked for it.
    pub fn soon(self: &Arc<Self>, id: TenantId, slug: &str) {
        let slug = slug.to_owned();
        self.change(move |q| {
            if q.making.contains(&id) {
                return;
            }
            if q.queued.insert(id) {
                q.order.push_front((id, slug));
            } else if let Some(i) = q.order.iter().position(|(t, _)| *t == id)
                && let Some(entry) = q.order.remove(i)
            {
                q.order.push_front(entry);
            }
        });
    }

    /// Applies `f` to the queue and wakes the threads. On an async worker it never waits for the
    /// lock: an idle-priority thread holding it may not run again for a while on a busy machine,
    /// so a contended change is made on a blocking thread instead.
    fn change(self: &Arc<Self>, f: impl FnOnce(&mut Queue) + Send + 'static) {
        let apply = move |maker: &KeyMaker, mut q: MutexGuard<'_, Queue>| {
            f(&mut q);
            maker.pending.store(q.order.len(), Ordering::Relaxed);
            maker.work.notify_all();
        };
        match self.queue.try_lock() {
            Ok(q) => apply(self, q),
            Err(TryLockError::Poisoned(p)) => apply(self, p.into_inner()),
            Err(TryLockError::WouldBlock) => match tokio::runtime::Handle::try_current() {
                Ok(handle) => {
                    let maker = self.clone();
                    drop(handle.spawn_blocking(move || apply(&maker, maker.queue())));
                }
                Err(_) => apply(self, self.queue()),
            },
        }
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
                self.pending.store(q.order.len(), Ordering::Relaxed);
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

    /// The thread that took `id` is done with it; `again`: queued at the end once more (its key
    /// could not be made, or a request that was making it may give up).
    fn made(&self, id: TenantId, slug: String, again: bool) {
        let mut q = self.queue();
        q.making.remove(&id);
        if again && q.queued.insert(id) {
            q.order.push_back((id, slug));
            self.pending.store(q.order.len(), Ordering::Relaxed);
        }
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
/// On PostgreSQL the queue is filled again every 30 s (`RESCAN`): tenants another node created (an
/// `apply` through one node) are then made on every node's cores, and those a stopped node left
/// get theirs.
pub async fn start(state: &Arc<State>) -> Result<(), Error> {
    let queued = queue_keyless(state).await?;
    if queued > 0 {
        tracing::info!(tenants = queued, "making the first signing key of tenants created without one");
    }
    if state.db.sqlite_path().is_none() {
        let weak = Arc::downgrade(state);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(RESCAN).await;
                let Some(state) = weak.upgrade() else { return };
                if state.keygen.stop.load(Ordering::Acquire) {
                    return;
                }
                if let Err(e) = queue_keyless(&state).await {
                    tracing::debug!(error = %e, "cannot look for tenants without a signing key");
                }
            }
        });
    }
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

/// Queues every tenant without a key, in random order; returns how many there are.
async fn queue_keyless(state: &State) -> Result<usize, Error> {
    let mut keyless = state.db.read(|tx| store::keys::keyless(tx)).await?;
    shuffle(&mut keyless);
    let n = keyless.len();
    state.keygen.enqueue(keyless);
    Ok(n)
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
        let outcome = make_one(state, handle, bits, id, &slug);
        maker.made(id, slug, outcome == Made::Again);
        match outcome {
            Made::Done => {}
            // Not in a tight loop: a database that does not answer, or a request still at it.
            Made::Again => std::thread::sleep(AGAIN),
            Made::Stopping => return,
        }
    }
}

#[derive(PartialEq)]
enum Made {
    /// Installed, or no longer needed.
    Done,
    /// To be tried again later.
    Again,
    Stopping,
}

/// Makes and installs one tenant's key unless it needs none any more.
fn make_one(state: &Weak<State>, handle: &tokio::runtime::Handle, bits: u32, id: TenantId, slug: &str) -> Made {
    let Some(st) = state.upgrade() else { return Made::Stopping };
    // On the runtime, not here: this thread must hold none of the locks the requests take.
    let check = handle.spawn(async move {
        // A request is making it (and may give up), or another node, a request or a rotation
        // made it meanwhile.
        if st.keygen.claimed(id) {
            return Ok(None);
        }
        still_keyless(&st, id).await.map(Some)
    });
    match handle.block_on(check) {
        Ok(Ok(Some(true))) => {}
        Ok(Ok(Some(false))) => return Made::Done,
        Ok(Ok(None)) => return Made::Again,
        Ok(Err(e)) => {
            tracing::warn!(tenant = %slug, error = %e, "cannot check whether a tenant needs a signing key");
            return Made::Again;
        }
        Err(_) => return Made::Stopping,
    }
    let key = match keys::generate(bits) {
        Ok(key) => key,
        Err(e) => {
            tracing::error!(tenant = %slug, error = %e, "cannot generate a signing key");
            return Made::Again;
        }
    };
    let Some(st) = state.upgrade() else { return Made::Stopping };
    let slug = slug.to_owned();
    let install = handle.spawn(async move {
        let outcome = install(&st, id, &slug, key).await;
        st.keygen.installed.notify_waiters();
        outcome.map_err(|e| tracing::error!(tenant = %slug, error = %e, "cannot store a tenant's first signing key"))
    });
    match handle.block_on(install) {
        Ok(Ok(())) => Made::Done,
        Ok(Err(())) => Made::Again,
        Err(_) => Made::Stopping,
    }
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
    // Made meanwhile (by a request that could not wait, a rotation, another node): the common
    // case for a key made in the background, settled by a read, without the admin lock or a
    // write transaction (a commit of its own on PostgreSQL).
    if state.db.read(move |tx| store::keys::has_current(tx, id, SigningAlg::RS256)).await? {
        state.spare_keys.give(bits, key);
        return state.registry.refresh(slug).await;
    }
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
            // This node may not have heard yet of a key another node made.
            if !still_keyless(state, tenant.id).await? {
                state.registry.refresh(&tenant.slug).await?;
                continue;
            }
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
        let maker = Arc::new(KeyMaker::new(Arc::default(), WAIT));
        maker.enqueue(vec![t(1), t(2), t(3), t(2)]);
        assert_eq!(maker.pending(), 3);
        maker.soon(TenantId(3), "t3");
        maker.soon(TenantId(9), "t9");
        let order: Vec<i64> = (0..4).filter_map(|_| maker.next()).map(|(id, _)| id.0).collect();
        assert_eq!(order, [9, 3, 1, 2]);
        maker.soon(TenantId(9), "t9");
        assert_eq!(maker.pending(), 0, "not queued again while its key is being made");
        for id in [1, 2, 3] {
            maker.made(TenantId(id), format!("t{id}"), false);
        }
        maker.made(TenantId(9), "t9".into(), true);
        assert_eq!(maker.pending(), 1, "one to try again");
        maker.enqueue(vec![t(1)]);
        assert_eq!(maker.pending(), 2, "a tenant done with may be queued again");
        assert_eq!(maker.next().map(|(id, _)| id.0), Some(9));
    }

    #[test]
    fn a_held_queue_gives_nothing_and_a_stopped_one_ends_its_threads() {
        let maker = Arc::new(KeyMaker::new(Arc::new(AtomicBool::new(true)), WAIT));
        maker.enqueue(vec![t(1)]);
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
