//! Where the PostgreSQL database is and how to reach it.
//!
//! [`PgSettings`] is what the `[storage]` section says (`url_file`, `pool_size`, `sslrootcert`,
//! and, behind a connection pooler, `pooler` and `direct_url_file`).
//! [`PgSettings::resolve`] turns it into a [`PgTarget`] when the database is opened: it reads the
//! `url_file` (a libpq URL or `key=value` string; it may hold a password, so it is a file) and
//! fills what that leaves unset from the standard `PG*` variables, as libpq would. tokio-postgres
//! reads no environment and knows only `sslmode=disable|prefer|require`, so the libpq-only
//! parameters (`sslmode=verify-ca|verify-full|allow`, `sslrootcert`, `passfile`) are taken out of
//! the text before it is parsed and handled here and in [`super::tls`].

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use postgres::config::{Host, SslMode as WireSslMode};

use crate::StoreError;

/// Connections per node when `pool_size` is not set.
pub const DEFAULT_POOL_SIZE: u32 = 10;
/// How long a connection attempt may take when neither the URL nor `PGCONNECT_TIMEOUT` says: libpq
/// waits forever, which would hang a start or a request behind an unreachable server.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long data sent to the server may go unacknowledged before the connection counts as lost
/// (`TCP_USER_TIMEOUT`; the URL's `tcp_user_timeout` wins): a server whose network went away
/// (a failover, a cut link) fails the statement, which answers 503, within 2 s instead of after
/// minutes of retransmissions.
const DEFAULT_TCP_USER_TIMEOUT: Duration = Duration::from_secs(2);
/// TCP keepalives on an idle connection (the URL's `keepalives_*` win): a pooled or listening
/// connection to a server that went away is found after 5 s of silence and a probe, not 2 hours.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(5);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(1);
const KEEPALIVE_RETRIES: u32 = 3;
/// The client library's own keepalive idle default, which means "not set".
const LIBRARY_KEEPALIVE_IDLE: Duration = Duration::from_secs(2 * 60 * 60);

/// The `[storage]` keys of the PostgreSQL backend, as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgSettings {
    /// A file holding the connection URL or `key=value` string; `None`: the `PG*` variables only.
    pub url_file: Option<PathBuf>,
    pub pool_size: u32,
    /// CA certificates (PEM) for `verify-ca`/`verify-full`, unless the URL names its own.
    pub sslrootcert: Option<PathBuf>,
    /// What `url_file` reaches: the server, or a pooler that shares server connections.
    pub pooler: Pooler,
    /// A file like `url_file` naming the server itself, past any pooler: for what needs a
    /// session of its own (see [`Pooler::Transaction`]). Unset: `url_file`'s connection.
    pub direct_url_file: Option<PathBuf>,
}

impl Default for PgSettings {
    fn default() -> PgSettings {
        PgSettings {
            url_file: None,
            pool_size: DEFAULT_POOL_SIZE,
            sslrootcert: None,
            pooler: Pooler::None,
            direct_url_file: None,
        }
    }
}

/// What sits between a node and PostgreSQL (`[storage] pooler`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pooler {
    /// The server, or a pooler in session mode (one server connection per client connection for
    /// as long as it lasts): prepared statements and session settings hold.
    #[default]
    None,
    /// A pooler in transaction mode (PgBouncer's `pool_mode = transaction`): each transaction of
    /// a connection may run on another server connection, shared with other clients. So every
    /// statement is sent unnamed with its parameters (nothing prepared is left behind for the
    /// next client, nothing is looked for that another has), no session setting is made (the
    /// role's settings bound statements instead, checked at start), and what needs one
    /// session throughout goes to `direct_url_file`: migrations (a session advisory lock), the
    /// change listener (`LISTEN`) and `migrate-store`.
    Transaction,
}

