//! Test harness: a real daemon (in-process `latchkeyd::server::run`, or the built binary), a real store
//! (a SQLite file in a temporary directory, or a database of a PostgreSQL test cluster with
//! `LATCHKEY_TEST_BACKEND=postgres`), real HTTP on loopback, the real admin socket and the real CLI.

#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use latchkey_domain::clock::ManualClock;
use latchkey_domain::config::{Config, FileConfig, Overrides, StorageSection};
use serde_json::Value;
use tokio::sync::{oneshot, watch};

/// `target/debug` (or wherever this test binary was built).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    exe.parent().and_then(Path::parent).expect("target dir").to_owned()
}

/// A binary of the workspace; `scripts/test.sh` builds them before the tests run.
pub fn bin(name: &str) -> PathBuf {
    let p = target_dir().join(name);
    assert!(
        p.exists(),
        "{} is missing: run `bash scripts/test.sh` (or `cargo build --workspace --bins` first)",
        p.display()
    );
    p
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("repo root").to_owned()
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.stdout))
    }
    #[track_caller]
    pub fn ok(self) -> Run {
        assert_eq!(self.code, 0, "expected success\nstdout: {}\nstderr: {}", self.stdout, self.stderr);
        self
    }
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// Runs the `latchkey` CLI against `socket`.
pub fn cli(socket: &Path, args: &[&str]) -> Run {
    Command::new(bin("latchkey")).args(args).env("LATCHKEY_ADMIN_SOCKET", socket).output().expect("run latchkey").into()
}

/// The database engine the daemons of this test run use: `LATCHKEY_TEST_BACKEND=sqlite` (the
/// default) or `postgres`. On PostgreSQL the standard `PG*` variables (exported by
/// `pg_virtualenv`) say where the server is; the tests and the daemons read the same ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The backend of this test run, read once from `LATCHKEY_TEST_BACKEND`.
pub fn backend() -> Backend {
    static BACKEND: OnceLock<Backend> = OnceLock::new();
    *BACKEND.get_or_init(|| match std::env::var("LATCHKEY_TEST_BACKEND").unwrap_or_default().as_str() {
        "" | "sqlite" => Backend::Sqlite,
        "postgres" | "postgresql" => Backend::Postgres,
        other => panic!("LATCHKEY_TEST_BACKEND={other:?}: expected \"sqlite\" or \"postgres\""),
    })
}

/// For tests (or assertions) about the SQLite file itself: true, with the reason printed, when
/// this run is on another backend. `if sqlite_only("why") { return; }`
pub fn sqlite_only(why: &str) -> bool {
    let other = backend() != Backend::Sqlite;
    if other {
        eprintln!("skipped on {:?}: SQLite only: {why}", backend());
    }
    other
}

/// A daemon's store: a SQLite file, or a PostgreSQL database of the test cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestStore {
    Sqlite {
        path: PathBuf,
    },
    /// `url_file` holds `dbname=<db>`; the rest of the connection comes from `PG*`.
    Postgres {
        db: String,
        url_file: PathBuf,
    },
}

impl TestStore {
    /// The store a daemon started with `storage` uses (`default_path`: the daemon's SQLite file
    /// when `storage.path` is unset).
    fn of(storage: &StorageSection, default_path: &Path) -> TestStore {
        match storage.backend.as_deref() {
            Some("postgres") => {
                let url_file = storage.url_file.clone().expect("storage.url_file with backend = \"postgres\"");
                let text = std::fs::read_to_string(&url_file).expect("read storage.url_file");
                let db = text
                    .split_whitespace()
                    .find_map(|kv| kv.strip_prefix("dbname="))
                    .unwrap_or_else(|| panic!("no dbname= in {}: {text}", url_file.display()))
                    .to_owned();
                TestStore::Postgres { db, url_file }
            }
            _ => TestStore::Sqlite { path: storage.path.clone().unwrap_or_else(|| default_path.to_owned()) },
        }
    }

    /// Points a file config at this store (a restart on the same store).
    pub fn apply(&self, f: &mut FileConfig) {
        match self {
            TestStore::Sqlite { path } => f.storage.path = Some(path.clone()),
            TestStore::Postgres { url_file, .. } => {
                f.storage.backend = Some("postgres".into());
                f.storage.url_file = Some(url_file.clone());
                f.storage.pool_size = Some(PG_POOL_SIZE);
                if let Some(direct) = direct_url_file(url_file) {
                    f.storage.pooler = Some("transaction".into());
                    f.storage.direct_url_file = Some(direct);
                }
            }
        }
    }

    /// The `[storage]` section of a config file for this store.
    pub fn toml(&self) -> String {
        match self {
            TestStore::Sqlite { path } => format!("[storage]\npath = \"{}\"\n", path.display()),
            TestStore::Postgres { url_file, .. } => {
                let mut toml = format!(
                    "[storage]\nbackend = \"postgres\"\nurl_file = \"{}\"\npool_size = {PG_POOL_SIZE}\n",
                    url_file.display()
                );
                if let Some(direct) = direct_url_file(url_file) {
                    toml.push_str(&format!("pooler = \"transaction\"\ndirect_url_file = \"{}\"\n", direct.display()));
                }
                toml
            }
        }
    }

    /// The SQLite file; panics on PostgreSQL (guard the caller with [`sqlite_only`]).
    pub fn sqlite_path(&self) -> &Path {
        match self {
            TestStore::Sqlite { path } => path,
            TestStore::Postgres { db, .. } => panic!("database {db} is on PostgreSQL: this step is SQLite only"),
        }
    }

    /// A connection for reading (and, in harness tests, writing) the store with SQL.
    pub fn sql(&self) -> TestSql {
        match self {
            TestStore::Sqlite { path } => TestSql::Sqlite {
                path: path.clone(),
                conn: rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                    .expect("open db"),
            },
            TestStore::Postgres { db, .. } => TestSql::Postgres(RefCell::new(pg_connect(db))),
        }
    }

    /// Every row of every table but the audit trail (or of the `only` tables).
    pub fn snapshot(&self, only: Option<&[&str]>) -> DbSnapshot {
        match self.sql() {
            TestSql::Sqlite { conn, .. } => db_snapshot(&conn, only),
            TestSql::Postgres(client) => pg_snapshot(&mut client.borrow_mut(), only),
        }
    }
}

/// Connections of one test daemon to PostgreSQL (`[storage] pool_size`).
pub const PG_POOL_SIZE: u32 = 4;

/// `host:port` of a PgBouncer in transaction mode in front of the test cluster, when the run has
/// one (`LATCHKEY_TEST_PGBOUNCER`, set by `scripts/with-pgbouncer.sh`): the harness's daemons
/// then reach their databases through it (`pooler = "transaction"`), and the server itself for
/// what needs a session of its own (`direct_url_file`).
pub fn pg_bouncer() -> Option<(String, u16)> {
    host_port("LATCHKEY_TEST_PGBOUNCER")
}

