//! Operating the real `latchkeyd` binary: SIGHUP reload (rate limits, log level, TLS files, a broken
//! file keeping the old settings), one daemon per database, the key-encryption key guard,
//! `check-config` opening every file, log levels and JSON numbers, stray `LATCHKEY_*` variables,
//! host names in `listen`, and the `--dev` banner for another data directory.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

/// A daemon process started from a config file, its stderr in a file the test can read.
struct Proc {
    child: Child,
    dir: tempfile::TempDir,
    port: u16,
    log: PathBuf,
    /// The store of `dir`'s config; dropped after the process is killed.
    _store: StoreGuard,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A config file for a daemon in `dir`; its store is the run's backend (the same one on every
/// call for `dir`: see `store_toml`).
fn config_text(dir: &Path, port: u16, extra_server: &str, rest: &str) -> String {
    format!(
        "[server]\nlisten = \"127.0.0.1:{port}\"\npublic_url = \"http://localhost:{port}\"\nlog_format = \"json\"\nmetrics_listen = \"127.0.0.1:0\"\n{drain}{extra_server}\n\
         {storage}[admin]\nsocket = \"{d}/admin.sock\"\n[keys]\nencryption_key_file = \"{d}/kek\"\n{rest}\n",
        d = dir.display(),
        storage = store_toml(dir),
        // Stopped daemons go at once, unless the test drains.
        drain = if extra_server.contains("drain") { "" } else { "drain = \"0s\"\n" },
    )
}

impl Proc {
    fn start(extra_server: &str, rest: &str) -> Proc {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        std::fs::write(dir.path().join("config.toml"), config_text(dir.path(), port, extra_server, rest)).unwrap();
        Proc::spawn_in(dir, port, &[])
    }

    fn spawn_in(dir: tempfile::TempDir, port: u16, env: &[(&str, &str)]) -> Proc {
        let log = dir.path().join("stderr.log");
        let child = Command::new(bin("latchkeyd"))
            .arg("--config")
            .arg(dir.path().join("config.toml"))
            .env_remove("RUST_LOG")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let _store = store_guard(dir.path());
        let p = Proc { child, dir, port, log, _store };
        p.wait_for_log("\"ready\"");
        p
    }

    fn socket(&self) -> PathBuf {
        self.dir.path().join("admin.sock")
    }

