//! Tenants through the real CLI and admin socket; bad input leaves the database unchanged.

use crate::support::*;

#[test]
fn create_show_list_delete() {
    let d = TestDaemon::start();
    let t = d.tenant("acme");
    assert_eq!(t["slug"], "acme");
    assert_eq!(t["name"], "acme");
    assert_eq!(t["base_url"], format!("{}/acme", d.base));
    assert_eq!(t["issuer"], t["base_url"]);
    assert_eq!(t["rp_id"], "localhost");
    assert_eq!(t["registration"], "invite");

    let shown = d.cli(&["tenant", "show", "acme", "-o", "json"]).ok().json();
    assert_eq!(shown, t);
    // Every column of the table, the discovery URL included.
    assert_eq!(shown["discovery"], format!("{}/acme/.well-known/openid-configuration", d.base));
    let listed = d.cli(&["tenant", "list", "-o", "json"]).ok().json();
    assert_eq!(listed.as_array().unwrap().len(), 1);

    let table = d.cli(&["tenant", "list"]).ok();
    assert!(table.stdout.contains("ISSUER") && table.stdout.contains(&format!("{}/acme", d.base)), "{}", table.stdout);

    let open =
        d.cli(&["tenant", "create", "beta", "--name", "Beta Inc", "--registration", "open", "-o", "json"]).ok().json();
    assert_eq!(open["registration"], "open");
    assert_eq!(open["name"], "Beta Inc");
    d.wait_for_key(&open);

    let refused = d.cli(&["tenant", "delete", "acme"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(refused.stderr.contains("--yes"));
    d.cli(&["tenant", "delete", "acme", "--yes"]).ok();
    let gone = d.cli(&["tenant", "show", "acme"]);
    assert_eq!(gone.code, 1);
    assert!(gone.stderr.contains("tenant_not_found"), "{}", gone.stderr);
    assert_eq!(d.get("/acme/.well-known/openid-configuration").status, 404);
    let keys = d.sql().i64("SELECT count(*) FROM signing_keys");
    assert_eq!(keys, 1, "only beta's key is left: deletion cascades");
}

#[test]
fn bad_tenant_input_is_refused_and_nothing_stored() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let before = d.snapshot();
    for (args, code) in [
        (vec!["tenant", "create", "Bad_Slug"], "invalid_slug"),
        (vec!["tenant", "create", "--", "-leading-dash"], "invalid_slug"),
        (vec!["tenant", "create", "metrics"], "reserved_slug"),
        (vec!["tenant", "create", "acme"], "tenant_exists"),
        (vec!["tenant", "create", "ext", "--base-url", "http://login.example.com"], "invalid_base_url"),
        (vec!["tenant", "create", "ext", "--base-url", "http://127.0.0.2/ext"], "invalid_base_url"),
        (vec!["tenant", "create", "ext", "--base-url", "https://login.example.com?x=1"], "invalid_base_url"),
        (vec!["tenant", "create", "ext", "--base-url", &format!("{}/acme", d.base)], "base_url_taken"),
        (
            vec!["tenant", "create", "ext", "--base-url", "https://login.example.com", "--rp-id", "evil.com"],
            "invalid_rp_id",
        ),
        // A public suffix, which browsers refuse as an RP ID.
        (
            vec!["tenant", "create", "ext", "--base-url", "https://login.acme.co.uk", "--rp-id", "co.uk"],
            "invalid_rp_id",
        ),
    ] {
        let r = d.cli(&args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(code), "{args:?} should say {code}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{args:?}");
    }
    assert_eq!(d.snapshot(), before, "a refused request must not change the database");
}

#[test]
fn a_tenant_at_an_ip_address_serves_all_but_passkeys() {
    let d = TestDaemon::start();
    let port = d.base.rsplit(':').next().unwrap().to_owned();
    let base = format!("http://127.0.0.1:{port}/lo");
    // Created (nothing half-stored), routed and served: discovery and client credentials.
    let t = d.cli(&["tenant", "create", "lo", "--base-url", &base, "--registration", "open", "-o", "json"]).ok().json();
    assert_eq!((t["issuer"].as_str(), t["rp_id"].as_str()), (Some(base.as_str()), Some("127.0.0.1")));
    let doc = send_raw("GET", &format!("{base}/.well-known/openid-configuration"), None, vec![], &[]);
    assert_eq!(doc.status, 200, "{}", doc.body);
    let site = Site { d: &d, slug: "lo".into(), base: base.clone(), origin: format!("http://127.0.0.1:{port}") };
    let m2m = crate::oidc_support::app(&site, "m2m", &[]);
    let grant = crate::oidc_support::token(&site, &m2m, &[("grant_type", "client_credentials")]);
    assert_eq!(grant.status, 200, "{}", grant.body);
    // WebAuthn takes no IP address as RP ID: a passkey ceremony says so.
    let before = d.snapshot();
    let r = site.post("/register/start", &serde_json::json!({"username": "ada@lo.test", "display_name": "Ada"}), None);
    assert_eq!((r.status, r.json()["error"].as_str()), (400, Some("invalid_rp_id")), "{}", r.body);
    assert!(r.json()["error_description"].as_str().unwrap().contains("localhost"), "{}", r.body);
    // A sign-in too, with or without a username, before any challenge is stored.
    for body in [serde_json::json!({"username": "ada@lo.test"}), serde_json::json!({})] {
        let r = site.post("/auth/start", &body, None);
        assert_eq!((r.status, r.json()["error"].as_str()), (400, Some("invalid_rp_id")), "{}", r.body);
    }
    assert_eq!(d.snapshot(), before);
}

#[test]
fn duplicate_tenant_message_is_clear() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let r = d.cli(&["tenant", "create", "acme"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.stderr.trim(), "latchkey: tenant \"acme\" already exists (tenant_exists)");
}

#[test]
fn tenants_and_keys_survive_a_restart() {
    let mut d = TestDaemon::start();
    d.tenant("acme");
    let jwks = d.get("/acme/.well-known/jwks.json").json();
    d.stop();
    assert!(!d.socket.exists(), "the admin socket is removed on shutdown");
    // A second daemon on the same files: same tenants, same keys.
    let dir = d.dir.path().to_owned();
    let same = d.same_store();
    let again = TestDaemon::start_with(|f| {
        same(f);
        f.keys.encryption_key_file = Some(dir.join("key-encryption.key"));
        f.admin.socket = Some(dir.join("again.sock"));
    });
    // The new daemon has another port, so its base URL differs; the stored issuer does not.
    let t = again.cli(&["tenant", "show", "acme", "-o", "json"]).ok().json();
    assert_eq!(t["issuer"], format!("{}/acme", d.base));
    let kid = again.cli(&["key", "list", "--tenant", "acme", "-o", "json"]).ok().json()[0]["kid"].clone();
    assert_eq!(jwks["keys"][0]["kid"], kid);
}

#[test]
fn the_first_tenant_after_a_restart_takes_the_spare_key_the_last_run_kept() {
    if sqlite_only("the spare signing key is kept in a file beside the SQLite database") {
        return;
    }
    // The first daemon's directory holds the database and the key-encryption key: it stays.
    let mut first = TestDaemon::start();
    let db = first.db_path().to_owned();
    let kept = std::path::PathBuf::from(format!("{}.spare-key", db.display()));
    let dir = first.dir.path().to_owned();
    let restart = |n: usize| {
        TestDaemon::start_with(|f| {
            f.storage.path = Some(db.clone());
            f.keys.encryption_key_file = Some(dir.join("key-encryption.key"));
            f.admin.socket = Some(dir.join(format!("again{n}.sock")));
        })
    };
    // The spare is generated at idle priority after the start (SCHED_IDLE: no CPU while the
    // other tests keep both cores busy); a daemon stopped before it is ready keeps nothing. Give
    // it more time at each try, up to two minutes in all: seconds are enough on an idle machine.
    let mut later: Option<TestDaemon> = None;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    for attempt in 1.. {
        std::thread::sleep(std::time::Duration::from_millis(100 * attempt.min(30)));
        later.as_mut().unwrap_or(&mut first).stop();
        if kept.exists() || std::time::Instant::now() > deadline {
            break;
        }
        later = Some(restart(attempt as usize));
    }
    let text = std::fs::read_to_string(&kept).expect("the stopped daemon kept its spare key");
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&kept).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    assert!(!text.contains("PRIVATE KEY") && text.len() > 1500, "the private key is sealed: {text}");
    let kid = text.lines().find_map(|l| l.strip_prefix("kid ")).unwrap().to_owned();

    let again = restart(0);
    assert!(!kept.exists(), "the start took the key out of the file");
    again.tenant("acme");
    let used = again.cli(&["key", "list", "--tenant", "acme", "-o", "json"]).ok().json()[0]["kid"].clone();
    assert_eq!(used, kid.as_str(), "the tenant created right after the start signs with the kept key");
    again.cli(&["key", "rotate", "--tenant", "acme"]).ok();
    let kids = again.cli(&["key", "list", "--tenant", "acme", "-o", "json"]).ok().json();
    assert_eq!(kids.as_array().unwrap().iter().filter(|k| k["kid"] == kid.as_str()).count(), 1, "used once: {kids}");
}

