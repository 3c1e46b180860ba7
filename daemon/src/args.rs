//! Command line of `latchkeyd` (clap). Kept in the library so the man page can be generated
//! from it.
//!
//! The doc comments below are the commands' `--help` text (clap reads them), written for a
//! terminal, not for rustdoc: `[smtp]`, `<TAB>` and bare URLs mean what they say there.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags, rustdoc::bare_urls)]

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// `latchkeyd --version`: the release, the commit it was built from and the schema version it
/// brings a database to (`-V` and the man page show the release alone).
pub fn long_version() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        format!("{} (commit {}, schema {})", latchkey::VERSION, COMMIT, latchkey_store::migrations::SCHEMA_VERSION)
    })
}

/// The commit this binary was built from (`build/commit.rs`), or "unknown".
pub const COMMIT: &str = env!("LATCHKEY_COMMIT");

#[derive(Debug, Parser)]
#[command(
    name = "latchkeyd",
    version,
    long_version = long_version(),
    about = "Latchkey identity daemon: passkey sign-in and OpenID Connect for many tenants",
    long_about = "Latchkey identity daemon: passkey sign-in and OpenID Connect for many tenants.\n\n\
        Serves every tenant's WebAuthn, OIDC and account endpoints on one HTTP listener and takes \
        admin commands from the `latchkey` CLI over a local Unix socket.",
    after_help = "Quick start:\n  latchkeyd --dev                       # embedded defaults, tenant `dev`, http://localhost:8080\n  latchkey tenant create acme            # in another terminal, same directory\n\n\
        Production:\n  latchkeyd --config /etc/latchkey/config.toml\n  latchkeyd check-config --config /etc/latchkey/config.toml"
)]
pub struct Args {
    /// Configuration file (default /etc/latchkey/config.toml; none with --dev).
    #[arg(long, env = "LATCHKEY_CONFIG", value_name = "PATH", global = true)]
    pub config: Option<PathBuf>,

    /// Run with embedded defaults and no config file: listen on 127.0.0.1:8080, keep data in
    /// ./latchkey-data, create tenant `dev` on first start.
    #[arg(long)]
    pub dev: bool,

    /// Address to listen on, e.g. 127.0.0.1:9000 (overrides server.listen).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// Directory for the database, the key-encryption key and the admin socket, where
    /// storage.path, keys.encryption_key_file and admin.socket do not say otherwise (default
    /// /var/lib/latchkey; ./latchkey-data with --dev).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate the configuration and print the effective settings; exit 0 when valid, 1 when not.
    CheckConfig,
    /// Copy a stopped SQLite installation into an empty PostgreSQL database.
    #[command(
        long_about = "Copy a stopped SQLite installation into an empty PostgreSQL database.\n\n\
            Copies the whole state (tenants, applications, signing keys, users, passkeys, roles, sessions, \
            tokens, social providers, the audit trail) of the SQLite file into the PostgreSQL database that \
            the configuration's [storage] section names (backend = \"postgres\", with url_file or the PG* \
            variables), in one transaction, then compares the row count of every table and commits only when \
            all match. The SQLite file is opened read-only and left as it was.\n\n\
            The daemon must be stopped: migrate-store takes the database's lock file and refuses while a \
            latchkeyd runs on it. The SQLite file must be at this release's schema (start the current latchkeyd \
            on it once first), and the PostgreSQL database must be empty (its schema is created here).",
        after_help = "Steps:\n  \
            systemctl stop latchkeyd\n  \
            # in the configuration: [storage] backend = \"postgres\" and url_file = \"/etc/latchkey/pg.url\"\n  \
            latchkeyd migrate-store --to postgres --config /etc/latchkey/config.toml\n\n\
            Then copy the key-encryption key file (keys.encryption_key_file, by default \
            /var/lib/latchkey/key-encryption.key) to every node with mode 0600: the signing keys are copied \
            sealed with it. Give every node the same [storage] settings and start them. The SQLite file stays \
            as a backup; nothing writes to it any more."
    )]
    MigrateStore(MigrateStore),
}

/// `latchkeyd migrate-store`.
#[derive(Debug, clap::Args)]
pub struct MigrateStore {
    /// The engine to copy to (only postgres).
    #[arg(long, value_enum, value_name = "ENGINE")]
    pub to: StoreEngine,

    /// The SQLite database to copy (default: storage.path, else {data_dir}/latchkey.db, i.e.
    /// /var/lib/latchkey/latchkey.db).
    #[arg(long, value_name = "SQLITE_PATH")]
    pub from: Option<PathBuf>,
}

/// A storage engine to migrate to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StoreEngine {
    /// PostgreSQL, as the configuration's [storage] section names it.
    Postgres,
}

pub fn command() -> clap::Command {
    <Args as clap::CommandFactory>::command()
}
