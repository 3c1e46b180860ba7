//! The PostgreSQL engine: a pool of synchronous `postgres` connections (like SQLite's readers,
//! used from blocking threads), transactions behind the store's [`Conn`] trait, migrations under
//! an advisory lock. No writer thread: each write has its own connection and transaction, and
//! PostgreSQL's row locks serialise what conflicts.
//!
//! Every function here blocks, and must not run on an async worker thread: a `postgres::Client`
//! runs its own small tokio runtime, which cannot start (or shut down) inside another. The
//! daemon calls them through `spawn_blocking`; [`PgDb::open`] and [`migrate_only`] move their
//! work to a thread of their own, so they are safe anywhere.

pub mod common;
pub mod config;
pub mod conn;
pub mod manager;
pub mod migrate;
pub mod rewrite;
pub mod tls;
pub mod values;

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::time::{Duration, Instant};

use postgres::IsolationLevel;

pub use self::common::{Connect, error_text};
pub use self::config::{PgSettings, PgTarget, Pooler, SslMode};
use self::conn::PgTx;
use self::manager::{PgConn, PgManager, SESSION_BOUNDS};
use crate::StoreError;
use crate::app_cache::{AppCache, Change};
use crate::sql::Conn;

/// Whether `e` says the server cannot serve now, rather than that the statement was wrong: the
/// connection closed or broke (no server answer at all), or an SQLSTATE of
/// [`is_unavailable_code`]. Such an error is answered 503, and a retry may succeed.
pub fn is_unreachable(e: &postgres::Error) -> bool {
    match e.as_db_error() {
        Some(db) => is_unavailable_code(db.code().code()),
        None => e.is_closed() || std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>()),
    }
}

/// SQLSTATEs that say the server cannot serve now: a connection exception (class 08); the server
/// shutting down or not yet accepting connections (57P01-57P03); insufficient resources (class
/// 53: no connection slot, disk full, out of memory); a read-only transaction (25006: the node
/// reached a standby, as after a failover until the address moves); the statement or lock
/// timeout (57014, 55P03: the database is overloaded or a lock is held too long); an I/O error
/// of the server (58030).
pub fn is_unavailable_code(code: &str) -> bool {
    code.starts_with("08")
        || code.starts_with("53")
        || matches!(code, "57P01" | "57P02" | "57P03" | "25006" | "57014" | "55P03" | "58030")
}

/// Whether `e` says only that the connection was gone before the request, so that nothing ran
/// and another connection may run it: [`unanswered`], and found so at once: `took`, the time from
/// sending to failing (summed over a request's attempts), is under [`FOUND_CLOSED_WITHIN`].
///
/// Any other failure is final. An answer is, even when the connection closes after it:
/// PgBouncer's `query_wait_timeout` (08P01) answers so, and the next connection would wait as
/// long again. So is a close that came only after a wait: something on the way gave up on this
/// request (PgBouncer again, whose answer can be lost when its close outruns it, or a keepalive),
/// and the statement may even have run.
fn found_closed(e: &postgres::Error, took: Duration) -> bool {
    took < FOUND_CLOSED_WITHIN && unanswered(e)
}

/// Whether `e` is a connection closed with no answer, or ended by the server while it sat idle
/// (the operator-intervention class 57P: a restart, `pg_terminate_backend`).
fn unanswered(e: &postgres::Error) -> bool {
    e.as_db_error().is_none_or(|db| db.code().code().starts_with("57P"))
}

/// How soon a connection closed before a request shows it: the kernel already holds the close,
/// or answers the request with a reset, in well under a millisecond on a quiet machine; even a
/// whole pool found closed after a server restart takes a few. Half a second, for all of a
/// request's attempts together, leaves room for a busy machine. A pooler's wait is longer
/// (PgBouncer's `query_wait_timeout`, 1 s as docs/scaling.md sets it); one set shorter is tried
/// again only until the attempts add up to this, not once per pooled connection.
const FOUND_CLOSED_WITHIN: Duration = Duration::from_millis(500);

/// How long a transaction waits for a free connection (or a new one) before it fails as
/// [`StoreError::Unavailable`]: short, so that an outage is answered 503 within 2 s rather than
/// left hanging; a healthy pool hands a connection out in microseconds.
const CHECKOUT_TIMEOUT: Duration = Duration::from_millis(1500);

