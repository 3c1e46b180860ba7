//! The SQLite engine: one database file, a pool of readers beside one writer thread that commits
//! queued writes in batches (`writer`), checkpoints on a thread of their own (`checkpoint`), and
//! transactions opened with statements parsed once (`txn`). [`crate::Db`] hands its calls here.

mod checkpoint;
mod txn;
mod writer;

use std::path::{Path, PathBuf};
use std::time::Duration;

use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, OpenFlags};
use rusqlite_migration::{M, Migrations};

pub use writer::WriteStats;

use crate::{ReadTx, StoreError, TenantId, WriteTx, app_cache, apps, migrations, schema};

/// The SQLite migrations of [`migrations::MIGRATIONS`], as the runner takes them.
pub(crate) fn sqlite_migrations(count: usize) -> Vec<M<'static>> {
    migrations::MIGRATIONS.iter().take(count).map(|m| M::up(m.sqlite)).collect()
}

pub(crate) struct SqliteDb {
    pub(crate) pool: r2d2::Pool<SqliteConnectionManager>,
    pub(crate) path: PathBuf,
    /// SQLite runs one writer at a time: one thread owns the write connection, and writes queue
    /// in front of it in order (no busy handler sleeping and retrying) and share commits.
    pub(crate) writer: writer::Writer,
    /// Applications for the client-credentials grant ([`app_cache`]).
    pub(crate) apps: app_cache::AppCache,
}

fn configure(conn: &mut Connection) -> Result<(), rusqlite::Error> {
    conn.busy_timeout(Duration::from_secs(5))?;
    // WAL lets readers run beside the writer; FULL syncs the WAL on every commit, so a committed
    // revocation or consumed invite survives power loss.
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // Hot statements are prepared once per connection (the façade in `sql.rs` uses
    // `prepare_cached`); the default cache of 16 is smaller than the set a sign-in and a token
    // grant use.
    conn.set_prepared_statement_cache_capacity(128);
    Ok(())
}

impl SqliteDb {
    /// Opens (creating if needed) the database at `path` and applies pending migrations.
    /// A database written by a newer Latchkey is refused, never modified.
    pub(crate) fn open(path: &Path) -> Result<SqliteDb, StoreError> {
        let open_err = |message: String| StoreError::Open { path: path.to_owned(), message };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| open_err(format!("cannot create directory: {e}")))?;
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(path, flags).map_err(|e| open_err(e.to_string()))?;
        // Hashed secrets and sealed keys are still nobody else's business; SQLite gives the WAL
        // and shared-memory files the same mode as the database.
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .map_err(|e| open_err(format!("cannot set mode 0600: {e}")))?;
        configure(&mut conn).map_err(|e| open_err(e.to_string()))?;
        migrate(&mut conn)?;
        // The writer walks every index a write touches (users, invites, sessions: random keys
        // spread over the whole index). SQLite's default 2 MiB page cache makes each of those
        // page visits a read() system call once the tables outgrow it; 16 MiB keeps a large
        // import's working set in memory. Readers keep the default: their lookups are few.
        conn.pragma_update(None, "cache_size", -16 * 1024).map_err(|e| open_err(e.to_string()))?;
        // Checkpoints run on a thread of their own (store/checkpoint.rs), not inside the writer's
        // commits; a WAL that grew during a large import is cut back to 64 MiB afterwards.
        conn.pragma_update(None, "wal_autocheckpoint", 0).map_err(|e| open_err(e.to_string()))?;
        conn.pragma_update(None, "journal_size_limit", 64 * 1024 * 1024).map_err(|e| open_err(e.to_string()))?;
        checkpoint::count_frames(&conn);
        let mut checkpoint_conn = Connection::open_with_flags(path, flags).map_err(|e| open_err(e.to_string()))?;
        configure(&mut checkpoint_conn).map_err(|e| open_err(e.to_string()))?;
        let checkpoints = checkpoint::start(checkpoint_conn)?;

