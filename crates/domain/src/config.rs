//! Configuration: a TOML file (every key optional but `server.public_url`), `LATCHKEY_*`
//! environment overrides, then command-line flags, validated into a typed [`Config`].
//!
//! Precedence: embedded defaults < file < environment < flags. The file structs reject unknown
//! keys, and the TOML parser reports them with their line, so a typo never silently falls back to
//! a default.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use url::Url;

use crate::store::pg::{PgSettings, Pooler};

/// Public connections served at once by default: enough for a busy single node behind a proxy
/// (which pools connections), small enough that a connection flood cannot grow memory without
/// bound (each open connection holds buffers and a task).
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// Where `/metrics` is served unless `server.metrics_listen` says otherwise: the loopback
/// interface, where a local Prometheus agent (or an SSH tunnel) scrapes it.
pub const DEFAULT_METRICS_LISTEN: &str = "127.0.0.1:9464";
/// The longest `server.drain`: a stop should not take minutes.
const MAX_DRAIN: Duration = Duration::from_secs(60);

/// Where the daemon looks for its file when `--config` and `LATCHKEY_CONFIG` are absent.
pub const DEFAULT_CONFIG_PATH: &str = "/etc/latchkey/config.toml";
/// Data directory of `--dev`, relative to the working directory.
pub const DEV_DATA_DIR: &str = "latchkey-data";
/// Listen address of `--dev`.
pub const DEV_LISTEN: &str = "127.0.0.1:8080";

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source} (run `latchkeyd --dev` to start with embedded defaults)")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("invalid config file {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("invalid environment override {var}: {message}")]
    Env { var: String, message: String },
    #[error("invalid setting {key}: {message}")]
    Invalid { key: &'static str, message: String },
    #[error("{} problems in the configuration:{}", .0.len(), .0.iter().map(|e| format!("\n  {e}")).collect::<String>())]
    Many(Vec<ConfigError>),
}

fn invalid(key: &'static str, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid { key, message: message.into() }
}

impl ConfigError {
    /// One problem as itself; several as one error listing each on a line of its own.
    fn many(mut problems: Vec<ConfigError>) -> ConfigError {
        match problems.len() {
            1 => problems.remove(0),
            _ => ConfigError::Many(problems),
        }
    }
}

/// Every invalid value of a file, collected rather than stopping at the first (`check-config`
/// reports them all in one run); each failed value is replaced by its default meanwhile.
#[derive(Default)]
struct Problems(Vec<ConfigError>);

impl Problems {
    fn push(&mut self, e: ConfigError) {
        self.0.push(e);
    }

    fn ok<T>(&mut self, r: Result<T, ConfigError>) -> Option<T> {
        r.map_err(|e| self.push(e)).ok()
    }

    fn take<T>(&mut self, r: Result<T, ConfigError>, fallback: T) -> T {
        self.ok(r).unwrap_or(fallback)
    }

    fn duration(&mut self, key: &'static str, value: &Option<String>, default: &str) -> Duration {
        let fallback = humantime::parse_duration(default).unwrap_or(Duration::from_secs(60));
        self.take(duration(key, value, default), fallback)
    }

    /// [`Problems::duration`] where `"0s"` means "none".
    fn duration_or_none(&mut self, key: &'static str, value: &Option<String>, default: &str) -> Duration {
        match value.as_deref().map(humantime::parse_duration) {
            Some(Ok(d)) if d.is_zero() => d,
            _ => self.duration(key, value, default),
        }
    }

    fn size(&mut self, key: &'static str, value: &Option<String>, default: &str) -> u64 {
        self.take(size(key, value, default), parse_size(default).unwrap_or(64 * 1024))
    }
}

