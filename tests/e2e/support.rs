//! Test harness: a real daemon (in-process `latchkeyd::run`, or the built binary), a real SQLite
//! file in a temporary directory, real HTTP on loopback, the real admin socket and the real CLI.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

use latchkeyd::clock::ManualClock;
use latchkeyd::config::{Config, FileConfig, Overrides};
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

/// An in-process daemon with its own runtime thread, temporary data directory and manual clock.
pub struct TestDaemon {
    pub dir: tempfile::TempDir,
    pub base: String,
    pub socket: PathBuf,
    pub db_path: PathBuf,
    pub kek_path: PathBuf,
    pub clock: Arc<ManualClock>,
    stop: Option<watch::Sender<bool>>,
    thread: Option<std::thread::JoinHandle<()>>,
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
    /// origin.
    pub fn start_on(port: u16, edit: impl FnOnce(&mut FileConfig)) -> TestDaemon {
        let dir = tempfile::tempdir().expect("tempdir");
        let listener = std::net::TcpListener::bind(("127.0.0.1", port)).expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let mut file = FileConfig::default();
        file.server.public_url = Some(format!("http://localhost:{port}"));
        file.server.listen = Some(format!("127.0.0.1:{port}"));
        edit(&mut file);
        let flags = Overrides { data_dir: Some(dir.path().to_owned()), ..Overrides::default() };
        let config = Config::from_file(file, &flags).expect("config");
        TestDaemon::launch(dir, config, listener)
    }

    fn launch(dir: tempfile::TempDir, config: Config, listener: std::net::TcpListener) -> TestDaemon {
        let clock = ManualClock::new();
        let (stop_tx, stop_rx) = watch::channel(false);
        let (ready_tx, ready_rx) = oneshot::channel();
        let socket = config.admin_socket.clone();
        let db_path = config.storage_path.clone();
        let kek_path = config.kek_file.clone();
        let base = config.public_base();
        let mut options = latchkeyd::Options::new(stop_rx);
        options.clock = clock.clone();
        options.listener = Some(listener);
        options.ready = Some(ready_tx);
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("rt");
            if let Err(e) = rt.block_on(latchkeyd::run(config, options)) {
                eprintln!("daemon failed: {e}");
            }
        });
        ready_rx.blocking_recv().expect("daemon did not become ready");
        TestDaemon { dir, base, socket, db_path, kek_path, clock, stop: Some(stop_tx), thread: Some(thread) }
    }

    pub fn cli(&self, args: &[&str]) -> Run {
        cli(&self.socket, args)
    }

    /// Creates a tenant through the CLI and returns its JSON.
    pub fn tenant(&self, slug: &str) -> Value {
        self.cli(&["tenant", "create", slug, "-o", "json"]).ok().json()
    }

    pub fn get(&self, path: &str) -> Http {
        http_get(&format!("{}{path}", self.base), None)
    }

    /// A read-only connection to the daemon's database file.
    pub fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open_with_flags(&self.db_path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open db")
    }

    /// Every row of every table but the audit trail: equal snapshots mean nothing was stored.
    pub fn snapshot(&self) -> DbSnapshot {
        db_snapshot(&self.db(), None)
    }

    /// Every row of the named tables.
    pub fn snapshot_of(&self, tables: &[&str]) -> DbSnapshot {
        db_snapshot(&self.db(), Some(tables))
    }

    /// Sends raw bytes to the admin socket and returns (status, body).
    pub fn admin_raw(&self, request: &[u8]) -> (u16, Value) {
        admin_raw(&self.socket, request)
    }

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
    }
}

/// The rows of some tables as text. Its `Debug` shows row counts per table and, on a mismatch, the
/// assertion message shows what differs only in summary (the full text is in `.0`).
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

pub fn db_snapshot(conn: &rusqlite::Connection, only: Option<&[&str]>) -> DbSnapshot {
    let mut out = String::new();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    // The audit trail records refusals on purpose; "nothing stored" is about everything else.
    let wanted = |t: &str| match only {
        Some(o) => o.contains(&t),
        None => t != "audit",
    };
    for t in tables.iter().filter(|t| wanted(t)) {
        out.push_str(&format!("== {t}\n"));
        let mut stmt = conn.prepare(&format!("SELECT * FROM \"{t}\" ORDER BY rowid")).unwrap();
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

/// Signs a JWT for `slug` with the tenant's current key, read from the database and unsealed with
/// the key-encryption key, exactly as the daemon stores them.
pub fn sign_with_current_key(db_path: &Path, kek_path: &Path, slug: &str, claims: &Value) -> (String, String) {
    let db = latchkeyd::store::Db::open(db_path).expect("open db");
    let kek = latchkeyd::crypto::Kek::load_or_create(kek_path).expect("kek");
    let (tenant_id, rows) = db
        .read_blocking(|tx| {
            let t = latchkeyd::store::tenants::by_slug(tx, slug)?.expect("tenant");
            Ok::<_, latchkeyd::store::StoreError>((t.id, latchkeyd::store::keys::list(tx, t.id)?))
        })
        .expect("read keys");
    let current = rows.iter().find(|r| r.state == latchkey::admin::KeyState::Current).expect("current key");
    let key = latchkeyd::oidc::keys::SigningKey::unseal(&kek, tenant_id, current).expect("unseal");
    (latchkeyd::oidc::jwt::sign(&key, "JWT", claims).expect("sign"), key.kid.clone())
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
        self.headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("set-cookie"))
            .find_map(|(_, v)| v.split(';').next().filter(|p| p.starts_with("latchkey_session=")).map(str::to_owned))
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