impl Pooler {
    pub fn parse(text: &str) -> Option<Pooler> {
        match text {
            "none" | "session" => Some(Pooler::None),
            "transaction" => Some(Pooler::Transaction),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Pooler::None => "none",
            Pooler::Transaction => "transaction",
        }
    }
}

/// libpq's `sslmode`, all six of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    /// Treated like `prefer`: libpq would try plain first and TLS second; trying TLS first
    /// reaches the same servers and encrypts whenever it can.
    Allow,
    /// TLS when the server offers it, without verification (libpq's default).
    Prefer,
    /// TLS, encrypted but not verified (as libpq: anyone in the path can still impersonate the server).
    Require,
    /// TLS with a certificate chain to a trusted root, any host name.
    VerifyCa,
    /// TLS with a certificate chain to a trusted root for the host name connected to.
    VerifyFull,
}

impl SslMode {
    pub fn parse(text: &str) -> Option<SslMode> {
        Some(match text {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    /// What tokio-postgres does on the wire; the verification is in the rustls config.
    fn wire(self) -> WireSslMode {
        match self {
            SslMode::Disable => WireSslMode::Disable,
            SslMode::Allow | SslMode::Prefer => WireSslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => WireSslMode::Require,
        }
    }
}

/// A resolved connection: everything needed to connect, and what to tell the operator.
#[derive(Clone)]
pub struct PgTarget {
    pub(crate) config: postgres::Config,
    pub ssl_mode: SslMode,
    /// `None` with a verifying mode: the system's trust store.
    pub sslrootcert: Option<PathBuf>,
    pub pool_size: u32,
    pub pooler: Pooler,
    /// The server itself, when `direct_url_file` names it apart from the pool's connection.
    pub direct: Option<Box<PgTarget>>,
    /// Problems that do not stop the daemon (a url_file others may read), logged at open.
    pub warnings: Vec<String>,
}

impl std::fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgTarget")
            .field("url", &self.describe())
            .field("ssl_mode", &self.ssl_mode)
            .field("pool_size", &self.pool_size)
            .field("pooler", &self.pooler)
            .field("direct", &self.direct)
            .finish()
    }
}

impl PgTarget {
    /// Where what needs a session of its own connects: migrations, the change listener,
    /// `migrate-store`, and the reads of a start.
    pub fn session(&self) -> &PgTarget {
        self.direct.as_deref().unwrap_or(self)
    }

