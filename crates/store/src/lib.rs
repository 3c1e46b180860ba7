//! Latchkey's storage: one [`Db`] over SQLite (embedded, one node) or PostgreSQL (several nodes),
//! and their migrations. The only crate that speaks SQL or names an engine; it knows nothing of
//! the domain above it.
//!
//! [`Db::read`] runs its closure in a read transaction on a blocking thread (a pool of
//! connections, WAL readers run beside the writer). [`Db::write`] queues its closure for the
//! writer thread, which runs queued writes in one `BEGIN IMMEDIATE` transaction, each under its
//! own savepoint, and commits them together (`writer`: group commit). Mutating functions in the
//! table modules take `&WriteTx`, so a mutation cannot be written inside a read transaction. A
//! write is kept when its closure returns `Ok` and rolled back otherwise; its caller hears `Ok`
//! only once the commit is durable.
//!
//! The table modules never name the engine: a transaction is a `&dyn` [`sql::Conn`], and they
//! run their statements through its façade ([`sql`]: `execute`, `query_opt/one/all`, `params!`).

mod app_cache;
pub mod apps;
pub mod audit;
mod batch_insert;
pub mod challenges;
pub mod client_assertions;
pub mod cluster;
pub mod consents;
pub mod credentials;
pub mod device;
pub mod dpop_proofs;
pub mod invites;
pub mod keys;
mod location;
pub mod lockfile;
pub mod mds;
pub mod migrate_store;
pub mod migrations;
pub mod oidc;
pub mod outbox;
pub mod pg;
pub mod pushed;
pub mod roles;
pub mod schema;
pub mod scim;
pub mod sessions;
pub mod sign_in;
pub mod social;
pub mod sql;
mod sqlite;
pub mod tenants;
pub mod trust;
pub mod types;
pub mod users;
pub mod webhooks;

pub use location::Location;
use sqlite::SqliteDb;
pub use sqlite::WriteStats;

use std::path::{Path, PathBuf};
use std::time::Duration;

#[cfg(any(test, feature = "testing"))]
use rusqlite::Connection;
use sql::{Conn, ConnExt, ToValue};

pub use types::{
    AppType, AttestationPolicy, ChallengeKind, CredentialKind, DeviceStatus, InvitePurpose, KeyState, Registration,
    SigningAlg, SocialKind, SocialPurpose, TenantId, Text, TokenAuth, UserStatus,
};

/// Seconds since the Unix epoch: how every time is stored.
pub type Timestamp = i64;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlite(#[source] rusqlite::Error),
    #[error("database pool error: {0}")]
    Pool(#[from] r2d2::Error),
    #[error("{0}")]
    Migration(String),
    #[error("cannot open database {path}: {message}")]
    Open { path: PathBuf, message: String },
    #[error("a stored value is corrupt: {0}")]
    Corrupt(String),
    #[error("database task failed: {0}")]
    Task(String),
    #[error("database commit failed: {0}")]
    Commit(String),
    /// The operation has no meaning on this backend (a file backup of PostgreSQL).
    #[error("{0}")]
    Unsupported(String),
    /// A statement that always answers a row (an aggregate, an `INSERT … RETURNING`) gave none.
    #[error("the database answered no row to {0}")]
    NoRow(String),
    #[error("database error: {}", pg::error_text(.0))]
    Postgres(postgres::Error),
    /// The database cannot be reached (connection refused, pool exhausted): a 503, not a 500.
    #[error("{0}")]
    Unavailable(String),
}

/// A PostgreSQL error that says the server cannot be talked to (the connection is gone, the
/// server is shutting down or refuses connections) is [`StoreError::Unavailable`], answered 503
/// like a pool that cannot hand out a connection; any other is the statement's own failure.
impl From<postgres::Error> for StoreError {
    fn from(e: postgres::Error) -> StoreError {
        if pg::is_unreachable(&e) {
            StoreError::Unavailable(format!("the postgres database does not answer: {}", pg::error_text(&e)))
        } else {
            StoreError::Postgres(e)
        }
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        StoreError::Sqlite(e)
    }
}

impl StoreError {
    /// True when the error is a uniqueness violation (a conflict the caller can name).
    pub fn is_unique_violation(&self) -> bool {
        match self {
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => {
                e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                    || e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
            }
            StoreError::Postgres(e) => e.code() == Some(&postgres::error::SqlState::UNIQUE_VIOLATION),
            _ => false,
        }
    }
}

/// A read transaction: the connection of an open transaction on either engine (on SQLite a
/// deferred one), opened and ended by [`Db`].
pub struct ReadTx<'c>(&'c dyn Conn);
/// A write transaction (on SQLite begun with `BEGIN IMMEDIATE`, so it never fails half-way on a
/// lock upgrade), opened and ended by [`Db`] or the writer thread.
pub struct WriteTx<'c>(&'c dyn Conn);

/// Anything queries can run on: both transaction kinds.
pub trait Reader {
    /// The transaction's connection, through the engine-neutral façade ([`sql`]).
    fn conn(&self) -> &dyn Conn;
}

impl Reader for ReadTx<'_> {
    fn conn(&self) -> &dyn Conn {
        self.0
    }
}

impl Reader for WriteTx<'_> {
    fn conn(&self) -> &dyn Conn {
        self.0
    }
}

/// A queued write whose answer never came (the writer thread is gone).
pub(crate) fn dropped_write() -> StoreError {
    StoreError::Task("the database writer dropped a write".into())
}

/// A write of [`Db::write_one_begun`] under way.
enum Begun<T, E> {
    Queued(tokio::sync::oneshot::Receiver<Result<T, E>>),
    Spawned(tokio::task::JoinHandle<Result<T, E>>),
}

/// Whether the batch of a [`Db::write_early`] has committed.
#[must_use = "the write is not durable until `wait` says so"]
pub struct Durable(Option<tokio::sync::oneshot::Receiver<Result<(), StoreError>>>);

impl Durable {
    /// Waits for the commit: `Ok` once the write is durable.
    pub async fn wait(self) -> Result<(), StoreError> {
        match self.0 {
            None => Ok(()),
            Some(committed) => committed.await.unwrap_or_else(|_| Err(dropped_write())),
        }
    }
}