    fn url(&self, path: &str) -> String {
        format!("http://localhost:{}{path}", self.port)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until the log holds `needle` `count` times (reloads are asynchronous).
    fn wait_for_log_n(&self, needle: &str, count: usize) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let log = self.log();
            if log.matches(needle).count() >= count {
                return log;
            }
            assert!(Instant::now() < deadline, "no {needle:?} in the log:\n{log}");
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    fn wait_for_log(&self, needle: &str) -> String {
        self.wait_for_log_n(needle, 1)
    }

    fn rewrite(&self, extra_server: &str, rest: &str) {
        std::fs::write(
            self.dir.path().join("config.toml"),
            config_text(self.dir.path(), self.port, extra_server, rest),
        )
        .unwrap();
    }

    fn hup(&self) {
        assert!(Command::new("kill").args(["-HUP", &self.child.id().to_string()]).status().unwrap().success());
    }

    fn json_lines(&self) -> Vec<Value> {
        self.log().lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).collect()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn auth_start(p: &Proc) -> u16 {
    send_json("POST", &p.url("/acme/auth/start"), &json!({}), &[]).status
}

#[test]
fn sighup_reloads_rate_limits_and_log_level_and_keeps_them_when_the_file_is_broken() {
    let p = Proc::start("", "[limits]\nceremony_rate_per_minute = 1000\n");
    cli(&p.socket(), &["tenant", "create", "acme"]).ok();
    assert!((0..5).all(|_| auth_start(&p) == 200));
    assert_eq!(http_get(&p.url("/healthz"), None).status, 200);

    // Tighter limits and debug logging, without a restart.
    p.rewrite("log_level = \"debug\"", "[limits]\nceremony_rate_per_minute = 2\n");
    p.hup();
    let log = p.wait_for_log("configuration reloaded");
    assert!(log.contains("rate limits: ceremonies 2/min"), "{log}");
    assert!(log.contains("log level \\\"debug\\\""), "{log}");
    let statuses: Vec<u16> = (0..3).map(|_| auth_start(&p)).collect();
    assert_eq!(statuses[2], 429, "the new limit holds at once: {statuses:?}");
    // Probes are logged at debug level only, so they appear now; numbers are JSON numbers.
    http_get(&p.url("/healthz"), None);
    p.wait_for_log("\"route\":\"healthz\"");
    let line = p.json_lines().into_iter().find(|v| v["route"] == "healthz").unwrap();
    assert!(line["status"].is_u64() && line["ms"].is_f64(), "{line}");
    assert_eq!(line["level"], "DEBUG");

    // A broken file is reported and changes nothing; the daemon goes on serving.
    std::fs::write(p.dir.path().join("config.toml"), "[server\nlisten = ").unwrap();
    p.hup();
    let log = p.wait_for_log("reload failed; keeping the current settings");
    assert!(log.contains("config.toml"), "{log}");
    assert_eq!(auth_start(&p), 429, "the limit of the last good file still holds");
    assert_eq!(http_get(&p.url("/healthz"), None).status, 200);

    // A setting that needs a restart is named, the rest applied.
    let other = free_port();
    std::fs::write(
        p.dir.path().join("config.toml"),
        config_text(p.dir.path(), p.port, "", "[limits]\nceremony_rate_per_minute = 50\n")
            .replace(&format!("listen = \"127.0.0.1:{}\"", p.port), &format!("listen = \"127.0.0.1:{other}\"")),
    )
    .unwrap();
    p.hup();
    let log = p.wait_for_log_n("configuration reloaded", 2);
    assert!(log.contains("take effect only after a restart") && log.contains("server.listen"), "{log}");
    assert_eq!(auth_start(&p), 200, "50 a minute now");
}

#[test]
fn sighup_serves_a_renewed_tls_certificate_on_new_connections() {
    let certs = tempfile::tempdir().unwrap();
    let (old_cert, old_key) = crate::tls::self_signed(certs.path());
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::copy(&old_cert, &cert).unwrap();
    std::fs::copy(&old_key, &key).unwrap();
    let port = free_port();
    let tls = format!("tls_cert = \"{}\"\ntls_key = \"{}\"", cert.display(), key.display());
    let text = config_text(dir.path(), port, &tls, "").replace("http://localhost", "https://localhost");
    std::fs::write(dir.path().join("config.toml"), text).unwrap();
    let p = Proc::spawn_in(dir, port, &[]);

    let curl = |ca: &Path| {
        let out = Command::new("curl")
            .args(["-sS", "--max-time", "10", "--cacert"])
            .arg(ca)
            .arg(format!("https://localhost:{port}/healthz"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(curl(&old_cert), "ok\n");
    let renewed = tempfile::tempdir().unwrap();
    let (new_cert, new_key) = crate::tls::self_signed(renewed.path());
    std::fs::copy(&new_cert, &cert).unwrap();
    std::fs::copy(&new_key, &key).unwrap();
    assert_eq!(curl(&old_cert), "ok\n", "nothing changes before the reload");
    p.hup();
    let log = p.wait_for_log("configuration reloaded");
    assert!(log.contains("TLS certificate and key"), "{log}");
    assert_eq!(curl(&new_cert), "ok\n", "the renewed certificate is served");
    assert_eq!(curl(&old_cert), "", "the old one no longer");

    // A key that does not match the certificate is refused and the renewed pair stays.
    std::fs::copy(&old_key, &key).unwrap();
    p.hup();
    let log = p.wait_for_log("reload failed; keeping the current settings");
    assert!(log.contains("do not match"), "{log}");
    assert_eq!(curl(&new_cert), "ok\n");
}

#[test]
fn a_second_daemon_on_the_same_database_is_refused_naming_the_first() {
    if sqlite_only("one daemon per SQLite file (its lock file); on PostgreSQL several daemons are the point") {
        return;
    }
    let first = Proc::start("", "");
    // The same database, another port and socket.
    let port = free_port();
    let d = first.dir.path();
    let conf = d.join("second.toml");
    std::fs::write(
        &conf,
        config_text(d, port, "", "")
            .replace(&format!("{}/admin.sock", d.display()), &format!("{}/second.sock", d.display())),
    )
    .unwrap();
    let before = std::fs::read_dir(d).unwrap().count();
    let out: Run = Command::new(bin("latchkeyd")).arg("--config").arg(&conf).output().unwrap().into();
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains(&format!("PID {}", first.child.id())), "{}", out.stderr);
    assert!(out.stderr.contains("one daemon per database"), "{}", out.stderr);
    assert_eq!(std::fs::read_dir(d).unwrap().count(), before, "the second daemon created nothing");
    assert!(!d.join("second.sock").exists());
    cli(&first.socket(), &["status"]).ok();
}

#[test]
fn an_existing_database_without_its_key_encryption_key_is_refused_and_nothing_created() {
    let mut p = Proc::start("", "");
    cli(&p.socket(), &["tenant", "create", "acme"]).ok();
    let _ = Command::new("kill").args(["-TERM", &p.child.id().to_string()]).status();
    p.child.wait().unwrap();
    let kek = p.dir.path().join("kek");
    std::fs::rename(&kek, p.dir.path().join("kek.bak")).unwrap();
    // The lock file the first daemon left (kept on purpose) goes too: the refused start must not
    // create one either.
    let listing = |dir: &std::path::Path| {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    };
    for name in listing(p.dir.path()).iter().filter(|n| n.ends_with(".lock")) {
        std::fs::remove_file(p.dir.path().join(name)).unwrap();
    }
    let before = listing(p.dir.path());

    let out: Run =
        Command::new(bin("latchkeyd")).arg("--config").arg(p.dir.path().join("config.toml")).output().unwrap().into();
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("key-encryption key") && out.stderr.contains("Restore"), "{}", out.stderr);
    assert!(!kek.exists(), "no new, wrong key file");
    assert_eq!(listing(p.dir.path()), before, "nothing created, not even a lock file");

    let check: Run = Command::new(bin("latchkeyd"))
        .args(["check-config", "--config"])
        .arg(p.dir.path().join("config.toml"))
        .output()
        .unwrap()
        .into();
    assert_eq!(check.code, 1);
    assert!(check.stderr.contains("keys.encryption_key_file"), "{}", check.stderr);
}

#[test]
fn check_config_opens_every_file_and_reports_each_problem() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let conf = d.join("config.toml");
    let tls = format!("tls_cert = \"{0}/missing-cert.pem\"\ntls_key = \"{0}/missing-key.pem\"", d.display());
    let smtp = format!(
        "[smtp]\nhost = \"localhost\"\nfrom = \"id@example.com\"\nusername = \"u\"\npassword_file = \"{}/nopass\"\n",
        d.display()
    );
    std::fs::write(&conf, config_text(d, 9, &tls, &smtp).replace("http://localhost", "https://localhost")).unwrap();
    let _store = store_guard(d);
    let out: Run =
        Command::new(bin("latchkeyd")).args(["check-config", "--config"]).arg(&conf).output().unwrap().into();
    assert_eq!(out.code, 1, "{}", out.stderr);
    for needle in ["missing-cert.pem", "missing-key.pem", "nopass", "3 problem(s)"] {
        assert!(out.stderr.contains(needle), "{needle}: {}", out.stderr);
    }
    assert!(out.stdout.is_empty());

    // Present but wrong: a certificate that is not PEM.
    std::fs::write(d.join("missing-cert.pem"), "not a certificate").unwrap();
    std::fs::write(d.join("missing-key.pem"), "not a key").unwrap();
    std::fs::write(d.join("nopass"), "secret\n").unwrap();
    let out: Run =
        Command::new(bin("latchkeyd")).args(["check-config", "--config"]).arg(&conf).output().unwrap().into();
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("server.tls_") && out.stderr.contains("1 problem(s)"), "{}", out.stderr);

    // All good: the effective configuration is printed.
    let (cert, key) = crate::tls::self_signed(d);
    std::fs::rename(cert, d.join("missing-cert.pem")).unwrap();
    std::fs::rename(key, d.join("missing-key.pem")).unwrap();
    let out: Run =
        Command::new(bin("latchkeyd")).args(["check-config", "--config"]).arg(&conf).output().unwrap().into();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("log_level = \"info\""), "{}", out.stdout);
}

#[test]
fn stray_variables_warn_rust_log_wins_and_listen_takes_a_host_name() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let text = config_text(dir.path(), port, "", "")
        .replace(&format!("listen = \"127.0.0.1:{port}\""), &format!("listen = \"localhost:{port}\""))
        + "[server_extra]\n";
    // An unknown section in the file is still an error; only environment variables are lenient.
    std::fs::write(dir.path().join("config.toml"), &text).unwrap();
    let out: Run = Command::new(bin("latchkeyd"))
        .args(["check-config", "--config"])
        .arg(dir.path().join("config.toml"))
        .output()
        .unwrap()
        .into();
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("server_extra"), "{}", out.stderr);
    std::fs::write(dir.path().join("config.toml"), text.replace("[server_extra]\n", "")).unwrap();

    let p = Proc::spawn_in(dir, port, &[("LATCHKEY_TELEMETRY", "1"), ("RUST_LOG", "debug")]);
    let log = p.log();
    assert!(log.contains("ignoring LATCHKEY_TELEMETRY"), "{log}");
    assert_eq!(http_get(&p.url("/healthz"), None).status, 200);
    p.wait_for_log("\"route\":\"healthz\"");
}