/// Like [`pg_bouncer`], a PgBouncer whose `query_wait_timeout` is 1 s
/// (`LATCHKEY_TEST_PGBOUNCER_QUICK`): for the outage test.
pub fn pg_bouncer_quick() -> Option<(String, u16)> {
    host_port("LATCHKEY_TEST_PGBOUNCER_QUICK")
}

fn host_port(var: &str) -> Option<(String, u16)> {
    let text = std::env::var(var).ok().filter(|v| !v.is_empty())?;
    let (host, port) = text.rsplit_once(':').unwrap_or_else(|| panic!("{var}={text:?}: expected host:port"));
    Some((host.to_owned(), port.parse().unwrap_or_else(|_| panic!("{var}={text:?}: expected host:port"))))
}

/// The `direct_url_file` beside a harness database's `url_file`, when it reaches the database
/// through PgBouncer.
pub fn direct_url_file(url_file: &Path) -> Option<PathBuf> {
    let direct = url_file.with_file_name("pg-direct.url");
    direct.exists().then_some(direct)
}

/// The connection parameters of the test cluster from the standard `PG*` variables, for the
/// database `dbname`. (tokio-postgres's `Config` reads no environment itself.)
pub fn pg_config(dbname: &str) -> postgres::Config {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let mut c = postgres::Config::new();
    c.host(&var("PGHOST").unwrap_or_else(|| "localhost".into()));
    if let Some(port) = var("PGPORT") {
        c.port(port.parse().unwrap_or_else(|_| panic!("PGPORT={port:?} is not a port")));
    }
    c.user(&var("PGUSER").or_else(|| var("USER")).unwrap_or_else(|| "postgres".into()));
    if let Some(password) = var("PGPASSWORD") {
        c.password(password);
    }
    c.dbname(dbname);
    c.application_name("latchkey-tests");
    c
}

/// The maintenance database the harness creates and drops databases from (`PGDATABASE`).
fn pg_admin_db() -> String {
    std::env::var("PGDATABASE").ok().filter(|v| !v.is_empty()).unwrap_or_else(|| "postgres".into())
}

pub fn pg_connect(dbname: &str) -> postgres::Client {
    pg_config(dbname).connect(postgres::NoTls).unwrap_or_else(|e| {
        panic!("cannot connect to PostgreSQL database {dbname} (PGHOST/PGPORT/PGUSER from pg_virtualenv?): {e}")
    })
}

/// A database of the test cluster, created for one test store and dropped (`WITH (FORCE)`) when
/// the last daemon or guard holding it goes.
pub struct PgDatabase {
    pub name: String,
    pub url_file: PathBuf,
}

/// The live test databases by `url_file`, so that a daemon restarted on the same store shares
/// the database with the first one instead of dropping it twice.
fn pg_databases() -> &'static Mutex<HashMap<PathBuf, Weak<PgDatabase>>> {
    static DATABASES: OnceLock<Mutex<HashMap<PathBuf, Weak<PgDatabase>>>> = OnceLock::new();
    DATABASES.get_or_init(Default::default)
}

impl PgDatabase {
    /// `CREATE DATABASE lk_<pid>_<n>` and `<dir>/pg.url` (mode 0600) naming it. Through
    /// PgBouncer ([`pg_bouncer`]), `pg.url` names PgBouncer and `pg-direct.url` the server, and the
    /// database has the statement bounds a pooled session cannot set itself.
    pub fn create(dir: &Path) -> Arc<PgDatabase> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!("lk_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let mut admin = pg_connect(&pg_admin_db());
        admin
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
        let write = |file: &str, text: String| {
            let path = dir.join(file);
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            writeln!(f, "{text}").unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            path
        };
        let url_file = match pg_bouncer() {
            None => write("pg.url", format!("dbname={name}")),
            Some((host, port)) => {
                for (setting, value) in latchkey_store::pg::manager::SESSION_BOUNDS {
                    let bound = format!("ALTER DATABASE \"{name}\" SET {setting} = '{value}'");
                    admin.batch_execute(&bound).expect("ALTER DATABASE");
                }
                write("pg-direct.url", format!("dbname={name}"));
                write("pg.url", format!("host={host} port={port} dbname={name}"))
            }
        };
        let db = Arc::new(PgDatabase { name, url_file: url_file.clone() });
        let mut all = pg_databases().lock().unwrap_or_else(|e| e.into_inner());
        all.retain(|_, w| w.strong_count() > 0);
        all.insert(url_file, Arc::downgrade(&db));
        db
    }

    /// The live database whose name is in `url_file`, if the harness created it.
    fn find(url_file: &Path) -> Option<Arc<PgDatabase>> {
        pg_databases().lock().unwrap_or_else(|e| e.into_inner()).get(url_file).and_then(Weak::upgrade)
    }

    pub fn store(&self) -> TestStore {
        TestStore::Postgres { db: self.name.clone(), url_file: self.url_file.clone() }
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        // Never panic here: this runs while a failed test unwinds.
        let dropped = pg_config(&pg_admin_db())
            .connect(postgres::NoTls)
            .and_then(|mut c| c.batch_execute(&format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name)));
        if let Err(e) = dropped {
            eprintln!("DROP DATABASE {}: {e}", self.name);
        }
    }
}

/// A store for a daemon spawned from a config file (see [`store_toml`]); dropping it drops the
/// PostgreSQL database. Keep it until the process has stopped.
pub struct StoreGuard {
    pub store: TestStore,
    pg: Option<Arc<PgDatabase>>,
}

/// Databases created by [`store_toml`] and not yet claimed by a [`store_guard`].
fn unclaimed() -> &'static Mutex<HashMap<PathBuf, Arc<PgDatabase>>> {
    static UNCLAIMED: OnceLock<Mutex<HashMap<PathBuf, Arc<PgDatabase>>>> = OnceLock::new();
    UNCLAIMED.get_or_init(Default::default)
}

fn store_in(dir: &Path) -> (TestStore, Option<Arc<PgDatabase>>) {
    match backend() {
        Backend::Sqlite => (TestStore::Sqlite { path: dir.join("latchkey.db") }, None),
        Backend::Postgres => {
            let url_file = dir.join("pg.url");
            let pg = match PgDatabase::find(&url_file) {
                Some(pg) => pg,
                None => PgDatabase::create(dir),
            };
            (pg.store(), Some(pg))
        }
    }
}

/// The `[storage]` section for a config file in `dir`, for the backend of this run: SQLite at
/// `<dir>/latchkey.db`, or a PostgreSQL database named in `<dir>/pg.url`, created by the first
/// call for `dir` (later calls, e.g. a rewritten config, name the same one). Take
/// [`store_guard`]`(dir)` to drop that database when the test is done.
pub fn store_toml(dir: &Path) -> String {
    let (store, pg) = store_in(dir);
    if let Some(pg) = pg {
        unclaimed().lock().unwrap_or_else(|e| e.into_inner()).entry(dir.to_owned()).or_insert(pg);
    }
    store.toml()
}