        let manager = SqliteConnectionManager::file(path).with_flags(flags).with_init(configure);
        // No test as a connection is handed out: r2d2_sqlite's is a `SELECT 1` prepared anew each
        // time (through `execute_batch`, past the statement cache), about 3% of the async
        // workers' time in 16-client sign-ins, and a local file's connection does not go stale.
        let pool = r2d2::Pool::builder()
            .max_size(8)
            .connection_timeout(Duration::from_secs(10))
            .test_on_check_out(false)
            .build(manager)?;
        let apps = app_cache::AppCache::default();
        let epoch = apps.epoch_handle();
        let changing = epoch.clone();
        conn.update_hook(Some(move |_: rusqlite::hooks::Action, _: &str, table: &str, _: i64| {
            if table == "applications" || table == "tenants" {
                changing.changing();
            }
        }))
        .map_err(|e| open_err(e.to_string()))?;
        let writer = writer::Writer::start(conn, checkpoints, epoch)?;
        Ok(SqliteDb { pool, path: path.to_owned(), writer, apps })
    }

    pub(crate) fn read_blocking<T, E, F>(&self, f: F) -> Result<T, E>
    where
        E: From<StoreError>,
        F: FnOnce(&ReadTx<'_>) -> Result<T, E>,
    {
        let conn = self.pool.get().map_err(StoreError::from)?;
        let tx = txn::Open::begin(&conn, txn::Begin::Deferred).map_err(StoreError::from)?;
        let out = f(&ReadTx(tx.conn()))?;
        tx.commit().map_err(StoreError::from)?;
        Ok(out)
    }

    /// A transaction of its own on the write connection, between the writer thread's batches.
    pub(crate) fn write_blocking<T, E, F>(&self, f: F) -> Result<T, E>
    where
        E: From<StoreError>,
        F: FnOnce(&WriteTx<'_>) -> Result<T, E>,
    {
        let conn = self.writer.lock();
        let out = (|| {
            let tx = txn::Open::begin(&conn, txn::Begin::Immediate).map_err(StoreError::from)?;
            let out = f(&WriteTx(tx.conn()))?;
            tx.commit().map_err(StoreError::from)?;
            Ok(out)
        })();
        self.writer.settled();
        out
    }

    /// Queues `f` to the writer thread now; where its answer will come.
    pub(crate) fn submit<T, E, F>(&self, f: F, synced: bool) -> tokio::sync::oneshot::Receiver<Result<T, E>>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: FnOnce(&WriteTx<'_>) -> Result<T, E> + Send + 'static,
    {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let reply = move |r| {
            let _ = answer.send(r);
        };
        self.writer.submit(if synced {
            Box::new(writer::Typed::new(f, reply))
        } else {
            Box::new(writer::Typed::unsynced(f, reply))
        });
        answered
    }

    /// Queues `f` to the writer thread now, answered in two steps: once `f` has run and its
    /// changes are kept (the first receiver), and once the batch holding them has committed.
    #[allow(clippy::type_complexity)]
    pub(crate) fn submit_early<T, E, F>(
        &self,
        f: F,
    ) -> (tokio::sync::oneshot::Receiver<Result<T, E>>, tokio::sync::oneshot::Receiver<Result<(), StoreError>>)
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: FnOnce(&WriteTx<'_>) -> Result<T, E> + Send + 'static,
    {
        let (decide, decided) = tokio::sync::oneshot::channel();
        let (durable, committed) = tokio::sync::oneshot::channel();
        self.writer.submit(Box::new(writer::Early::new(
            f,
            move |r| {
                let _ = decide.send(r);
            },
            move |r| {
                let _ = durable.send(r);
            },
        )));
        (decided, committed)
    }

    /// An application for the client-credentials grant: from memory while no write has touched
    /// applications or tenants since it was read (`app_cache`), else from the database.
    pub(crate) fn app_for_grant(
        &self,
        tenant: TenantId,
        client_id: &str,
    ) -> Result<Option<std::sync::Arc<apps::AppRow>>, StoreError> {
        if let Some(app) = self.apps.get(tenant, client_id) {
            return Ok(Some(app));
        }
        let seen = self.apps.epoch();
        let row = self.read_blocking(|tx| apps::get(tx, tenant, client_id))?;
        Ok(row.map(|app| self.apps.remember(seen, tenant, app)))
    }

    /// Copies the whole WAL into the database file and empties it, on the write connection (its
    /// current batch, if any, ends first).
    pub(crate) fn checkpoint_all(&self) -> Result<(), StoreError> {
        let conn = self.writer.lock();
        let busy: i64 = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
        if busy != 0 {
            return Err(StoreError::Commit("a reader kept the WAL checkpoint from finishing".into()));
        }
        Ok(())
    }

    /// A consistent, compact copy of the live database (`VACUUM INTO`).
    pub(crate) fn backup_to(&self, dest: &Path) -> Result<(), StoreError> {
        let conn = self.pool.get()?;
        conn.execute("VACUUM INTO ?1", [dest.to_string_lossy().as_ref()])?;
        Ok(())
    }
}

fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let known = migrations::MIGRATIONS.len();
    if !read_schema(conn)?.migrate_at_start()? {
        return Ok(());
    }
    let all = sqlite_migrations(known);
    let migrations = Migrations::from_slice(&all);
    migrations.to_latest(conn).map_err(|e| StoreError::Migration(format!("applying migrations failed: {e}")))?;
    conn.execute(schema::RECORD_SQLITE, rusqlite::params![known as i64, schema::serves_from()])
        .map_err(|e| StoreError::Migration(format!("recording the schema's release failed: {e}")))?;
    Ok(())
}

/// The schema version (`user_version`) and the release record, changing nothing.
pub(crate) fn read_schema(conn: &Connection) -> Result<schema::Schema, StoreError> {
    let version: usize = conn
        .pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0))
        .map(|v| v.max(0) as usize)
        .map_err(StoreError::from)?;
    // Absent before migration 0014: no record.
    let record = conn.query_row(schema::READ_RECORD, [], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))).ok();
    Ok(schema::Schema::from_parts(version, record))
}

/// The schema of the SQLite file at `path`, read-only; `None` when there is no database yet.
pub(crate) fn peek_schema(path: &Path) -> Result<Option<schema::Schema>, StoreError> {
    if std::fs::metadata(path).map(|m| m.len() == 0).unwrap_or(true) {
        return Ok(None);
    }
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|e| StoreError::Open { path: path.to_owned(), message: e.to_string() })?;
    read_schema(&conn).map(Some)
}