#[test]
fn dev_banner_names_the_data_dir_in_use_and_commands_that_work_there() {
    let cwd = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut child = Command::new(bin("latchkeyd"))
        .args(["--dev", "--listen", &format!("127.0.0.1:{port}"), "--data-dir"])
        .arg(data.path())
        .current_dir(cwd.path())
        .env_remove("LATCHKEY_ADMIN_SOCKET")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    {
        use std::io::BufRead;
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        while out.read_line(&mut line).unwrap_or(0) > 0 && !line.contains("Stop with") {}
        banner.push_str(&line);
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(banner.contains(&format!("data in {}", data.path().display())), "{banner}");
    let status_line = banner.lines().find(|l| l.trim_end().ends_with(" status")).unwrap().trim().to_owned();
    assert!(status_line.starts_with("latchkey --socket /"), "{status_line}");
    assert!(!banner.contains("./latchkey-data"), "{banner}");
}

#[test]
fn metrics_carry_build_process_and_tenant_series_in_valid_exposition_format() {
    let d = TestDaemon::start();
    d.tenant("acme");
    d.tenant("globex");
    for _ in 0..3 {
        d.get("/acme/.well-known/jwks.json");
    }
    d.get("/globex/.well-known/openid-configuration");
    let body = d.metrics();
    let mut typed = std::collections::HashSet::new();
    let mut samples = std::collections::HashMap::new();
    for line in body.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            typed.insert(rest.split_whitespace().next().unwrap().to_owned());
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("not a sample: {line}"));
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("not a number: {line}"));
        let family = series.split('{').next().unwrap();
        let family = family.trim_end_matches("_bucket").trim_end_matches("_sum").trim_end_matches("_count");
        assert!(typed.contains(family), "no # TYPE before {line}");
        samples.insert(series.to_owned(), value);
    }
    assert_eq!(samples[&format!("latchkey_build_info{{version=\"{}\"}}", env!("CARGO_PKG_VERSION"))], 1.0);
    assert!(samples["process_resident_memory_bytes"] > 1e6);
    assert!(samples["process_open_fds"] >= 3.0);
    let now = now() as f64;
    assert!((now - 600.0..=now + 1.0).contains(&samples["process_start_time_seconds"]));
    assert_eq!(samples["latchkey_tenant_requests_total{tenant=\"acme\"}"], 3.0);
    assert_eq!(samples["latchkey_tenant_requests_total{tenant=\"globex\"}"], 1.0);
}