/// The PostgreSQL database of this node.
pub struct PgDb {
    /// `None` only inside `drop`.
    pool: Option<r2d2::Pool<PgManager>>,
    /// Applications for the client-credentials grant; transactions that change applications or
    /// tenants begin and end a change on it ([`crate::app_cache`]).
    apps: AppCache,
    /// For connections outside the pool, to the server itself (`direct_url_file`, when set).
    session: PgManager,
    target: PgTarget,
}

impl std::fmt::Debug for PgDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgDb").field("url", &self.describe()).finish()
    }
}

/// Connections of the pool, for metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolState {
    /// Open connections, idle or in use.
    pub connections: u32,
    pub idle: u32,
}

fn manager(target: &PgTarget) -> Result<PgManager, StoreError> {
    let tls = tls::connector(target)
        .map_err(|message| StoreError::Open { path: std::path::PathBuf::from(target.describe()), message })?;
    Ok(PgManager { config: target.config.clone(), tls, pooler: target.pooler })
}

/// Runs `work` on a thread of its own: a `postgres::Client` may neither be made nor dropped on an
/// async worker thread, and `open` runs at start inside the runtime.
fn off_runtime<T: Send>(work: impl FnOnce() -> Result<T, StoreError> + Send) -> Result<T, StoreError> {
    std::thread::scope(|s| {
        s.spawn(work).join().unwrap_or_else(|_| Err(StoreError::Task("opening the database panicked".into())))
    })
}

fn unavailable(target: &PgTarget, e: impl std::fmt::Display) -> StoreError {
    StoreError::Unavailable(format!("the postgres database {} does not answer: {e}", target.describe()))
}

/// Whether the database holds signing keys or tenants (a tenant's first key may still be coming),
/// read without changing anything (no migration): what `check-config` and the start ask when the
/// key-encryption key file is missing.
pub fn holds_signing_keys(settings: &PgSettings) -> Result<bool, StoreError> {
    off_runtime(|| {
        let (_, _, mut client) = connect_once(settings)?;
        let migrated: bool = client.query_one("SELECT to_regclass('signing_keys') IS NOT NULL", &[])?.get(0);
        let holds = migrated
            && client
                .query_one("SELECT EXISTS (SELECT 1 FROM signing_keys) OR EXISTS (SELECT 1 FROM tenants)", &[])?
                .get::<_, bool>(0);
        client.close()?;
        Ok(holds)
    })
}

/// The database's schema and release record, read without changing anything: what
/// `check-config` shows.
pub fn peek_schema(settings: &PgSettings) -> Result<crate::schema::Schema, StoreError> {
    off_runtime(|| {
        let (_, _, mut client) = connect_once(settings)?;
        let schema = migrate::schema(&mut client)?;
        client.close()?;
        Ok(schema)
    })
}

/// Runs the migrations on one connection of its own and closes it (a template database for
/// tests must be left without connections).
pub fn migrate_only(settings: &PgSettings) -> Result<(), StoreError> {
    off_runtime(|| {
        let (_, _, mut client) = connect_once(settings)?;
        migrate::migrate(&mut client)?;
        client.close()?;
        Ok(())
    })
}

/// Audit rows restored from another cluster's dump (`pg_restore`) carry that cluster's transaction
/// ids. Any at or past this cluster's next id would hide from `audit --follow` until the counter
/// passed it, then show as new. They are older than anything written here: they get 0, as rows
/// from before migration 0031 have. After the first start nothing matches (the index finds that
/// at once). A failure is only logged: the trail itself is intact.
fn restored_audit(client: &mut postgres::Client) {
    let sql = "UPDATE audit SET txid = '0' WHERE txid >= pg_snapshot_xmax(pg_current_snapshot())";
    match client.execute(sql, &[]) {
        Ok(0) => {}
        Ok(n) => tracing::info!(events = n, "audit events restored from another cluster are followed as old ones"),
        Err(e) => tracing::warn!(error = %error_text(&e), "cannot check the audit trail for restored events"),
    }
}

/// How long a start waits for its pool to fill; a pool still short after it fills in the
/// background, and the node starts anyway (it reached the server moments ago).
const FILL_WITHIN: Duration = Duration::from_secs(10);