    /// `postgres://user@host:5432/db`: what `status` and the logs show. Never the password.
    pub fn describe(&self) -> String {
        let c = &self.config;
        let port = |i: usize| c.get_ports().get(i).or_else(|| c.get_ports().first()).copied().unwrap_or(5432);
        let mut hosts: Vec<String> = c
            .get_hosts()
            .iter()
            .enumerate()
            .map(|(i, h)| match h {
                Host::Tcp(name) if name.contains(':') => format!("[{name}]:{}", port(i)),
                Host::Tcp(name) => format!("{name}:{}", port(i)),
                Host::Unix(dir) => format!("{}:{}", dir.display().to_string().replace('/', "%2F"), port(i)),
            })
            .collect();
        if hosts.is_empty() {
            hosts = c
                .get_hostaddrs()
                .iter()
                .enumerate()
                .map(|(i, a)| match a {
                    std::net::IpAddr::V6(a) => format!("[{a}]:{}", port(i)),
                    std::net::IpAddr::V4(a) => format!("{a}:{}", port(i)),
                })
                .collect();
        }
        let user = c.get_user().map(|u| format!("{u}@")).unwrap_or_default();
        let db = c.get_dbname().or(c.get_user()).unwrap_or_default();
        format!("postgres://{user}{}/{db}", hosts.join(","))
    }
}

impl PgSettings {
    /// Reads the url_file and the process environment.
    pub fn resolve(&self) -> Result<PgTarget, StoreError> {
        self.resolve_with(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
    }

    /// Reads the url_file (and the direct_url_file), then takes unset parts from `env` (a `PG*`
    /// variable by name).
    pub fn resolve_with(&self, env: impl Fn(&str) -> Option<String>) -> Result<PgTarget, StoreError> {
        let mut target = self.resolve_one(&env)?;
        if self.pooler == Pooler::Transaction && self.direct_url_file.is_none() {
            return Err(StoreError::Open {
                path: self.url_file.clone().unwrap_or_else(|| PathBuf::from("the PG* environment")),
                message: "pooler = \"transaction\" needs direct_url_file, a connection to the server itself \
                          for migrations and the change listener"
                    .into(),
            });
        }
        if let Some(direct) = &self.direct_url_file {
            let only = PgSettings {
                url_file: Some(direct.clone()),
                direct_url_file: None,
                pooler: Pooler::None,
                ..self.clone()
            };
            let mut direct = only.resolve_one(&env)?;
            target.warnings.append(&mut direct.warnings);
            target.direct = Some(Box::new(direct));
        }
        Ok(target)
    }

    fn resolve_one(&self, env: &impl Fn(&str) -> Option<String>) -> Result<PgTarget, StoreError> {
        let what = self.url_file.clone().unwrap_or_else(|| PathBuf::from("the PG* environment"));
        let fail = |message: String| StoreError::Open { path: what.clone(), message };
        let mut warnings = vec![];
        let text = match &self.url_file {
            Some(path) => read_url_file(path, &mut warnings).map_err(fail)?,
            None => String::new(),
        };
        let split = split_libpq_params(text.trim()).map_err(fail)?;
        let mut config = postgres::Config::from_str(&split.rest).map_err(|e| fail(with_causes(&e)))?;
        // An `@` left unencoded in the password splits it: the rest would be taken for the host,
        // and every message naming the database would quote part of the password.
        if config.get_hosts().iter().any(|h| matches!(h, Host::Tcp(name) if name.contains('@'))) {
            return Err(fail(
                "the URL has an @ in its user name or password: write it as %40 (the URL is not shown, as it \
                 holds the password)"
                    .into(),
            ));
        }

        if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
            if let Some(hosts) = env("PGHOST") {
                hosts.split(',').for_each(|h| {
                    config.host(h);
                });
            }
            if let Some(addrs) = env("PGHOSTADDR") {
                for a in addrs.split(',') {
                    let ip = a.parse().map_err(|_| fail(format!("PGHOSTADDR {a:?} is not an IP address")))?;
                    config.hostaddr(ip);
                }
            }
            if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
                config.host("localhost");
            }
        }
        if config.get_ports().is_empty()
            && let Some(ports) = env("PGPORT")
        {
            for p in ports.split(',') {
                config.port(p.parse().map_err(|_| fail(format!("PGPORT {p:?} is not a port number")))?);
            }
        }
        if config.get_user().is_none()
            && let Some(user) = env("PGUSER")
        {
            config.user(&user);
        }
        if config.get_dbname().is_none()
            && let Some(db) = env("PGDATABASE")
        {
            config.dbname(&db);
        }
        if config.get_application_name().is_none() {
            config.application_name(env("PGAPPNAME").as_deref().unwrap_or("latchkeyd"));
        }
        if config.get_connect_timeout().is_none() {
            let timeout = match env("PGCONNECT_TIMEOUT") {
                Some(t) => match t.trim().parse::<i64>() {
                    // As libpq: less than 2 s counts as 2 s. Zero or less (libpq: wait forever)
                    // keeps our bound instead.
                    Ok(secs) if secs > 0 => Duration::from_secs(secs.max(2).unsigned_abs()),
                    Ok(_) => DEFAULT_CONNECT_TIMEOUT,
                    Err(_) => return Err(fail(format!("PGCONNECT_TIMEOUT {t:?} is not a number of seconds"))),
                },
                None => DEFAULT_CONNECT_TIMEOUT,
            };
            config.connect_timeout(timeout);
        }
        if config.get_tcp_user_timeout().is_none() {
            config.tcp_user_timeout(DEFAULT_TCP_USER_TIMEOUT);
        }
        if config.get_keepalives_idle() == LIBRARY_KEEPALIVE_IDLE {
            config.keepalives_idle(KEEPALIVE_IDLE);
        }
        if config.get_keepalives_interval().is_none() {
            config.keepalives_interval(KEEPALIVE_INTERVAL);
        }
        if config.get_keepalives_retries().is_none() {
            config.keepalives_retries(KEEPALIVE_RETRIES);
        }
        if config.get_password().is_none() {
            if let Some(password) = env("PGPASSWORD") {
                config.password(password);
            } else if let Some(file) = split.passfile.or_else(|| env("PGPASSFILE"))
                && let Some(password) = passfile_lookup(Path::new(&file), &config)
            {
                config.password(password);
            }
        }