/// The database's state, for `/readyz` and `/metrics`.
#[derive(Debug, Clone)]
pub struct Health {
    /// `sqlite` or `postgres`.
    pub backend: &'static str,
    /// `None` when the database answered; else why not.
    pub up: Option<String>,
    /// How long the answer (or the failure) took.
    pub ping: Duration,
    /// PostgreSQL: how long ago this node last read and applied the other nodes' changes.
    pub listener_age: Option<Duration>,
    /// Connections of the pool (SQLite: the readers), open and idle.
    pub pool_open: u32,
    pub pool_idle: u32,
}

/// What a write costs on the engine a [`Db`] runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteCost {
    /// Writes queue for one writer that commits them in batches under one fsync: one closure
    /// that reads and writes is cheapest, and a caller may work while the batch commits
    /// ([`Db::write_early`]).
    Batched,
    /// Every statement is a round trip to a server and every transaction a commit of its own:
    /// read beside it, then write in as few statements as possible.
    RoundTrips,
}

/// The daemon's database: one SQLite file, or a PostgreSQL database that several nodes share.
/// Cheap to clone (one shared handle).
#[derive(Clone)]
pub struct Db(std::sync::Arc<Engine>);

enum Engine {
    Sqlite(SqliteDb),
    Postgres(Box<PostgresDb>),
}

struct PostgresDb {
    db: pg::PgDb,
    /// Every write is its own transaction: writes and commits count alike.
    stats: WriteStats,
    /// This node's id in `cluster_nodes`, once its change listener runs.
    node: std::sync::OnceLock<String>,
    /// When the change listener last read the journal and applied all of it.
    heard: std::sync::OnceLock<cluster::Heard>,
}

impl PostgresDb {
    /// A write, which on PostgreSQL is a commit of its own.
    fn count_write(&self) {
        self.stats.writes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.stats.commits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Db").field(&self.describe()).finish()
    }
}

impl Db {
    /// Opens (creating if needed) the database at `path` and applies pending migrations.
    /// A database written by a newer Latchkey is refused, never modified.
    pub fn open(path: &Path) -> Result<Db, StoreError> {
        Ok(Db(std::sync::Arc::new(Engine::Sqlite(SqliteDb::open(path)?))))
    }

    /// Connects to a PostgreSQL database and applies pending migrations (once, under an
    /// advisory lock, whichever node gets there first); a newer schema is refused, untouched.
    pub fn open_postgres(settings: &pg::PgSettings) -> Result<Db, StoreError> {
        let db = pg::PgDb::open(settings)?;
        Ok(Db(std::sync::Arc::new(Engine::Postgres(Box::new(PostgresDb {
            db,
            stats: WriteStats::default(),
            node: std::sync::OnceLock::new(),
            heard: std::sync::OnceLock::new(),
        })))))
    }

    /// The schema version the database is at and what its release record says (`latchkey status`).
    pub async fn schema(&self) -> Result<schema::Schema, StoreError> {
        let version_sql = match &*self.0 {
            Engine::Sqlite(_) => "SELECT user_version FROM pragma_user_version",
            Engine::Postgres(_) => "SELECT CAST(coalesce(max(version), 0) AS BIGINT) FROM latchkey_schema",
        };
        self.read(move |tx| schema::current(tx, version_sql)).await
    }

