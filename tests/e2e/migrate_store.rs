//! `latchkeyd migrate-store --to postgres`: a stopped SQLite installation is copied into an empty
//! PostgreSQL database (counts verified, the SQLite file untouched), a second run into the
//! now non-empty database is refused, and a PostgreSQL daemon with the same key-encryption key
//! serves the migrated tenant: same signing key, and the migrated passkey signs in.
//!
//! Runs on the PostgreSQL pass only (`LATCHKEY_TEST_BACKEND=postgres`, under pg_virtualenv).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Backend, PgDatabase, Site, TestDaemon, backend, bin, hex};

fn migrate_store(config: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["--config".to_owned(), config.display().to_string()];
    args.extend(["migrate-store", "--to", "postgres"].map(str::to_owned));
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    Command::new(bin("latchkeyd"))
        .args(&args)
        .env_remove("LATCHKEY_CONFIG")
        .env_remove("LATCHKEY_TEST_BACKEND")
        .output()
        .expect("run latchkeyd")
}

/// The table of counts migrate-store prints: table → (SQLite, PostgreSQL).
fn counts(stdout: &str) -> BTreeMap<String, (i64, i64)> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("table "))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w[0].to_owned(), (w[1].parse().unwrap(), w[2].parse().unwrap()))
        })
        .collect()
}

/// The SHA-256 of a file, in hex.
fn sha256(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    hex(aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &bytes).as_ref())
}

/// Waits (bounded) until SQLite's last connection to `db` has closed: it checkpoints the WAL into
/// the file and removes it. An in-process daemon's threads may outlive `stop()` by a moment; a
/// stopped latchkeyd process has no connection left at all. Call it before opening the file
/// read-only: a read-only connection that finds no WAL leaves an empty one behind.
fn wait_closed(db: &Path) {
    let wal = db.with_extension("db-wal");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while wal.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!wal.exists(), "{} is still there: a connection to the stopped daemon's database is open", wal.display());
}