/// The store of `dir` (created when no [`store_toml`] call made it yet), held until the guard drops.
pub fn store_guard(dir: &Path) -> StoreGuard {
    let claimed = unclaimed().lock().unwrap_or_else(|e| e.into_inner()).remove(dir);
    match claimed {
        Some(pg) => StoreGuard { store: pg.store(), pg: Some(pg) },
        None => {
            let (store, pg) = store_in(dir);
            StoreGuard { store, pg }
        }
    }
}

/// SQL on a daemon's store, on either backend. Write portable SQL (no placeholders: format
/// values in), read booleans through [`TestSql::bool`] (INTEGER 0/1 on SQLite, BOOLEAN on
/// PostgreSQL) and compare BLOB/BYTEA columns as bytes.
pub enum TestSql {
    Sqlite { path: PathBuf, conn: rusqlite::Connection },
    Postgres(RefCell<postgres::Client>),
}

/// One value of a [`TestSql`] result.
#[derive(Debug, Clone, PartialEq)]
pub enum SqlValue {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Bytes(Vec<u8>),
    Bool(bool),
}

impl SqlValue {
    /// As [`TestSql::rows`] shows it: NULL, decimal, the text itself, lowercase hex for bytes,
    /// and booleans as 1/0 (as SQLite stores them).
    pub fn show(&self) -> String {
        match self {
            SqlValue::Null => "NULL".into(),
            SqlValue::Int(i) => i.to_string(),
            SqlValue::Real(r) => r.to_string(),
            SqlValue::Text(t) => t.clone(),
            SqlValue::Bytes(b) => hex(b),
            SqlValue::Bool(b) => u8::from(*b).to_string(),
        }
    }
}

/// The writer's counters from `/metrics`: (commits, commits without an fsync).
pub fn commits(d: &TestDaemon) -> (u64, u64) {
    let body = d.metrics();
    let read = |name: &str| counter(&body, name).unwrap_or_else(|| panic!("no {name} in\n{body}"));
    (read("latchkey_db_commits_total"), read("latchkey_db_unsynced_commits_total"))
}

/// The value of an unlabelled counter in a `/metrics` body (`name value` on a line of its own).
pub fn counter(metrics: &str, name: &str) -> Option<u64> {
    metrics.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap_or_else(|_| panic!("not hex: {text}")))
        .collect()
}

impl TestSql {
    /// Every row of `sql`.
    pub fn query(&self, sql: &str) -> Vec<Vec<SqlValue>> {
        match self {
            TestSql::Sqlite { conn, .. } => {
                let mut stmt = conn.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
                let n = stmt.column_count();
                let mut rows = stmt.query([]).unwrap_or_else(|e| panic!("{sql}: {e}"));
                let mut out = vec![];
                while let Some(row) = rows.next().unwrap_or_else(|e| panic!("{sql}: {e}")) {
                    out.push((0..n).map(|i| sqlite_value(row.get_ref(i).expect("column"))).collect());
                }
                out
            }
            TestSql::Postgres(client) => {
                let rows = client.borrow_mut().query(sql, &[]).unwrap_or_else(|e| panic!("{sql}: {e}"));
                rows.iter().map(|r| (0..r.len()).map(|i| pg_value(r, i, sql)).collect()).collect()
            }
        }
    }

    /// The first column of the first row (there must be one).
    pub fn value(&self, sql: &str) -> SqlValue {
        let rows = self.query(sql);
        let row = rows.into_iter().next().unwrap_or_else(|| panic!("no row: {sql}"));
        row.into_iter().next().unwrap_or_else(|| panic!("no column: {sql}"))
    }

    pub fn opt_i64(&self, sql: &str) -> Option<i64> {
        match self.value(sql) {
            SqlValue::Null => None,
            SqlValue::Int(i) => Some(i),
            other => panic!("not an integer: {other:?} from {sql}"),
        }
    }

    pub fn i64(&self, sql: &str) -> i64 {
        self.opt_i64(sql).unwrap_or_else(|| panic!("NULL from {sql}"))
    }

    pub fn text(&self, sql: &str) -> String {
        match self.value(sql) {
            SqlValue::Text(t) => t,
            other => panic!("not text: {other:?} from {sql}"),
        }
    }

    pub fn bytes(&self, sql: &str) -> Vec<u8> {
        match self.value(sql) {
            SqlValue::Bytes(b) => b,
            other => panic!("not bytes: {other:?} from {sql}"),
        }
    }

    /// A boolean column: BOOLEAN on PostgreSQL, INTEGER 0 or 1 on SQLite.
    pub fn bool(&self, sql: &str) -> bool {
        match self.value(sql) {
            SqlValue::Bool(b) => b,
            SqlValue::Int(0) => false,
            SqlValue::Int(1) => true,
            other => panic!("not a boolean: {other:?} from {sql}"),
        }
    }

    /// Every row, each value as [`SqlValue::show`] writes it.
    pub fn rows(&self, sql: &str) -> Vec<Vec<String>> {
        self.query(sql).iter().map(|r| r.iter().map(SqlValue::show).collect()).collect()
    }

    /// Runs statements that return nothing (harness tests; the daemon's own tables are its own).
    pub fn exec(&self, sql: &str) {
        match self {
            TestSql::Sqlite { path, .. } => rusqlite::Connection::open(path)
                .and_then(|c| c.execute_batch(sql))
                .unwrap_or_else(|e| panic!("{sql}: {e}")),
            TestSql::Postgres(client) => {
                client.borrow_mut().batch_execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
            }
        }
    }
}

fn sqlite_value(v: rusqlite::types::ValueRef<'_>) -> SqlValue {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Null => SqlValue::Null,
        ValueRef::Integer(i) => SqlValue::Int(i),
        ValueRef::Real(r) => SqlValue::Real(r),
        ValueRef::Text(t) => SqlValue::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => SqlValue::Bytes(b.to_vec()),
    }
}

fn pg_value(row: &postgres::Row, i: usize, sql: &str) -> SqlValue {
    use postgres::types::Type;
    let ty = row.columns()[i].type_().clone();
    let fail = |e: postgres::Error| -> SqlValue { panic!("column {i} ({ty}) of {sql}: {e}") };
    let v = match ty {
        Type::BOOL => row.try_get::<_, Option<bool>>(i).map(|v| v.map(SqlValue::Bool)),
        Type::INT2 => row.try_get::<_, Option<i16>>(i).map(|v| v.map(|x| SqlValue::Int(x.into()))),
        Type::INT4 => row.try_get::<_, Option<i32>>(i).map(|v| v.map(|x| SqlValue::Int(x.into()))),
        Type::INT8 => row.try_get::<_, Option<i64>>(i).map(|v| v.map(SqlValue::Int)),
        Type::FLOAT4 => row.try_get::<_, Option<f32>>(i).map(|v| v.map(|x| SqlValue::Real(x.into()))),
        Type::FLOAT8 => row.try_get::<_, Option<f64>>(i).map(|v| v.map(SqlValue::Real)),
        Type::BYTEA => row.try_get::<_, Option<Vec<u8>>>(i).map(|v| v.map(SqlValue::Bytes)),
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
            row.try_get::<_, Option<String>>(i).map(|v| v.map(SqlValue::Text))
        }
        other => panic!("column {i} of {sql} has type {other}: cast it to text in the query"),
    };
    v.map(|v| v.unwrap_or(SqlValue::Null)).unwrap_or_else(fail)
}

