//! The shared state every request handler and background task reads: configuration, store,
//! clock, keys, registry of tenants, limits and logs. Built once by the server
//! (`latchkeyd::server::run`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use crate::clock::SharedClock;
use crate::config::{self, Config};
use crate::crypto::Kek;
use crate::metrics::Metrics;
use crate::oidc::spare::SpareKeys;
use crate::registry::Registry;
use crate::social::client::Upstream;
use crate::social::oidc::Cache as SocialCache;
use crate::store::Db;
use crate::{audit, live, ratelimit};

/// Everything a request handler may need, shared by both listeners.
#[derive(Debug)]
pub struct State {
    pub config: Arc<Config>,
    pub db: Db,
    pub kek: Arc<Kek>,
    pub clock: SharedClock,
    pub registry: Registry,
    pub metrics: Metrics,
    pub limiter: ratelimit::RateLimiter,
    pub audit: audit::AuditLog,
    /// Rate limits and SMTP: what SIGHUP may replace (`config` keeps the values of the start).
    pub live: live::LiveSlot,
    /// The log filter in force.
    pub log_filter: live::Slot<String>,
    /// The HTTP client towards social identity providers.
    pub upstream: Upstream,
    /// Providers' discovery documents and keys.
    pub social_cache: SocialCache,
    pub started: Instant,
    pub listen_addr: SocketAddr,
    /// A signing key generated ahead for the next tenant creation or rotation.
    pub spare_keys: Arc<SpareKeys>,
    /// Makes the first signing key of tenants created without one.
    pub keygen: Arc<crate::oidc::keygen::KeyMaker>,
    /// What signs RS256 tokens: `config.rsa_engine` as this CPU allows it
    /// ([`crate::oidc::signer::effective`]); every tenant's keys are loaded for it.
    pub rsa_engine: config::RsaEngine,
    /// The DPoP proofs this daemon accepted, on SQLite (`oidc::dpop::spend`).
    pub dpop_spent: crate::oidc::dpop::Spent,
    /// The daemon is stopping: `/readyz` answers 503 while it still serves, for
    /// `config.drain`, so that a load balancer takes it out before it stops accepting.
    pub draining: std::sync::atomic::AtomicBool,
}
