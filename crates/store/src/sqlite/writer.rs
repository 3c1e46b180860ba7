//! Group commit: one writer thread owns the write connection and commits many queued write
//! transactions with one `COMMIT`, so with `synchronous=FULL` one fsync of the WAL makes a whole
//! batch durable instead of one fsync per request.
//!
//! Each queued write runs inside the batch's transaction under its own `SAVEPOINT`: a write whose
//! closure fails (or panics) is rolled back to its savepoint alone and answered at once; the others
//! are answered only after the `COMMIT` has returned, so a caller never sees success for something
//! that is not durable. If the commit itself fails, every write of the batch gets that error.
//! The one exception is asked for by name: a batch made only of unsynced writes (ceremony
//! challenges and authorization codes, whose loss costs a retry) commits without the fsync (`commit_unsynced`).
//!
//! No deliberate delay: while one batch is being committed the next requests queue up, so batches
//! grow with the load by themselves and a lone request pays no wait.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, mpsc};

use rusqlite::Connection;

use super::txn::{Begin, Open};
use crate::{StoreError, WriteTx};

/// At most this many writes share a commit: bounds how long the first of them waits for the
/// others to run.
const MAX_BATCH: usize = 128;

/// One queued write: runs in the batch's transaction, then learns whether its batch committed.
pub(super) trait Job: Send {
    /// Runs the write; `true` when its changes are to be kept.
    fn run(&mut self, tx: &WriteTx<'_>) -> bool;
    /// Its changes are kept in the batch (savepoint released), not yet committed.
    fn decided(&mut self) {}
    /// Answers the caller. `failure` is set when the batch did not commit (or never began).
    fn answer(self: Box<Self>, failure: Option<&StoreError>);
    /// `false` for a write whose loss in a power cut costs only a retry: it is committed without
    /// waiting for its own fsync (see [`run`]).
    fn synced(&self) -> bool {
        true
    }
}

/// A closure and where its result goes.
pub(super) struct Typed<F, T, E, R> {
    f: Option<F>,
    result: Option<Result<T, E>>,
    reply: R,
    synced: bool,
}

impl<F, T, E, R> Typed<F, T, E, R> {
    pub(super) fn new(f: F, reply: R) -> Typed<F, T, E, R> {
        Typed { f: Some(f), result: None, reply, synced: true }
    }