/// The PostgreSQL snapshot: tables of the `public` schema but the schema bookkeeping
/// (`latchkey_schema`) and the cluster tables (heartbeats change by themselves); each row as the
/// canonical text of the whole row, sorted (there is no rowid).
fn pg_snapshot(client: &mut postgres::Client, only: Option<&[&str]>) -> DbSnapshot {
    let tables: Vec<String> = client
        .query(
            "SELECT table_name::text FROM information_schema.tables \
             WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name::text COLLATE \"C\"",
            &[],
        )
        .expect("list tables")
        .iter()
        .map(|r| r.get(0))
        .collect();
    let wanted = |t: &str| match only {
        Some(o) => o.contains(&t),
        None => t != "audit" && t != "latchkey_schema" && !t.starts_with("cluster_"),
    };
    let mut out = String::new();
    for t in tables.iter().filter(|t| wanted(t)) {
        out.push_str(&format!("== {t}\n"));
        for row in client.query(&format!("SELECT t::text FROM \"{t}\" t ORDER BY 1"), &[]).expect("read table") {
            out.push_str(&row.get::<_, String>(0));
            out.push('\n');
        }
    }
    DbSnapshot(out)
}

/// An in-process daemon with its own runtime thread, temporary data directory and manual clock.
pub struct TestDaemon {
    pub dir: tempfile::TempDir,
    pub base: String,
    /// `http://127.0.0.1:PORT` of the metrics listener (a port of its own per daemon).
    pub metrics_base: Option<String>,
    pub socket: PathBuf,
    pub store: TestStore,
    pub kek_path: PathBuf,
    pub clock: Arc<ManualClock>,
    stop: Option<watch::Sender<bool>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// The daemon's `hold_keys` ([`TestDaemon::start_holding_keys`]).
    keys_held: Arc<std::sync::atomic::AtomicBool>,
    /// The daemon's `hold_reloads` ([`TestDaemon::hold_reloads`]).
    reloads_held: Arc<std::sync::atomic::AtomicBool>,
    /// Dropped after the daemon has stopped (fields drop after `Drop::drop`).
    pg: Option<Arc<PgDatabase>>,
}

impl TestDaemon {
    pub fn start() -> TestDaemon {
        TestDaemon::start_with(|_| {})
    }

    /// Starts a daemon after `edit` has adjusted the file config (public_url and data dir set).
    pub fn start_with(edit: impl FnOnce(&mut FileConfig)) -> TestDaemon {
        TestDaemon::start_on(0, edit)
    }

    /// Like [`TestDaemon::start_with`] on a given port (0: any), e.g. to restart with the same
    /// origin. When `edit` leaves `[storage]` alone, the store is a new one of the run's backend
    /// (on PostgreSQL: a new database, dropped with the daemon).
    pub fn start_on(port: u16, edit: impl FnOnce(&mut FileConfig)) -> TestDaemon {
        TestDaemon::start_knowing_port(port, |_, f| edit(f))
    }

    /// Like [`TestDaemon::start_on`], `edit` also told the port bound (kept bound for the daemon,
    /// never closed and bound again), for settings that name it (an `https://` public URL).
    pub fn start_knowing_port(port: u16, edit: impl FnOnce(u16, &mut FileConfig)) -> TestDaemon {
        TestDaemon::start_full(port, edit, None)
    }

    /// A daemon that makes no tenant's first signing key (nor hands out a spare one) until
    /// [`TestDaemon::hold_keys`] releases it: tenants are created keyless. A token request waits
    /// `key_wait` for its tenant's key.
    pub fn start_holding_keys(key_wait: Duration, edit: impl FnOnce(&mut FileConfig)) -> TestDaemon {
        TestDaemon::start_full(0, |_, f| edit(f), Some(key_wait))
    }

    /// Holds (true) or releases (false) the making of first signing keys.
    pub fn hold_keys(&self, held: bool) {
        // The daemon looks at it at least twice a second.
        self.keys_held.store(held, Ordering::Release);
    }

    /// Holds (true) or releases (false) the applying of other nodes' changes (PostgreSQL): the
    /// node reads them and goes on with its heartbeat, as a node stuck on a reload does.
    pub fn hold_reloads(&self, held: bool) {
        self.reloads_held.store(held, Ordering::Release);
    }

    fn start_full(port: u16, edit: impl FnOnce(u16, &mut FileConfig), held: Option<Duration>) -> TestDaemon {
        let dir = tempfile::tempdir().expect("tempdir");
        let listener = std::net::TcpListener::bind(("127.0.0.1", port)).expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let mut file = FileConfig::default();
        file.server.public_url = Some(format!("http://localhost:{port}"));
        file.server.listen = Some(format!("127.0.0.1:{port}"));
        // Any free port: daemons of parallel tests must not meet on the default one.
        file.server.metrics_listen = Some("127.0.0.1:0".into());
        // Stopped daemons go at once (a test that drains sets its own).
        file.server.drain = Some("0s".into());
        edit(port, &mut file);
        let untouched = {
            let s = &file.storage;
            s.path.is_none() && s.backend.is_none() && s.url_file.is_none()
        };
        let mut pg = None;
        if untouched && backend() == Backend::Postgres {
            let db = PgDatabase::create(dir.path());
            db.store().apply(&mut file);
            pg = Some(db);
        }
        let store = TestStore::of(&file.storage, &dir.path().join("latchkey.db"));
        if let (None, TestStore::Postgres { url_file, .. }) = (&pg, &store) {
            // A restart on another daemon's database: share it, so that it outlives both.
            pg = PgDatabase::find(url_file);
        }
        let flags = Overrides { data_dir: Some(dir.path().to_owned()), ..Overrides::default() };
        let config = Config::from_file(file, &flags).expect("config");
        TestDaemon::launch(dir, config, listener, store, pg, held)
    }

