//! Latchkey's domain: what the daemon does, without the transport. WebAuthn ceremonies
//! (`webauthn`), OpenID Connect and OAuth grants (`oidc`), users and the one bulk pipeline
//! (`users`), sign-in through upstream providers (`social`), tenants and their signing keys
//! (`tenants`, `registry`), with the services they share (configuration, clock, audit, metrics,
//! rate limits, mail).
//!
//! Nothing here speaks HTTP or SQL: the server crate (`latchkeyd`) turns requests into calls on
//! these modules and their answers into responses; the store crate (`latchkey-store`) is the only
//! code that reaches a database.

pub mod apps;
pub mod audit;
pub mod brand;
pub mod clock;
pub mod config;
pub mod consents;
pub mod crypto;
pub mod declarative;
pub mod error;
pub mod i18n;
pub mod ids;
pub mod live;
pub mod logo;
pub mod mail;
pub mod memory;
pub mod metrics;
pub mod netrange;
pub mod oidc;
pub mod ordered;
pub mod outbox;
pub mod params;
pub mod ratelimit;
pub mod registry;
pub mod scim;
pub mod sessions;
pub mod social;
pub mod state;
pub mod sweeper;
pub mod sys;
pub mod tenants;
pub mod urls;
pub mod users;
pub mod webauthn;
pub mod webhooks;

pub use latchkey_store as store;
pub use latchkey_store::{lockfile, migrate_store};