        let mode_text = split.sslmode.or_else(|| env("PGSSLMODE")).unwrap_or_else(|| "prefer".to_owned());
        let ssl_mode = SslMode::parse(&mode_text).ok_or_else(|| {
            fail(format!("sslmode {mode_text:?}: use disable, allow, prefer, require, verify-ca or verify-full"))
        })?;
        // PostgreSQL has no TLS on Unix sockets; libpq ignores sslmode there, and so do we.
        let only_sockets =
            config.get_hostaddrs().is_empty() && config.get_hosts().iter().all(|h| matches!(h, Host::Unix(_)));
        config.ssl_mode(if only_sockets { WireSslMode::Disable } else { ssl_mode.wire() });
        let sslrootcert = split
            .sslrootcert
            .map(PathBuf::from)
            .or(self.sslrootcert.clone())
            .or(env("PGSSLROOTCERT").map(PathBuf::from));
        Ok(PgTarget {
            config,
            ssl_mode,
            sslrootcert,
            pool_size: self.pool_size,
            pooler: self.pooler,
            direct: None,
            warnings,
        })
    }
}

/// An error and its causes: tokio-postgres says "invalid connection string" and names the
/// option at fault only in the cause.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    text
}

/// The url_file's text. It may hold a password: a mode wider than 0640 gets a warning.
fn read_url_file(path: &Path, warnings: &mut Vec<String>) -> Result<String, String> {
    use std::os::unix::fs::PermissionsExt;
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read the url_file: {e}"))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let mode = meta.permissions().mode() & 0o777;
        if mode & !0o640 != 0 {
            warnings.push(format!(
                "storage.url_file {} has mode {mode:04o}; it may hold a password: make it 0600 or 0640",
                path.display()
            ));
        }
    }
    // Comment lines are allowed, so the file can say where the password comes from.
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    Ok(lines.join(" "))
}

/// A connection string with the libpq-only parameters taken out.
#[derive(Debug, Default, PartialEq)]
struct Split {
    rest: String,
    sslmode: Option<String>,
    sslrootcert: Option<String>,
    passfile: Option<String>,
}

impl Split {
    /// Takes `key` if it is one of ours; false when it stays in the text for tokio-postgres.
    fn take(&mut self, key: &str, value: String) -> bool {
        let slot = match key {
            "sslmode" => &mut self.sslmode,
            "sslrootcert" => &mut self.sslrootcert,
            "passfile" => &mut self.passfile,
            _ => return false,
        };
        *slot = Some(value);
        true
    }
}