// ---------------------------------------------------------------------------------------------
// The file, as written. Strings for durations and sizes; validated below.

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    #[serde(default)]
    pub server: ServerSection,
    #[serde(default)]
    pub storage: StorageSection,
    #[serde(default)]
    pub admin: AdminSection,
    #[serde(default)]
    pub keys: KeysSection,
    #[serde(default)]
    pub tokens: TokensSection,
    #[serde(default)]
    pub webauthn: WebauthnSection,
    #[serde(default)]
    pub limits: LimitsSection,
    #[serde(default)]
    pub audit: AuditSection,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smtp: Option<SmtpSection>,
    #[serde(default)]
    pub signing: SigningSection,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditSection {
    /// How long audit events are kept.
    pub retention: Option<String>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSection {
    pub listen: Option<String>,
    pub public_url: Option<String>,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    pub trusted_proxies: Option<Vec<String>>,
    pub log_format: Option<String>,
    /// The log filter: a level (`info`, `debug`) or `tracing` directives; `RUST_LOG` wins.
    pub log_level: Option<String>,
    /// Connections served at once on the public listener; more are closed at accept.
    pub max_connections: Option<usize>,
    /// Where `/metrics` is served (default `127.0.0.1:9464`); `""` turns it off. Never on the
    /// public listener: the metrics name every tenant.
    pub metrics_listen: Option<String>,
    /// `Strict-Transport-Security` max-age when the daemon serves TLS itself (default 1 year).
    pub hsts_max_age: Option<String>,
    /// How long a stopping daemon keeps serving with `/readyz` answering 503, so that a load
    /// balancer takes it out first (default 5 s on PostgreSQL, 0 on SQLite and under `--dev`).
    pub drain: Option<String>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorageSection {
    /// The SQLite database file (backend `sqlite`).
    pub path: Option<PathBuf>,
    /// `"sqlite"` (the default) or `"postgres"`.
    pub backend: Option<String>,
    /// PostgreSQL: a file holding a libpq connection URL or `key=value` string (it may hold a
    /// password, so it is a file, never a flag); unset parts come from the `PG*` environment.
    pub url_file: Option<PathBuf>,
    /// PostgreSQL: connections per node (default 10).
    pub pool_size: Option<u32>,
    /// PostgreSQL: CA certificates (PEM) for `sslmode=verify-ca|verify-full`.
    pub sslrootcert: Option<PathBuf>,
    /// PostgreSQL: what `url_file` reaches: `"none"` (the server, or a pooler in session mode;
    /// the default) or `"transaction"` (a pooler in transaction mode, such as PgBouncer's).
    pub pooler: Option<String>,
    /// PostgreSQL: a file like `url_file` that reaches the server itself, past the pooler, for
    /// migrations and the change listener. Needed with `pooler = "transaction"`.
    pub direct_url_file: Option<PathBuf>,
}

/// `socket_mode` may be written as a string of octal digits (`"0600"`) or a TOML octal integer
/// (`0o600`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Mode {
    Int(u32),
    Text(String),
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdminSection {
    pub socket: Option<PathBuf>,
    pub socket_mode: Option<Mode>,
    pub allowed_uids: Option<Vec<u32>>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeysSection {
    pub rsa_bits: Option<u32>,
    pub encryption_key_file: Option<PathBuf>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokensSection {
    pub access_token_ttl: Option<String>,
    pub id_token_ttl: Option<String>,
    pub refresh_token_ttl: Option<String>,
    pub offline_ttl: Option<String>,
    pub session_ttl: Option<String>,
    pub authorization_code_ttl: Option<String>,
    pub invite_ttl: Option<String>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebauthnSection {
    pub challenge_ttl: Option<String>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsSection {
    pub json_body_max: Option<String>,
    pub invite_file_max: Option<String>,
    pub invite_rows_max: Option<u64>,
    /// Ceremony requests (register/auth start and finish) per client IP per minute; 0 = off.
    pub ceremony_rate_per_minute: Option<u32>,
    /// Token endpoint requests per client IP per minute; 0 = off.
    pub token_rate_per_minute: Option<u32>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SigningSection {
    /// What makes RS256 signatures: `"aws-lc"` (the default) or `"ifma-pairs"`.
    pub rsa_engine: Option<String>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmtpSection {
    pub host: Option<String>,
    pub port: Option<u16>,
    pub username: Option<String>,
    pub password_file: Option<PathBuf>,
    pub from: Option<String>,
    pub starttls: Option<bool>,
}

// ---------------------------------------------------------------------------------------------
// The validated configuration.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Clone)]
pub struct Tls {
    pub cert: PathBuf,
    pub key: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenTtls {
    pub access_token: Duration,
    pub id_token: Duration,
    pub refresh_token: Duration,
    /// Lifetime of a refresh token family granted `offline_access`, from its grant.
    pub offline: Duration,
    pub session: Duration,
    pub authorization_code: Duration,
    pub invite: Duration,
}

#[derive(Debug, Clone)]
pub struct Limits {
    pub json_body_max: u64,
    pub invite_file_max: u64,
    pub invite_rows_max: u64,
    pub ceremony_rate_per_minute: u32,
    pub token_rate_per_minute: u32,
}

impl Limits {
    /// How much of a body answered early (401, 413 …) is read and discarded so that the client
    /// sees the answer: the largest body any endpoint accepts, with room for multipart framing.
    pub fn drain_max(&self) -> u64 {
        self.json_body_max.max(self.invite_file_max) + 64 * 1024
    }
}

#[derive(Debug, Clone)]
pub struct Smtp {
    pub host: String,
    pub port: u16,
    pub username: Option<String>,
    pub password_file: Option<PathBuf>,
    pub from: String,
    pub starttls: bool,
}

/// What makes the RS256 signatures of tokens (`[signing] rsa_engine`, SPEC §12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RsaEngine {
    /// aws-lc, one signature at a time: the default.
    #[default]
    AwsLc,
    /// The AVX-512 IFMA pair signer (`oidc::rsa_ifma`), for RSA-2048 keys on CPUs that have the
    /// instructions; aws-lc signs what it cannot.
    IfmaPairs,
}

impl RsaEngine {
    pub fn as_str(self) -> &'static str {
        match self {
            RsaEngine::AwsLc => "aws-lc",
            RsaEngine::IfmaPairs => "ifma-pairs",
        }
    }

    fn parse(text: &str) -> Option<RsaEngine> {
        match text {
            "aws-lc" => Some(RsaEngine::AwsLc),
            "ifma-pairs" => Some(RsaEngine::IfmaPairs),
            _ => None,
        }
    }
}

/// Where the daemon keeps its state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageBackend {
    /// One SQLite file (`storage_path`): the embedded default, and always under `--dev`.
    Sqlite,
    /// A PostgreSQL database that several nodes may share (`Config::postgres`).
    Postgres,
}

impl StorageBackend {
    pub fn as_str(self) -> &'static str {
        match self {
            StorageBackend::Sqlite => "sqlite",
            StorageBackend::Postgres => "postgres",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    pub dev: bool,
    pub listen: SocketAddr,
    /// Without a trailing slash.
    pub public_url: Url,
    pub tls: Option<Tls>,
    pub trusted_proxies: Vec<crate::netrange::IpRange>,
    pub log_format: LogFormat,
    /// The effective log filter (`RUST_LOG` when set, else `server.log_level`, else `info`).
    pub log_filter: String,
    pub max_connections: usize,
    /// The metrics listener's address; `None`: no metrics.
    pub metrics_listen: Option<SocketAddr>,
    /// Sent as `Strict-Transport-Security` when TLS is served here.
    pub hsts_max_age: Duration,
    /// How long SIGTERM or SIGINT keeps the node serving, `/readyz` answering 503, before it stops
    /// accepting connections.
    pub drain: Duration,
    pub storage_backend: StorageBackend,
    /// The SQLite database (backend `sqlite`; computed, unused, with `postgres`).
    pub storage_path: PathBuf,
    /// The PostgreSQL connection settings: `Some` exactly when the backend is `postgres`.
    pub postgres: Option<PgSettings>,
    pub admin_socket: PathBuf,
    pub socket_mode: u32,
    /// `None`: root and the daemon's own uid.
    pub allowed_uids: Option<Vec<u32>>,
    pub rsa_bits: u32,
    pub kek_file: PathBuf,
    /// The engine asked for; what signs is [`crate::oidc::signer::effective`] of it (the CPU may
    /// lack the instructions).
    pub rsa_engine: RsaEngine,
    pub tokens: TokenTtls,
    pub challenge_ttl: Duration,
    pub limits: Limits,
    pub audit_retention: Duration,
    pub smtp: Option<Smtp>,
    /// Problems that do not stop the daemon (an unknown `LATCHKEY_*` variable), logged at start.
    pub warnings: Vec<String>,
}

/// What the command line adds on top of file and environment.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub config: Option<PathBuf>,
    pub dev: bool,
    pub listen: Option<String>,
    pub data_dir: Option<PathBuf>,
}

/// `d` in days, hours, minutes, seconds and milliseconds, largest first, zero parts left out:
/// `90d`, `1h30m`, `0s`; under two minutes in seconds (`60s`, as the defaults are written).
/// What `duration` reads back.
pub fn compact_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) && ms < 120_000 {
        return format!("{}s", ms / 1000);
    }
    let parts = [("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1)];
    let mut left = ms;
    let mut out = String::new();
    for (unit, size) in parts {
        let n = left / size;
        left %= size;
        if n > 0 {
            out.push_str(&format!("{n}{unit}"));
        }
    }
    if out.is_empty() { "0s".to_owned() } else { out }
}

impl Config {
    /// The database this configuration names.
    pub fn store_location(&self) -> crate::store::Location {
        match (&self.storage_backend, &self.postgres) {
            (StorageBackend::Postgres, Some(settings)) => crate::store::Location::Postgres(Box::new(settings.clone())),
            _ => crate::store::Location::Sqlite(self.storage_path.clone()),
        }
    }

    /// Where uploads are spilled while they are checked (bulk imports): beside the SQLite
    /// database, whose disk holds the data anyway; on PostgreSQL, where a node keeps no files,
    /// the system's temporary directory (`TMPDIR`).
    pub fn spill_dir(&self) -> std::path::PathBuf {
        match self.storage_backend {
            StorageBackend::Postgres => std::env::temp_dir(),
            StorageBackend::Sqlite => {
                self.storage_path.parent().map(std::path::Path::to_path_buf).unwrap_or_else(std::env::temp_dir)
            }
        }
    }

    /// Loads file (unless `--dev` without `--config`), applies `env` overrides and flags.
    pub fn load(flags: &Overrides, env: impl IntoIterator<Item = (String, String)>) -> Result<Config, ConfigError> {
        let (config, problems) = Config::load_checked(flags, env)?;
        match config {
            Some(config) if problems.is_empty() => Ok(config),
            _ => Err(ConfigError::many(problems)),
        }
    }

    /// [`Config::load`] for `check-config`: a file that cannot be read or parsed, or a bad
    /// environment override, is the error; past that, every invalid value is in the list, and
    /// the configuration is built with defaults in their place (none when the public URL itself
    /// is unusable), so that the files it names can be checked in the same run.
    pub fn load_checked(
        flags: &Overrides,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<(Option<Config>, Vec<ConfigError>), ConfigError> {
        let explicit = flags.config.clone();
        let file = match (&explicit, flags.dev) {
            (None, true) => FileConfig::default(),
            (path, _) => {
                let path = path.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_CONFIG_PATH));
                FileConfig::read(&path)?
            }
        };
        let env: Vec<(String, String)> = env.into_iter().collect();
        let mut warnings = vec![];
        let mut file = apply_env(file, env.iter().cloned(), &mut warnings)?;
        if let Some((_, filter)) = env.iter().find(|(k, v)| k == "RUST_LOG" && !v.trim().is_empty()) {
            file.server.log_level = Some(filter.clone());
        }
        let (mut config, problems) = Config::checked(file, flags);
        if let Some(c) = &mut config {
            c.warnings = warnings;
        }
        Ok((config, problems))
    }

    /// Validates a parsed file, with the command-line flags on top.
    pub fn from_file(file: FileConfig, flags: &Overrides) -> Result<Config, ConfigError> {
        match Config::checked(file, flags) {
            (Some(config), problems) if problems.is_empty() => Ok(config),
            (_, problems) => Err(ConfigError::many(problems)),
        }
    }

    /// Every invalid value of a parsed file (not only the first), and the configuration with
    /// defaults in their place; `None` when the public URL is unusable.
    fn checked(file: FileConfig, flags: &Overrides) -> (Option<Config>, Vec<ConfigError>) {
        let mut p = Problems::default();
        let dev = flags.dev;
        let data_dir = flags
            .data_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from(if dev { DEV_DATA_DIR } else { "/var/lib/latchkey" }));

        let listen_text = flags
            .listen
            .clone()
            .or(file.server.listen.clone())
            .unwrap_or_else(|| if dev { DEV_LISTEN.to_owned() } else { "0.0.0.0:8080".to_owned() });
        let listen = p.take(resolve_listen(&listen_text), SocketAddr::from(([127, 0, 0, 1], 8080)));

        let public_text = match (&file.server.public_url, dev) {
            (Some(url), _) => Some(url.clone()),
            (None, true) => Some(format!("http://localhost:{}", listen.port())),
            (None, false) => {
                p.push(invalid(
                    "server.public_url",
                    "is required: the public URL clients reach this daemon at, e.g. https://id.example.com",
                ));
                None
            }
        };
        let public_url = public_text.and_then(|t| p.ok(parse_public_url(&t)));

        let tls = match (file.server.tls_cert, file.server.tls_key) {
            (Some(cert), Some(key)) => Some(Tls { cert, key }),
            (None, None) => None,
            _ => {
                p.push(invalid("server.tls_cert", "tls_cert and tls_key go together"));
                None
            }
        };
        let trusted_proxies = p.take(
            file.server
                .trusted_proxies
                .unwrap_or_default()
                .iter()
                .map(|x| x.parse().map_err(|e: String| invalid("server.trusted_proxies", e)))
                .collect::<Result<Vec<_>, _>>(),
            vec![],
        );
        let mut log_filter = file.server.log_level.clone().unwrap_or_else(|| "info".to_owned());
        if let Err(e) = tracing_subscriber::EnvFilter::try_new(&log_filter) {
            p.push(invalid("server.log_level", format!("{log_filter:?}: {e}; use error, warn, info, debug or trace")));
            log_filter = "info".to_owned();
        }
        let log_format = match file.server.log_format.as_deref().unwrap_or("text") {
            "text" => LogFormat::Text,
            "json" => LogFormat::Json,
            other => {
                p.push(invalid("server.log_format", format!("{other:?}: use \"text\" or \"json\"")));
                LogFormat::Text
            }
        };

        let max_connections = match file.server.max_connections.unwrap_or(DEFAULT_MAX_CONNECTIONS) {
            0 => {
                p.push(invalid("server.max_connections", "must be at least 1"));
                DEFAULT_MAX_CONNECTIONS
            }
            n => n,
        };

        let metrics_listen = match file.server.metrics_listen.as_deref().unwrap_or(DEFAULT_METRICS_LISTEN).trim() {
            "" => None,
            text => p.ok(resolve_listen(text).map_err(|e| match e {
                ConfigError::Invalid { message, .. } => invalid("server.metrics_listen", message),
                other => other,
            })),
        };
        let hsts_max_age = p.duration("server.hsts_max_age", &file.server.hsts_max_age, "365d");

        let (storage_backend, postgres) = p.take(storage(&file.storage, dev), (StorageBackend::Sqlite, None));
        // Only nodes that share a database have another node to take their requests meanwhile.
        let drain = match (storage_backend, &file.server.drain) {
            (StorageBackend::Postgres, value) => p.duration_or_none("server.drain", value, "5s"),
            (StorageBackend::Sqlite, None) => Duration::ZERO,
            (StorageBackend::Sqlite, value) => p.duration_or_none("server.drain", value, "0s"),
        };
        if drain > MAX_DRAIN {
            p.push(invalid("server.drain", "at most 60s: a stop should not take minutes"));
        }
        let storage_path = file.storage.path.unwrap_or_else(|| data_dir.join("latchkey.db"));
        let admin_socket = file.admin.socket.unwrap_or_else(|| {
            if dev || flags.data_dir.is_some() {
                data_dir.join("admin.sock")
            } else {
                PathBuf::from("/run/latchkey/admin.sock")
            }
        });
        let socket_mode = match file.admin.socket_mode {
            None => Ok(0o600),
            Some(Mode::Int(m)) => Ok(m),
            Some(Mode::Text(t)) => u32::from_str_radix(t.trim_start_matches("0o"), 8)
                .map_err(|_| invalid("admin.socket_mode", format!("{t:?} is not an octal mode like \"0600\""))),
        };
        let socket_mode = match socket_mode {
            Ok(m) if m & !0o777 != 0 => {
                p.push(invalid("admin.socket_mode", format!("{m:o} is not a permission mode")));
                0o600
            }
            other => p.take(other, 0o600),
        };

        let rsa_bits = match file.keys.rsa_bits.unwrap_or(2048) {
            bits @ (2048 | 3072 | 4096) => bits,
            other => {
                p.push(invalid("keys.rsa_bits", format!("{other}: use 2048, 3072 or 4096")));
                2048
            }
        };
        let kek_file = file.keys.encryption_key_file.unwrap_or_else(|| data_dir.join("key-encryption.key"));
        let rsa_engine = match file.signing.rsa_engine.as_deref() {
            None => RsaEngine::default(),
            Some(text) => RsaEngine::parse(text).unwrap_or_else(|| {
                p.push(invalid(
                    "signing.rsa_engine",
                    format!("{text:?}: use \"aws-lc\" (the default) or \"ifma-pairs\""),
                ));
                RsaEngine::default()
            }),
        };

        let t = &file.tokens;
        let tokens = TokenTtls {
            access_token: p.duration("tokens.access_token_ttl", &t.access_token_ttl, "1h"),
            id_token: p.duration("tokens.id_token_ttl", &t.id_token_ttl, "1h"),
            refresh_token: p.duration("tokens.refresh_token_ttl", &t.refresh_token_ttl, "30d"),
            offline: p.duration("tokens.offline_ttl", &t.offline_ttl, "90d"),
            session: p.duration("tokens.session_ttl", &t.session_ttl, "8h"),
            authorization_code: p.duration("tokens.authorization_code_ttl", &t.authorization_code_ttl, "60s"),
            invite: p.duration("tokens.invite_ttl", &t.invite_ttl, "7d"),
        };
        let challenge_ttl = p.duration("webauthn.challenge_ttl", &file.webauthn.challenge_ttl, "60s");

        let l = &file.limits;
        let limits = Limits {
            json_body_max: p.size("limits.json_body_max", &l.json_body_max, "64KiB"),
            invite_file_max: p.size("limits.invite_file_max", &l.invite_file_max, "10MiB"),
            invite_rows_max: l.invite_rows_max.unwrap_or(100_000),
            ceremony_rate_per_minute: l.ceremony_rate_per_minute.unwrap_or(120),
            token_rate_per_minute: l.token_rate_per_minute.unwrap_or(600),
        };

        let smtp = match file.smtp {
            None => None,
            Some(s) => {
                let host = s.host.ok_or_else(|| invalid("smtp.host", "is required when [smtp] is present"));
                let from = s.from.ok_or_else(|| invalid("smtp.from", "is required when [smtp] is present"));
                match (p.ok(host), p.ok(from)) {
                    (Some(host), Some(from)) => Some(Smtp {
                        host,
                        port: s.port.unwrap_or(587),
                        username: s.username,
                        password_file: s.password_file,
                        from,
                        starttls: s.starttls.unwrap_or(true),
                    }),
                    _ => None,
                }
            }
        };
        let audit_retention = p.duration("audit.retention", &file.audit.retention, "90d");

        let config = public_url.map(|public_url| Config {
            dev,
            listen,
            public_url,
            tls,
            trusted_proxies,
            log_format,
            log_filter,
            max_connections,
            metrics_listen,
            hsts_max_age,
            drain: drain.min(MAX_DRAIN),
            storage_backend,
            storage_path,
            postgres,
            admin_socket,
            socket_mode,
            allowed_uids: file.admin.allowed_uids,
            rsa_bits,
            kek_file,
            rsa_engine,
            tokens,
            challenge_ttl,
            limits,
            audit_retention,
            smtp,
            warnings: vec![],
        });
        (config, p.0)
    }

    /// The public URL as text, without a trailing slash.
    pub fn public_base(&self) -> String {
        self.public_url.as_str().trim_end_matches('/').to_owned()
    }

    /// The effective configuration in the file's own format (what `check-config` prints).
    ///
    /// Durations are written as the file would write them (`90d`, `1h30m`); humantime's own
    /// format counts months of 30.44 days (`2months 29days 2h 52m 48s` for 90 days).
    pub fn to_toml(&self) -> String {
        let fmt = compact_duration;
        let file = FileConfig {
            server: ServerSection {
                listen: Some(self.listen.to_string()),
                public_url: Some(self.public_base()),
                tls_cert: self.tls.as_ref().map(|t| t.cert.clone()),
                tls_key: self.tls.as_ref().map(|t| t.key.clone()),
                trusted_proxies: Some(self.trusted_proxies.iter().map(|p| p.to_string()).collect()),
                log_format: Some(match self.log_format {
                    LogFormat::Text => "text".into(),
                    LogFormat::Json => "json".into(),
                }),
                log_level: Some(self.log_filter.clone()),
                max_connections: Some(self.max_connections),
                metrics_listen: Some(self.metrics_listen.map(|a| a.to_string()).unwrap_or_default()),
                hsts_max_age: Some(fmt(self.hsts_max_age)),
                drain: Some(fmt(self.drain)),
            },
            storage: StorageSection {
                path: Some(self.storage_path.clone()),
                backend: Some(self.storage_backend.as_str().to_owned()),
                url_file: self.postgres.as_ref().and_then(|p| p.url_file.clone()),
                pool_size: self.postgres.as_ref().map(|p| p.pool_size),
                sslrootcert: self.postgres.as_ref().and_then(|p| p.sslrootcert.clone()),
                pooler: self.postgres.as_ref().map(|p| p.pooler.as_str().to_owned()),
                direct_url_file: self.postgres.as_ref().and_then(|p| p.direct_url_file.clone()),
            },
            admin: AdminSection {
                socket: Some(self.admin_socket.clone()),
                socket_mode: Some(Mode::Text(format!("0{:o}", self.socket_mode))),
                allowed_uids: self.allowed_uids.clone(),
            },
            keys: KeysSection { rsa_bits: Some(self.rsa_bits), encryption_key_file: Some(self.kek_file.clone()) },
            tokens: TokensSection {
                access_token_ttl: Some(fmt(self.tokens.access_token)),
                id_token_ttl: Some(fmt(self.tokens.id_token)),
                refresh_token_ttl: Some(fmt(self.tokens.refresh_token)),
                offline_ttl: Some(fmt(self.tokens.offline)),
                session_ttl: Some(fmt(self.tokens.session)),
                authorization_code_ttl: Some(fmt(self.tokens.authorization_code)),
                invite_ttl: Some(fmt(self.tokens.invite)),
            },
            webauthn: WebauthnSection { challenge_ttl: Some(fmt(self.challenge_ttl)) },
            limits: LimitsSection {
                json_body_max: Some(format_size(self.limits.json_body_max)),
                invite_file_max: Some(format_size(self.limits.invite_file_max)),
                invite_rows_max: Some(self.limits.invite_rows_max),
                ceremony_rate_per_minute: Some(self.limits.ceremony_rate_per_minute),
                token_rate_per_minute: Some(self.limits.token_rate_per_minute),
            },
            audit: AuditSection { retention: Some(fmt(self.audit_retention)) },
            smtp: self.smtp.as_ref().map(|s| SmtpSection {
                host: Some(s.host.clone()),
                port: Some(s.port),
                username: s.username.clone(),
                password_file: s.password_file.clone(),
                from: Some(s.from.clone()),
                starttls: Some(s.starttls),
            }),
            signing: SigningSection { rsa_engine: Some(self.rsa_engine.as_str().to_owned()) },
        };
        toml::to_string(&file).unwrap_or_else(|e| format!("# cannot render: {e}\n"))
    }
}

impl FileConfig {
    pub fn read(path: &Path) -> Result<FileConfig, ConfigError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.to_owned(), source })?;
        FileConfig::parse(&text).map_err(|message| ConfigError::Parse { path: path.to_owned(), message })
    }

    /// Parses TOML text; the error names the offending key and its line.
    pub fn parse(text: &str) -> Result<FileConfig, String> {
        toml::from_str(text).map_err(|e| e.to_string().trim_end().to_owned())
    }
}

const SECTIONS: [&str; 10] =
    ["server", "storage", "admin", "keys", "tokens", "webauthn", "limits", "audit", "smtp", "signing"];

/// Applies `LATCHKEY_<SECTION>_<KEY>` variables: `LATCHKEY_SERVER_PUBLIC_URL=…` sets
/// `server.public_url`. Values are read as TOML values when they parse as one (numbers, arrays,
/// booleans), else as strings. `LATCHKEY_CONFIG` names the file and is not an override.
/// A variable that names no known section or key is skipped with a warning (a stray variable in a
/// unit's environment must not stop the daemon); a known key with a bad value is an error.
fn apply_env(
    file: FileConfig,
    env: impl IntoIterator<Item = (String, String)>,
    warnings: &mut Vec<String>,
) -> Result<FileConfig, ConfigError> {
    let mut vars: Vec<(String, String)> =
        env.into_iter().filter(|(k, _)| k.starts_with("LATCHKEY_") && k != "LATCHKEY_CONFIG").collect();
    if vars.is_empty() {
        return Ok(file);
    }
    vars.sort();
    let env_err = |var: &str, message: String| ConfigError::Env { var: var.to_owned(), message };
    let mut table = toml::Table::try_from(&file).map_err(|e| env_err("LATCHKEY_*", e.to_string()))?;
    for (var, raw) in &vars {
        let rest = var.trim_start_matches("LATCHKEY_").to_ascii_lowercase();
        let Some((section, key)) =
            SECTIONS.iter().find_map(|s| rest.strip_prefix(s).and_then(|k| k.strip_prefix('_')).map(|k| (*s, k)))
        else {
            warnings.push(format!(
                "ignoring {var}: it names no configuration section (LATCHKEY_<SECTION>_<KEY> with a section of {})",
                SECTIONS.join(", ")
            ));
            continue;
        };
        let before = table.clone();
        let value = parse_env_value(raw);
        let entry = table.entry(section.to_owned()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if let toml::Value::Table(t) = entry {
            t.insert(key.to_owned(), value);
        }
        // Check each variable on its own so that the message names the variable at fault.
        if let Err(e) = toml::Value::Table(table.clone()).try_into::<FileConfig>() {
            let message = e.to_string().trim_end().replace('\n', " ");
            if message.contains("unknown field") {
                warnings.push(format!("ignoring {var}: {section} has no key {key:?} ({message})"));
                table = before;
                continue;
            }
            return Err(env_err(var, format!("{section}.{key}: {message}")));
        }
    }
    toml::Value::Table(table).try_into::<FileConfig>().map_err(|e| env_err("LATCHKEY_*", e.to_string()))
}

fn parse_env_value(raw: &str) -> toml::Value {
    #[derive(Deserialize)]
    struct Probe {
        v: toml::Value,
    }
    match toml::from_str::<Probe>(&format!("v = {raw}")) {
        Ok(p) => p.v,
        Err(_) => toml::Value::String(raw.to_owned()),
    }
}

/// The `[storage]` backend and, for PostgreSQL, its settings. The PostgreSQL keys are refused
/// with SQLite rather than ignored: a file that names a url_file but forgot `backend` would
/// otherwise run on a fresh SQLite file unnoticed.
fn storage(s: &StorageSection, dev: bool) -> Result<(StorageBackend, Option<PgSettings>), ConfigError> {
    let backend = match s.backend.as_deref().unwrap_or("sqlite") {
        "sqlite" => StorageBackend::Sqlite,
        "postgres" => StorageBackend::Postgres,
        other => return Err(invalid("storage.backend", format!("{other:?}: use \"sqlite\" or \"postgres\""))),
    };
    match backend {
        StorageBackend::Sqlite => {
            let set = [
                ("storage.url_file", s.url_file.is_some()),
                ("storage.pool_size", s.pool_size.is_some()),
                ("storage.sslrootcert", s.sslrootcert.is_some()),
                ("storage.pooler", s.pooler.is_some()),
                ("storage.direct_url_file", s.direct_url_file.is_some()),
            ];
            if let Some((key, _)) = set.iter().find(|(_, set)| *set) {
                return Err(invalid(key, "applies to backend = \"postgres\" only (the backend is \"sqlite\")"));
            }
            Ok((backend, None))
        }
        StorageBackend::Postgres if dev => {
            Err(invalid("storage.backend", "\"postgres\" with --dev: the development mode always uses SQLite"))
        }
        StorageBackend::Postgres => {
            let pool_size = match s.pool_size.unwrap_or(crate::store::pg::config::DEFAULT_POOL_SIZE) {
                0 => return Err(invalid("storage.pool_size", "must be at least 1")),
                n => n,
            };
            let pooler = match s.pooler.as_deref() {
                None => Pooler::None,
                Some(text) => Pooler::parse(text).ok_or_else(|| {
                    invalid("storage.pooler", format!("{text:?}: use \"none\", \"session\" or \"transaction\""))
                })?,
            };
            if pooler == Pooler::Transaction && s.direct_url_file.is_none() {
                return Err(invalid(
                    "storage.direct_url_file",
                    "is needed with pooler = \"transaction\": name a file with a connection straight to PostgreSQL, \
                     past the pooler, for migrations and the change listener",
                ));
            }
            let settings = PgSettings {
                url_file: s.url_file.clone(),
                pool_size,
                sslrootcert: s.sslrootcert.clone(),
                pooler,
                direct_url_file: s.direct_url_file.clone(),
            };
            Ok((backend, Some(settings)))
        }
    }
}

/// `server.listen`: `ADDRESS:PORT` or `HOST:PORT` (a name is resolved now, its first address used).
fn resolve_listen(text: &str) -> Result<SocketAddr, ConfigError> {
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    let hint = "is not an address like 127.0.0.1:8080, [::1]:8080 or localhost:8080";
    if text.rsplit_once(':').is_none_or(|(host, port)| host.is_empty() || port.parse::<u16>().is_err()) {
        return Err(invalid("server.listen", format!("{text:?} {hint}")));
    }
    use std::net::ToSocketAddrs;
    let mut addrs = text.to_socket_addrs().map_err(|e| invalid("server.listen", format!("{text:?}: {e}")))?;
    addrs.next().ok_or_else(|| invalid("server.listen", format!("{text:?}: the name resolves to no address")))
}

fn parse_public_url(text: &str) -> Result<Url, ConfigError> {
    let url = Url::parse(text).map_err(|e| invalid("server.public_url", format!("{text:?} is not a URL: {e}")))?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("server.public_url", "must not have a query or fragment"));
    }
    match url.scheme() {
        "https" => {}
        "http" if crate::urls::is_loopback_host(&url) => {}
        "http" => {
            return Err(invalid(
                "server.public_url",
                format!("{text:?}: plain http is allowed only for localhost, 127.0.0.1 and [::1]; use https"),
            ));
        }
        other => return Err(invalid("server.public_url", format!("scheme {other:?}: use https"))),
    }
    let trimmed = url.as_str().trim_end_matches('/').to_owned();
    Url::parse(&trimmed).map_err(|e| invalid("server.public_url", e.to_string()))
}