    fn launch(
        dir: tempfile::TempDir,
        config: Config,
        listener: std::net::TcpListener,
        store: TestStore,
        pg: Option<Arc<PgDatabase>>,
        held: Option<Duration>,
    ) -> TestDaemon {
        let clock = ManualClock::new();
        let keys_held = Arc::new(std::sync::atomic::AtomicBool::new(held.is_some()));
        let (stop_tx, stop_rx) = watch::channel(false);
        let (ready_tx, ready_rx) = oneshot::channel();
        let socket = config.admin_socket.clone();
        let kek_path = config.kek_file.clone();
        let base = config.public_base();
        let mut options = latchkeyd::server::Options::new(stop_rx);
        options.clock = clock.clone();
        options.listener = Some(listener);
        options.ready = Some(ready_tx);
        options.hold_keys = keys_held.clone();
        let reloads_held = options.hold_reloads.clone();
        if let Some(wait) = held {
            options.key_wait = wait;
        }
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("rt");
            if let Err(e) = rt.block_on(latchkeyd::server::run(config, options)) {
                eprintln!("daemon failed: {e}");
            }
        });
        let ready = ready_rx.blocking_recv().expect("daemon did not become ready");
        let metrics_base = ready.metrics_addr.map(|a| format!("http://{a}"));
        TestDaemon {
            dir,
            base,
            metrics_base,
            socket,
            store,
            kek_path,
            clock,
            stop: Some(stop_tx),
            thread: Some(thread),
            keys_held,
            reloads_held,
            pg,
        }
    }

    pub fn cli(&self, args: &[&str]) -> Run {
        cli(&self.socket, args)
    }

    /// Creates a tenant through the CLI and returns its JSON.
    pub fn tenant(&self, slug: &str) -> Value {
        let t = self.cli(&["tenant", "create", slug, "-o", "json"]).ok().json();
        self.wait_for_key(&t);
        t
    }

    /// Waits until a tenant (its JSON from `tenant create`) has its first RS256 key: a tenant
    /// created when no spare key was ready gets it moments later, and `key list` waits for it.
    pub fn wait_for_key(&self, tenant: &Value) {
        self.cli(&["key", "list", "--tenant", tenant["slug"].as_str().expect("slug")]).ok();
    }

    pub fn get(&self, path: &str) -> Http {
        http_get(&format!("{}{path}", self.base), None)
    }

    /// `GET /metrics` from the metrics listener, whose body is returned.
    pub fn metrics(&self) -> String {
        let base = self.metrics_base.as_deref().expect("the daemon serves no metrics");
        let r = http_get(&format!("{base}/metrics"), None);
        assert_eq!(r.status, 200, "{}", r.body);
        r.body
    }

    /// SQL on the daemon's store (a new connection; read-only on SQLite).
    pub fn sql(&self) -> TestSql {
        self.store.sql()
    }

    /// The SQLite database file (SQLite-only tests; panics on PostgreSQL).
    pub fn db_path(&self) -> &Path {
        self.store.sqlite_path()
    }

    /// For a restart on this daemon's store: `TestDaemon::start_on(port, |f| { same(f); … })`
    /// with `let same = d.same_store();`. (The database outlives both daemons.)
    pub fn same_store(&self) -> impl FnOnce(&mut FileConfig) + use<> {
        let store = self.store.clone();
        move |f: &mut FileConfig| store.apply(f)
    }

    /// Every row of every table but the audit trail: equal snapshots mean nothing was stored.
    /// Taken once every tenant has its first signing key (made in the background, it would
    /// otherwise appear between two snapshots), unless key making is held.
    pub fn snapshot(&self) -> DbSnapshot {
        self.settle_keys();
        self.store.snapshot(None)
    }

    /// Every row of the named tables (as [`TestDaemon::snapshot`]).
    pub fn snapshot_of(&self, tables: &[&str]) -> DbSnapshot {
        self.settle_keys();
        self.store.snapshot(Some(tables))
    }

    fn settle_keys(&self) {
        if self.keys_held.load(Ordering::Acquire) {
            return;
        }
        // `key list` makes a tenant's missing key at once (the background threads run at idle
        // priority, slow on a machine busy with other tests).
        let keyless = "SELECT t.slug FROM tenants t WHERE NOT EXISTS (SELECT 1 FROM signing_keys k \
                       WHERE k.tenant_id = t.id AND k.alg = 'RS256' AND k.state = 'current')";
        for row in self.sql().rows(keyless) {
            self.cli(&["key", "list", "--tenant", &row[0]]).ok();
        }
    }

    /// Sends raw bytes to the admin socket and returns (status, body).
    pub fn admin_raw(&self, request: &[u8]) -> (u16, Value) {
        admin_raw(&self.socket, request)
    }

    /// Asks the daemon to stop, as SIGTERM does, without waiting: it drains for `server.drain`
    /// first. [`TestDaemon::stop`] then waits for the end.
    pub fn begin_stop(&self) {
        if let Some(s) = &self.stop {
            let _ = s.send(true);
        }
    }

    /// Stops the daemon; its store stays (for a restart on it) until the daemon value drops.
    pub fn stop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(true);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for TestDaemon {
    fn drop(&mut self) {
        self.stop();
        // Then `pg` drops: the last holder of a PostgreSQL database drops it.
    }
}

/// The rows of some tables as text. Its `Debug` shows row counts per table and, on a mismatch, the
/// assertion message shows what differs only in summary (the full text is in `.0`). Snapshots are
/// compared within one backend only: the text differs between SQLite and PostgreSQL.
#[derive(PartialEq, Eq)]
pub struct DbSnapshot(pub String);

impl std::fmt::Debug for DbSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut counts = vec![];
        let mut current: Option<(&str, usize)> = None;
        for line in self.0.lines() {
            if let Some(t) = line.strip_prefix("== ") {
                counts.extend(current.take());
                current = Some((t, 0));
            } else if let Some((_, n)) = current.as_mut() {
                *n += 1;
            }
        }
        counts.extend(current);
        let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, self.0.as_bytes());
        let short: String = digest.as_ref()[..4].iter().map(|b| format!("{b:02x}")).collect();
        write!(
            f,
            "DbSnapshot({} digest {short})",
            counts.iter().map(|(t, n)| format!("{t}={n}")).collect::<Vec<_>>().join(" ")
        )
    }
}

fn cell(v: rusqlite::types::ValueRef<'_>) -> String {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Null => "NULL".into(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(r) => r.to_string(),
        ValueRef::Text(t) => format!("{:?}", String::from_utf8_lossy(t)),
        ValueRef::Blob(b) => format!("x'{}'", b.iter().map(|x| format!("{x:02x}")).collect::<String>()),
    }
}

/// The SQLite snapshot of a connection (see [`TestStore::snapshot`] for either backend).
pub fn db_snapshot(conn: &rusqlite::Connection, only: Option<&[&str]>) -> DbSnapshot {
    let mut out = String::new();
    // Each table with whether it has a rowid to order by (a WITHOUT ROWID table, such as
    // challenges, is read in its key's order).
    let tables: Vec<(String, bool)> = conn
        .prepare(
            "SELECT m.name, NOT t.wr FROM sqlite_master m JOIN pragma_table_list t
               ON t.schema = 'main' AND t.name = m.name
             WHERE m.type = 'table' ORDER BY m.name",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    // The audit trail records refusals on purpose; "nothing stored" is about everything else.
    let wanted = |t: &str| match only {
        Some(o) => o.contains(&t),
        None => t != "audit",
    };
    for (t, rowid) in tables.iter().filter(|(t, _)| wanted(t)) {
        out.push_str(&format!("== {t}\n"));
        let order = if *rowid { " ORDER BY rowid" } else { "" };
        let mut stmt = conn.prepare(&format!("SELECT * FROM \"{t}\"{order}")).unwrap();
        let n = stmt.column_count();
        let mut rows = stmt.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            let cells: Vec<String> = (0..n).map(|i| row.get_ref(i).map(cell).unwrap_or_default()).collect();
            out.push_str(&cells.join("|"));
            out.push('\n');
        }
    }
    DbSnapshot(out)
}