    /// A write answered once committed, without waiting for an fsync of its own.
    pub(super) fn unsynced(f: F, reply: R) -> Typed<F, T, E, R> {
        Typed { f: Some(f), result: None, reply, synced: false }
    }
}

impl<F, T, E, R> Job for Typed<F, T, E, R>
where
    F: FnOnce(&WriteTx<'_>) -> Result<T, E> + Send,
    T: Send,
    E: From<StoreError> + Send,
    R: FnOnce(Result<T, E>) + Send,
{
    fn run(&mut self, tx: &WriteTx<'_>) -> bool {
        run_once(&mut self.f, &mut self.result, tx)
    }

    fn answer(self: Box<Self>, failure: Option<&StoreError>) {
        (self.reply)(settled(self.result, failure));
    }

    fn synced(&self) -> bool {
        self.synced
    }
}

/// Runs the closure (once) into `result`; `true` when it succeeded.
fn run_once<F, T, E>(f: &mut Option<F>, result: &mut Option<Result<T, E>>, tx: &WriteTx<'_>) -> bool
where
    F: FnOnce(&WriteTx<'_>) -> Result<T, E>,
{
    let Some(f) = f.take() else { return false };
    // A panicking write must not take the writer thread (and every later write) with it.
    *result = catch_unwind(AssertUnwindSafe(|| f(tx))).ok();
    matches!(result, Some(Ok(_)))
}

/// What the caller of a write learns: its closure's error, the batch's failure, or its value.
fn settled<T, E: From<StoreError>>(result: Option<Result<T, E>>, failure: Option<&StoreError>) -> Result<T, E> {
    match (result, failure) {
        (Some(Err(e)), _) => Err(e),
        (Some(Ok(_)), Some(f)) | (None, Some(f)) => Err(E::from(StoreError::Commit(f.to_string()))),
        (Some(Ok(v)), None) => Ok(v),
        (None, None) => Err(E::from(StoreError::Task("the write failed unexpectedly (it panicked)".into()))),
    }
}

/// A write whose value is handed over as soon as its changes are kept in the batch, before the
/// batch commits (`decide`); `durable` then learns whether the commit made them durable. A write
/// that fails, or a batch that breaks before it is decided, goes to `decide` alone, like [`Typed`].
pub(super) struct Early<F, T, E, D, S> {
    f: Option<F>,
    result: Option<Result<T, E>>,
    decide: Option<D>,
    durable: S,
}

impl<F, T, E, D, S> Early<F, T, E, D, S> {
    pub(super) fn new(f: F, decide: D, durable: S) -> Early<F, T, E, D, S> {
        Early { f: Some(f), result: None, decide: Some(decide), durable }
    }
}

impl<F, T, E, D, S> Job for Early<F, T, E, D, S>
where
    F: FnOnce(&WriteTx<'_>) -> Result<T, E> + Send,
    T: Send,
    E: From<StoreError> + Send,
    D: FnOnce(Result<T, E>) + Send,
    S: FnOnce(Result<(), StoreError>) + Send,
{
    fn run(&mut self, tx: &WriteTx<'_>) -> bool {
        run_once(&mut self.f, &mut self.result, tx)
    }

    fn decided(&mut self) {
        if let (Some(Ok(v)), Some(decide)) = (self.result.take(), self.decide.take()) {
            decide(Ok(v));
        }
    }

    fn answer(self: Box<Self>, failure: Option<&StoreError>) {
        match self.decide {
            Some(decide) => decide(settled(self.result, failure)),
            None => (self.durable)(match failure {
                Some(f) => Err(StoreError::Commit(f.to_string())),
                None => Ok(()),
            }),
        }
    }
}

/// How much commits are shared: `writes / commits` is the mean batch size (`/metrics`).
#[derive(Debug, Default)]
pub struct WriteStats {
    /// Queued writes run by the writer thread.
    pub writes: AtomicU64,
    /// Transactions committed (or attempted) by the writer thread.
    pub commits: AtomicU64,
    /// Of those, the ones committed without an fsync of the WAL: every write in them was one
    /// whose loss costs only a retry ([`crate::Db::write_unsynced`]).
    pub unsynced_commits: AtomicU64,
}

/// The write connection and the queue in front of it.
pub(crate) struct Writer {
    conn: Arc<Mutex<Connection>>,
    queue: mpsc::Sender<Box<dyn Job>>,
    pub(crate) stats: Arc<WriteStats>,
    /// Moved on once a transaction that changed applications or tenants has ended.
    apps: crate::app_cache::Epoch,
}

impl Writer {
    /// Starts the writer thread on `conn`. The thread ends when the last [`Writer`] is dropped.
    pub(super) fn start(
        conn: Connection,
        checkpoints: super::checkpoint::Wake,
        apps: crate::app_cache::Epoch,
    ) -> Result<Writer, StoreError> {
        let conn = Arc::new(Mutex::new(conn));
        let (queue, jobs) = mpsc::channel::<Box<dyn Job>>();
        let shared = conn.clone();
        let stats = Arc::new(WriteStats::default());
        let counted = stats.clone();
        let settle = apps.clone();
        std::thread::Builder::new()
            .name("latchkey-writer".into())
            .spawn(move || run(&shared, &jobs, &counted, &checkpoints, &settle))
            .map_err(|e| StoreError::Task(format!("cannot start the database writer thread: {e}")))?;
        Ok(Writer { conn, queue, stats, apps })
    }

    /// Queues a write; `job.answer` is called once it is settled.
    pub(super) fn submit(&self, job: Box<dyn Job>) {
        if let Err(mpsc::SendError(job)) = self.queue.send(job) {
            job.answer(Some(&StoreError::Task("the database writer has stopped".into())));
        }
    }

    /// The write connection for a transaction of the calling thread alone (tests and one-off
    /// maintenance that borrow their closure's environment); queued batches wait meanwhile.
    pub(super) fn lock(&self) -> MutexGuard<'_, Connection> {
        lock(&self.conn)
    }

    /// A transaction of [`Writer::lock`]'s caller has ended (call it before unlocking).
    pub(super) fn settled(&self) {
        self.apps.settled();
    }
}

fn lock(conn: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    // A panic while the lock was held left no transaction open (rusqlite rolls back on drop).
    conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn run(
    conn: &Mutex<Connection>,
    jobs: &mpsc::Receiver<Box<dyn Job>>,
    stats: &WriteStats,
    checkpoints: &super::checkpoint::Wake,
    apps: &crate::app_cache::Epoch,
) {
    // Whether the write connection is at `synchronous=FULL`, as it is opened.
    let mut full = true;
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        stats.writes.fetch_add(batch.len() as u64, Ordering::Relaxed);
        stats.commits.fetch_add(1, Ordering::Relaxed);
        let guard = lock(conn);
        if batch.iter().all(|job| !job.synced()) {
            // Nothing in it must survive a power cut: commit without waiting for the disk.
            stats.unsynced_commits.fetch_add(1, Ordering::Relaxed);
            full = commit_unsynced(&guard, batch);
        } else {
            // A batch with a write that must be durable waits for the fsync as a whole. Splitting
            // it into an unsynced and a synced commit was measured: with 16 clients signing in it
            // gained nothing, the second transaction costing the writer what the wait saved.
            // Nor does the writer leave the fsync to another thread (commit at NORMAL, fdatasync
            // the WAL there, answer after it): measured side by side with 16 clients signing in,
            // batches halved, commits doubled, and CPU per sign-in rose, eating the idle time it
            // filled (figures in bench/README.md, "Measurements behind the design"); the wait for
            // the disk is what lets batches grow.
            if !full {
                full = synchronous(&guard, "FULL").is_ok();
            }
            if full {
                commit_batch(&guard, batch);
            } else {
                // Never commit a write that must be durable on a connection that may not sync.
                let e = StoreError::Commit("cannot set the write connection to synchronous=FULL".into());
                batch.into_iter().for_each(|job| job.answer(Some(&e)));
            }
        }
        apps.settled();
        drop(guard);
        checkpoints.after_commit();
    }
}

/// Commits `batch` with `synchronous=NORMAL`: in WAL mode the commit writes its frames to the WAL
/// but does not fsync it. That is safe for writes whose loss costs only a retry (a ceremony's
/// challenge) because the WAL is append-only: the next synced commit's fsync makes these frames
/// durable with its own, and a power cut can lose only unsynced commits made after the last
/// fsync, never a synced commit, nor one that a synced commit read (a finish that consumed the
/// challenge synced it too). Returns whether the connection is back at `FULL`.
fn commit_unsynced(conn: &Connection, batch: Vec<Box<dyn Job>>) -> bool {
    // If the level cannot be lowered the batch still commits, only slower.
    let _ = synchronous(conn, "NORMAL");
    commit_batch(conn, batch);
    match synchronous(conn, "FULL") {
        Ok(()) => true,
        Err(e) => {
            // The next synced batch tries again before committing, and fails if it cannot.
            tracing::error!(error = %e, "cannot set the write connection back to synchronous=FULL");
            false
        }
    }
}

/// Sets the write connection's `synchronous` level (outside a transaction: SQLite refuses the
/// change inside one). Not through the statement cache: SQLite applies this pragma when it
/// prepares the statement, so a cached statement run again would change nothing.
fn synchronous(conn: &Connection, level: &str) -> Result<(), StoreError> {
    conn.pragma_update(None, "synchronous", level)?;
    Ok(())
}

/// Runs `batch` in one transaction and answers every job.
fn commit_batch(conn: &Connection, mut batch: Vec<Box<dyn Job>>) {
    let tx = match Open::begin(conn, Begin::Immediate) {
        Ok(tx) => tx,
        Err(e) => {
            let e = StoreError::from(e);
            batch.into_iter().for_each(|job| job.answer(Some(&e)));
            return;
        }
    };
    // The jobs see the transaction's connection through the engine-neutral façade.
    let write_tx = WriteTx(tx.conn());
    let mut kept: Vec<Box<dyn Job>> = Vec::with_capacity(batch.len());
    let mut broken: Option<StoreError> = None;
    for mut job in batch.drain(..) {
        if let Some(e) = &broken {
            job.answer(Some(e));
            continue;
        }
        if let Err(e) = savepoint(tx.conn(), "SAVEPOINT job") {
            broken = Some(e);
            job.answer(broken.as_ref());
            continue;
        }
        let ok = job.run(&write_tx);
        if tx.conn().is_autocommit() {
            // SQLite rolled the whole transaction back itself (disk full, I/O error): the writes
            // kept so far are gone too.
            let e = StoreError::Commit("the transaction was rolled back by the database".into());
            kept.drain(..).for_each(|k| k.answer(Some(&e)));
            job.answer(Some(&e));
            broken = Some(e);
            continue;
        }
        let settled = if ok {
            savepoint(tx.conn(), "RELEASE job")
        } else {
            savepoint(tx.conn(), "ROLLBACK TO job").and_then(|()| savepoint(tx.conn(), "RELEASE job"))
        };
        if let Err(e) = settled {
            job.answer(Some(&e));
            broken = Some(e);
            continue;
        }
        if ok {
            job.decided();
            kept.push(job);
        } else {
            // Nothing of it stays: answer now, the others need not wait for it.
            job.answer(None);
        }
    }
    let outcome = match broken {
        Some(e) => {
            drop(tx);
            Some(e)
        }
        None => tx.commit().err().map(StoreError::from),
    };
    kept.into_iter().for_each(|job| job.answer(outcome.as_ref()));
}

fn savepoint(tx: &Connection, sql: &str) -> Result<(), StoreError> {
    tx.prepare_cached(sql)?.execute([])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::sql::{ConnExt, params};
    use crate::testing::temp_db;
    use crate::{Reader, StoreError};
    use std::sync::atomic::Ordering;

    fn count(t: &crate::testing::TempDb) -> i64 {
        t.read(|tx| tx.conn().query_one("SELECT count(*) FROM tenants", params![], |r| r.get(0)).unwrap())
    }

    fn insert(tx: &super::WriteTx<'_>, slug: &str) -> Result<(), StoreError> {
        tx.conn().execute(
            "INSERT INTO tenants (slug, name, base_url, rp_id, registration, created_at)
             VALUES (?1, ?1, 'https://x.test/' || ?1, 'r', 'open', 0)",
            params![slug],
        )?;
        Ok(())
    }

    #[test]
    fn concurrent_writes_share_commits_and_a_failure_rolls_back_alone() {
        let t = temp_db();
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
        let results: Vec<Result<(), StoreError>> = rt.block_on(async {
            let tasks: Vec<_> = (0..200)
                .map(|i| {
                    let db = t.db.clone();
                    tokio::spawn(async move {
                        db.write(move |tx| {
                            insert(tx, &format!("t{i}"))?;
                            // Every tenth write fails after writing: its row must not survive.
                            if i % 10 == 0 { Err(StoreError::Corrupt("refused".into())) } else { Ok(()) }
                        })
                        .await
                    })
                })
                .collect();
            let mut out = Vec::new();
            for task in tasks {
                out.push(task.await.unwrap());
            }
            out
        });
        assert_eq!(results.iter().filter(|r| r.is_err()).count(), 20);
        let stats = t.db.write_stats();
        let (writes, commits) = (stats.writes.load(Ordering::Relaxed), stats.commits.load(Ordering::Relaxed));
        assert_eq!(writes, 200);
        assert!(commits <= writes, "{commits} commits for {writes} writes");
        assert_eq!(count(&t), 180);
        let kept: i64 = t
            .read(|tx| {
                tx.conn().query_one(
                    "SELECT count(*) FROM tenants WHERE slug IN ('t0', 't10', 't190')",
                    params![],
                    |r| r.get(0),
                )
            })
            .unwrap();
        assert_eq!(kept, 0);
    }

    fn writer(t: &crate::testing::TempDb) -> &super::Writer {
        match &*t.db.0 {
            crate::Engine::Sqlite(s) => &s.writer,
            _ => unreachable!("temp_db is SQLite"),
        }
    }

    #[test]
    fn an_early_write_answers_before_its_commit_and_then_learns_it_is_durable() {
        let t = temp_db();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let (v, durable) = t.db.write_early(|tx| insert(tx, "early").map(|()| 7)).await.unwrap();
            assert_eq!(v, 7);
            durable.wait().await.unwrap();
            let r: Result<((), crate::Durable), StoreError> = t.db.write_early(|tx| insert(tx, "early")).await;
            assert!(r.err().unwrap().is_unique_violation());
        });
        assert_eq!(count(&t), 1);
    }

    /// Runs a write that holds the writer thread until the returned sender is sent to: what is
    /// queued meanwhile shares the next batch.
    fn hold(w: &super::Writer) -> std::sync::mpsc::Sender<()> {
        use std::sync::mpsc::channel;
        let (running, is_running) = channel();
        let (release, released) = channel::<()>();
        w.submit(Box::new(super::Typed::new(
            move |_: &super::WriteTx<'_>| -> Result<(), StoreError> {
                running.send(()).unwrap();
                released.recv().unwrap();
                Ok(())
            },
            |_: Result<(), StoreError>| {},
        )));
        is_running.recv().unwrap();
        release
    }

    #[test]
    fn an_early_write_whose_batch_is_rolled_back_is_told_so_after_its_value() {
        use std::sync::mpsc::channel;
        let t = temp_db();
        let w = writer(&t);
        // The two others are queued while the writer is held, so that they share a batch.
        let release = hold(w);
        let (decide, decided) = channel();
        let (settle, settled) = channel();
        w.submit(Box::new(super::Early::new(
            |tx: &super::WriteTx<'_>| insert(tx, "early"),
            move |r: Result<(), StoreError>| decide.send(r.is_ok()).unwrap(),
            move |r: Result<(), StoreError>| settle.send(r.is_ok()).unwrap(),
        )));
        // The next write ends the whole transaction, as SQLite does itself on a full disk.
        w.submit(Box::new(super::Typed::new(
            |tx: &super::WriteTx<'_>| tx.conn().execute("ROLLBACK", params![]).map(|_| ()),
            |_: Result<(), StoreError>| {},
        )));
        release.send(()).unwrap();
        assert!(decided.recv().unwrap(), "the early write's value");
        assert!(!settled.recv().unwrap(), "the early write was rolled back with its batch");
        assert_eq!(count(&t), 0);
    }

    /// The writer connection's `synchronous` level as a write in a batch sees it: 1 is NORMAL
    /// (no fsync at commit), 2 is FULL.
    fn level(tx: &super::WriteTx<'_>) -> Result<i64, StoreError> {
        tx.conn().query_one("PRAGMA synchronous", params![], |r| r.get(0))
    }

    #[test]
    fn an_unsynced_write_alone_commits_without_an_fsync_and_the_connection_is_full_again() {
        let t = temp_db();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let seen = rt.block_on(t.db.write_unsynced(|tx| insert(tx, "challenge").and_then(|()| level(tx)))).unwrap();
        assert_eq!(seen, 1, "an unsynced batch commits with synchronous=NORMAL");
        assert_eq!(count(&t), 1, "readers see it at once");
        let after = rt.block_on(t.db.write(|tx| insert(tx, "session").and_then(|()| level(tx)))).unwrap();
        assert_eq!(after, 2, "the next write commits with synchronous=FULL");
        let stats = t.db.write_stats();
        assert_eq!(stats.commits.load(Ordering::Relaxed), 2);
        assert_eq!(stats.unsynced_commits.load(Ordering::Relaxed), 1);
        // What other users of the write connection (maintenance, the stop's checkpoint) get.
        let conn = writer(&t).lock();
        assert_eq!(conn.query_row("PRAGMA synchronous", [], |r| r.get::<_, i64>(0)).unwrap(), 2);
    }

    #[test]
    fn an_unsynced_write_that_shares_a_batch_with_a_synced_one_waits_for_its_fsync() {
        use std::sync::mpsc::channel;
        let t = temp_db();
        let w = writer(&t);
        let release = hold(w);
        let (unsynced, unsynced_seen) = channel();
        let (synced, synced_seen) = channel();
        w.submit(Box::new(super::Typed::unsynced(
            |tx: &super::WriteTx<'_>| insert(tx, "challenge").and_then(|()| level(tx)),
            move |r: Result<i64, StoreError>| unsynced.send(r.unwrap()).unwrap(),
        )));
        w.submit(Box::new(super::Typed::new(
            |tx: &super::WriteTx<'_>| insert(tx, "session").and_then(|()| level(tx)),
            move |r: Result<i64, StoreError>| synced.send(r.unwrap()).unwrap(),
        )));
        release.send(()).unwrap();
        assert_eq!(unsynced_seen.recv().unwrap(), 2);
        assert_eq!(synced_seen.recv().unwrap(), 2);
        assert_eq!(count(&t), 2);
        assert_eq!(t.db.write_stats().unsynced_commits.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_panicking_write_is_an_error_and_the_writer_carries_on() {
        let t = temp_db();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let r: Result<(), StoreError> =
                t.db.write(|tx| {
                    insert(tx, "half")?;
                    panic!("a bug in a write");
                })
                .await;
            assert!(matches!(r, Err(StoreError::Task(_))), "{r:?}");
            t.db.write(|tx| insert(tx, "after")).await.unwrap();
        });
        assert_eq!(count(&t), 1);
    }

    #[test]
    fn a_unique_violation_in_a_batch_is_that_write_s_error() {
        let t = temp_db();
        t.write(|tx| insert(tx, "taken").unwrap());
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let (a, b) = rt.block_on(async {
            tokio::join!(t.db.write(|tx| insert(tx, "taken")), t.db.write(|tx| insert(tx, "free")))
        });
        assert!(a.unwrap_err().is_unique_violation());
        b.unwrap();
        assert_eq!(count(&t), 2);
    }

    #[test]
    fn checkpoints_copy_a_long_wal_into_the_database_file_beside_the_writer() {
        let t = temp_db();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let file = t.db.sqlite_path().unwrap().to_owned();
        let wal = file.with_file_name(format!("{}-wal", file.file_name().unwrap().to_string_lossy()));
        let size = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let before = size(&file);
        let modified = || std::fs::metadata(&file).unwrap().modified().unwrap();
        let untouched = modified();
        let mut commits = 0;
        let mut commit = |n: usize| {
            rt.block_on(t.db.write(move |tx| (0..n).try_for_each(|i| insert(tx, &format!("c{commits}-{i}"))))).unwrap();
            commits += 1;
        };
        // A short WAL stays as it is: a checkpoint would make the next commit sync twice.
        (0..5).for_each(|_| commit(2));
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert_eq!(modified(), untouched, "a checkpoint ran for a WAL of a few pages");
        // Past 1,000 pages (SQLite's automatic checkpoint is off on the writer's connection),
        // only the checkpoint thread can move them to the file. A WAL frame is a 24-byte header
        // and a page, after the WAL's 32-byte header: counted in pages, the loop could stop a
        // frame or two short of the threshold (as it did once migration 0012 moved the frames).
        while size(&wal) < 32 + 1_000 * (24 + 4096) {
            commit(100);
        }
        commit(1);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while size(&file) <= before && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(size(&file) > before, "the database file never grew");
        assert!(count(&t) > 1000);
    }
}
