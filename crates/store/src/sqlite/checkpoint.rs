//! WAL checkpoints on a thread of their own. SQLite's automatic checkpoint runs inside the
//! `COMMIT` of whichever connection crosses the threshold: here, the writer thread, so every few
//! commits a batch of sign-ins (or an import batch) also waited for the WAL to be copied into the
//! database file and for that file's fsync. Durability does not need the checkpoint (a commit is
//! durable once the WAL is synced), so the writer only wakes this thread, which copies the WAL on
//! the other core while the writer goes on.
//!
//! A passive checkpoint never waits for the writer, but the WAL only starts again from its
//! beginning once a checkpoint has caught up with every commit, which a busy writer may never
//! allow: past [`RESTART_FRAMES`] the checkpoint waits for the writer's current transaction
//! instead (`RESTART`), bounding the WAL file.
//!
//! Nor does a checkpoint run after every commit: only once the WAL holds [`THRESHOLD_FRAMES`]
//! (SQLite's own default). The first commit into a WAL that a checkpoint has emptied rewrites
//! its header and, with `synchronous=FULL`, syncs it before the frames: two fsyncs instead of
//! one. Checkpointing after each commit made every isolated write (a tenant created, a sign-in
//! on a quiet server) pay both.

use std::cell::Cell;
use std::ffi::c_int;
use std::sync::mpsc::{Receiver, SyncSender};
use std::time::{Duration, Instant};

use rusqlite::Connection;
use rusqlite::hooks::Wal;

use crate::StoreError;

/// At most one checkpoint per interval: each syncs the database file, and frames written twice
/// in an interval (a hot index page) are copied once.
const INTERVAL: Duration = Duration::from_millis(200);

/// WAL frames (pages) after which the checkpoint waits for the writer to let it finish: 16,384
/// pages of 4 KiB, 64 MiB.
const RESTART_FRAMES: i64 = 16_384;

/// WAL frames (pages) from which a commit wakes the checkpoint thread: 1,000 pages of 4 KiB.
const THRESHOLD_FRAMES: c_int = 1_000;

thread_local! {
    /// The WAL's length after this thread's last commit on a connection set up by
    /// [`count_frames`]: the writer thread's commits, for the writer thread.
    static WAL_FRAMES: Cell<c_int> = const { Cell::new(0) };
}

/// Has every commit on `conn` record the WAL's length for [`Wake::after_commit`]. Replaces
/// SQLite's automatic checkpoint on `conn` (the two share one hook).
pub(super) fn count_frames(conn: &Connection) {
    fn record(_: &Wal, frames: c_int) -> rusqlite::Result<()> {
        WAL_FRAMES.with(|f| f.set(frames));
        Ok(())
    }
    conn.wal_hook(Some(record));
}

/// Wakes the checkpoint thread; cheap and never blocks (wake-ups coalesce while it works).
#[derive(Clone)]
pub(super) struct Wake(SyncSender<()>);

impl Wake {
    /// After a commit on this thread: wakes the checkpoint thread once the WAL is long enough.
    pub(super) fn after_commit(&self) {
        if WAL_FRAMES.with(Cell::get) < THRESHOLD_FRAMES {
            return;
        }
        // Full: a wake-up is pending already. Disconnected: the thread has stopped (shutdown).
        let _ = self.0.try_send(());
    }
}

/// Starts the checkpoint thread on its own connection; it ends when every [`Wake`] is dropped.
pub(super) fn start(conn: Connection) -> Result<Wake, StoreError> {
    let (wake, woken) = std::sync::mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("latchkey-checkpoint".into())
        .spawn(move || run(&conn, &woken))
        .map_err(|e| StoreError::Task(format!("cannot start the checkpoint thread: {e}")))?;
    Ok(Wake(wake))
}

fn run(conn: &Connection, woken: &Receiver<()>) {
    let mut restart = false;
    while woken.recv().is_ok() {
        let started = Instant::now();
        let mode = if restart { "RESTART" } else { "PASSIVE" };
        match checkpoint(conn, mode) {
            // A WAL this long is not being reset: the writer always began its next transaction
            // before a checkpoint had caught up. The next checkpoint waits for it instead.
            Ok((frames, _copied)) => restart = frames > RESTART_FRAMES,
            Err(e) => tracing::warn!(error = %e, mode, "WAL checkpoint failed; the next commit retries it"),
        }
        if let Some(rest) = INTERVAL.checked_sub(started.elapsed()) {
            std::thread::sleep(rest);
        }
    }
}

fn checkpoint(conn: &Connection, mode: &str) -> Result<(i64, i64), rusqlite::Error> {
    // Columns: busy, frames in the WAL, frames now copied into the database file.
    conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |r| Ok((r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)))
}
