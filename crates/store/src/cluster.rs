//! Several nodes on one PostgreSQL database: what keeps their caches in step, and what makes a
//! background job or an admin change run on one node at a time.
//!
//! Each node caches its tenants (routing, parsed signing keys, pre-serialised JWKS and
//! discovery documents). A transaction that changes what those caches hold calls [`changed`],
//! which appends the tenant to the change journal (`cluster_changes`) under a new generation and
//! notifies `latchkey_changes`; the notification is delivered at COMMIT and dropped on rollback.
//! Every node's listener thread ([`Listener`]) wakes on the notification, or after at most
//! [`POLL`] if one was lost, reads the journal past the last generation it applied, and hands the
//! slugs to the daemon to reload. It then records the generation it has applied in
//! `cluster_nodes`, which is what [`lagging_nodes`] reads: an admin change (a key rotation, a new
//! tenant) waits until every live node has applied it before it answers, and a new signing key
//! is published on every node before any node signs with it.
//!
//! On SQLite there is one node: every function here is a no-op that answers as if all nodes
//! were up to date.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use postgres::fallible_iterator::FallibleIterator;

use super::sql::{Conn, ConnExt, Engine, params};
use super::{Reader, StoreError, TenantId, WriteTx};

/// How long a node may miss a notification before it looks at the journal anyway.
pub const POLL: Duration = Duration::from_millis(500);
/// A node whose listener has read and applied the journal within this long serves applications
/// from memory for the client-credentials grant (`super::app_cache`); past it, it reads them
/// from the database. Other nodes' changes then reach its grants within a second, as they reach
/// the rest of what it serves.
pub const CACHE_LAG: Duration = Duration::from_secs(1);
/// A node whose heartbeat is older than this is taken for dead: nobody waits for it.
pub const NODE_TIMEOUT_SECS: i64 = 6;
/// A node whose listener has not read the journal for this long answers 503 at `/readyz` and to
/// every tenant request: it may serve tenants and keys other nodes have changed (its listener
/// cannot reach the database, or cannot apply what it read).
pub const READY_LAG: Duration = Duration::from_secs(5);
/// How long an admin change waits for the other nodes to confirm they serve it.
///
/// Longer than [`READY_LAG`], and no node is skipped as dead before it has been silent longer
/// than [`READY_LAG`] either ([`NODE_TIMEOUT_SECS`]): so when an admin change answers, every node
/// has either applied it or already answers 503. A node's listener is stamped with the time its
/// last complete read *began* ([`Heard`]), before the change committed if it missed the change.
pub const WAIT_PUBLISHED: Duration = Duration::from_secs(6);

// The order above is what closes the gap; a change to one of them must keep it.
const _: () = assert!(READY_LAG.as_secs() < NODE_TIMEOUT_SECS as u64);
const _: () = assert!(NODE_TIMEOUT_SECS as u64 <= WAIT_PUBLISHED.as_secs());
/// Journal rows and departed nodes older than this are swept.
pub const KEEP_SECS: i64 = 3600;

pub use crate::pg::common::locks;

/// The database's clock in whole seconds: liveness is judged on one clock for every node (the
/// daemon's own clock may be a test's manual clock, or skewed between machines).
const DB_NOW: &str = "CAST(extract(epoch FROM clock_timestamp()) AS BIGINT)";

/// Records that `tenant`'s cached state changed in this transaction. Call it after an insert or
/// update, and before a delete (the slug is read from the row).
pub fn changed(c: &dyn Conn, tenant: TenantId) -> Result<(), StoreError> {
    if c.engine() == Engine::Sqlite {
        return Ok(());
    }
    c.changing_cached_state();
    // The UPDATE holds cluster_state's row lock until COMMIT, so change transactions commit in
    // generation order and a reader of `generation > last` never skips one still in flight
    // (a sequence would hand out numbers that commit out of order).
    let generation: i64 = c.query_one(
        &format!(
            "WITH g AS (UPDATE cluster_state SET generation = generation + 1 RETURNING generation)
             INSERT INTO cluster_changes (generation, tenant_id, slug, at)
             SELECT g.generation, t.id, t.slug, {DB_NOW} FROM g, tenants t WHERE t.id = ?1
             RETURNING generation"
        ),
        params![tenant],
        |r| r.get(0),
    )?;
    // PostgreSQL types a parameter by its use: `CAST(?1 AS TEXT)` alone would make it TEXT.
    c.query_one("SELECT pg_notify('latchkey_changes', CAST(CAST(?1 AS BIGINT) AS TEXT))", params![generation], |_| {
        Ok(())
    })
}