fn split_libpq_params(text: &str) -> Result<Split, String> {
    let mut split = Split::default();
    if text.starts_with("postgres://") || text.starts_with("postgresql://") {
        let (base, query) = text.split_once('?').unwrap_or((text, ""));
        let mut kept = vec![];
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let k = percent_decode(k).map_err(|e| format!("a parameter name of the URL: {e}"))?;
            // Only the values this code takes out are decoded here: an error never quotes a
            // value, which may be the password.
            if matches!(k.as_str(), "sslmode" | "sslrootcert" | "passfile") {
                let v = percent_decode(v).map_err(|e| format!("the URL's {k}: {e}"))?;
                split.take(&k, v);
            } else {
                kept.push(pair);
            }
        }
        split.rest = if kept.is_empty() { base.to_owned() } else { format!("{base}?{}", kept.join("&")) };
    } else {
        let mut kept = vec![];
        for (k, v) in key_values(text)? {
            if !split.take(&k, v.clone()) {
                kept.push(format!("{k}='{}'", v.replace('\\', "\\\\").replace('\'', "\\'")));
            }
        }
        split.rest = kept.join(" ");
    }
    Ok(split)
}

fn percent_decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
            let byte = hex.and_then(|h| u8::from_str_radix(h, 16).ok()).ok_or_else(|| "a bad %-escape".to_owned())?;
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "not UTF-8 once decoded".to_owned())
}

/// libpq's `key=value key2='quoted value'` form; `\` escapes the next character.
fn key_values(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = vec![];
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return Ok(pairs);
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            // Not quoted: after an unquoted password with a space, this word is part of it.
            return Err(format!(
                "word {} has no value: write key=value pairs (quote values with spaces: password='a b') or a postgres:// URL",
                pairs.len() + 1
            ));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let quoted = chars.next_if_eq(&'\'').is_some();
        let mut value = String::new();
        loop {
            match chars.next() {
                None if quoted => return Err(format!("the value of {key:?} lacks its closing quote")),
                None => break,
                Some('\'') if quoted => break,
                Some(c) if c.is_whitespace() && !quoted => break,
                Some('\\') => value.extend(chars.next()),
                Some(c) => value.push(c),
            }
        }
        pairs.push((key, value));
    }
}

/// The password of the first matching `host:port:database:user:password` line of a libpq
/// password file (`*` matches anything; `\:` and `\\` escape).
fn passfile_lookup(path: &Path, config: &postgres::Config) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        // libpq matches a socket connection with "localhost".
        Some(Host::Unix(_)) | None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432).to_string();
    let user = config.get_user().unwrap_or_default();
    let db = config.get_dbname().unwrap_or(user);
    let wanted = [host.as_str(), port.as_str(), db, user];
    text.lines().filter(|l| !l.trim_start().starts_with('#')).find_map(|line| {
        let fields = passfile_fields(line);
        let [h, p, d, u, password] = fields.as_slice() else { return None };
        [h, p, d, u].iter().zip(wanted).all(|(f, w)| f.as_str() == "*" || f.as_str() == w).then(|| password.clone())
    })
}