#[test]
fn backup_on_postgres_points_to_pg_dump_and_writes_nothing() {
    if backend() != Backend::Postgres {
        eprintln!("skipped on SQLite: `latchkey backup` copies the SQLite file there (see the test below)");
        return;
    }
    let d = TestDaemon::start();
    d.tenant("acme");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("backup.db");
    let r = d.cli(&["backup", copy.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("backup_unsupported") && r.stderr.contains("pg_dump"), "{}", r.stderr);
    assert!(r.stderr.contains("encryption_key_file"), "says to keep the key file: {}", r.stderr);
    assert!(!copy.exists(), "no file written");
}

#[test]
fn backup_is_a_consistent_copy_that_a_daemon_can_run_on() {
    use std::os::unix::fs::PermissionsExt;
    if sqlite_only("a backup is a SQLite file made by VACUUM INTO; PostgreSQL is backed up with pg_dump") {
        return;
    }
    let d = TestDaemon::start();
    let t = d.tenant("acme");
    d.cli(&["user", "invite", "--tenant", "acme", "--email", "ada@acme.test", "--name", "Ada"]).ok();
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("backup.db");
    let r = d.cli(&["backup", copy.to_str().unwrap(), "-o", "json"]).ok().json();
    assert!(r["bytes"].as_u64().unwrap() > 10_000);
    assert_eq!(std::fs::metadata(&copy).unwrap().permissions().mode() & 0o777, 0o600);
    let conn = rusqlite::Connection::open(&copy).unwrap();
    let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(ok, "ok");
    let users: i64 = conn.query_row("SELECT count(*) FROM users", [], |r| r.get(0)).unwrap();
    assert_eq!(users, 1);
    drop(conn);
    // The copy is never overwritten, and no temporary copy is left next to the database.
    let again = d.cli(&["backup", copy.to_str().unwrap()]);
    assert_eq!(again.code, 2, "a local file problem, nothing sent");
    assert!(again.stderr.contains("exists"), "{}", again.stderr);
    let leftovers = std::fs::read_dir(d.db_path().parent().unwrap())
        .unwrap()
        .filter(|e| e.as_ref().map(|e| e.file_name().to_string_lossy().contains("backup")).unwrap_or(false));
    assert_eq!(leftovers.count(), 0);
    // With the key-encryption key, a daemon runs on the copy and serves the same keys.
    let kek = d.kek_path.clone();
    let restored = TestDaemon::start_with(|f| {
        f.storage.path = Some(copy.clone());
        f.keys.encryption_key_file = Some(kek);
    });
    assert_eq!(restored.cli(&["tenant", "show", "acme", "-o", "json"]).ok().json()["issuer"], t["issuer"]);
}