/// The latest generation committed (0 on SQLite): what a change must reach on every node.
pub fn generation(tx: &impl Reader) -> Result<i64, StoreError> {
    let c = tx.conn();
    if c.engine() == Engine::Sqlite {
        return Ok(0);
    }
    c.query_one("SELECT generation FROM cluster_state", params![], |r| r.get(0))
}

/// Serialises admin changes across nodes for the rest of the transaction: they read, decide and
/// write (an app's lists, a key rotation, `apply`), which SQLite's single writer serialises and
/// READ COMMITTED does not. Admin writes are rare; one lock for all of them costs nothing.
pub fn admin_lock(tx: &WriteTx<'_>) -> Result<(), StoreError> {
    let c = tx.conn();
    if c.engine() == Engine::Sqlite {
        return Ok(());
    }
    c.query_one("SELECT pg_advisory_xact_lock(?1)", params![locks::ADMIN], |_| Ok(()))
}

/// Claims a periodic job for this transaction: true on at most one node at a time and at most
/// once per `every_secs` across the cluster. Always true on SQLite.
pub fn claim_job(tx: &WriteTx<'_>, name: &str, every_secs: i64) -> Result<bool, StoreError> {
    let c = tx.conn();
    if c.engine() == Engine::Sqlite {
        return Ok(true);
    }
    let locked: bool = c.query_one(
        "SELECT pg_try_advisory_xact_lock(CAST(?1 AS BIGINT) + hashtext(?2))",
        params![locks::JOB, name],
        |r| r.get(0),
    )?;
    if !locked {
        return Ok(false);
    }
    c.execute("INSERT INTO cluster_jobs (name, last_run_at) VALUES (?1, 0) ON CONFLICT DO NOTHING", params![name])?;
    let n = c.execute(
        &format!("UPDATE cluster_jobs SET last_run_at = {DB_NOW} WHERE name = ?1 AND last_run_at <= {DB_NOW} - ?2"),
        params![name, every_secs],
    )?;
    Ok(n == 1)
}

/// How many live nodes other than `me` have not yet applied `generation`.
pub fn lagging_nodes(tx: &impl Reader, me: &str, generation: i64) -> Result<i64, StoreError> {
    let c = tx.conn();
    if c.engine() == Engine::Sqlite {
        return Ok(0);
    }
    c.query_one(
        &format!(
            "SELECT count(*) FROM cluster_nodes
             WHERE node_id <> ?1 AND heartbeat_at >= {DB_NOW} - ?2 AND seen_generation < ?3"
        ),
        params![me, NODE_TIMEOUT_SECS, generation],
        |r| r.get(0),
    )
}

/// Live nodes (heartbeat within [`NODE_TIMEOUT_SECS`]), this one included; 1 on SQLite.
pub fn live_nodes(tx: &impl Reader) -> Result<i64, StoreError> {
    let c = tx.conn();
    if c.engine() == Engine::Sqlite {
        return Ok(1);
    }
    c.query_one(
        &format!("SELECT count(*) FROM cluster_nodes WHERE heartbeat_at >= {DB_NOW} - ?1"),
        params![NODE_TIMEOUT_SECS],
        |r| r.get(0),
    )
}

/// Sweeps journal rows and departed nodes older than [`KEEP_SECS`] (PostgreSQL only).
pub fn sweep(tx: &WriteTx<'_>) -> Result<usize, StoreError> {
    let c = tx.conn();
    if c.engine() == Engine::Sqlite {
        return Ok(0);
    }
    // Keep the newest journal row whatever its age: a node that reconnects compares its
    // generation with the oldest row to know whether it missed pruned changes.
    let journal = c.execute(
        &format!(
            "DELETE FROM cluster_changes WHERE at < {DB_NOW} - ?1
             AND generation < (SELECT max(generation) FROM cluster_changes)"
        ),
        params![KEEP_SECS],
    )?;
    let nodes =
        c.execute(&format!("DELETE FROM cluster_nodes WHERE heartbeat_at < {DB_NOW} - ?1"), params![KEEP_SECS])?;
    Ok(journal + nodes)
}

