//! The store a bench runs on: `BENCH_BACKEND=sqlite` (the default: the bench's own in-process
//! daemon on a SQLite file) or `BENCH_BACKEND=postgres` with `BENCH_NODES=1|2|3` (default 1):
//! that many release `latchkeyd` processes on one new database of the PostgreSQL server the
//! standard `PG*` variables point at (e.g. a `pg_virtualenv` cluster), as operators run them
//! behind a load balancer. Every node has the same `[storage]` (one `url_file`), the same
//! key-encryption-key file and the same `server.public_url` (node 1's URL, so tenants route by
//! path and issuers and WebAuthn origins match on every node); each has its own port, admin
//! socket and data directory. Rate limits are off. The database is dropped at the end
//! (`DROP DATABASE … WITH (FORCE)`, after the nodes are killed).

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::child::{Daemon, DataDir, free_port};
use crate::support::PgDatabase;

/// `None`: SQLite, the bench's in-process daemon; `Some(n)`: PostgreSQL with `n` nodes.
pub fn postgres_nodes() -> Option<usize> {
    let nodes = match std::env::var("BENCH_NODES").unwrap_or_default().as_str() {
        "" => 1,
        v => v.parse().ok().filter(|n| (1..=3).contains(n)).unwrap_or_else(|| panic!("BENCH_NODES={v:?}: 1, 2 or 3")),
    };
    match std::env::var("BENCH_BACKEND").unwrap_or_default().as_str() {
        "" | "sqlite" => {
            assert_eq!(nodes, 1, "BENCH_NODES={nodes} needs BENCH_BACKEND=postgres: one SQLite file has one daemon");
            None
        }
        "postgres" | "postgresql" => Some(nodes),
        other => panic!("BENCH_BACKEND={other:?}: expected \"sqlite\" or \"postgres\""),
    }
}

/// `n` release `latchkeyd` processes on one new PostgreSQL database, or one on a SQLite file
/// ([`Nodes::sqlite`]: the same harness, for comparing the two).
pub struct Nodes {
    /// Dropped first (fields drop in order): every node is killed before the database is dropped.
    pub daemons: Vec<Daemon>,
    /// `http://127.0.0.1:<port>` of each node.
    pub urls: Vec<String>,
    /// The shared `server.public_url` (node 1's own URL, `http://localhost:<port>`): the
    /// `Origin` of browser requests on every node.
    pub public: String,
    next: AtomicUsize,
    /// `None`: SQLite.
    db: Option<Arc<PgDatabase>>,
    pub dir: tempfile::TempDir,
}

impl Nodes {
    /// Creates the database and starts the nodes one after another (node 1 creates the
    /// key-encryption key and migrates the database); returns once every node answers `/readyz`.
    pub fn start(n: usize) -> Nodes {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = PgDatabase::create(dir.path());
        let mut storage = format!("backend = \"postgres\"\nurl_file = \"{}\"", db.url_file.display());
        // Through PgBouncer when the run has one (`scripts/with-pgbouncer.sh`).
        if let Some(direct) = crate::support::direct_url_file(&db.url_file) {
            storage.push_str(&format!("\npooler = \"transaction\"\ndirect_url_file = \"{}\"", direct.display()));
        }
        Nodes::launch(n, dir, &storage, Some(db))
    }

    /// One release `latchkeyd` on a new SQLite file, configured as [`Nodes::start`]'s nodes are.
    pub fn sqlite() -> Nodes {
        let dir = tempfile::tempdir().expect("tempdir");
        let storage = format!("backend = \"sqlite\"\npath = \"{}\"", dir.path().join("latchkey.db").display());
        Nodes::launch(1, dir, &storage, None)
    }

    fn launch(n: usize, dir: tempfile::TempDir, storage: &str, db: Option<Arc<PgDatabase>>) -> Nodes {
        let kek = dir.path().join("key-encryption.key");
        let ports: Vec<u16> = (0..n).map(|_| free_port()).collect();
        let public = format!("http://localhost:{}", ports[0]);
        let mut daemons = Vec::with_capacity(n);
        for (i, &port) in ports.iter().enumerate() {
            let data = DataDir { dir: dir.path().join(format!("node{}", i + 1)), port };
            std::fs::create_dir_all(&data.dir).unwrap();
            let config = format!(
                "[server]\npublic_url = \"{public}\"\nlisten = \"127.0.0.1:{port}\"\nlog_level = \"warn\"\nmetrics_listen = \"\"\n\n\
                 [storage]\n{storage}\n\n\
                 [admin]\nsocket = \"{sock}\"\n\n[keys]\nencryption_key_file = \"{kek}\"\n\n\
                 [limits]\nceremony_rate_per_minute = 0\ntoken_rate_per_minute = 0\n",
                sock = data.socket().display(),
                kek = kek.display(),
            );
            std::fs::write(data.config(), config).unwrap();
            let log = data.dir.join("stderr.log");
            daemons.push(Daemon::start(&data, &log).unwrap_or_else(|e| panic!("node {}: {e}", i + 1)));
        }
        let urls = ports.iter().map(|p| format!("http://127.0.0.1:{p}")).collect();
        Nodes { daemons, urls, public, next: AtomicUsize::new(0), db, dir }
    }

    pub fn len(&self) -> usize {
        self.urls.len()
    }

    /// Node 1's admin socket, where the bench sets up tenants, apps and users.
    pub fn socket(&self) -> PathBuf {
        self.daemons[0].data.socket()
    }

    /// The next node, round robin over all of them (shared by every client thread).
    pub fn pick(&self) -> usize {
        self.next.fetch_add(1, Ordering::Relaxed) % self.len()
    }

    /// `path` (e.g. `/bench/token`) on node `i`.
    pub fn url(&self, i: usize, path: &str) -> String {
        format!("{}{path}", self.urls[i % self.len()])
    }

    /// The database's name, for the bench's header ("SQLite" for [`Nodes::sqlite`]).
    pub fn database(&self) -> &str {
        self.db.as_ref().map_or("SQLite", |db| db.name.as_str())
    }

    /// Node `i`'s admin socket.
    pub fn socket_of(&self, i: usize) -> PathBuf {
        self.dir.path().join(format!("node{}", i + 1)).join("admin.sock")
    }
}