/// Parses a human duration (`"60s"`, `"1h"`, `"30d"`), or takes the default.
fn duration(key: &'static str, value: &Option<String>, default: &str) -> Result<Duration, ConfigError> {
    let text = value.as_deref().unwrap_or(default);
    let d = humantime::parse_duration(text)
        .map_err(|e| invalid(key, format!("{text:?} is not a duration like \"60s\", \"1h\" or \"30d\": {e}")))?;
    if d.is_zero() {
        return Err(invalid(key, "must be longer than zero"));
    }
    Ok(d)
}

fn size(key: &'static str, value: &Option<String>, default: &str) -> Result<u64, ConfigError> {
    let text = value.as_deref().unwrap_or(default);
    parse_size(text).ok_or_else(|| invalid(key, format!("{text:?} is not a size like \"64KiB\" or \"10MiB\"")))
}

/// `"64KiB"`, `"10MiB"`, `"1GiB"`, `"512"` (bytes); `KB`/`MB` are read as powers of 1000.
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().ok()?;
    let mult: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        _ => return None,
    };
    let bytes = n.checked_mul(mult)?;
    (bytes > 0).then_some(bytes)
}

fn format_size(n: u64) -> String {
    for (unit, m) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if n.is_multiple_of(m) {
            return format!("{}{unit}", n / m);
        }
    }
    n.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev() -> Overrides {
        Overrides { dev: true, ..Overrides::default() }
    }

    #[test]
    fn durations_are_written_as_the_file_writes_them_and_read_back() {
        for (secs, text) in
            [(90 * 86_400, "90d"), (30 * 86_400, "30d"), (60, "60s"), (300, "5m"), (5400, "1h30m"), (8 * 3600, "8h")]
        {
            let d = Duration::from_secs(secs);
            assert_eq!(compact_duration(d), text);
            assert_eq!(humantime::parse_duration(text).unwrap(), d, "{text}");
        }
        assert_eq!(compact_duration(Duration::from_millis(1500)), "1s500ms");
        assert_eq!(humantime::parse_duration("1s500ms").unwrap(), Duration::from_millis(1500));
        assert_eq!(compact_duration(Duration::ZERO), "0s");
    }

    #[test]
    fn a_drain_is_the_default_only_where_another_node_can_take_over() {
        let with = |server: &str, storage: &str| {
            let text = format!("[server]\npublic_url = \"https://id.example.com\"\n{server}\n[storage]\n{storage}");
            Config::from_file(FileConfig::parse(&text).unwrap(), &Overrides::default())
        };
        let pg = "backend = \"postgres\"";
        assert_eq!(with("", "").unwrap().drain, Duration::ZERO, "SQLite: one node");
        assert_eq!(with("", pg).unwrap().drain, Duration::from_secs(5));
        assert_eq!(with("drain = \"0s\"", pg).unwrap().drain, Duration::ZERO);
        assert_eq!(with("drain = \"2s\"", "").unwrap().drain, Duration::from_secs(2));
        assert_eq!(with("drain = \"60s\"", pg).unwrap().drain, Duration::from_secs(60));
        for bad in ["drain = \"61s\"", "drain = \"soon\""] {
            let e = with(bad, pg).unwrap_err().to_string();
            assert!(e.contains("server.drain"), "{bad}: {e}");
        }
    }

    #[test]
    fn storage_backends() {
        let with = |storage: &str, flags: &Overrides| {
            let text = format!("[server]\npublic_url = \"https://id.example.com\"\n[storage]\n{storage}");
            Config::from_file(FileConfig::parse(&text).unwrap(), flags)
        };
        let c = with("", &Overrides::default()).unwrap();
        assert_eq!((c.storage_backend, c.postgres), (StorageBackend::Sqlite, None));

        let c = with("backend = \"postgres\"\nurl_file = \"/etc/latchkey/pg.url\"", &Overrides::default()).unwrap();
        assert_eq!(c.storage_backend, StorageBackend::Postgres);
        let pg = c.postgres.clone().unwrap();
        assert_eq!(pg.url_file, Some(PathBuf::from("/etc/latchkey/pg.url")));
        assert_eq!(pg.pool_size, 10);
        assert_eq!(pg.sslrootcert, None);
        // The effective configuration says so, and reads back the same.
        let again = Config::from_file(FileConfig::parse(&c.to_toml()).unwrap(), &Overrides::default()).unwrap();
        assert_eq!(again.postgres, Some(pg));

        let c = with("backend = \"postgres\"\npool_size = 3\nsslrootcert = \"/ca.pem\"", &Overrides::default());
        let pg = c.unwrap().postgres.unwrap();
        assert_eq!((pg.url_file, pg.pool_size, pg.sslrootcert), (None, 3, Some(PathBuf::from("/ca.pem"))));
        assert_eq!((pg.pooler, pg.direct_url_file), (Pooler::None, None));

        // Behind a transaction pooler, with the server itself for what needs a session.
        let bouncer =
            "backend = \"postgres\"\nurl_file = \"/b.url\"\npooler = \"transaction\"\ndirect_url_file = \"/d.url\"";
        let c = with(bouncer, &Overrides::default()).unwrap();
        let pg = c.postgres.clone().unwrap();
        assert_eq!((pg.pooler, pg.direct_url_file.clone()), (Pooler::Transaction, Some(PathBuf::from("/d.url"))));
        let again = Config::from_file(FileConfig::parse(&c.to_toml()).unwrap(), &Overrides::default()).unwrap();
        assert_eq!(again.postgres, Some(pg));
        let session = with("backend = \"postgres\"\npooler = \"session\"", &Overrides::default()).unwrap();
        assert_eq!(session.postgres.unwrap().pooler, Pooler::None);

        for (storage, key) in [
            ("backend = \"postgres\"\npooler = \"statement\"", "storage.pooler"),
            ("backend = \"postgres\"\npooler = \"transaction\"", "storage.direct_url_file"),
            ("pooler = \"transaction\"", "storage.pooler"),
            ("direct_url_file = \"/d.url\"", "storage.direct_url_file"),
            ("backend = \"mysql\"", "storage.backend"),
            ("backend = \"postgres\"\npool_size = 0", "storage.pool_size"),
            ("url_file = \"/pg.url\"", "storage.url_file"),
            ("backend = \"sqlite\"\npool_size = 4", "storage.pool_size"),
        ] {
            let err = with(storage, &Overrides::default()).unwrap_err().to_string();
            assert!(err.contains(key), "{storage}: {err}");
        }
        let err = with("backend = \"postgres\"", &dev()).unwrap_err().to_string();
        assert!(err.contains("--dev"), "{err}");
    }

    #[test]
    fn dev_defaults() {
        let c = Config::load(&dev(), []).unwrap();
        assert_eq!(c.public_base(), "http://localhost:8080");
        assert_eq!(c.admin_socket, PathBuf::from("latchkey-data/admin.sock"));
        assert_eq!(c.challenge_ttl, Duration::from_secs(60));
        assert_eq!(c.limits.json_body_max, 64 * 1024);
        assert_eq!(c.socket_mode, 0o600);
    }

    #[test]
    fn dev_public_url_follows_listen_port() {
        let flags = Overrides { listen: Some("127.0.0.1:9000".into()), ..dev() };
        assert_eq!(Config::load(&flags, []).unwrap().public_base(), "http://localhost:9000");
    }

    #[test]
    fn unknown_key_names_key_and_line() {
        let err = FileConfig::parse("[server]\npublic_url = \"https://a.example\"\nlisten_addr = \"x\"\n").unwrap_err();
        assert!(err.contains("listen_addr"), "{err}");
        assert!(err.contains("line 3"), "{err}");
    }

    #[test]
    fn env_overrides_file_and_names_bad_variable() {
        let env = vec![
            ("LATCHKEY_SERVER_PUBLIC_URL".to_owned(), "https://id.example.com/".to_owned()),
            ("LATCHKEY_KEYS_RSA_BITS".to_owned(), "3072".to_owned()),
        ];
        let mut warnings = vec![];
        let c = Config::from_file(apply_env(FileConfig::default(), env, &mut warnings).unwrap(), &Overrides::default())
            .unwrap();
        assert!(warnings.is_empty());
        assert_eq!(c.public_base(), "https://id.example.com");
        assert_eq!(c.rsa_bits, 3072);

        // Unknown variables are skipped with a warning that names them; bad values are errors.
        let stray = vec![
            ("LATCHKEY_SERVER_PUBLIK_URL".to_owned(), "x".to_owned()),
            ("LATCHKEY_TELEMETRY".to_owned(), "1".to_owned()),
        ];
        let mut warnings = vec![];
        apply_env(FileConfig::default(), stray, &mut warnings).unwrap();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("LATCHKEY_SERVER_PUBLIK_URL") && warnings[0].contains("publik_url"));
        assert!(warnings[1].contains("LATCHKEY_TELEMETRY"));
        let bad = vec![("LATCHKEY_KEYS_RSA_BITS".to_owned(), "\"many\"".to_owned())];
        let err = apply_env(FileConfig::default(), bad, &mut vec![]).unwrap_err().to_string();
        assert!(err.contains("LATCHKEY_KEYS_RSA_BITS"), "{err}");
    }

    #[test]
    fn public_url_rules() {
        let with = |u: &str| {
            let mut f = FileConfig::default();
            f.server.public_url = Some(u.into());
            Config::from_file(f, &Overrides::default())
        };
        assert!(with("http://id.example.com").is_err());
        assert!(with("http://127.0.0.1:8080").is_ok());
        assert!(with("https://id.example.com/base").is_ok());
        assert!(with("ftp://id.example.com").is_err());
        assert!(Config::from_file(FileConfig::default(), &Overrides::default()).is_err());
    }

    #[test]
    fn listen_names_ranges_and_log_level() {
        let with = |edit: &dyn Fn(&mut FileConfig)| {
            let mut f = FileConfig::default();
            edit(&mut f);
            Config::from_file(f, &dev())
        };
        let c = with(&|f| f.server.listen = Some("localhost:9001".into())).unwrap();
        assert_eq!(c.listen.port(), 9001);
        assert!(c.listen.ip().is_loopback());
        assert!(with(&|f| f.server.listen = Some("localhost".into())).is_err());
        let c = with(&|f| f.server.trusted_proxies = Some(vec!["10.0.0.0/8".into(), "::1".into()])).unwrap();
        assert_eq!(c.trusted_proxies.len(), 2);
        assert!(with(&|f| f.server.trusted_proxies = Some(vec!["10.0.0.1/8".into()])).is_err());
        assert_eq!(with(&|_| {}).unwrap().log_filter, "info");
        assert!(with(&|f| f.server.log_level = Some("latchkeyd=debug,info".into())).is_ok());
        assert!(with(&|f| f.server.log_level = Some("loud[".into())).is_err());
        let rust_log = [("RUST_LOG".to_owned(), "debug".to_owned())];
        assert_eq!(Config::load(&dev(), rust_log).unwrap().log_filter, "debug");
    }

    #[test]
    fn sizes_and_durations() {
        assert_eq!(parse_size("64KiB"), Some(65536));
        assert_eq!(parse_size("10MiB"), Some(10 << 20));
        assert_eq!(parse_size("12"), Some(12));
        assert_eq!(parse_size("12 parsecs"), None);
        assert_eq!(parse_size("0"), None);
        assert_eq!(format_size(65536), "64KiB");
        assert!(duration("x", &Some("30d".into()), "1s").is_ok());
        assert!(duration("x", &Some("soon".into()), "1s").is_err());
    }

    #[test]
    fn rsa_engine_defaults_to_aws_lc_and_names_the_key_when_wrong() {
        let with = |signing: &str| {
            let text = format!("[server]\npublic_url = \"https://id.example.com\"\n[signing]\n{signing}");
            Config::from_file(FileConfig::parse(&text).unwrap(), &Overrides::default())
        };
        assert_eq!(with("").unwrap().rsa_engine, RsaEngine::AwsLc);
        assert_eq!(Config::load(&dev(), []).unwrap().rsa_engine, RsaEngine::AwsLc);
        let c = with("rsa_engine = \"ifma-pairs\"").unwrap();
        assert_eq!(c.rsa_engine, RsaEngine::IfmaPairs);
        assert!(c.to_toml().contains("[signing]\nrsa_engine = \"ifma-pairs\""), "{}", c.to_toml());
        let again = Config::from_file(FileConfig::parse(&c.to_toml()).unwrap(), &Overrides::default()).unwrap();
        assert_eq!(again.rsa_engine, RsaEngine::IfmaPairs);
        let err = with("rsa_engine = \"openssl\"").unwrap_err().to_string();
        assert!(err.contains("signing.rsa_engine") && err.contains("ifma-pairs"), "{err}");
        assert!(FileConfig::parse("[signing]\nengine = \"aws-lc\"\n").unwrap_err().contains("engine"));
        let env = vec![("LATCHKEY_SIGNING_RSA_ENGINE".to_owned(), "ifma-pairs".to_owned())];
        let mut warnings = vec![];
        let f = apply_env(FileConfig::default(), env, &mut warnings).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(Config::from_file(f, &dev()).unwrap().rsa_engine, RsaEngine::IfmaPairs);
    }

    #[test]
    fn effective_config_round_trips() {
        let c = Config::load(&dev(), []).unwrap();
        let text = c.to_toml();
        let again = Config::from_file(FileConfig::parse(&text).unwrap(), &dev()).unwrap();
        assert_eq!(again.public_base(), c.public_base());
        assert_eq!(again.tokens.refresh_token, c.tokens.refresh_token);
    }
}