    /// `sqlite` or `postgres`.
    fn backend(&self) -> &'static str {
        match &*self.0 {
            Engine::Sqlite(_) => "sqlite",
            Engine::Postgres(_) => "postgres",
        }
    }

    /// What a write costs here, for the few callers that can shape a request either way.
    pub fn write_cost(&self) -> WriteCost {
        match &*self.0 {
            Engine::Sqlite(_) => WriteCost::Batched,
            Engine::Postgres(_) => WriteCost::RoundTrips,
        }
    }

    /// Where the data is, for people: the SQLite file, or `postgres://user@host:port/db`
    /// (never a password).
    pub fn describe(&self) -> String {
        match &*self.0 {
            Engine::Sqlite(s) => s.path.display().to_string(),
            Engine::Postgres(p) => p.db.describe(),
        }
    }

    /// The SQLite file; `None` on PostgreSQL.
    pub fn sqlite_path(&self) -> Option<&Path> {
        match &*self.0 {
            Engine::Sqlite(s) => Some(&s.path),
            Engine::Postgres(_) => None,
        }
    }

    /// Counts of queued writes and of the commits that made them durable.
    pub fn write_stats(&self) -> &WriteStats {
        match &*self.0 {
            Engine::Sqlite(s) => &s.writer.stats,
            Engine::Postgres(p) => &p.stats,
        }
    }

    /// Records this node's id and its listener's clock once the change listener runs (see
    /// [`Db::wait_published`] and [`Db::health`]).
    /// PostgreSQL: how long this node's change listener has gone without reading the other
    /// nodes' changes, when that is past [`cluster::READY_LAG`]; `None` while it keeps up (and
    /// on SQLite, and before the listener starts).
    pub fn out_of_step(&self) -> Option<Duration> {
        match &*self.0 {
            Engine::Postgres(p) => p.heard.get().map(cluster::Heard::age).filter(|age| *age > cluster::READY_LAG),
            Engine::Sqlite(_) => None,
        }
    }

    /// Starts hearing the changes other nodes commit to tenants, keys and applications, from
    /// `generation` (read in the snapshot the caller loaded its tenants from): the listener, to
    /// stop at shutdown, and its batches of changed tenants to apply. `None` on SQLite, which has
    /// no other nodes. Also records this node, so that [`Db::wait_published`] and
    /// [`Db::out_of_step`] can speak of it.
    pub fn listen_to_other_nodes(
        &self,
        generation: i64,
    ) -> Result<Option<(cluster::Listener, tokio::sync::mpsc::Receiver<cluster::Batch>)>, StoreError> {
        let Engine::Postgres(p) = &*self.0 else { return Ok(None) };
        let node = cluster::NodeInfo::this_process();
        let id = node.id.clone();
        tracing::info!(node = %id, generation, "listening for changes from other nodes");
        let (listener, batches) = cluster::Listener::start(p.db.connect_fn(), node, generation)?;
        let _ = p.node.set(id);
        let _ = p.heard.set(listener.heard());
        Ok(Some((listener, batches)))
    }

    /// Other nodes have changed tenants or applications, and this node is about to apply their
    /// changes: what it keeps of applications in memory is stale (PostgreSQL; SQLite has no
    /// other nodes).
    pub fn others_changed(&self) {
        if let Engine::Postgres(p) = &*self.0 {
            p.db.apps().changes().moved();
        }
    }

    /// Waits until every other live node has applied the changes committed so far (their caches
    /// of tenants and keys reloaded), at most [`cluster::WAIT_PUBLISHED`]: an admin change answers
    /// once the whole cluster serves it, or once a node that has not is past
    /// [`cluster::READY_LAG`] and refuses to serve (see [`cluster::WAIT_PUBLISHED`]). A database
    /// error is tried again until then. Returns at once on SQLite.
    pub async fn wait_published(&self) {
        let Engine::Postgres(p) = &*self.0 else { return };
        let Some(me) = p.node.get().cloned() else { return };
        let deadline = std::time::Instant::now() + cluster::WAIT_PUBLISHED;
        let mut target = None;
        loop {
            let me = me.clone();
            let read = self
                .read(move |tx| {
                    let generation = match target {
                        Some(g) => g,
                        None => cluster::generation(tx)?,
                    };
                    Ok::<_, StoreError>((generation, cluster::lagging_nodes(tx, &me, generation)?))
                })
                .await;
            let late = std::time::Instant::now() >= deadline;
            match read {
                Ok((_, 0)) => return,
                Ok((generation, n)) if late => {
                    return tracing::warn!(
                        nodes = n,
                        generation,
                        "nodes did not confirm a change in time; they answer 503 until they catch up"
                    );
                }
                Ok((generation, _)) => target = Some(generation),
                Err(e) if late => return tracing::warn!(error = %e, "cannot read the nodes' progress"),
                Err(_) => {}
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Runs `f` in a read transaction on a blocking thread.
    pub async fn read<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: FnOnce(&ReadTx<'_>) -> Result<T, E> + Send + 'static,
    {
        let db = self.clone();
        tokio::task::spawn_blocking(move || db.read_blocking(f))
            .await
            .map_err(|e| E::from(StoreError::Task(e.to_string())))?
    }

    /// Runs `f` in a write transaction of its own on a blocking thread (PostgreSQL).
    async fn write_spawned<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: FnOnce(&WriteTx<'_>) -> Result<T, E> + Send + 'static,
    {
        let db = self.clone();
        tokio::task::spawn_blocking(move || db.write_blocking(f))
            .await
            .map_err(|e| E::from(StoreError::Task(e.to_string())))?
    }

    /// Runs `f` in a read transaction on the calling thread, for point lookups by index on hot
    /// paths (a sign-in's challenge, user and credentials): they take microseconds from SQLite's
    /// page cache, less than the two thread switches of [`Db::read`]. Anything that scans or may
    /// wait on the disk for long goes through [`Db::read`]. Async because an engine whose client
    /// must not block an async worker (PostgreSQL) runs it on a blocking thread instead.
    ///
    /// On PostgreSQL the statements run without a transaction around them (two round trips
    /// fewer, [`pg::PgDb::each_blocking`]): each reads the latest committed rows, with no snapshot
    /// common to all of them. Use it only where that is as good: lookups whose result a later
    /// write checks again anyway (a sign-in's finish consumes its challenge in its write), in an
    /// order that makes a change between two of them show in the second (a code exchange reads
    /// the code before its user), or in one statement (a sign-in's finish reads its challenge and
    /// its credential together, [`sign_in::lookup`]). `f` may run twice (a connection found
    /// closed), hence `Fn`.
    pub async fn read_now<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: Fn(&ReadTx<'_>) -> Result<T, E> + Send + 'static,
    {
        match &*self.0 {
            Engine::Sqlite(_) => self.read_blocking(f),
            Engine::Postgres(_) => self.each_spawned(None, move |c| f(&ReadTx(c))).await,
        }
    }

    /// [`pg::PgDb::each_blocking`] on a blocking thread.
    async fn each_spawned<T, E, F>(&self, limit: Option<u32>, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: Fn(&dyn sql::Conn) -> Result<T, E> + Send + 'static,
    {
        self.each_spawn(limit, f).await.map_err(|e| E::from(StoreError::Task(e.to_string())))?
    }

    /// [`pg::PgDb::each_blocking`] handed to a blocking thread now; its handle to await.
    fn each_spawn<T, E, F>(&self, limit: Option<u32>, f: F) -> tokio::task::JoinHandle<Result<T, E>>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: Fn(&dyn sql::Conn) -> Result<T, E> + Send + 'static,
    {
        let db = self.clone();
        tokio::task::spawn_blocking(move || match &*db.0 {
            Engine::Postgres(p) => p.db.each_blocking(limit, f),
            Engine::Sqlite(_) => {
                Err(E::from(StoreError::Task("statements without a transaction are PostgreSQL's".into())))
            }
        })
    }

    /// Runs `f` on the writer thread in a write transaction shared with other queued writes;
    /// answers once its changes are committed (on `Ok`) or rolled back (on `Err`). Keep `f` to
    /// reads and writes of the database: everything it does delays the writes queued behind it.
    pub async fn write<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: FnOnce(&WriteTx<'_>) -> Result<T, E> + Send + 'static,
    {
        self.queue(f, true).await
    }

    /// Like [`Db::write`], for a row whose loss in a power cut costs only a retry (a ceremony's
    /// challenge, an authorization code: valid for a minute): on SQLite it is answered once committed, without waiting
    /// for the fsync that `write` waits for. Readers see it at once; the next durable commit
    /// makes it durable too, and so does anything that reads it and then writes (a finish that
    /// consumes the challenge, an exchange that consumes the code). On PostgreSQL, the same as
    /// `write`, except where the statement itself turns `synchronous_commit` off for its
    /// transaction (a challenge's insert: [`challenges::insert_unsynced`]).
    pub async fn write_unsynced<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: FnOnce(&WriteTx<'_>) -> Result<T, E> + Send + 'static,
    {
        self.queue(f, false).await
    }

    /// Like [`Db::write_unsynced`], for a write of exactly one statement (a ceremony's challenge
    /// insert). On PostgreSQL that statement commits on its own, without `START TRANSACTION` and
    /// `COMMIT` around it (two of a sign-in's round trips). A second statement fails before it
    /// runs, though the first has committed by then: the bound catches a misuse in the tests, it
    /// does not make two statements atomic. `f` may run twice (a connection found closed), hence
    /// `Fn`.
    pub async fn write_one_unsynced<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: Fn(&WriteTx<'_>) -> Result<T, E> + Send + 'static,
    {
        self.one_statement(f, false).await
    }

    /// Like [`Db::write`], for a write that PostgreSQL runs as one statement (a data-modifying
    /// `WITH`: [`sign_in::finish`]), committed on its own without `START TRANSACTION` and `COMMIT`
    /// (two round trips). SQLite has no such statements: there `f` may run several, in a queued
    /// durable transaction as with `write`, so `f` picks its SQL by `tx.conn().engine()`. On
    /// PostgreSQL a second statement fails before it runs, and `f` may run twice (a connection
    /// found closed), hence `Fn`.
    pub async fn write_one<T, E, F>(&self, f: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: Fn(&WriteTx<'_>) -> Result<T, E> + Send + 'static,
    {
        self.one_statement(f, true).await
    }

    /// [`Db::write_one`], begun at once rather than when first polled: on SQLite the write is
    /// queued to the writer thread before this returns, on PostgreSQL its statement is handed to
    /// a blocking thread. The caller can then spend the write's whole wait (the queue, the batch,
    /// the fsync or the round trip) on CPU work of its own, such as signing the tokens the write
    /// will let out, and await the answer after. Nothing derived from the write may leave before
    /// the answer says `Ok`: it comes only once the write is durable, as with `write_one`. Call it
    /// from within the Tokio runtime (on PostgreSQL it starts a blocking task).
    pub fn write_one_begun<T, E, F>(&self, f: F) -> impl Future<Output = Result<T, E>> + Send + 'static
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: Fn(&WriteTx<'_>) -> Result<T, E> + Send + 'static,
    {
        let begun: Begun<T, E> = match &*self.0 {
            Engine::Sqlite(sqlite) => Begun::Queued(sqlite.submit(f, true)),
            Engine::Postgres(p) => {
                p.count_write();
                Begun::Spawned(self.each_spawn(Some(1), move |c| f(&WriteTx(c))))
            }
        };
        async move {
            match begun {
                Begun::Queued(answered) => answered.await.map_err(|_| E::from(dropped_write()))?,
                Begun::Spawned(task) => task.await.map_err(|e| E::from(StoreError::Task(e.to_string())))?,
            }
        }
    }

    /// [`Db::write_one`] and [`Db::write_one_unsynced`].
    async fn one_statement<T, E, F>(&self, f: F, synced: bool) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: Fn(&WriteTx<'_>) -> Result<T, E> + Send + 'static,
    {
        match &*self.0 {
            Engine::Sqlite(_) => self.queue(f, synced).await,
            Engine::Postgres(p) => {
                p.count_write();
                self.each_spawned(Some(1), move |c| f(&WriteTx(c))).await
            }
        }
    }

    async fn queue<T, E, F>(&self, f: F, synced: bool) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: FnOnce(&WriteTx<'_>) -> Result<T, E> + Send + 'static,
    {
        let Engine::Sqlite(sqlite) = &*self.0 else {
            // No writer thread: PostgreSQL runs concurrent transactions, and its WAL flush
            // groups their commits.
            if let Engine::Postgres(p) = &*self.0 {
                p.count_write();
            }
            return self.write_spawned(f).await;
        };
        sqlite.submit(f, synced).await.map_err(|_| E::from(dropped_write()))?
    }

    /// Like [`Db::write`], but answers as soon as the writer has run `f` and kept its changes,
    /// before the batch's commit (and its fsync) is done, with a [`Durable`] that resolves once
    /// it is. The caller can spend that time on CPU work (signing tokens) instead of waiting for
    /// the disk, but must let nothing derived from the value out before [`Durable::wait`] says
    /// `Ok`. An `Err` from `f` is answered at once and nothing of it is kept, as with `write`.
    pub async fn write_early<T, E, F>(&self, f: F) -> Result<(T, Durable), E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: FnOnce(&WriteTx<'_>) -> Result<T, E> + Send + 'static,
    {
        let Engine::Sqlite(sqlite) = &*self.0 else {
            // PostgreSQL commits each transaction on its own: the answer comes after the commit.
            return Ok((self.write(f).await?, Durable(None)));
        };
        let (decided, committed) = sqlite.submit_early(f);
        let value = decided.await.map_err(|_| E::from(dropped_write()))??;
        Ok((value, Durable(Some(committed))))
    }

    pub fn read_blocking<T, E, F>(&self, f: F) -> Result<T, E>
    where
        E: From<StoreError>,
        F: FnOnce(&ReadTx<'_>) -> Result<T, E>,
    {
        let sqlite = match &*self.0 {
            Engine::Sqlite(s) => s,
            Engine::Postgres(p) => return p.db.read_blocking(|c| f(&ReadTx(c))),
        };
        sqlite.read_blocking(f)
    }

    /// Runs `f` in a write transaction of its own on the calling thread (for closures that borrow
    /// their environment: tests, one-off maintenance); queued writes wait meanwhile.
    pub fn write_blocking<T, E, F>(&self, f: F) -> Result<T, E>
    where
        E: From<StoreError>,
        F: FnOnce(&WriteTx<'_>) -> Result<T, E>,
    {
        // A transaction of its own on the write connection, between the writer thread's batches.
        let sqlite = match &*self.0 {
            Engine::Sqlite(s) => s,
            Engine::Postgres(p) => return p.db.write_blocking(|c| f(&WriteTx(c))),
        };
        sqlite.write_blocking(f)
    }

    /// An application by Client ID, for the client-credentials grant (a read-only hot path):
    /// from memory while no write has touched applications or tenants since it was read
    /// (`app_cache`), else from the database. On PostgreSQL memory also needs the change
    /// listener to have applied the other nodes' changes within [`cluster::CACHE_LAG`].
    pub async fn app_for_grant(
        &self,
        tenant: TenantId,
        client_id: &str,
    ) -> Result<Option<std::sync::Arc<apps::AppRow>>, StoreError> {
        let sqlite = match &*self.0 {
            Engine::Sqlite(sqlite) => sqlite,
            Engine::Postgres(p) => {
                // Other nodes change applications too: memory is trusted only while the change
                // listener keeps up with them.
                let current = p.heard.get().is_some_and(|h| h.age() < cluster::CACHE_LAG);
                let cache = p.db.apps();
                if current && let Some(app) = cache.get(tenant, client_id) {
                    return Ok(Some(app));
                }
                let seen = cache.epoch();
                let id = client_id.to_owned();
                let row = self.read(move |tx| apps::get(tx, tenant, &id)).await?;
                return Ok(row.map(|app| cache.remember(seen, tenant, app)));
            }
        };
        sqlite.app_for_grant(tenant, client_id)
    }

    /// At shutdown, once nothing writes any more: copies the whole WAL into the database file
    /// and empties it, so that the file alone holds every commit (checkpoints otherwise wait for
    /// 1,000 pages, and the last connection may close only as the process ends). PostgreSQL: a
    /// no-op.
    pub async fn checkpoint_for_stop(&self) -> Result<(), StoreError> {
        let db = self.clone();
        tokio::task::spawn_blocking(move || -> Result<(), StoreError> {
            let Engine::Sqlite(sqlite) = &*db.0 else { return Ok(()) };
            sqlite.checkpoint_all()
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// Writes a consistent copy of the live database to `dest` (`VACUUM INTO`): readers and
    /// writers carry on meanwhile, and the copy is a complete, compact database file.
    pub async fn backup_to(&self, dest: PathBuf) -> Result<(), StoreError> {
        let db = self.clone();
        tokio::task::spawn_blocking(move || -> Result<(), StoreError> {
            let Engine::Sqlite(sqlite) = &*db.0 else {
                return Err(StoreError::Unsupported(
                    "backups of a PostgreSQL database are PostgreSQL's own: pg_dump --format=custom".into(),
                ));
            };
            sqlite.backup_to(&dest)
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// How the database answers now: what `/readyz` and `/metrics` report.
    pub async fn health(&self) -> Health {
        let started = std::time::Instant::now();
        let ping = self.ping().await;
        let (pool_open, pool_idle) = match &*self.0 {
            Engine::Sqlite(s) => {
                let st = s.pool.state();
                (st.connections, st.idle_connections)
            }
            Engine::Postgres(p) => {
                let st = p.db.pool_state();
                (st.connections, st.idle)
            }
        };
        let listener_age = match &*self.0 {
            Engine::Postgres(p) => p.heard.get().map(cluster::Heard::age),
            Engine::Sqlite(_) => None,
        };
        Health {
            listener_age,
            backend: self.backend(),
            up: ping.as_ref().err().map(ToString::to_string),
            ping: started.elapsed(),
            pool_open,
            pool_idle,
        }
    }

    /// `SELECT 1`: what `/readyz` asks. Bounded: a server that stops answering without closing
    /// the connection (a network partition) makes the node unready within 2 s, as a refused
    /// connection does, rather than leaving the probe to its own timeout.
    pub async fn ping(&self) -> Result<(), StoreError> {
        let select = self.read(|tx| tx.conn().query_one("SELECT 1", sql::params![], |_| Ok(())));
        match tokio::time::timeout(PING_WITHIN, select).await {
            Ok(answer) => answer,
            Err(_) => Err(StoreError::Unavailable(format!(
                "the database did not answer within {} ms",
                PING_WITHIN.as_millis()
            ))),
        }
    }
}

/// How long `/readyz`'s query may take before the node answers not ready.
const PING_WITHIN: std::time::Duration = std::time::Duration::from_millis(1800);

/// Runs an `INSERT … RETURNING id` and gives the new row's id: one text for both engines
/// (SQLite runs it without the clause and reads the rowid, see [`sql::Conn::insert_id`]).
pub(crate) fn insert_returning_id(conn: &dyn Conn, sql: &str, params: &[&dyn ToValue]) -> Result<i64, StoreError> {
    conn.insert_id(sql, params)?
        .ok_or_else(|| StoreError::NoRow(sql.split_whitespace().take(6).collect::<Vec<_>>().join(" ")))
}

/// Reads a JSON array of strings stored in a TEXT column.
pub(crate) fn json_list(text: &str) -> Result<Vec<String>, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("list column: {e}")))
}

pub(crate) fn to_json_list(items: &[String]) -> String {
    serde_json::to_string(items).unwrap_or_else(|_| "[]".to_owned())
}

/// A temporary database with rows in it, for the tests of this crate and of the crates above it
/// (feature `testing`).
#[cfg(any(test, feature = "testing"))]
// Test support: a failure here is the test's failure, reported where it happened.
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub mod testing {
    /// A database of its own on the PostgreSQL server the `PG*` variables name, dropped with its
    /// value: for tests that run only with `LATCHKEY_TEST_PG=1` (under `pg_virtualenv`). With
    /// `LATCHKEY_TEST_PGBOUNCER=host:port` (`scripts/with-pgbouncer.sh`) the store reaches it
    /// through that PgBouncer in transaction mode.
    pub mod postgres {
        use std::sync::atomic::{AtomicU32, Ordering};

        use crate::pg::{PgSettings, Pooler, tls};

        pub struct TestDb {
            pub name: String,
            pub settings: PgSettings,
            pub url_file: std::path::PathBuf,
        }

        pub fn admin() -> postgres::Client {
            let target = PgSettings::default().resolve().unwrap();
            let tls = tls::connector(&target).unwrap();
            target.config.connect(tls).unwrap()
        }

        /// A new empty database, or `None` (and a note) when no server is configured.
        pub fn test_db() -> Option<TestDb> {
            if std::env::var("LATCHKEY_TEST_PG").as_deref() != Ok("1") {
                eprintln!("skipped: set LATCHKEY_TEST_PG=1 and the PG* variables to run the PostgreSQL tests");
                return None;
            }
            static N: AtomicU32 = AtomicU32::new(0);
            let name = format!("lk_unit_{}_{}", std::process::id(), N.fetch_add(1, Ordering::SeqCst));
            let mut client = admin();
            // One statement each: a multi-statement text runs as one transaction, which these refuse.
            client.batch_execute(&format!("DROP DATABASE IF EXISTS {name}")).unwrap();
            client.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
            client.close().unwrap();
            let url_file = std::env::temp_dir().join(format!("{name}.url"));
            std::fs::write(&url_file, format!("dbname={name}")).unwrap();
            let mut settings = PgSettings { url_file: Some(url_file.clone()), pool_size: 4, ..PgSettings::default() };
            if let Some(bouncer) = std::env::var("LATCHKEY_TEST_PGBOUNCER").ok().filter(|v| !v.is_empty()) {
                let (host, port) = bouncer.rsplit_once(':').expect("LATCHKEY_TEST_PGBOUNCER=host:port");
                // The bounds a pooled session cannot set itself, as docs/scaling.md has operators
                // set them for the role.
                let mut client = admin();
                for (setting, value) in crate::pg::manager::SESSION_BOUNDS {
                    client.batch_execute(&format!("ALTER DATABASE {name} SET {setting} = '{value}'")).unwrap();
                }
                client.close().unwrap();
                let pooled = std::env::temp_dir().join(format!("{name}.pooled.url"));
                std::fs::write(&pooled, format!("host={host} port={port} dbname={name}")).unwrap();
                settings.url_file = Some(pooled);
                settings.direct_url_file = Some(url_file.clone());
                settings.pooler = Pooler::Transaction;
            }
            Some(TestDb { name, settings, url_file })
        }

        impl TestDb {
            /// The settings without any pooler: for tests of how the pool's own connections
            /// behave.
            pub fn direct(&self) -> PgSettings {
                PgSettings {
                    url_file: Some(self.url_file.clone()),
                    pooler: Pooler::None,
                    direct_url_file: None,
                    ..self.settings.clone()
                }
            }

            /// The settings of a node whose `url_file` is `pooled`, a transaction pooler's way to
            /// the database, and whose sessions of their own go to the server itself.
            pub fn through_pooler(&self, pooled: &std::path::Path) -> PgSettings {
                PgSettings {
                    url_file: Some(pooled.to_path_buf()),
                    pooler: Pooler::Transaction,
                    direct_url_file: Some(self.url_file.clone()),
                    ..self.settings.clone()
                }
            }

            /// Whether the store reaches the database through a transaction pooler.
            pub fn pooled(&self) -> bool {
                self.settings.pooler == Pooler::Transaction
            }

            /// A connection to the server itself, past any pooler.
            pub fn client(&self) -> postgres::Client {
                let target = self.settings.resolve().unwrap();
                let target = target.session();
                target.config.connect(tls::connector(target).unwrap()).unwrap()
            }
        }

        impl Drop for TestDb {
            fn drop(&mut self) {
                let _ = std::fs::remove_file(&self.url_file);
                if let Some(pooled) = self.settings.url_file.as_ref().filter(|f| **f != self.url_file) {
                    let _ = std::fs::remove_file(pooled);
                }
                let _ = admin().batch_execute(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name));
            }
        }
    }

    use super::users::UserId;
    use super::*;

    /// A fresh database file in a temporary directory, removed when dropped.
    pub struct TempDb {
        pub db: Db,
        dir: PathBuf,
    }

    impl Drop for TempDb {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    pub fn temp_db() -> TempDb {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let dir =
            std::env::temp_dir().join(format!("lk-store-{}-{}", std::process::id(), N.fetch_add(1, Ordering::SeqCst)));
        let _ = std::fs::remove_dir_all(&dir);
        let db = Db::open(&dir.join("t.db")).unwrap();
        TempDb { db, dir }
    }

    impl TempDb {
        /// Runs `f` in a write transaction and commits. Store errors are for `f` to unwrap.
        pub fn write<T>(&self, f: impl FnOnce(&WriteTx<'_>) -> T) -> T {
            self.db.write_blocking(|tx| Ok::<_, StoreError>(f(tx))).unwrap()
        }

        /// Runs `f` in a read transaction: what another request would see after the commit.
        pub fn read<T>(&self, f: impl FnOnce(&ReadTx<'_>) -> T) -> T {
            self.db.read_blocking(|tx| Ok::<_, StoreError>(f(tx))).unwrap()
        }
    }

    /// A tenant with slug `slug` (base URL `http://localhost/{slug}`, invite-only), created at 1.
    /// A machine-to-machine application whose secret hashes to `secret_hash`.
    pub fn m2m_app(client_id: &str, secret_hash: &[u8]) -> apps::AppRow {
        apps::AppRow {
            client_id: client_id.into(),
            name: client_id.into(),
            app_type: AppType::M2m,
            secret_hash: Some(secret_hash.to_vec()),
            redirect_uris: vec![],
            post_logout_redirect_uris: vec![],
            cors_origins: vec![],
            scopes: vec![],
            created_at: 1,
            device_flow: false,
            require_acr: None,
            consent_explicit: false,
            backchannel_logout_uri: None,
            backchannel_logout_session_required: false,
            logo_sha: None,
            signing_alg: SigningAlg::RS256,
            require_par: false,
            require_dpop: false,
            token_auth: TokenAuth::Secret,
            jwks: None,
            jwks_uri: None,
        }
    }

    pub fn tenant(tx: &WriteTx<'_>, slug: &str) -> TenantId {
        let url = format!("http://localhost/{slug}");
        let new = tenants::NewTenant {
            slug,
            name: slug,
            base_url: &url,
            rp_id: "localhost",
            registration: Registration::Invite,
            created_at: 1,
        };
        tenants::insert(tx, &new).unwrap()
    }

    /// An active user; public id, handle and name are derived from the e-mail address.
    pub fn user(tx: &WriteTx<'_>, tenant: TenantId, email: &str) -> UserId {
        user_with(tx, tenant, email, UserStatus::Active)
    }

    pub fn user_with(tx: &WriteTx<'_>, tenant: TenantId, email: &str, status: UserStatus) -> UserId {
        let public_id = format!("pub-{email}");
        let new = users::NewUser {
            public_id: &public_id,
            user_handle: email.as_bytes(),
            email,
            name: email,
            status,
            created_at: 1,
        };
        users::insert(tx, tenant, &new).unwrap()
    }

    /// A web application row (not stored) with one redirect URI and a secret hash.
    pub fn app_row(client_id: &str) -> apps::AppRow {
        apps::AppRow {
            client_id: client_id.into(),
            name: format!("app {client_id}"),
            app_type: AppType::Web,
            secret_hash: Some(vec![1; 32]),
            redirect_uris: vec!["https://app.example/cb".into()],
            post_logout_redirect_uris: vec![],
            cors_origins: vec![],
            scopes: vec![],
            created_at: 1,
            device_flow: false,
            require_acr: None,
            consent_explicit: false,
            backchannel_logout_uri: None,
            backchannel_logout_session_required: false,
            logo_sha: None,
            signing_alg: SigningAlg::RS256,
            require_par: false,
            require_dpop: false,
            token_auth: TokenAuth::Secret,
            jwks: None,
            jwks_uri: None,
        }
    }

    /// A platform passkey row (not stored) of `user`.
    pub fn credential_row(user: UserId, credential_id: &[u8]) -> credentials::CredentialRow {
        credentials::CredentialRow {
            user_id: user,
            credential_id: credential_id.to_vec(),
            passkey: "{}".into(),
            kind: CredentialKind::Platform,
            aaguid: None,
            device: "Laptop".into(),
            name: "Laptop".into(),
            backup_eligible: true,
            backed_up: false,
            sign_count: 0,
            created_at: 1,
            last_used_at: None,
        }
    }

    /// The rows of `table` (of every tenant).
    pub fn count_rows(tx: &impl Reader, table: &str) -> i64 {
        tx.conn().query_one(&format!("SELECT count(*) FROM {table}"), sql::params![], |r| r.get(0)).unwrap()
    }

    /// Runs `sql` with CHECK constraints off: stores what no code path would write. SQLite only
    /// (a PRAGMA): the corrupt-value tests need a value the schema refuses.
    pub fn force(tx: &WriteTx<'_>, sql: &str) {
        tx.conn()
            .batch(&format!("PRAGMA ignore_check_constraints = ON; {sql}; PRAGMA ignore_check_constraints = OFF"))
            .unwrap();
    }

    /// A SQLite database in memory, for tests of values and the façade without a schema.
    pub fn sqlite_memory() -> Connection {
        Connection::open_in_memory().unwrap()
    }

    pub fn assert_corrupt<T: std::fmt::Debug>(r: Result<T, StoreError>, column: &str) {
        match r {
            Err(StoreError::Corrupt(m)) => assert!(m.contains(column), "{m}"),
            other => panic!("expected a corrupt {column}, got {other:?}"),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::testing::temp_db;
    use super::*;

    #[test]
    fn newer_database_is_refused_untouched() {
        let t = temp_db();
        let path = t.db.sqlite_path().unwrap().to_owned();
        {
            let conn = Connection::open(&path).unwrap();
            conn.pragma_update(None, "user_version", 99).unwrap();
        }
        let err = Db::open(&path).unwrap_err().to_string();
        assert!(err.contains("newer"), "{err}");
        let conn = Connection::open(&path).unwrap();
        let v: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(v, 99);
    }

    #[test]
    fn a_newer_schema_whose_record_names_this_release_is_served_unchanged() {
        let t = temp_db();
        let path = t.db.sqlite_path().unwrap().to_owned();
        let newer = migrations::SCHEMA_VERSION as i64 + 1;
        let set = |serves_from: &str| {
            let conn = Connection::open(&path).unwrap();
            conn.pragma_update(None, "user_version", newer).unwrap();
            conn.execute(
                "UPDATE latchkey_release SET schema_version = ?1, serves_from = ?2",
                rusqlite::params![newer, serves_from],
            )
            .unwrap();
        };
        set(schema::serves_from());
        let db = Db::open(&path).unwrap();
        let seen = tokio::runtime::Runtime::new().unwrap().block_on(db.schema()).unwrap();
        assert_eq!(seen.version, newer as usize, "left as the newer release wrote it");
        assert_eq!(seen.serves_from.as_deref(), Some(schema::serves_from()));
        drop(db);
        set("99.0.0");
        let err = Db::open(&path).unwrap_err().to_string();
        assert!(err.contains("latchkeyd 99.0.0 or newer") && err.contains("not modified"), "{err}");
        let conn = Connection::open(&path).unwrap();
        let v: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(v, newer);
    }

    /// A database file beside `t`'s as an older release left it: the first `version` migrations
    /// applied, then `rows`. Returns its directory (for the test to remove) and the file.
    fn database_at(t: &testing::TempDb, version: usize, rows: &str) -> (PathBuf, PathBuf) {
        let dir = t.db.sqlite_path().unwrap().with_extension(format!("v{version}"));
        std::fs::create_dir_all(&dir).unwrap();
        let old = dir.join("old.sqlite");
        let mut conn = Connection::open(&old).unwrap();
        rusqlite_migration::Migrations::from_slice(&crate::sqlite::sqlite_migrations(version))
            .to_latest(&mut conn)
            .unwrap();
        conn.execute_batch(rows).unwrap();
        (dir, old)
    }

    #[test]
    fn migration_7_renames_duplicate_app_names_and_makes_names_unique() {
        let t = temp_db();
        // A database as release 0.1.0 (six migrations) left it, with duplicate names.
        let long = "x".repeat(100);
        let (dir, old) = database_at(
            &t,
            6,
            &format!(
                "INSERT INTO tenants (id, slug, name, base_url, rp_id, registration, created_at)
                   VALUES (1, 'a', 'A', 'https://a.test', 'a.test', 'invite', 1),
                          (2, 'b', 'B', 'https://b.test', 'b.test', 'invite', 1);
                 INSERT INTO applications (tenant_id, client_id, name, app_type, redirect_uris,
                   post_logout_redirect_uris, cors_origins, scopes, created_at) VALUES
                   (1, 'first', 'Portal', 'm2m', '[]', '[]', '[]', '[]', 1),
                   (1, 'second', 'Portal', 'm2m', '[]', '[]', '[]', '[]', 2),
                   (1, 'third', 'Portal', 'm2m', '[]', '[]', '[]', '[]', 2),
                   (1, 'other', 'Other', 'm2m', '[]', '[]', '[]', '[]', 1),
                   (2, 'b1', 'Portal', 'm2m', '[]', '[]', '[]', '[]', 3),
                   (1, 'long', '{long}', 'm2m', '[]', '[]', '[]', '[]', 1),
                   (1, 'long2', '{long}', 'm2m', '[]', '[]', '[]', '[]', 2);",
            ),
        );
        let db = Db::open(&old).unwrap();
        let names: Vec<(String, String)> = db
            .read_blocking(|tx| {
                tx.conn().query_all("SELECT client_id, name FROM applications ORDER BY id", sql::params![], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
            })
            .unwrap();
        let name = |id: &str| names.iter().find(|(c, _)| c == id).map(|(_, n)| n.clone()).unwrap();
        assert_eq!(name("first"), "Portal", "the oldest keeps its name");
        assert_eq!(name("second"), "Portal (second)");
        assert_eq!(name("third"), "Portal (third)");
        assert_eq!(name("other"), "Other");
        assert_eq!(name("b1"), "Portal", "another tenant's app is not a duplicate");
        assert_eq!(name("long"), "x".repeat(100));
        assert_eq!(name("long2"), format!("{} (long2)", "x".repeat(73)));
        let dup = db.write_blocking(|tx| {
            tx.conn().execute(
                "INSERT INTO applications (tenant_id, client_id, name, app_type, redirect_uris,
                   post_logout_redirect_uris, cors_origins, scopes, created_at)
                 VALUES (1, 'new', 'Other', 'm2m', '[]', '[]', '[]', '[]', 5)",
                sql::params![],
            )
        });
        assert!(dup.unwrap_err().is_unique_violation());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn migration_10_keeps_outstanding_challenges_in_one_btree() {
        let t = temp_db();
        // A sign-in started on a release with nine migrations, finished after the upgrade.
        let (dir, old) = database_at(
            &t,
            9,
            "INSERT INTO tenants (id, slug, name, base_url, rp_id, registration, created_at)
               VALUES (1, 'a', 'A', 'https://a.test', 'a.test', 'invite', 1);
             INSERT INTO challenges (challenge, tenant_id, kind, user_id, state, context, expires_at)
               VALUES ('pending', 1, 'discoverable', NULL, '{}', '{\"n\":1}', 4000000000);",
        );
        let db = Db::open(&old).unwrap();
        let kinds = (ChallengeKind::Authenticate, ChallengeKind::Discoverable);
        let row = db
            .write_blocking(move |tx| challenges::take(tx, TenantId(1), "pending", kinds, 1))
            .unwrap()
            .expect("the challenge survived the migration");
        assert_eq!((row.kind, row.context.as_str()), (ChallengeKind::Discoverable, "{\"n\":1}"));
        let (ddl, indexes): (String, i64) = db
            .read_blocking(|tx| {
                let c = tx.conn();
                let ddl =
                    c.query_one("SELECT sql FROM sqlite_schema WHERE name = 'challenges'", sql::params![], |r| {
                        r.get(0)
                    })?;
                let n = c.query_one(
                    "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'challenges'",
                    sql::params![],
                    |r| r.get(0),
                )?;
                Ok::<_, StoreError>((ddl, n))
            })
            .unwrap();
        assert!(ddl.contains("WITHOUT ROWID"), "{ddl}");
        assert_eq!(indexes, 0, "the primary key is the table itself");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn migration_11_records_each_links_provider_authority() {
        let t = temp_db();
        // Links of an enabled GitHub (default API), an enabled OIDC provider, and a provider
        // disabled at the upgrade (its row gone, its links kept).
        let (dir, old) = database_at(
            &t,
            10,
            "INSERT INTO tenants (id, slug, name, base_url, rp_id, registration, created_at)
               VALUES (1, 'a', 'A', 'https://a.test', 'a.test', 'invite', 1);
             INSERT INTO users (id, tenant_id, public_id, user_handle, email, email_norm, name, status, created_at)
               VALUES (1, 1, 'u1', x'01', 'a@a.test', 'a@a.test', 'A', 'active', 1);
             INSERT INTO social_providers (tenant_id, slug, kind, label, client_id, secret_sealed, created_at)
               VALUES (1, 'github', 'github', 'GitHub', 'c', x'00', 1);
             INSERT INTO social_providers (tenant_id, slug, kind, label, client_id, secret_sealed, issuer, created_at)
               VALUES (1, 'sso', 'oidc', 'SSO', 'c', x'00', 'https://sso.a.test', 1);
             INSERT INTO social_links (tenant_id, provider, subject, user_id, email, created_at)
               VALUES (1, 'github', '42', 1, 'a@a.test', 1), (1, 'sso', 's', 1, 'a@a.test', 1),
                      (1, 'google', 'g', 1, 'a@a.test', 1);",
        );
        let db = Db::open(&old).unwrap();
        let rows: Vec<(String, Option<String>)> = db
            .read_blocking(|tx| {
                tx.conn().query_all(
                    "SELECT provider, authority FROM social_links ORDER BY provider",
                    sql::params![],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
            })
            .unwrap();
        assert_eq!(
            rows,
            vec![
                ("github".to_owned(), Some("https://api.github.com".to_owned())),
                ("google".to_owned(), None),
                ("sso".to_owned(), Some("https://sso.a.test".to_owned())),
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn wal_and_full_sync() {
        let t = temp_db();
        let (mode, sync): (String, i64) =
            t.db.read_blocking(|tx| {
                // SQLite only: PRAGMAs read through the façade.
                let c = tx.conn();
                let m: String = c.query_one("PRAGMA journal_mode", sql::params![], |r| r.get(0))?;
                let s: i64 = c.query_one("PRAGMA synchronous", sql::params![], |r| r.get(0))?;
                Ok::<_, StoreError>((m, s))
            })
            .unwrap();
        assert_eq!(mode, "wal");
        assert_eq!(sync, 2);
    }

    /// [`Db::write_one_begun`] on `db`: the write is under way before its answer is awaited (it
    /// commits while nothing polls it), the answer is its value once stored, and a failing write
    /// answers its error and stores nothing. Run on PostgreSQL too (`store::pg::tests`).
    pub(crate) fn begun_scenario(db: &Db) {
        let slugs = || {
            db.read_blocking(|tx| {
                tx.conn().query_all("SELECT slug FROM tenants ORDER BY slug", sql::params![], |r| r.get::<_, String>(0))
            })
            .unwrap()
        };
        let insert = |slug: &'static str| {
            move |tx: &WriteTx<'_>| -> Result<&'static str, StoreError> {
                tx.conn().execute(
                    "INSERT INTO tenants (slug, name, base_url, rp_id, registration, created_at) \
                     VALUES (?1, ?1, 'u', 'r', 'open', 0)",
                    sql::params![slug],
                )?;
                Ok(slug)
            }
        };
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        // Begun in the runtime's context, and not polled until the row is seen.
        let begun = {
            let _in_runtime = rt.enter();
            db.write_one_begun(insert("begun"))
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while slugs().is_empty() {
            assert!(std::time::Instant::now() < deadline, "the write did not run before it was awaited");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(rt.block_on(begun).unwrap(), "begun");
        // The same slug again: the unique constraint refuses it, and the answer says so.
        let err = rt.block_on(async { db.write_one_begun(insert("begun")).await }).unwrap_err();
        assert!(err.is_unique_violation(), "{err}");
        assert_eq!(slugs(), ["begun"]);
    }

    #[test]
    fn a_begun_write_is_under_way_before_it_is_awaited() {
        begun_scenario(&temp_db().db);
    }

    #[test]
    fn write_rolls_back_on_error() {
        let t = temp_db();
        let r: Result<(), StoreError> = t.db.write_blocking(|tx| {
            tx.conn().execute(
                "INSERT INTO tenants (slug, name, base_url, rp_id, registration, created_at) VALUES ('a','a','u','r','open',0)",
                sql::params![],
            )?;
            Err(StoreError::Corrupt("stop".into()))
        });
        assert!(r.is_err());
        let n: i64 =
            t.db.read_blocking(|tx| tx.conn().query_one("SELECT count(*) FROM tenants", sql::params![], |r| r.get(0)))
                .unwrap();
        assert_eq!(n, 0);
    }
}
