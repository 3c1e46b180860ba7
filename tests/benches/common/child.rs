//! The real `latchkeyd` binary as a child process, for the robustness benches (crash trials and
//! soak): a data directory with a config file, the database, the key-encryption key and the admin
//! socket; started, SIGKILLed or stopped with SIGTERM; its memory read from /proc. Also a small
//! HTTP client whose connection pool belongs to the caller, so that no connection outlives the
//! daemon process it was opened to.

#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::Value;

use crate::authenticator::{Soft, Tamper};
use crate::support::{admin_raw, admin_request, bin};

/// The files of one daemon's data directory.
#[derive(Clone)]
pub struct DataDir {
    pub dir: PathBuf,
    pub port: u16,
}

impl DataDir {
    pub fn new(dir: &Path, port: u16) -> DataDir {
        std::fs::create_dir_all(dir).unwrap();
        let d = DataDir { dir: dir.to_owned(), port };
        d.write_config();
        d
    }
    pub fn config(&self) -> PathBuf {
        self.dir.join("config.toml")
    }
    pub fn db(&self) -> PathBuf {
        self.dir.join("latchkey.db")
    }
    pub fn kek(&self) -> PathBuf {
        self.dir.join("key-encryption.key")
    }
    pub fn socket(&self) -> PathBuf {
        self.dir.join("admin.sock")
    }
    pub fn origin(&self) -> String {
        format!("http://localhost:{}", self.port)
    }

    /// Rate limits off (the load comes from one IP); everything else at its default.
    fn write_config(&self) {
        let text = format!(
            "[server]\npublic_url = \"http://localhost:{port}\"\nlisten = \"127.0.0.1:{port}\"\nmetrics_listen = \"\"\n\n\
             [storage]\npath = \"{db}\"\n\n[admin]\nsocket = \"{sock}\"\n\n\
             [keys]\nencryption_key_file = \"{kek}\"\n\n\
             [limits]\nceremony_rate_per_minute = 0\ntoken_rate_per_minute = 0\n",
            port = self.port,
            db = self.db().display(),
            sock = self.socket().display(),
            kek = self.kek().display(),
        );
        std::fs::write(self.config(), text).unwrap();
    }

    /// Copies the daemon's files (config, database with its WAL, key) into `to`, on `port`.
    pub fn copy_to(&self, to: &Path) -> DataDir {
        std::fs::create_dir_all(to).unwrap();
        for name in ["latchkey.db", "latchkey.db-wal", "key-encryption.key"] {
            let from = self.dir.join(name);
            if from.exists() {
                std::fs::copy(&from, to.join(name)).unwrap();
            }
        }
        DataDir::new(to, self.port)
    }

