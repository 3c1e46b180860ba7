//! Self-tests of the harness's PostgreSQL plumbing (they run only with
//! `LATCHKEY_TEST_BACKEND=postgres`, under a throwaway cluster such as `pg_virtualenv`): a
//! database made and dropped the way every test daemon's is, `TestSql` and the snapshot on it.

use std::os::unix::fs::PermissionsExt;

use crate::support::*;

/// True (with a note) when this run is not on PostgreSQL.
fn postgres_only() -> bool {
    let other = backend() != Backend::Postgres;
    if other {
        eprintln!("skipped: a PostgreSQL harness test (LATCHKEY_TEST_BACKEND=postgres)");
    }
    other
}

fn exists(name: &str) -> bool {
    let admin = std::env::var("PGDATABASE").unwrap_or_else(|_| "postgres".into());
    let mut c = pg_config(&admin).connect(postgres::NoTls).unwrap();
    c.query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name]).unwrap().is_some()
}

#[test]
fn harness_creates_reads_snapshots_and_drops_a_postgres_database() {
    if postgres_only() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pg = PgDatabase::create(dir.path());
    let name = pg.name.clone();
    assert!(name.starts_with(&format!("lk_{}_", std::process::id())), "{name}");
    assert!(exists(&name));
    let url = std::fs::read_to_string(&pg.url_file).unwrap();
    assert!(url.trim().ends_with(&format!("dbname={name}")), "{url}");
    assert_eq!(std::fs::metadata(&pg.url_file).unwrap().permissions().mode() & 0o777, 0o600);

    let store = pg.store();
    assert_eq!(
        store.toml(),
        format!("[storage]\nbackend = \"postgres\"\nurl_file = \"{}\"\npool_size = 4\n", pg.url_file.display())
            + &direct_url_file(&pg.url_file)
                .map(|d| format!("pooler = \"transaction\"\ndirect_url_file = \"{}\"\n", d.display()))
                .unwrap_or_default()
    );
    let mut file = latchkey_domain::config::FileConfig::default();
    store.apply(&mut file);
    assert_eq!(file.storage.backend.as_deref(), Some("postgres"));
    assert_eq!(file.storage.url_file.as_deref(), Some(pg.url_file.as_path()));
    assert_eq!(file.storage.pool_size, Some(4));

    let sql = store.sql();
    sql.exec(
        "CREATE TABLE things (id BIGINT PRIMARY KEY, name TEXT NOT NULL, blob BYTEA, flag BOOLEAN NOT NULL, n INTEGER);
         CREATE TABLE audit (id BIGINT);
         CREATE TABLE latchkey_schema (version INTEGER);
         CREATE TABLE cluster_nodes (node TEXT);
         INSERT INTO things VALUES (2, 'beta', NULL, FALSE, NULL), (1, 'alpha', '\\x00ff10'::bytea, TRUE, 7);
         INSERT INTO audit VALUES (1); INSERT INTO latchkey_schema VALUES (8); INSERT INTO cluster_nodes VALUES ('a');",
    );
    assert_eq!(sql.i64("SELECT count(*) FROM things"), 2);
    assert_eq!(sql.i64("SELECT n FROM things WHERE id = 1"), 7, "INTEGER reads as i64");
    assert_eq!(sql.opt_i64("SELECT n FROM things WHERE id = 2"), None);
    assert_eq!(sql.opt_i64("SELECT max(id) FROM things"), Some(2));
    assert_eq!(sql.text("SELECT name FROM things WHERE id = 1"), "alpha");
    assert_eq!(sql.text("SELECT name || '!' FROM things WHERE id = 2"), "beta!");
    assert_eq!(sql.bytes("SELECT blob FROM things WHERE id = 1"), vec![0x00, 0xff, 0x10]);
    assert!(sql.bool("SELECT flag FROM things WHERE id = 1"));
    assert!(!sql.bool("SELECT flag FROM things WHERE id = 2"));
    assert_eq!(
        sql.rows("SELECT id, name, blob, flag, n FROM things ORDER BY id"),
        vec![vec!["1", "alpha", "00ff10", "1", "7"], vec!["2", "beta", "NULL", "0", "NULL"]]
    );
    assert_eq!(unhex(&sql.rows("SELECT blob FROM things WHERE id = 1")[0][0]), vec![0x00, 0xff, 0x10]);

    // The snapshot: every table but the audit trail, the schema bookkeeping and cluster_*.
    let snap = store.snapshot(None);
    assert_eq!(snap.0, "== things\n(1,alpha,\"\\\\x00ff10\",t,7)\n(2,beta,,f,)\n", "{}", snap.0);
    assert_eq!(format!("{snap:?}").split(" digest").next(), Some("DbSnapshot(things=2"), "{snap:?}");
    let only = store.snapshot(Some(&["audit", "cluster_nodes"]));
    assert_eq!(only.0, "== audit\n(1)\n== cluster_nodes\n(a)\n");
    // A change is seen; the same rows back (now stored in another physical order) are no change.
    sql.exec("UPDATE things SET flag = TRUE WHERE id = 2");
    assert_ne!(store.snapshot(None), snap);
    sql.exec("UPDATE things SET flag = FALSE WHERE id = 2; INSERT INTO audit VALUES (2)");
    assert_eq!(store.snapshot(None), snap, "the audit trail is not part of the snapshot");
    drop(sql);

    // A restart on the same store finds the same database; the last holder drops it.
    let same = store_guard(dir.path());
    assert_eq!(same.store, store);
    drop(pg);
    assert!(exists(&name), "still held by the guard");
    drop(same);
    assert!(!exists(&name), "dropped with its last holder");
}

#[test]
fn harness_store_toml_names_one_database_per_directory_until_its_guard_drops() {
    if postgres_only() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let first = store_toml(dir.path());
    assert_eq!(store_toml(dir.path()), first, "a rewritten config names the same database");
    assert!(first.contains("backend = \"postgres\"") && first.contains("pool_size = 4"), "{first}");
    let guard = store_guard(dir.path());
    let TestStore::Postgres { db, .. } = guard.store.clone() else { panic!("not postgres: {:?}", guard.store) };
    assert!(exists(&db));
    // A connection left open does not stop the drop (WITH (FORCE)).
    let open = guard.store.sql();
    assert_eq!(open.i64("SELECT 1"), 1);
    drop(guard);
    assert!(!exists(&db));
    drop(open);
}