pub fn admin_raw(socket: &Path, request: &[u8]) -> (u16, Value) {
    let mut s = UnixStream::connect(socket).expect("connect admin socket");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request).unwrap();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf).into_owned();
    let status: u16 = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
    (status, serde_json::from_str(body.trim()).unwrap_or(Value::Null))
}

/// An admin request with `Connection: close`, so that reading to the end works.
pub fn admin_request(method: &str, path: &str, content_type: Option<&str>, body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "{method} {path} HTTP/1.1\r\nHost: latchkeyd\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(ct) = content_type {
        r.push_str(&format!("Content-Type: {ct}\r\n"));
    }
    r.push_str("\r\n");
    let mut bytes = r.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

pub struct Http {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Http {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// One HTTP client for the whole process: its connection pool is shared by every request. The
/// pool keeps enough idle connections for every thread of a parallel test or bench (ureq's
/// default of 3 a host would make most requests of 16 clients open a new connection).
pub fn agent() -> ureq::Agent {
    static AGENT: std::sync::OnceLock<ureq::Agent> = std::sync::OnceLock::new();
    AGENT
        .get_or_init(|| {
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .max_redirects(0)
                .max_idle_connections(64)
                .max_idle_connections_per_host(32)
                .build()
                .into()
        })
        .clone()
}

/// GET with an optional `Host` header override.
pub fn http_get(url: &str, host: Option<&str>) -> Http {
    let mut req = agent().get(url);
    if let Some(h) = host {
        req = req.header("Host", h);
    }
    into_http(req.call().expect("HTTP request"))
}

pub fn http_request(method: &str, url: &str) -> Http {
    let req = ureq::http::Request::builder().method(method).uri(url).body(()).unwrap();
    into_http(agent().run(req).expect("HTTP request"))
}

fn into_http(mut res: ureq::http::Response<ureq::Body>) -> Http {
    let status = res.status().as_u16();
    let headers = res.headers().iter().map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_owned())).collect();
    let body = res.body_mut().read_to_string().unwrap_or_default();
    Http { status, headers, body }
}

/// Signs a JWT for `slug` with the tenant's current key, read from the daemon's store and unsealed
/// with the key-encryption key, exactly as the daemon stores them.
pub fn sign_with_current_key(store: &TestStore, kek_path: &Path, slug: &str, claims: &Value) -> (String, String) {
    let db = match store {
        TestStore::Sqlite { path } => latchkey_store::Db::open(path).expect("open db"),
        TestStore::Postgres { db, url_file } => open_pg_store(db, url_file),
    };
    sign_with_current_key_in(&db, kek_path, slug, claims)
}

/// The tenant's current signing keys (one per algorithm it has), unsealed as the daemon does:
/// for tests that forge tokens.
pub fn current_keys(store: &TestStore, kek_path: &Path, slug: &str) -> Vec<latchkey_domain::oidc::keys::SigningKey> {
    let db = match store {
        TestStore::Sqlite { path } => latchkey_store::Db::open(path).expect("open db"),
        TestStore::Postgres { db, url_file } => open_pg_store(db, url_file),
    };
    let kek = latchkey_domain::crypto::Kek::load_or_create(kek_path).expect("kek");
    let (tenant_id, rows) = db
        .read_blocking(|tx| {
            let t = latchkey_store::tenants::by_slug(tx, slug)?.expect("tenant");
            Ok::<_, latchkey_store::StoreError>((t.id, latchkey_store::keys::list(tx, t.id)?))
        })
        .expect("read keys");
    rows.iter()
        .filter(|r| r.state == latchkey::admin::KeyState::Current)
        .map(|r| {
            latchkey_domain::oidc::keys::SigningKey::unseal(
                &kek,
                tenant_id,
                r,
                latchkey_domain::config::RsaEngine::AwsLc,
            )
            .expect("unseal")
        })
        .collect()
}

/// [`sign_with_current_key`] on a SQLite file (the `--dev` data directory).
pub fn sign_with_current_key_at(db_path: &Path, kek_path: &Path, slug: &str, claims: &Value) -> (String, String) {
    sign_with_current_key(&TestStore::Sqlite { path: db_path.to_owned() }, kek_path, slug, claims)
}

/// The daemon's store on PostgreSQL, opened through `latchkey_store::Db` like the daemon does.
fn open_pg_store(db: &str, url_file: &Path) -> latchkey_store::Db {
    // Past any PgBouncer: this store prepares its statements.
    let settings = latchkey_store::pg::PgSettings {
        url_file: Some(direct_url_file(url_file).unwrap_or_else(|| url_file.to_owned())),
        pool_size: 1,
        ..latchkey_store::pg::PgSettings::default()
    };
    latchkey_store::Db::open_postgres(&settings).unwrap_or_else(|e| panic!("open database {db}: {e}"))
}

fn sign_with_current_key_in(db: &latchkey_store::Db, kek_path: &Path, slug: &str, claims: &Value) -> (String, String) {
    let kek = latchkey_domain::crypto::Kek::load_or_create(kek_path).expect("kek");
    let (tenant_id, rows) = db
        .read_blocking(|tx| {
            let t = latchkey_store::tenants::by_slug(tx, slug)?.expect("tenant");
            Ok::<_, latchkey_store::StoreError>((t.id, latchkey_store::keys::list(tx, t.id)?))
        })
        .expect("read keys");
    let current = rows.iter().find(|r| r.state == latchkey::admin::KeyState::Current).expect("current key");
    let key = latchkey_domain::oidc::keys::SigningKey::unseal(
        &kek,
        tenant_id,
        current,
        latchkey_domain::config::RsaEngine::AwsLc,
    )
    .expect("unseal");
    (latchkey_domain::oidc::jwt::sign(&key, "JWT", claims).expect("sign"), key.kid.clone())
}

/// Runs a script of the outside JavaScript clients in tests/js (installed by scripts/test.sh).
pub fn node(script: &str, args: &[&str]) -> Value {
    let js = repo_root().join("tests/js");
    assert!(
        js.join("node_modules/jose").exists(),
        "the outside JOSE client is not installed: run `bash scripts/test.sh`, which runs `npm ci` in tests/js"
    );
    let out: Run = Command::new("node").arg(js.join(script)).args(args).output().expect("run node").into();
    assert_eq!(out.code, 0, "node {script} failed: {}", out.stderr);
    serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| panic!("node output is not JSON ({e}): {}", out.stdout))
}