    /// A read-only connection: it never checkpoints, so the files stay as the daemon left them.
    pub fn open_ro(&self) -> rusqlite::Connection {
        rusqlite::Connection::open_with_flags(self.db(), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap()
    }
}

/// A running `latchkeyd` process.
pub struct Daemon {
    pub child: Child,
    pub data: DataDir,
    pub log: PathBuf,
}

impl Daemon {
    /// Starts `latchkeyd --config` on `data`, logging to `log`; returns once `/readyz` answers 200.
    pub fn start(data: &DataDir, log: &Path) -> Result<Daemon, String> {
        let log_file = std::fs::File::create(log).unwrap();
        let child = Command::new(bin("latchkeyd"))
            .arg("--config")
            .arg(data.config())
            .env_remove("LATCHKEY_ADMIN_SOCKET")
            .env_remove("LATCHKEY_CONFIG")
            .stdout(Stdio::null())
            .stderr(log_file)
            .spawn()
            .map_err(|e| format!("cannot start latchkeyd: {e}"))?;
        let mut d = Daemon { child, data: data.clone(), log: log.to_owned() };
        let http = Http::new(Duration::from_secs(2));
        let url = format!("{}/readyz", data.origin());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(Some(status)) = d.child.try_wait() {
                return Err(format!("latchkeyd exited during start-up ({status}): {}", d.log_text()));
            }
            if http.get(&url, &[]).is_ok_and(|r| r.status == 200) && d.data.socket().exists() {
                return Ok(d);
            }
            if Instant::now() > deadline {
                d.kill();
                return Err(format!("latchkeyd not ready after 30 s: {}", d.log_text()));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, then reap: when this returns, the process and its file handles are gone.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM and wait for a graceful exit; returns the exit code (None: killed or timed out).
    pub fn stop(&mut self) -> Option<i32> {
        // std sends only SIGKILL; kill(1) sends SIGTERM.
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match self.child.try_wait() {
                Ok(Some(s)) => return s.code(),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
                _ => {
                    self.kill();
                    return None;
                }
            }
        }
    }

    pub fn log_text(&self) -> String {
        let mut s = String::new();
        if let Ok(mut f) = std::fs::File::open(&self.log) {
            let _ = f.read_to_string(&mut s);
        }
        s
    }

    /// (VmRSS, VmHWM) in KiB from /proc/<pid>/status.
    pub fn memory_kib(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|kb| kb.parse::<u64>().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }

    /// One admin request over the socket: (status, JSON body).
    pub fn admin(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        admin_call(&self.data.socket(), method, path, body)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill();
    }
}

pub fn admin_call(socket: &Path, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let bytes = body.map(|b| serde_json::to_vec(b).unwrap()).unwrap_or_default();
    let ct = body.map(|_| "application/json");
    admin_raw(socket, &admin_request(method, path, ct, &bytes))
}

/// An admin request that reports a dead daemon (or a cut answer) as status 0 instead of panicking.
pub fn admin_try(socket: &Path, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    use std::io::Write;
    let Ok(mut s) = std::os::unix::net::UnixStream::connect(socket) else { return (0, Value::Null) };
    let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
    let bytes = body.map(|b| serde_json::to_vec(b).unwrap()).unwrap_or_default();
    let ct = body.map(|_| "application/json");
    if s.write_all(&admin_request(method, path, ct, &bytes)).is_err() {
        return (0, Value::Null);
    }
    let mut buf = Vec::new();
    if s.read_to_end(&mut buf).is_err() {
        return (0, Value::Null);
    }
    let text = String::from_utf8_lossy(&buf);
    let status: u16 = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
    (status, serde_json::from_str(body.trim()).unwrap_or(Value::Null))
}

/// A port free right now; the daemon binds it with SO_REUSEADDR, so it can be reused at once.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    /// The `latchkey_session=…` pair of `Set-Cookie`.
    pub fn session_cookie(&self) -> Option<String> {
        self.headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("set-cookie"))
            .find_map(|(_, v)| v.split(';').next().filter(|p| p.starts_with("latchkey_session=")).map(str::to_owned))
    }
    /// Query parameters of the redirect's Location.
    pub fn location_param(&self, name: &str) -> Option<String> {
        let loc = self.header("location")?;
        let q = loc.split_once('?').map(|(_, q)| q).unwrap_or("");
        url::form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
    }
}

/// An HTTP client with its own connection pool; errors (refused, reset) are returned, not panics.
#[derive(Clone)]
pub struct Http {
    agent: ureq::Agent,
}

impl Http {
    pub fn new(timeout: Duration) -> Http {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_global(Some(timeout))
            .build()
            .into();
        Http { agent }
    }

    pub fn send(
        &self,
        method: &str,
        url: &str,
        content_type: Option<&str>,
        body: Vec<u8>,
        headers: &[(&str, &str)],
    ) -> Result<Reply, String> {
        let mut b = ureq::http::Request::builder().method(method).uri(url);
        if let Some(ct) = content_type {
            b = b.header("Content-Type", ct);
        }
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        let req = b.body(body).map_err(|e| e.to_string())?;
        let mut res = self.agent.run(req).map_err(|e| e.to_string())?;
        let status = res.status().as_u16();
        let headers = res.headers().iter().map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_owned())).collect();
        let body = res.body_mut().with_config().limit(256 * 1024 * 1024).read_to_string().map_err(|e| e.to_string())?;
        Ok(Reply { status, headers, body })
    }

    pub fn get(&self, url: &str, headers: &[(&str, &str)]) -> Result<Reply, String> {
        self.send("GET", url, None, vec![], headers)
    }

    pub fn post_json(&self, url: &str, body: &Value, headers: &[(&str, &str)]) -> Result<Reply, String> {
        self.send("POST", url, Some("application/json"), serde_json::to_vec(body).unwrap(), headers)
    }

    /// A form POST authenticated with HTTP Basic (client_secret_basic).
    pub fn post_form(&self, url: &str, client: &Client, form: &[(&str, &str)]) -> Result<Reply, String> {
        let mut s = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in form {
            s.append_pair(k, v);
        }
        let basic = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", client.id, client.secret))
        );
        self.send(
            "POST",
            url,
            Some("application/x-www-form-urlencoded"),
            s.finish().into_bytes(),
            &[("Authorization", &basic)],
        )
    }

    /// `multipart/form-data` with one `file` field.
    pub fn post_file(&self, url: &str, bearer: &str, csv: &str) -> Result<Reply, String> {
        let boundary = "latchkey-bench-boundary-7d1f0c";
        let mut body = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"users.csv\"\r\n\
             Content-Type: text/csv\r\n\r\n"
        )
        .into_bytes();
        body.extend_from_slice(csv.as_bytes());
        body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        let auth = format!("Bearer {bearer}");
        self.send(
            "POST",
            url,
            Some(&format!("multipart/form-data; boundary={boundary}")),
            body,
            &[("Authorization", &auth)],
        )
    }
}