/// Changes a node must apply: reload these tenants (or all of them), then report `done`.
#[derive(Debug)]
pub struct Batch {
    pub generation: i64,
    /// Deduplicated, in journal order.
    pub slugs: Vec<String>,
    /// The journal no longer reaches back to what this node applied: reload every tenant.
    pub full: bool,
    pub done: tokio::sync::oneshot::Sender<()>,
}

pub use crate::pg::common::Connect;

/// This node's identity in `cluster_nodes`.
#[derive(Debug, Clone)]
pub struct NodeInfo {
    pub id: String,
    pub host: String,
    pub version: String,
}

impl NodeInfo {
    /// `host-pid-random`: unique across restarts and machines.
    pub fn this_process() -> NodeInfo {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_owned())
            .ok()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "unknown".to_owned());
        let mut nonce = [0u8; 4];
        let _ = aws_lc_rs::rand::fill(&mut nonce);
        let nonce: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
        NodeInfo {
            id: format!("{host}-{}-{nonce}", std::process::id()),
            host,
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

/// The listener thread: LISTEN, catch up on the journal, hand batches to the daemon, heartbeat.
pub struct Listener {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    heard: Arc<std::sync::atomic::AtomicI64>,
}

/// The machine's clock in milliseconds, not the daemon's injected one (a test's manual clock does
/// not move while the listener works); only ever compared with itself.
fn unix_now() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

/// When the listener last read the change journal: a node that has not for a few seconds may
/// serve stale tenants or keys, and says so at `/readyz`.
#[derive(Debug, Clone)]
pub struct Heard(Arc<std::sync::atomic::AtomicI64>);

impl Heard {
    /// How long ago the journal was last read.
    pub fn age(&self) -> Duration {
        Duration::from_millis(u64::try_from(unix_now() - self.0.load(Ordering::Relaxed)).unwrap_or(0))
    }
}

impl Listener {
    /// Starts listening from `generation` (read in the same snapshot as the tenants the daemon
    /// loaded). Batches arrive on the returned receiver.
    pub fn start(
        connect: Connect,
        node: NodeInfo,
        generation: i64,
    ) -> Result<(Listener, tokio::sync::mpsc::Receiver<Batch>), StoreError> {
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        // Counted from the start: the tenants were just read in the same snapshot.
        let heard = Arc::new(std::sync::atomic::AtomicI64::new(unix_now()));
        let mark = heard.clone();
        let thread = std::thread::Builder::new()
            .name("latchkey-listen".into())
            .spawn(move || listen(connect, node, generation, tx, flag, mark))
            .map_err(|e| StoreError::Task(format!("cannot start the change listener: {e}")))?;
        Ok((Listener { stop, thread: Some(thread), heard }, rx))
    }

    /// When this listener last read the journal.
    pub fn heard(&self) -> Heard {
        Heard(self.heard.clone())
    }
}

impl Listener {
    /// Stops the thread and waits for it (at most one [`POLL`], plus the removal of this node's
    /// row): call it on a blocking thread at shutdown.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Dropped without [`Listener::stop`] (a start that failed later on): the thread is told to stop
/// and finishes on its own; joining here could block an async worker thread.
impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn listen(
    mut connect: Connect,
    node: NodeInfo,
    mut applied: i64,
    batches: tokio::sync::mpsc::Sender<Batch>,
    stop: Arc<AtomicBool>,
    heard: Arc<std::sync::atomic::AtomicI64>,
) {
    let mut registered = false;
    while !stop.load(Ordering::Relaxed) {
        let mut client = match connect() {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "change listener cannot reach the database; retrying in 1 s");
                std::thread::sleep(Duration::from_secs(1));
                continue;
            }
        };
        match session(&mut client, &node, &mut applied, &mut registered, &batches, &stop, &heard) {
            Ok(()) => break,
            Err(e) => {
                tracing::warn!(error = %crate::pg::common::error_text(&e), "change listener lost the database; reconnecting in 1 s");
                std::thread::sleep(Duration::from_secs(1));
            }
        }
    }
    // A graceful stop takes the node out of the set others wait for.
    if registered && let Ok(mut c) = connect() {
        let _ = c.execute("DELETE FROM cluster_nodes WHERE node_id = $1", &[&node.id]);
    }
}