/// Runs a script of the outside Python clients in tests/py (in the virtual environment that
/// scripts/test.sh makes); its standard output is JSON.
pub fn python(script: &str, args: &[&str]) -> Value {
    let py = repo_root().join("tests/py");
    let bin = py.join(".venv/bin/python");
    assert!(bin.exists(), "the outside Python clients are not installed: run `bash scripts/test.sh`");
    let out: Run = Command::new(bin).arg(py.join(script)).args(args).output().expect("run python").into();
    assert_eq!(out.code, 0, "python {script} failed: {}", out.stderr);
    serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("python output is not JSON ({e}): {}", out.stdout))
}

pub fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

/// Sends a request with a body and extra headers; never follows redirects.
pub fn send_raw(method: &str, url: &str, content_type: Option<&str>, body: Vec<u8>, headers: &[(&str, &str)]) -> Http {
    let mut b = ureq::http::Request::builder().method(method).uri(url);
    if let Some(ct) = content_type {
        b = b.header("Content-Type", ct);
    }
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    into_http(agent().run(b.body(body).unwrap()).expect("HTTP request"))
}

pub fn send_json(method: &str, url: &str, body: &Value, headers: &[(&str, &str)]) -> Http {
    send_raw(method, url, Some("application/json"), serde_json::to_vec(body).unwrap(), headers)
}

impl Http {
    /// The `latchkey_session=…` pair from `Set-Cookie`, ready for a `Cookie` header.
    pub fn session_cookie(&self) -> Option<String> {
        self.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case("set-cookie")).find_map(|(_, v)| {
            v.split(';')
                .next()
                .filter(|p| p.starts_with("latchkey_session=") || p.starts_with("__Host-latchkey_session="))
                .map(str::to_owned)
        })
    }
    pub fn set_cookie(&self) -> Option<&str> {
        self.header("set-cookie")
    }
}

/// One tenant of a test daemon, seen from a browser at its origin.
pub struct Site<'a> {
    pub d: &'a TestDaemon,
    pub slug: String,
    pub base: String,
    pub origin: String,
}

impl<'a> Site<'a> {
    pub fn new(d: &'a TestDaemon, slug: &str, extra: &[&str]) -> Site<'a> {
        let mut args = vec!["tenant", "create", slug, "-o", "json"];
        args.extend_from_slice(extra);
        let t = d.cli(&args).ok().json();
        d.wait_for_key(&t);
        let base = t["base_url"].as_str().unwrap().to_owned();
        let origin = d.base.clone();
        Site { d, slug: slug.to_owned(), base, origin }
    }

    /// Invites a user through the CLI; returns the invite token.
    pub fn invite(&self, email: &str, name: &str) -> String {
        let inv = self
            .d
            .cli(&["user", "invite", "--tenant", &self.slug, "--email", email, "--name", name, "-o", "json"])
            .ok()
            .json();
        let url = inv["invite_url"].as_str().unwrap();
        assert!(url.starts_with(&format!("{}/invite/", self.base)), "{url}");
        url.rsplit('/').next().unwrap().to_owned()
    }

    pub fn recover(&self, email: &str) -> String {
        let r = self.d.cli(&["user", "recover", "--tenant", &self.slug, email, "-o", "json"]).ok().json();
        r["recovery_url"].as_str().unwrap().rsplit('/').next().unwrap().to_owned()
    }

    /// POSTs JSON from this site's origin, with an optional session cookie.
    pub fn post(&self, path: &str, body: &Value, cookie: Option<&str>) -> Http {
        let mut headers = vec![("Origin", self.origin.as_str())];
        if let Some(c) = cookie {
            headers.push(("Cookie", c));
        }
        send_json("POST", &format!("{}{path}", self.base), body, &headers)
    }

    pub fn api(&self, method: &str, path: &str, body: Option<&Value>, cookie: &str, origin: Option<&str>) -> Http {
        let mut headers = vec![("Cookie", cookie)];
        if let Some(o) = origin {
            headers.push(("Origin", o));
        }
        let url = format!("{}{path}", self.base);
        match body {
            Some(b) => send_json(method, &url, b, &headers),
            None => send_raw(method, &url, None, vec![], &headers),
        }
    }

    pub fn register_start(
        &self,
        email: &str,
        name: &str,
        invite: Option<&str>,
        cookie: Option<&str>,
        extra: Value,
    ) -> Http {
        let mut body = serde_json::json!({"username": email, "display_name": name});
        if let Some(i) = invite {
            body["invite"] = i.into();
        }
        if let Value::Object(m) = extra {
            for (k, v) in m {
                body[k] = v;
            }
        }
        self.post("/register/start", &body, cookie)
    }

    /// A whole registration with the software authenticator; returns the finish reply.
    pub fn register(
        &self,
        soft: &mut crate::authenticator::Soft,
        email: &str,
        invite: Option<&str>,
        cookie: Option<&str>,
        tamper: &crate::authenticator::Tamper,
    ) -> Http {
        let start = self.register_start(email, "Test User", invite, cookie, serde_json::json!({}));
        assert_eq!(start.status, 200, "register/start: {}", start.body);
        let options = start.json();
        let credential = soft.create(&options, tamper);
        self.post(
            "/register/finish",
            &serde_json::json!({"credential": credential, "challenge": options["challenge"]}),
            cookie,
        )
    }

    pub fn auth_start(&self, username: Option<&str>) -> Value {
        let body = match username {
            Some(u) => serde_json::json!({"username": u}),
            None => serde_json::json!({}),
        };
        let r = self.post("/auth/start", &body, None);
        assert_eq!(r.status, 200, "auth/start: {}", r.body);
        r.json()
    }

    pub fn sign_in(
        &self,
        soft: &mut crate::authenticator::Soft,
        username: Option<&str>,
        tamper: &crate::authenticator::Tamper,
    ) -> Http {
        let options = self.auth_start(username);
        let assertion = soft.get(&options, tamper);
        self.post("/auth/finish", &serde_json::json!({"assertion": assertion, "challenge": options["challenge"]}), None)
    }

    /// An invited user who has registered one platform passkey: (authenticator, session cookie).
    pub fn user_with_passkey(&self, email: &str) -> (crate::authenticator::Soft, String) {
        let token = self.invite(email, "Test User");
        let mut soft = crate::authenticator::Soft::new(&self.origin);
        let r = self.register(&mut soft, email, Some(&token), None, &Default::default());
        assert_eq!(r.status, 201, "{}", r.body);
        let cookie = r.session_cookie().expect("session cookie");
        (soft, cookie)
    }
}

impl<'a> Site<'a> {
    /// This tenant as seen through another node of a [`Cluster`]: requests go to `node_url`
    /// (`http://127.0.0.1:<port>`, see [`Cluster::urls`]) with the same path, while the origin
    /// (and so the WebAuthn origin and `Origin` header) stays the tenant's. CLI calls of the
    /// returned site go to `node`'s admin socket. Invitations checked by [`Site::invite`] compare
    /// against the tenant's own base URL: make them through a site of node A.
    pub fn via<'b>(&self, node: &'b TestDaemon, node_url: &str) -> Site<'b> {
        let path = self.base.strip_prefix(&self.origin).unwrap_or_else(|| {
            panic!("{} is not under its origin {}: a tenant with its own host", self.base, self.origin)
        });
        Site { d: node, slug: self.slug.clone(), base: format!("{node_url}{path}"), origin: self.origin.clone() }
    }
}