/// A confidential client (or m2m app) of the tenant.
#[derive(Clone)]
pub struct Client {
    pub id: String,
    pub secret: String,
}

pub const REDIRECT: &str = "https://app.example.com/oidc-callback";

/// Creates an app over the admin socket.
pub fn create_app(socket: &Path, slug: &str, name: &str, kind: &str) -> Client {
    let body = if kind == "m2m" {
        serde_json::json!({"name": name, "type": "m2m", "scopes": ["users:invite"]})
    } else {
        serde_json::json!({"name": name, "type": kind, "redirect_uris": [REDIRECT]})
    };
    let (status, app) = admin_call(socket, "POST", &format!("/admin/v1/tenants/{slug}/apps"), Some(&body));
    assert!(status == 201 || status == 200, "app create: {status} {app}");
    Client {
        id: app["client_id"].as_str().unwrap().to_owned(),
        secret: app["client_secret"].as_str().unwrap().to_owned(),
    }
}

pub fn sha256(data: &[u8]) -> Vec<u8> {
    aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, data).as_ref().to_vec()
}

/// PKCE pair (verifier, S256 challenge).
pub fn pkce() -> (String, String) {
    let mut raw = [0u8; 32];
    aws_lc_rs::rand::SecureRandom::fill(&aws_lc_rs::rand::SystemRandom::new(), &mut raw).unwrap();
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let verifier = b64.encode(raw);
    let challenge = b64.encode(sha256(verifier.as_bytes()));
    (verifier, challenge)
}

/// A small deterministic PRNG (SplitMix64): a seed replays the same choices.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 > 1.0 - p
    }
}

/// A seed from the clock, when none is given.
pub fn clock_seed() -> u64 {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    t.as_nanos() as u64 ^ ((std::process::id() as u64) << 32)
}

/// One tenant seen from a browser at the daemon's origin, with the software authenticator.
#[derive(Clone)]
pub struct Tenant {
    pub slug: String,
    pub base: String,
    pub origin: String,
}

impl Tenant {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn post(&self, http: &Http, path: &str, body: &Value) -> Result<Reply, String> {
        http.post_json(&self.url(path), body, &[("Origin", &self.origin)])
    }

    /// Registers a passkey with an invitation token; the reply of /register/finish.
    pub fn register(&self, http: &Http, soft: &mut Soft, email: &str, invite: &str) -> Result<Reply, String> {
        let start = self.post(
            http,
            "/register/start",
            &serde_json::json!({"username": email, "display_name": "Bench User", "invite": invite}),
        )?;
        if start.status != 200 {
            return Err(format!("register/start {}: {}", start.status, start.body));
        }
        let options = start.json();
        let credential = soft.create(&options, &Tamper::default());
        self.post(
            http,
            "/register/finish",
            &serde_json::json!({"credential": credential, "challenge": options["challenge"]}),
        )
    }

    /// A username-first passkey sign-in; the reply of /auth/finish. `Err` on a transport error,
    /// or a refused /auth/start (then prefixed "start").
    pub fn sign_in(&self, http: &Http, soft: &mut Soft, email: &str) -> Result<Reply, String> {
        let options = self.auth_start(http, email)?;
        self.auth_finish(http, soft, &options)
    }

