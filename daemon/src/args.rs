//! Command line of `latchkeyd` (clap). Kept in the library so the man page can be generated
//! from it.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "latchkeyd",
    version,
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
}

pub fn command() -> clap::Command {
    <Args as clap::CommandFactory>::command()
}