/// Several in-process daemons on ONE PostgreSQL database, as operators run them behind a load
/// balancer (SPEC §9). Every node has the same `[storage]` (`backend = "postgres"`, one
/// `url_file`), the same key-encryption-key file and the same `server.public_url` (node A's URL),
/// so tenants route by path on every node and issuers and WebAuthn origins are identical; each
/// node has its own port, admin socket, data directory and manual clock. Nodes are addressed by
/// index: `urls[i]`, [`Cluster::url`], [`Cluster::get`], [`Cluster::on`], [`Cluster::site`].
///
/// A node's `TestDaemon::base` is the shared public URL (node A's), so `nodes[i].get(..)` goes
/// to node A: use `cluster.get(i, ..)` to reach node i.
pub struct Cluster {
    /// Dropped first (fields drop in order): every node stops before the database is dropped.
    pub nodes: Vec<TestDaemon>,
    /// `http://127.0.0.1:<port>` of each node.
    pub urls: Vec<String>,
    /// The shared `server.public_url` (node A's own URL, `http://localhost:<port>`).
    pub public: String,
    /// The one store of every node.
    pub store: TestStore,
    /// The one key-encryption-key file of every node.
    pub kek_path: PathBuf,
    pub dir: tempfile::TempDir,
    pg: Option<Arc<PgDatabase>>,
}

impl Cluster {
    /// `n` nodes on one new database of the PostgreSQL test cluster; panics on another backend
    /// (several daemons on one SQLite file are refused by design: guard the test first).
    pub fn start(n: usize) -> Cluster {
        Cluster::start_with(n, |_, _| {})
    }

    /// Like [`Cluster::start`], with `edit(i, &mut file)` adjusting node i's config after the
    /// harness has set its listen address, public URL, storage and key-encryption key. Nodes
    /// start one after another: node A creates the key-encryption key and migrates the database.
    pub fn start_with(n: usize, edit: impl Fn(usize, &mut FileConfig)) -> Cluster {
        assert!(n >= 1, "a cluster has at least one node");
        assert_eq!(
            backend(),
            Backend::Postgres,
            "Cluster needs LATCHKEY_TEST_BACKEND=postgres: several nodes share one PostgreSQL database"
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let pg = PgDatabase::create(dir.path());
        let store = pg.store();
        let kek_path = dir.path().join("key-encryption.key");
        let mut nodes = Vec::with_capacity(n);
        let mut urls = Vec::with_capacity(n);
        let mut public: Option<String> = None;
        for i in 0..n {
            let mut listen = None;
            let node = TestDaemon::start_on(0, |f| {
                listen = f.server.listen.clone();
                if let Some(p) = &public {
                    f.server.public_url = Some(p.clone());
                }
                store.apply(f);
                f.keys.encryption_key_file = Some(kek_path.clone());
                edit(i, f);
            });
            assert_eq!(node.store, store, "node {i} is on the cluster's database");
            urls.push(format!("http://{}", listen.expect("listen address")));
            public.get_or_insert_with(|| node.base.clone());
            nodes.push(node);
        }
        let public = public.expect("node A");
        Cluster { nodes, urls, public, store, kek_path, dir, pg: Some(pg) }
    }

    /// Node i.
    pub fn node(&self, i: usize) -> &TestDaemon {
        &self.nodes[i]
    }

    /// `path` (e.g. `/acme/.well-known/jwks.json`) on node i.
    pub fn url(&self, i: usize, path: &str) -> String {
        format!("{}{path}", self.urls[i])
    }

    /// GET `path` from node i.
    pub fn get(&self, i: usize, path: &str) -> Http {
        http_get(&self.url(i, path), None)
    }

    /// A URL under the shared public URL (a tenant's base URL, a redirect's `Location`) sent to
    /// node i instead, with the same path and query.
    pub fn on(&self, i: usize, url: &str) -> String {
        let rest = url.strip_prefix(&self.public).unwrap_or_else(|| panic!("{url} is not under {}", self.public));
        self.url(i, rest)
    }

    /// The CLI against node i's admin socket.
    pub fn cli(&self, i: usize, args: &[&str]) -> Run {
        self.nodes[i].cli(args)
    }

    /// `site` (made through any node) as seen through node i: see [`Site::via`].
    pub fn site<'a>(&'a self, i: usize, site: &Site<'_>) -> Site<'a> {
        site.via(&self.nodes[i], &self.urls[i])
    }

    /// SQL on the shared database.
    pub fn sql(&self) -> TestSql {
        self.store.sql()
    }
}

/// A `latchkeyd` process (the real binary, so that it can be killed with SIGKILL) on a shared
/// store, as a node of a cluster; killed when dropped.
pub struct Node {
    pub child: Child,
    pub dir: tempfile::TempDir,
    pub port: u16,
    pub log: PathBuf,
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Node {
    /// Starts a node on the store of `shared` (see `store_toml`), with the shared key-encryption
    /// key and public URL, and waits for it to be ready.
    pub fn start(shared: &Path, public_url: Option<&str>) -> Node {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let public_url = public_url.map_or_else(|| format!("http://localhost:{port}"), str::to_owned);
        let config = format!(
            "[server]\nlisten = \"127.0.0.1:{port}\"\npublic_url = \"{public_url}\"\nlog_format = \"json\"\nmetrics_listen = \"127.0.0.1:0\"\n\
             {storage}[admin]\nsocket = \"{d}/admin.sock\"\n[keys]\nencryption_key_file = \"{s}/key-encryption.key\"\n",
            storage = store_toml(shared),
            d = dir.path().display(),
            s = shared.display(),
        );
        std::fs::write(dir.path().join("config.toml"), config).unwrap();
        let log = dir.path().join("stderr.log");
        let child = Command::new(bin("latchkeyd"))
            .arg("--config")
            .arg(dir.path().join("config.toml"))
            .env_remove("RUST_LOG")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut node = Node { child, dir, port, log };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !node.log().contains("\"ready\"") {
            if let Ok(Some(status)) = node.child.try_wait() {
                panic!("latchkeyd exited ({status}) before it was ready:\n{}", node.log());
            }
            assert!(Instant::now() < deadline, "latchkeyd not ready:\n{}", node.log());
            std::thread::sleep(Duration::from_millis(25));
        }
        node
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("admin.sock")
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL: no shutdown, no goodbye to the database.
    pub fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