    /// `/auth/start` for `email`: the options. `Err` on a transport error or a refusal (then
    /// prefixed "start").
    pub fn auth_start(&self, http: &Http, email: &str) -> Result<Value, String> {
        let start = self.post(http, "/auth/start", &serde_json::json!({"username": email}))?;
        if start.status != 200 {
            return Err(format!("start {}: {}", start.status, start.body));
        }
        Ok(start.json())
    }

    /// The authenticator's assertion for `options`, sent to `/auth/finish`; its reply.
    pub fn auth_finish(&self, http: &Http, soft: &mut Soft, options: &Value) -> Result<Reply, String> {
        let assertion = soft.get(options, &Tamper::default());
        self.post(http, "/auth/finish", &serde_json::json!({"assertion": assertion, "challenge": options["challenge"]}))
    }

    /// A code straight from /authorize for a signed-in browser (the session cookie): (code, verifier).
    pub fn code(&self, http: &Http, client: &Client, cookie: &str) -> Result<(String, String), String> {
        let (verifier, challenge) = pkce();
        let mut q = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in [
            ("response_type", "code"),
            ("client_id", client.id.as_str()),
            ("redirect_uri", REDIRECT),
            ("scope", "openid profile email"),
            ("state", "st"),
            ("nonce", "n"),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
        ] {
            q.append_pair(k, v);
        }
        let r = http.get(&format!("{}/authorize?{}", self.base, q.finish()), &[("Cookie", cookie)])?;
        match r.location_param("code") {
            Some(code) if r.status == 302 => Ok((code, verifier)),
            _ => Err(format!("authorize {}: {:?} {}", r.status, r.header("location"), r.body)),
        }
    }

    /// Exchanges a code; the /token reply.
    pub fn exchange(&self, http: &Http, client: &Client, code: &str, verifier: &str) -> Result<Reply, String> {
        http.post_form(
            &self.url("/token"),
            client,
            &[
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", verifier),
            ],
        )
    }

    pub fn refresh(&self, http: &Http, client: &Client, token: &str) -> Result<Reply, String> {
        http.post_form(&self.url("/token"), client, &[("grant_type", "refresh_token"), ("refresh_token", token)])
    }

    /// A new refresh-token family for the signed-in browser: its first refresh token.
    pub fn new_family(&self, http: &Http, client: &Client, cookie: &str) -> Result<String, String> {
        let (code, verifier) = self.code(http, client, cookie)?;
        let r = self.exchange(http, client, &code, &verifier)?;
        r.json()["refresh_token"].as_str().map(str::to_owned).ok_or_else(|| format!("token {}: {}", r.status, r.body))
    }

    pub fn client_credentials(&self, http: &Http, client: &Client) -> Result<Reply, String> {
        http.post_form(&self.url("/token"), client, &[("grant_type", "client_credentials")])
    }

    pub fn revoke(&self, http: &Http, client: &Client, token: &str) -> Result<Reply, String> {
        http.post_form(&self.url("/revoke"), client, &[("token", token)])
    }

    pub fn introspect(&self, http: &Http, client: &Client, token: &str) -> Result<Reply, String> {
        http.post_form(&self.url("/introspect"), client, &[("token", token)])
    }

    /// Whether a session cookie is accepted (GET /api/credentials answers 200).
    pub fn session_works(&self, http: &Http, cookie: &str) -> Result<bool, String> {
        Ok(http.get(&self.url("/api/credentials"), &[("Cookie", cookie)])?.status == 200)
    }
}

/// Invites a user over the admin socket; returns the invitation token.
pub fn invite(socket: &Path, slug: &str, email: &str) -> String {
    let body = serde_json::json!({"email": email, "name": "Bench User"});
    let (status, inv) = admin_call(socket, "POST", &format!("/admin/v1/tenants/{slug}/users/invite"), Some(&body));
    assert_eq!(status, 201, "invite {email}: {inv}");
    inv["invite_url"].as_str().unwrap().rsplit('/').next().unwrap().to_owned()
}

/// The token at the end of an invite URL.
pub fn url_token(url: &str) -> &str {
    url.rsplit('/').next().unwrap_or_default()
}