/// A config file for the `latchkeyd` binary on the PostgreSQL database `pg`.
fn pg_config(dir: &Path, base: &str, pg: &PgDatabase, kek: &Path) -> PathBuf {
    let path = dir.join("pg.toml");
    let text = format!(
        "[server]\npublic_url = \"{base}\"\nmetrics_listen = \"127.0.0.1:0\"\n[storage]\nbackend = \"postgres\"\nurl_file = \"{}\"\n\
         [keys]\nencryption_key_file = \"{}\"\n",
        pg.url_file.display(),
        kek.display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn sqlite_installation_moves_to_postgres() {
    if backend() != Backend::Postgres {
        eprintln!(
            "skipped on {:?}: migrate-store needs the PostgreSQL pass (LATCHKEY_TEST_BACKEND=postgres)",
            backend()
        );
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let sqlite_path = home.path().join("latchkey.db");
    let kek = home.path().join("key-encryption.key");

    // A SQLite installation with some of everything.
    let (db_path, kek_path) = (sqlite_path.clone(), kek.clone());
    let mut d = TestDaemon::start_with(move |f| {
        f.storage.path = Some(db_path);
        f.keys.encryption_key_file = Some(kek_path);
    });
    let port: u16 = d.base.rsplit(':').next().unwrap().parse().unwrap();
    let (mut soft, site_base, kid, discovery) = {
        let site = Site::new(&d, "acme", &[]);
        d.cli(&[
            "app",
            "create",
            "--tenant",
            "acme",
            "--name",
            "Web",
            "--type",
            "web",
            "--redirect-uri",
            "http://localhost:3000/cb",
        ])
        .ok();
        d.cli(&["app", "create", "--tenant", "acme", "--name", "Importer", "--type", "m2m"]).ok();
        // An ES256 key and an app that signs with it.
        d.cli(&["key", "rotate", "--tenant", "acme", "--alg", "ES256"]).ok();
        d.cli(&["app", "create", "--tenant", "acme", "--name", "Edge", "--type", "m2m", "--signing-alg", "ES256"]).ok();
        let (mut soft, _cookie) = site.user_with_passkey("ada@acme.test");
        let (_other, _) = site.user_with_passkey("bob@acme.test");
        site.invite("carol@acme.test", "Carol");
        d.cli(&["role", "create", "--tenant", "acme", "staff"]).ok();
        d.cli(&["role", "assign", "--tenant", "acme", "staff", "ada@acme.test"]).ok();
        // A tenant that moved: its old URL is copied with it.
        d.cli(&["tenant", "create", "moved"]).ok();
        d.cli(&["tenant", "update", "moved", "--base-url", &format!("{}/moved-corp", d.base)]).ok();
        let r = site.sign_in(&mut soft, Some("ada@acme.test"), &Default::default());
        assert_eq!(r.status, 200, "{}", r.body);
        let jwks = d.get("/acme/.well-known/jwks.json").json();
        let kid = jwks["keys"][0]["kid"].as_str().unwrap().to_owned();
        let discovery = d.get("/acme/.well-known/openid-configuration").json();
        (soft, site.base.clone(), kid, discovery)
    };
    // While the daemon runs, migrate-store is refused (the lock file).
    let pg = PgDatabase::create(home.path());
    let config = pg_config(home.path(), &d.base, &pg, &kek);
    let running = migrate_store(&config, &["--from", sqlite_path.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&running.stderr);
    assert_eq!(running.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("needs the daemon stopped"), "{stderr}");
    assert_eq!(
        pg.store().sql().i64("SELECT count(*) FROM pg_tables WHERE tablename = 'tenants'"),
        0,
        "nothing written"
    );

    d.stop();
    wait_closed(&sqlite_path);
    let before = sha256(&sqlite_path);
    // Read-write, unlike `d.sql()`: a read-only connection would leave an empty WAL behind, and
    // migrate-store must be seen to leave nothing beside the database. Reading changes nothing.
    let sql = rusqlite::Connection::open(&sqlite_path).unwrap();
    let expected: BTreeMap<&str, i64> = [
        "tenants",
        "tenant_old_urls",
        "applications",
        "signing_keys",
        "users",
        "credentials",
        "invites",
        "sessions",
        "roles",
        "user_roles",
        "audit",
    ]
    .into_iter()
    .map(|t| (t, sql.query_row(&format!("SELECT count(*) FROM {t}"), [], |r| r.get(0)).unwrap()))
    .collect();
    drop(sql);
    for (t, n) in &expected {
        assert!(*n > 0, "the SQLite installation has no {t}");
    }

    // The copy.
    let first = migrate_store(&config, &["--from", sqlite_path.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&first.stdout);
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert_eq!(first.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let printed = counts(&stdout);
    assert_eq!(printed.len(), 34, "every table is listed:\n{stdout}");
    for (t, (sqlite, postgres)) in &printed {
        assert_eq!(sqlite, postgres, "{t}:\n{stdout}");
    }
    for (t, n) in &expected {
        assert_eq!(printed[*t], (*n, *n), "{t}:\n{stdout}");
    }
    assert!(stdout.contains("Next:") && stdout.contains(&kek.display().to_string()), "{stdout}");
    assert!(!stdout.contains("password") && !stderr.contains("password"), "{stdout}{stderr}");
    assert_eq!(sha256(&sqlite_path), before, "the SQLite file is unchanged");
    let mut left: Vec<String> = std::fs::read_dir(home.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert!(
        !left.iter().any(|f| f.ends_with("-wal") || f.ends_with("-shm")),
        "files left beside the database: {left:?}"
    );

    let pg_sql = pg.store().sql();
    for (t, n) in &expected {
        assert_eq!(pg_sql.i64(&format!("SELECT count(*) FROM {t}")), *n, "{t} in PostgreSQL");
    }
    // Each key kept its algorithm, each app its own.
    assert_eq!(pg_sql.text("SELECT string_agg(alg, ',' ORDER BY alg) FROM signing_keys WHERE tenant_id = (SELECT id FROM tenants WHERE slug = 'acme')"), "ES256,RS256");
    assert_eq!(pg_sql.text("SELECT signing_alg FROM applications WHERE name = 'Edge'"), "ES256");
    // Booleans arrived as booleans, identities continue past the copied ids.
    assert!(pg_sql.bool("SELECT bool_and(email_verified) FROM users WHERE status = 'active'"));
    let next: i64 = pg_sql.i64("SELECT nextval(pg_get_serial_sequence('audit', 'id'))");
    assert!(next > pg_sql.i64("SELECT max(id) FROM audit"), "audit ids continue past the copy");
    pg_sql.exec("SELECT setval(pg_get_serial_sequence('audit', 'id'), (SELECT max(id) FROM audit))");
    assert!(pg_sql.i64("SELECT generation FROM cluster_state") >= 1);

    // A second run into the now non-empty database is refused and changes nothing, not even
    // the schema of a database an older release runs on (made so here: back to version 10).
    pg_sql.exec("ALTER TABLE authorization_codes DROP COLUMN claims");
    pg_sql.exec("ALTER TABLE refresh_tokens DROP COLUMN claims");
    pg_sql.exec("ALTER TABLE refresh_tokens DROP COLUMN offline");
    pg_sql.exec("ALTER TABLE applications DROP COLUMN require_acr");
    pg_sql.exec("ALTER TABLE applications DROP COLUMN consent");
    pg_sql.exec("ALTER TABLE applications DROP COLUMN backchannel_logout_uri");
    pg_sql.exec("ALTER TABLE applications DROP COLUMN backchannel_logout_session_required");
    pg_sql.exec("DROP TABLE consents");
    pg_sql.exec("DROP TABLE session_apps");
    pg_sql.exec("DROP TABLE outbox");
    pg_sql.exec("DROP TABLE webhooks");
    pg_sql.exec("ALTER TABLE applications DROP COLUMN logo_sha");
    pg_sql.exec("ALTER TABLE applications DROP COLUMN signing_alg");
    pg_sql.exec("ALTER TABLE applications DROP COLUMN require_par");
    pg_sql.exec("DROP TABLE pushed_requests");
    pg_sql.exec("DROP TABLE client_assertion_jtis");
    pg_sql.exec("ALTER TABLE applications DROP COLUMN token_auth");
    pg_sql.exec("ALTER TABLE applications DROP COLUMN jwks");
    pg_sql.exec("ALTER TABLE applications DROP COLUMN jwks_uri");
    pg_sql.exec("DROP TABLE dpop_proofs");
    pg_sql.exec("ALTER TABLE refresh_tokens DROP COLUMN dpop_jkt");
    pg_sql.exec("ALTER TABLE applications DROP COLUMN require_dpop");
    pg_sql.exec("ALTER TABLE audit DROP COLUMN txid");
    // (Version 10 had RSA keys only, one current per tenant.)
    pg_sql.exec("DELETE FROM signing_keys WHERE alg <> 'RS256'");
    pg_sql.exec("ALTER TABLE signing_keys DROP COLUMN alg");
    pg_sql.exec("CREATE UNIQUE INDEX signing_keys_one_current ON signing_keys (tenant_id) WHERE state = 'current'");
    pg_sql.exec("DROP TABLE app_logos");
    pg_sql.exec("ALTER TABLE users DROP COLUMN locale");
    pg_sql.exec("ALTER TABLE users DROP COLUMN passkey_prompted_at");
    pg_sql.exec("ALTER TABLE tenants DROP COLUMN display_name");
    pg_sql.exec("ALTER TABLE tenants DROP COLUMN accent_color");
    pg_sql.exec("ALTER TABLE tenants DROP COLUMN default_locale");
    pg_sql.exec("ALTER TABLE tenants DROP COLUMN logo_sha");
    pg_sql.exec("DROP TABLE tenant_logos");
    pg_sql.exec("ALTER TABLE tenants DROP COLUMN attestation_policy");
    pg_sql.exec("ALTER TABLE tenants DROP COLUMN allowed_aaguids");
    pg_sql.exec("DROP TABLE mds_blob");
    pg_sql.exec("DROP TABLE mds_entries");
    pg_sql.exec("ALTER TABLE tenants DROP COLUMN scim_token_hash");
    pg_sql.exec("DROP TABLE scim_users");
    pg_sql.exec("DROP TABLE scim_groups");
    pg_sql.exec("DROP TABLE latchkey_release");
    pg_sql.exec("DROP TABLE tenant_old_urls");
    pg_sql.exec("ALTER TABLE social_links DROP COLUMN authority");
    pg_sql.exec("DROP TABLE social_pending_links");
    pg_sql.exec("ALTER TABLE social_states DROP COLUMN session_id");
    pg_sql.exec("DELETE FROM latchkey_schema WHERE version > 10");
    let snapshot = pg.store().snapshot(None);
    let audit_rows = pg_sql.i64("SELECT count(*) FROM audit");
    let second = migrate_store(&config, &["--from", sqlite_path.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("is not empty: table tenants has rows"), "{stderr}");
    assert!(stderr.contains("Nothing was written"), "{stderr}");
    assert_eq!(pg.store().snapshot(None), snapshot);
    assert_eq!(pg_sql.i64("SELECT count(*) FROM audit"), audit_rows);
    assert_eq!(pg_sql.i64("SELECT max(version)::bigint FROM latchkey_schema"), 10, "not migrated");
    assert_eq!(sha256(&sqlite_path), before, "the SQLite file is still unchanged");
    drop(pg_sql);
    drop(d);

    // A PostgreSQL daemon on the copy, same origin and key-encryption key.
    let store = pg.store();
    let kek_for_pg = kek.clone();
    let pg_daemon = TestDaemon::start_on(port, move |f| {
        store.apply(f);
        f.keys.encryption_key_file = Some(kek_for_pg);
    });
    let jwks = pg_daemon.get("/acme/.well-known/jwks.json");
    assert_eq!(jwks.status, 200, "{}", jwks.body);
    assert_eq!(jwks.json()["keys"][0]["kid"].as_str(), Some(kid.as_str()), "the same signing key");

    assert_eq!(pg_daemon.get("/acme/.well-known/openid-configuration").json(), discovery);
    let site = Site { d: &pg_daemon, slug: "acme".into(), base: site_base, origin: pg_daemon.base.clone() };
    let r = site.sign_in(&mut soft, Some("ada@acme.test"), &Default::default());
    assert_eq!(r.status, 200, "the migrated passkey signs in: {}", r.body);
    assert!(r.session_cookie().is_some());
}

/// What is refused before PostgreSQL is reached (any backend: no server needed).
#[test]
fn migrate_store_refuses_what_it_cannot_copy() {
    let dir = tempfile::tempdir().unwrap();
    let url_file = dir.path().join("pg.url");
    std::fs::write(&url_file, "host=127.0.0.1 port=1 dbname=nowhere user=nobody\n").unwrap();
    std::fs::set_permissions(&url_file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let pg_toml = dir.path().join("pg.toml");
    std::fs::write(
        &pg_toml,
        format!(
            "[server]\npublic_url = \"https://id.example.com\"\n[storage]\nbackend = \"postgres\"\nurl_file = \"{}\"\n",
            url_file.display()
        ),
    )
    .unwrap();
    let refused = |config: &Path, extra: &[&str], says: &str| {
        let out = migrate_store(config, extra);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {stderr}");
        assert!(stderr.contains(says), "{extra:?}: expected {says:?} in:\n{stderr}");
        assert!(out.stdout.is_empty(), "{extra:?}");
    };

    // The configuration must name the PostgreSQL target.
    let sqlite_toml = dir.path().join("sqlite.toml");
    std::fs::write(&sqlite_toml, "[server]\npublic_url = \"https://id.example.com\"\n").unwrap();
    refused(&sqlite_toml, &[], "Set backend = \"postgres\"");

    let missing = dir.path().join("missing.db");
    refused(&pg_toml, &["--from", missing.to_str().unwrap()], "no SQLite database at");
    assert!(!missing.exists());

    // A file of an older schema: upgraded by starting the current daemon first, never here.
    let old = dir.path().join("old.db");
    let conn = rusqlite::Connection::open(&old).unwrap();
    conn.execute_batch("CREATE TABLE tenants (id INTEGER PRIMARY KEY); PRAGMA user_version = 3;").unwrap();
    drop(conn);
    let before = sha256(&old);
    refused(&pg_toml, &["--from", old.to_str().unwrap()], "start the current latchkeyd once on SQLite first");
    assert_eq!(sha256(&old), before);

    let other = dir.path().join("other.db");
    rusqlite::Connection::open(&other).unwrap().execute_batch("CREATE TABLE t (x)").unwrap();
    refused(&pg_toml, &["--from", other.to_str().unwrap()], "is not a Latchkey database");

    // A current file, but the server does not answer: said, with the target and no secret.
    let current = dir.path().join("current.db");
    let conn = rusqlite::Connection::open(&current).unwrap();
    for dir in latchkey_store::migrations::MIGRATIONS.iter().map(|m| m.name) {
        let sql = std::fs::read_to_string(crate::support::repo_root().join("migrations").join(dir).join("up.sql"));
        conn.execute_batch(&sql.unwrap()).unwrap();
    }
    conn.pragma_update(None, "user_version", latchkey_store::migrations::MIGRATIONS.len() as i64).unwrap();
    drop(conn);
    refused(
        &pg_toml,
        &["--from", current.to_str().unwrap()],
        "cannot connect to the PostgreSQL database postgres://nobody@127.0.0.1:1/nowhere",
    );
}