/// One connection's life: returns `Ok` on stop, `Err` when the connection fails.
fn session(
    client: &mut postgres::Client,
    node: &NodeInfo,
    applied: &mut i64,
    registered: &mut bool,
    batches: &tokio::sync::mpsc::Sender<Batch>,
    stop: &AtomicBool,
    heard: &std::sync::atomic::AtomicI64,
) -> Result<(), postgres::Error> {
    client.batch_execute("LISTEN latchkey_changes")?;
    client.execute(
        &format!(
            "INSERT INTO cluster_nodes (node_id, host, pid, version, started_at, heartbeat_at, seen_generation)
             VALUES ($1, $2, $3, $4, {DB_NOW}, {DB_NOW}, $5)
             ON CONFLICT (node_id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, seen_generation = excluded.seen_generation"
        ),
        &[&node.id, &node.host, &i64::from(std::process::id()), &node.version, &*applied],
    )?;
    *registered = true;
    let mut last_beat = Instant::now();
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        loop {
            // Stamped with when the read began, not when it ended: it saw every change committed
            // before that moment, and maybe none committed while it ran.
            let began = unix_now();
            match catch_up(client, node, applied, batches)? {
                Progress::More => continue,
                // Only a node that applied everything it read counts as having heard.
                Progress::UpToDate => heard.store(began, Ordering::Relaxed),
                Progress::NotApplied => {}
            }
            break;
        }
        if last_beat.elapsed() >= Duration::from_secs(1) {
            client.execute(
                &format!("UPDATE cluster_nodes SET heartbeat_at = {DB_NOW}, seen_generation = $2 WHERE node_id = $1"),
                &[&node.id, &*applied],
            )?;
            last_beat = Instant::now();
        }
        // Wait for a notification or the poll interval, whichever comes first; any number of
        // notifications lead to one read of the journal.
        let mut notes = client.notifications();
        notes.timeout_iter(POLL).next()?;
        let mut pending = notes.iter();
        while pending.next()?.is_some() {}
    }
}

/// What one read of the journal achieved.
enum Progress {
    /// Applied a full page: read again at once.
    More,
    /// Nothing left to apply.
    UpToDate,
    /// The daemon did not apply the batch (a reload failed, or it is stopping): read it again
    /// at the next poll.
    NotApplied,
}

fn catch_up(
    client: &mut postgres::Client,
    node: &NodeInfo,
    applied: &mut i64,
    batches: &tokio::sync::mpsc::Sender<Batch>,
) -> Result<Progress, postgres::Error> {
    const PAGE: usize = 1000;
    let rows = client.query(
        "SELECT generation, slug FROM cluster_changes WHERE generation > $1 ORDER BY generation LIMIT 1000",
        &[&*applied],
    )?;
    let Some(last) = rows.last().map(|r| r.get::<_, i64>(0)) else {
        return Ok(Progress::UpToDate);
    };
    // Were changes between what we applied and the first row pruned while we were away?
    let oldest: Option<i64> = client.query_one("SELECT min(generation) FROM cluster_changes", &[])?.get(0);
    let full = oldest.is_some_and(|o| o > *applied + 1);
    let mut slugs: Vec<String> = Vec::new();
    for r in &rows {
        let slug: String = r.get(1);
        if !slugs.contains(&slug) {
            slugs.push(slug);
        }
    }
    let (done, applied_rx) = tokio::sync::oneshot::channel();
    if batches.blocking_send(Batch { generation: last, slugs, full, done }).is_err() {
        return Ok(Progress::NotApplied); // the daemon is stopping
    }
    // Report the generation only once the daemon has reloaded: that is what others wait for.
    if applied_rx.blocking_recv().is_ok() {
        *applied = last;
        client.execute(
            &format!("UPDATE cluster_nodes SET heartbeat_at = {DB_NOW}, seen_generation = $2 WHERE node_id = $1"),
            &[&node.id, &last],
        )?;
        return Ok(if rows.len() == PAGE { Progress::More } else { Progress::UpToDate });
    }
    Ok(Progress::NotApplied)
}