/// Waits until `pool` holds `size` connections, at most [`FILL_WITHIN`].
fn fill(pool: &r2d2::Pool<PgManager>, size: u32) {
    let deadline = std::time::Instant::now() + FILL_WITHIN;
    while pool.state().connections < size {
        if std::time::Instant::now() >= deadline {
            let open = pool.state().connections;
            return tracing::warn!(open, size, "the connection pool is not full yet; it fills in the background");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Resolves the settings and opens one connection outside any pool, past any pooler (call it off
/// the runtime); also the manager it came from, for later connections of their own.
fn connect_once(settings: &PgSettings) -> Result<(PgTarget, PgManager, postgres::Client), StoreError> {
    let target = settings.resolve()?;
    let session = manager(target.session())?;
    let client = session.connect_plain().map_err(|e| unavailable(target.session(), error_text(&e)))?;
    Ok((target, session, client))
}

/// A `SELECT 1` through the pooler, on a connection of its own: a wrong address, certificate or
/// login fails the start, on either side of the pooler (PgBouncer checks a client against its
/// own `auth_file`, and reaches the server only for a statement), rather than starting a node
/// that answers 503 to everything.
fn through_pooler(pooled: &PgManager, target: &PgTarget) -> Result<(), StoreError> {
    let fail = |e: postgres::Error| unavailable(target, error_text(&e));
    let mut first = r2d2::ManageConnection::connect(pooled).map_err(fail)?;
    first.client.simple_query("SELECT 1").map_err(fail)?;
    let _ = first.client.close();
    Ok(())
}

/// The statements that would give the pool's sessions the bounds of [`SESSION_BOUNDS`] they lack
/// (a bound of 0 is none): `ALTER ROLE "<role>" SET <name> = '<value>'`.
fn unbounded(db: &PgDb) -> Result<Vec<String>, StoreError> {
    let [(a, _), (b, _), (c, _)] = SESSION_BOUNDS;
    let (settings, role) = db.read_blocking(|tx| {
        let mut settings = std::collections::HashMap::new();
        let mut role = String::new();
        tx.query(
            "SELECT name, setting, current_user FROM pg_settings WHERE name IN (?1, ?2, ?3)",
            &[&a, &b, &c],
            &mut |row| {
                settings.insert(row.get::<_, String>(0)?, row.get::<_, String>(1)?);
                role = row.get(2)?;
                Ok(true)
            },
        )?;
        Ok::<_, StoreError>((settings, role))
    })?;
    let unset = SESSION_BOUNDS.iter().filter(|(name, _)| settings.get(*name).is_none_or(|s| s == "0"));
    Ok(unset.map(|(name, value)| format!("ALTER ROLE \"{role}\" SET {name} = '{value}'")).collect())
}

/// Through a transaction pooler the pool makes no session settings (they would stay behind on
/// the server connection for the pooler's next client), so the bounds of [`SESSION_BOUNDS`]
/// hold only if the role the pooler logs in as has them. Each one missing is logged, with the
/// statement that sets it.
fn check_bounds(db: &PgDb) {
    match unbounded(db) {
        Ok(unset) if unset.is_empty() => {}
        Ok(unset) => tracing::warn!(
            run = %unset.join("; "),
            "through the transaction pooler, statements and transactions have no time bound: set them for the role \
             on the server"
        ),
        Err(e) => tracing::warn!(error = %e, "cannot read the session bounds through the pooler"),
    }
}

impl PgDb {
    /// Connects, applies pending migrations on a dedicated connection (refusing a database of a
    /// newer schema, untouched), then builds the pool.
    pub fn open(settings: &PgSettings) -> Result<PgDb, StoreError> {
        off_runtime(|| {
            let (target, session, mut client) = connect_once(settings)?;
            for warning in &target.warnings {
                tracing::warn!("{warning}");
            }
            // The pool's own manager only when the pool goes elsewhere (through a pooler),
            // checked before anything is migrated, as the server was.
            let manager = if target.direct.is_some() {
                let pooled = manager(&target)?;
                through_pooler(&pooled, &target)?;
                pooled
            } else {
                session.clone()
            };
            migrate::migrate(&mut client)?;
            restored_audit(&mut client);
            client.close()?;
            // The whole pool, opened before the node reports ready and kept open: a connection
            // opened under load (TCP, TLS, authentication, session setup, then a prepare for
            // each statement it meets) takes milliseconds from the requests that wait for it. A
            // node holds `pool_size` server processes whatever its load (docs/scaling.md).
            let pool = r2d2::Pool::builder()
                .max_size(target.pool_size)
                .min_idle(Some(target.pool_size))
                .idle_timeout(None)
                // Opened together, they would also be replaced together every 30 minutes (r2d2's
                // default lifetime), each request of that moment paying for a new connection.
                .max_lifetime(None)
                .test_on_check_out(false)
                .connection_timeout(CHECKOUT_TIMEOUT)
                .build_unchecked(manager);
            fill(&pool, target.pool_size);
            tracing::info!(
                database = %target.describe(),
                ssl_mode = target.ssl_mode.as_str(),
                pooler = target.pooler.as_str(),
                "PostgreSQL database open"
            );
            let db = PgDb { pool: Some(pool), apps: AppCache::default(), session, target };
            if db.target.pooler == Pooler::Transaction {
                check_bounds(&db);
            }
            Ok(db)
        })
    }

    /// `postgres://user@host:5432/db` (never the password).
    pub fn describe(&self) -> String {
        self.target.describe()
    }

    pub fn target(&self) -> &PgTarget {
        &self.target
    }

    pub(crate) fn apps(&self) -> &AppCache {
        &self.apps
    }

    /// Opens connections outside the pool, without the session bounds: the change listener's
    /// (`cluster::Listener`), which waits on notifications for as long as the node runs. Call it
    /// from a std thread, as the listener does.
    pub fn connect_fn(&self) -> Connect {
        let mut manager = self.session.clone();
        // Told apart from the pool's in `pg_stat_activity`.
        let name = format!("{} listener", manager.config.get_application_name().unwrap_or("latchkeyd"));
        manager.config.application_name(&name);
        Box::new(move || manager.connect_plain().map_err(|e| error_text(&e)))
    }

    pub fn pool_state(&self) -> PoolState {
        match &self.pool {
            Some(pool) => {
                let s = pool.state();
                PoolState { connections: s.connections, idle: s.idle_connections }
            }
            None => PoolState { connections: 0, idle: 0 },
        }
    }

    fn get(&self) -> Result<r2d2::PooledConnection<PgManager>, StoreError> {
        let pool = self.pool.as_ref().ok_or_else(|| StoreError::Task("the database is closed".into()))?;
        pool.get().map_err(|e| unavailable(&self.target, e))
    }

    /// Runs `f` in a `REPEATABLE READ READ ONLY` transaction: one snapshot for every statement of
    /// `f`, as SQLite's read transactions give; read-only, it never fails to serialise.
    pub fn read_blocking<T, E>(&self, f: impl FnOnce(&dyn Conn) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        self.in_transaction(IsolationLevel::RepeatableRead, true, |tx| match f(&tx) {
            Ok(out) => {
                tx.commit()?;
                Ok(out)
            }
            Err(e) => {
                let _ = tx.rollback();
                Err(e)
            }
        })
    }

    /// Runs `f` in a `READ COMMITTED` transaction of its own: COMMIT on `Ok`, ROLLBACK on `Err`
    /// or panic (the panic then goes on). Consumption stays exactly-once under READ COMMITTED
    /// because the store consumes in single statements (`DELETE … RETURNING`, conditional
    /// `UPDATE`), which re-check their condition against the row a concurrent writer committed.
    pub fn write_blocking<T, E>(&self, f: impl FnOnce(&dyn Conn) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        self.in_transaction(IsolationLevel::ReadCommitted, false, |tx| {
            match catch_unwind(AssertUnwindSafe(|| f(&tx))) {
                Ok(Ok(out)) => {
                    tx.commit()?;
                    Ok(out)
                }
                Ok(Err(e)) => {
                    let _ = tx.rollback();
                    Err(e)
                }
                Err(panic) => {
                    let _ = tx.rollback();
                    resume_unwind(panic)
                }
            }
        })
    }

    /// Runs `f`'s statements on a pooled connection outside any transaction: each commits on its
    /// own and sees what was committed before it began, as every statement of a `READ COMMITTED`
    /// transaction does. That saves `START TRANSACTION` and `COMMIT`, two round trips, on hot
    /// paths whose statements need no common snapshot (a sign-in's point lookups) or that write
    /// one statement (`limit`: a statement past it fails before it runs).
    ///
    /// `f` runs again, on another connection, when it failed and its connection was found closed
    /// at once, without an answer (a connection the server closed while it sat in the pool: see
    /// `Self::in_transaction` and `found_closed`), hence `Fn`. Reads can always run again. A
    /// single write that failed that way almost always never reached the server; if the server
    /// went away after running it, the second run meets what the first wrote, and nothing is
    /// doubled: a challenge insert (a random key) fails as a duplicate, a sign-in's finish finds
    /// its challenge taken and answers `invalid_challenge`, and a code's redemption or a refresh
    /// token's rotation finds the refresh token it stored and succeeds, as its first run did
    /// (taken for a reuse, it would revoke the grant it made).
    pub fn each_blocking<T, E>(&self, limit: Option<u32>, f: impl Fn(&dyn Conn) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let attempts = self.target.pool_size.saturating_add(1);
        let mut attempt = 1;
        let mut spent = Duration::ZERO;
        loop {
            let change: RefCell<Option<Change>> = RefCell::new(None);
            let mut conn = self.get()?;
            let PgConn { client, stmts } = &mut *conn;
            let tx = PgTx::each(client, limit, stmts, &self.apps, &change);
            let sent = Instant::now();
            let out = f(&tx);
            spent += sent.elapsed();
            let answered = tx.answered();
            drop(tx);
            match out {
                Err(_) if client.is_closed() && !answered && spent < FOUND_CLOSED_WITHIN && attempt < attempts => {
                    tracing::debug!(attempt, "a pooled connection was closed; running the statements again on another");
                    attempt += 1;
                }
                out => return out,
            }
        }
    }

    /// Starts a transaction on a pooled connection and hands it to `body`.
    ///
    /// The pool does not test a connection as it hands it out (r2d2's default, an empty query:
    /// a round trip before every transaction, a fifth of a sign-in's). A connection the server
    /// has closed meanwhile (a restart, `pg_terminate_backend`, an idle timeout on the way) is
    /// found by its first message instead, the `START TRANSACTION`: nothing has run yet, so the
    /// transaction starts again on another connection, and the closed one leaves the pool
    /// (`has_broken`). Every connection of the pool may have been closed at once, hence as many
    /// attempts as the pool holds connections, and one more. A failure the server or a pooler
    /// answered is final, even when the connection closes after it, and so is a close that came
    /// only after a wait ([`found_closed`]).
    fn in_transaction<T, E>(
        &self,
        level: IsolationLevel,
        read_only: bool,
        body: impl FnOnce(PgTx<'_>) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let attempts = self.target.pool_size.saturating_add(1);
        let mut body = Some(body);
        let mut attempt = 1;
        let mut spent = Duration::ZERO;
        // Declared before the transaction, so dropped after its commit or rollback (or during a
        // panic's unwinding): a change to applications or tenants ends only then.
        let change: RefCell<Option<Change>> = RefCell::new(None);
        loop {
            let mut conn = self.get()?;
            let PgConn { client, stmts } = &mut *conn;
            let sent = Instant::now();
            let failed = match client.build_transaction().isolation_level(level).read_only(read_only).start() {
                Ok(tx) => {
                    let body = body.take().ok_or_else(|| StoreError::Task("a transaction ran twice".into()))?;
                    return body(PgTx::new(tx, stmts, &self.apps, &change));
                }
                Err(e) => e,
            };
            spent += sent.elapsed();
            if !client.is_closed() || !found_closed(&failed, spent) || attempt >= attempts {
                return Err(StoreError::from(failed).into());
            }
            tracing::debug!(error = %error_text(&failed), attempt, "a pooled connection was closed; starting again on another");
            attempt += 1;
        }
    }

    /// `SELECT 1` through the pool: what `/readyz` asks.
    pub fn ping(&self) -> Result<(), StoreError> {
        self.read_blocking(|tx| tx.batch("SELECT 1"))
    }
}

/// The pool's connections are closed on a thread of their own: the last `Db` handle may be
/// dropped on an async worker thread, where closing a `postgres::Client` panics.
impl Drop for PgDb {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            let closer = std::thread::Builder::new().name("latchkey-pg-close".into()).spawn(move || drop(pool));
            if let Err(e) = closer {
                tracing::warn!(error = %e, "cannot start a thread to close the database connections");
            }
        }
    }
}

#[cfg(test)]
mod tests;
