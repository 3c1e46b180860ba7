//! `latchkeyd`: the Latchkey identity daemon as a library. `main.rs` parses arguments and calls
//! [`server::run`]; tests call the same function in-process with their own clock and listener.
//! [`server`] wires the listeners to their handlers; [`state`] is what the handlers share.

pub mod admin;
pub mod apps;
pub mod args;
pub mod audit;
pub mod certs;
pub mod checkfiles;
pub mod clock;
pub mod config;
pub mod crypto;
pub mod declarative;
pub mod error;
pub mod http;
pub mod ids;
pub mod live;
pub mod mail;
pub mod memory;
pub mod metrics;
pub mod netrange;
pub mod notify;
pub mod oidc;
pub mod ordered;
pub mod params;
pub mod ratelimit;
pub mod registry;
pub mod reload;
pub mod server;
pub mod sessions;
pub mod social;
pub mod state;
pub mod sys;
/// The storage crate, under the name the daemon's modules have always used for it.
pub use latchkey_store as store;
pub use latchkey_store::{lockfile, migrate_store};
pub mod tenants;
pub mod urls;
pub mod users;
pub mod webauthn;

/// Hooks for the fuzz targets under `fuzz/`: not an API, may change at any time.
#[doc(hidden)]
pub mod fuzzing;