fn passfile_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut().into_iter().for_each(|f| f.extend(chars.next())),
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().into_iter().for_each(|f| f.push(c)),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
    }

    fn file(text: &str, mode: u32) -> (PathBuf, PgSettings) {
        use std::os::unix::fs::PermissionsExt;
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let path =
            std::env::temp_dir().join(format!("lk-pgurl-{}-{}", std::process::id(), N.fetch_add(1, Ordering::SeqCst)));
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        (path.clone(), PgSettings { url_file: Some(path), ..PgSettings::default() })
    }

    #[test]
    fn url_file_wins_and_env_fills_the_rest() {
        let (path, s) = file("postgres://app:secret@db.internal:6543/latchkey?sslmode=verify-full\n", 0o600);
        let vars = [("PGHOST", "other"), ("PGUSER", "u"), ("PGPASSWORD", "p"), ("PGSSLROOTCERT", "/etc/ca.pem")];
        let t = s.resolve_with(env(&vars)).unwrap();
        assert_eq!(t.describe(), "postgres://app@db.internal:6543/latchkey");
        assert_eq!(t.ssl_mode, SslMode::VerifyFull);
        assert_eq!(t.config.get_ssl_mode(), WireSslMode::Require);
        assert_eq!(t.config.get_password(), Some(&b"secret"[..]));
        assert_eq!(t.sslrootcert, Some(PathBuf::from("/etc/ca.pem")));
        assert_eq!(t.config.get_application_name(), Some("latchkeyd"));
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
        assert!(!format!("{t:?}").contains("secret"));
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn an_unencoded_at_sign_in_the_password_is_refused_without_quoting_it() {
        let (path, s) = file("postgres://app:S3c@retXYZ@localhost:5432/lk\n", 0o600);
        let e = s.resolve_with(env(&[])).unwrap_err().to_string();
        assert!(e.contains("%40") && !e.contains("retXYZ") && !e.contains("S3c"), "{e}");
        let (encoded, s) = file("postgres://app:S3c%40retXYZ@localhost:5432/lk\n", 0o600);
        assert_eq!(s.resolve_with(env(&[])).unwrap().describe(), "postgres://app@localhost:5432/lk");
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(encoded);
    }

    #[test]
    fn key_value_file_with_only_a_database() {
        let (path, s) = file("# the rest is in PG*\ndbname = 'lk test' sslmode=require sslrootcert=/ca.pem\n", 0o640);
        let vars = [
            ("PGHOST", "localhost"),
            ("PGPORT", "5433"),
            ("PGUSER", "postgres"),
            ("PGPASSWORD", "pw"),
            ("PGAPPNAME", "node-a"),
            ("PGCONNECT_TIMEOUT", "3"),
        ];
        let t = s.resolve_with(env(&vars)).unwrap();
        assert_eq!(t.describe(), "postgres://postgres@localhost:5433/lk test");
        assert_eq!(t.ssl_mode, SslMode::Require);
        assert_eq!(t.sslrootcert, Some(PathBuf::from("/ca.pem")));
        assert_eq!(t.config.get_password(), Some(&b"pw"[..]));
        assert_eq!(t.config.get_application_name(), Some("node-a"));
        assert_eq!(t.config.get_connect_timeout(), Some(&Duration::from_secs(3)));
        assert!(t.warnings.is_empty());
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn environment_only_and_defaults() {
        let s = PgSettings { sslrootcert: Some("/etc/latchkey/ca.pem".into()), ..PgSettings::default() };
        let t = s.resolve_with(env(&[("PGSSLMODE", "verify-ca"), ("PGDATABASE", "lk")])).unwrap();
        assert_eq!(t.describe(), "postgres://localhost:5432/lk");
        assert_eq!(t.ssl_mode, SslMode::VerifyCa);
        assert_eq!(t.sslrootcert, Some(PathBuf::from("/etc/latchkey/ca.pem")));
        assert_eq!(t.pool_size, DEFAULT_POOL_SIZE);
        assert_eq!(t.config.get_connect_timeout(), Some(&DEFAULT_CONNECT_TIMEOUT));
        assert_eq!(t.config.get_tcp_user_timeout(), Some(&DEFAULT_TCP_USER_TIMEOUT));
        assert!(t.config.get_keepalives());
        assert_eq!(t.config.get_keepalives_idle(), KEEPALIVE_IDLE);
        assert_eq!(t.config.get_keepalives_interval(), Some(KEEPALIVE_INTERVAL));
        assert_eq!(t.config.get_keepalives_retries(), Some(KEEPALIVE_RETRIES));

        let t = PgSettings::default().resolve_with(env(&[("PGCONNECT_TIMEOUT", "-1")])).unwrap();
        assert_eq!(t.config.get_connect_timeout(), Some(&DEFAULT_CONNECT_TIMEOUT));
        let t = PgSettings::default().resolve_with(env(&[("PGCONNECT_TIMEOUT", "1")])).unwrap();
        assert_eq!(t.config.get_connect_timeout(), Some(&Duration::from_secs(2)));

        let t = PgSettings::default().resolve_with(env(&[])).unwrap();
        assert_eq!(t.ssl_mode, SslMode::Prefer, "libpq's default");
        assert_eq!(t.config.get_ssl_mode(), WireSslMode::Prefer);

        let t = PgSettings::default().resolve_with(env(&[("PGHOST", "/run/postgresql"), ("PGSSLMODE", "require")]));
        let t = t.unwrap();
        assert_eq!(t.config.get_ssl_mode(), WireSslMode::Disable, "no TLS on a Unix socket");
        assert_eq!(t.describe(), "postgres://%2Frun%2Fpostgresql:5432/");
    }

    #[test]
    fn bad_values_are_refused_with_their_name() {
        let err = PgSettings::default().resolve_with(env(&[("PGSSLMODE", "verify")])).unwrap_err().to_string();
        assert!(err.contains("sslmode \"verify\""), "{err}");
        let err = PgSettings::default().resolve_with(env(&[("PGPORT", "x")])).unwrap_err().to_string();
        assert!(err.contains("PGPORT"), "{err}");
        let (path, s) = file("postgres://h/db?nonsense=1", 0o600);
        let err = s.resolve_with(env(&[])).unwrap_err().to_string();
        assert!(err.contains("nonsense"), "{err}");
        let _ = std::fs::remove_file(path);
        let missing = PgSettings { url_file: Some("/nonexistent/pg.url".into()), ..PgSettings::default() };
        let err = missing.resolve_with(env(&[])).unwrap_err().to_string();
        assert!(err.contains("/nonexistent/pg.url") && err.contains("cannot read"), "{err}");
    }

    #[test]
    fn a_readable_url_file_is_warned_about() {
        let (path, s) = file("dbname=x", 0o644);
        let t = s.resolve_with(env(&[])).unwrap();
        assert_eq!(t.warnings.len(), 1);
        assert!(t.warnings[0].contains("0644"), "{:?}", t.warnings);
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn libpq_parameters_are_split_out() {
        let s = split_libpq_params("postgresql://u@h/db?sslmode=verify-full&connect_timeout=5&sslrootcert=%2Fca.pem")
            .unwrap();
        assert_eq!(s.rest, "postgresql://u@h/db?connect_timeout=5");
        assert_eq!(s.sslmode.as_deref(), Some("verify-full"));
        assert_eq!(s.sslrootcert.as_deref(), Some("/ca.pem"));
        let s = split_libpq_params(r"host=h password='it\'s' passfile=/p sslmode=disable").unwrap();
        assert_eq!(s.rest, r"host='h' password='it\'s'");
        assert_eq!(s.passfile.as_deref(), Some("/p"));
        assert!(split_libpq_params("host").is_err());
        assert!(split_libpq_params("host='h").is_err());
        let c = postgres::Config::from_str(&split_libpq_params(r"password='a b\\c'").unwrap().rest).unwrap();
        assert_eq!(c.get_password(), Some(&br"a b\c"[..]));
    }

    #[test]
    fn passfile_matches_like_libpq() {
        let (path, _) = file("# comment\nother:*:*:*:no\ndb.internal:5432:*:app:pa\\:ss\n*:*:*:*:fallback\n", 0o600);
        let mut c = postgres::Config::new();
        c.host("db.internal").user("app");
        assert_eq!(passfile_lookup(&path, &c).as_deref(), Some("pa:ss"));
        c.user("else");
        assert_eq!(passfile_lookup(&path, &c).as_deref(), Some("fallback"));
        let s = PgSettings::default();
        let t = s
            .resolve_with(env(&[("PGHOST", "db.internal"), ("PGUSER", "app"), ("PGPASSFILE", path.to_str().unwrap())]))
            .unwrap();
        assert_eq!(t.config.get_password(), Some(&b"pa:ss"[..]));
        let _ = std::fs::remove_file(path);
    }
}