/// The commit `build/commit.rs` finds for this checkout, as `--version` shows it.
fn checkout_commit() -> String {
    Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".into())
}

/// Makes the store look as a newer release left it: one schema version more, and a release
/// record saying which releases can serve it.
fn as_a_newer_release_left_it(store: &TestStore, serves_from: &str) {
    let newer = latchkey_store::migrations::SCHEMA_VERSION as i64 + 1;
    match store {
        TestStore::Sqlite { path } => {
            let conn = rusqlite::Connection::open(path).unwrap();
            conn.pragma_update(None, "user_version", newer).unwrap();
            conn.execute(
                "UPDATE latchkey_release SET schema_version = ?1, serves_from = ?2",
                rusqlite::params![newer, serves_from],
            )
            .unwrap();
        }
        TestStore::Postgres { db, .. } => {
            let mut c = pg_connect(db);
            c.execute(
                "INSERT INTO latchkey_schema (version, name) VALUES ($1, 'future') ON CONFLICT DO NOTHING",
                &[&(newer as i32)],
            )
            .unwrap();
            c.execute("UPDATE latchkey_release SET schema_version = $1, serves_from = $2", &[&newer, &serves_from])
                .unwrap();
        }
    }
}

#[test]
fn version_status_and_check_config_name_the_release_commit_and_schema() {
    let release = env!("CARGO_PKG_VERSION");
    let schema = latchkey_store::migrations::SCHEMA_VERSION as u64;
    let commit = checkout_commit();
    let daemon: Run = Command::new(bin("latchkeyd")).arg("--version").output().unwrap().into();
    assert_eq!(daemon.stdout.trim(), format!("latchkeyd {release} (commit {commit}, schema {schema})"));
    let client: Run = Command::new(bin("latchkey")).arg("--version").output().unwrap().into();
    assert_eq!(client.stdout.trim(), format!("latchkey {release} (commit {commit})"));

    let mut p = Proc::start("", "");
    let status = cli(&p.socket(), &["status", "-o", "json"]).ok().json();
    assert_eq!(status["version"], release);
    assert_eq!(status["commit"], commit.as_str());
    assert_eq!(status["schema_version"], schema);
    assert_eq!(status["database_schema_version"], schema);
    assert_eq!(status["database_serves_from"], latchkey_store::schema::serves_from());
    let table = cli(&p.socket(), &["status"]).ok().stdout;
    assert!(table.contains(&format!("{release} (commit {commit})")), "{table}");

    let conf = p.dir.path().join("config.toml");
    let check = || -> Run {
        Command::new(bin("latchkeyd")).args(["check-config", "--config"]).arg(&conf).output().unwrap().into()
    };
    let out = check();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains(&format!("at schema version {schema}, this release's")), "{}", out.stderr);
    let _ = Command::new("kill").args(["-TERM", &p.child.id().to_string()]).status();
    p.child.wait().unwrap();

    // A newer release migrated the database and says only 99.0.0 and later can serve it:
    // check-config says so, and the daemon refuses to start, changing nothing.
    let store = p._store.store.clone();
    as_a_newer_release_left_it(&store, "99.0.0");
    let before = store.snapshot(None);
    let out = check();
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("latchkeyd 99.0.0 or newer") && out.stderr.contains("1 problem(s)"), "{}", out.stderr);
    let start: Run = Command::new(bin("latchkeyd")).arg("--config").arg(&conf).output().unwrap().into();
    assert_eq!(start.code, 1, "{}", start.stderr);
    assert!(start.stderr.contains("latchkeyd 99.0.0 or newer"), "{}", start.stderr);
    assert_eq!(store.snapshot(None), before, "nothing changed");

    // A rolling upgrade: the newer release's migration is additive and says this release can
    // still serve it. check-config says so, and the daemon serves it as it is.
    as_a_newer_release_left_it(&store, latchkey_store::schema::serves_from());
    let out = check();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("serves it unchanged"), "{}", out.stderr);
    let again = Proc::spawn_in(std::mem::replace(&mut p.dir, tempfile::tempdir().unwrap()), p.port, &[]);
    let status = cli(&again.socket(), &["status", "-o", "json"]).ok().json();
    assert_eq!(status["database_schema_version"], schema + 1);
    let table = cli(&again.socket(), &["status"]).ok().stdout;
    let serves = latchkey_store::schema::serves_from();
    assert!(table.contains(&format!("{schema} (database {}, which {serves} and later serve)", schema + 1)), "{table}");
}

/// A stopping node drains (SPEC §9's rolling restart): `/readyz` answers 503 at once while every
/// other request is still served, with `Connection: close`, until `server.drain` ends; then it
/// stops accepting and exits cleanly. The in-process daemon takes the stop the signal handler
/// sends.
#[test]
fn a_stopping_node_answers_not_ready_and_serves_until_its_drain_ends() {
    let mut d = TestDaemon::start_with(|f| f.server.drain = Some("2s".into()));
    let site = Site::new(&d, "acme", &[]);
    let m2m = crate::oidc_support::app(&site, "m2m", &[]);
    let grant = || crate::oidc_support::token(&site, &m2m, &[("grant_type", "client_credentials")]);
    assert_eq!(d.get("/readyz").status, 200);
    let asked = Instant::now();
    d.begin_stop();
    let not_ready = loop {
        let r = d.get("/readyz");
        if r.status == 503 {
            break r;
        }
        assert!(asked.elapsed() < Duration::from_millis(500), "still ready: {}", r.body);
        std::thread::sleep(Duration::from_millis(10));
    };
    eprintln!("not ready {:?} after the stop", asked.elapsed());
    assert_eq!(not_ready.json()["error"], "unavailable");
    assert!(not_ready.body.contains("stopping"), "{}", not_ready.body);
    // Everything else is still served, each answer closing its connection.
    let r = grant();
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.headers.iter().any(|(k, v)| k.eq_ignore_ascii_case("connection") && v == "close"), "{:?}", r.headers);
    assert_eq!(d.get("/acme/.well-known/openid-configuration").status, 200);
    assert!(asked.elapsed() < Duration::from_secs(2), "the checks took the whole drain");
    d.stop();
    let took = asked.elapsed();
    assert!(took >= Duration::from_secs(2), "stopped before the drain ended: {took:?}");
    assert!(took < Duration::from_secs(8), "the drain did not end: {took:?}");
    let port: u16 = d.base.rsplit(':').next().and_then(|p| p.parse().ok()).expect("the daemon's port");
    let refused = std::net::TcpStream::connect(("127.0.0.1", port));
    assert!(refused.is_err(), "still accepting after the stop");
}

/// SIGTERM drains the real binary; a second SIGTERM ends the drain at once and it exits 0.
#[test]
fn a_second_sigterm_ends_the_drain_at_once() {
    let mut p = Proc::start("drain = \"30s\"", "");
    assert_eq!(http_get(&p.url("/readyz"), None).status, 200);
    let term = |p: &Proc| {
        assert!(Command::new("kill").args(["-TERM", &p.child.id().to_string()]).status().unwrap().success());
    };
    term(&p);
    let deadline = Instant::now() + Duration::from_secs(5);
    while http_get(&p.url("/readyz"), None).status != 503 {
        assert!(Instant::now() < deadline, "still ready after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
    p.wait_for_log("draining");
    let again = Instant::now();
    term(&p);
    let status = loop {
        if let Some(s) = p.child.try_wait().unwrap() {
            break s;
        }
        assert!(again.elapsed() < Duration::from_secs(5), "the second SIGTERM did not end the drain");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "{}", p.log());
    assert!(!p.socket().exists(), "the admin socket is removed");
}
