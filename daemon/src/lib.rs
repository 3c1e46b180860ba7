//! `latchkeyd`: the Latchkey identity daemon as a library. `main.rs` parses arguments and calls
//! [`run`]; tests call the same function in-process with their own clock and listener.
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
pub mod fuzzing {
    use crate::oidc::keys::SigningKey;
    use crate::registry::TenantRuntime;
    use crate::store::tenants::TenantRow;

    /// A tenant as the registry holds it, built from a row and its keys without a database.
    pub fn tenant_runtime(
        row: &TenantRow,
        keys: Vec<SigningKey>,
        public_url: &str,
    ) -> Result<TenantRuntime, crate::error::Error> {
        TenantRuntime::build(row, keys, public_url)
    }

    /// What `/token` reads of a device code poll before it opens the database (RFC 8628 §3.4):
    /// the client as it presented itself (HTTP Basic or the form), `grant_type` and
    /// `device_code`, with the one rule for repeated and empty parameters.
    pub fn device_token_request(
        authorization: Option<&str>,
        body: &[u8],
    ) -> Result<(crate::oidc::clients::Presented, String, String), crate::oidc::error::OAuthError> {
        let form = crate::params::Params::parse(body);
        let client = crate::oidc::clients::presented(authorization, &form)?;
        let grant = crate::oidc::grants::require(&form, "grant_type")?.to_owned();
        let code = crate::oidc::grants::require(&form, "device_code")?.to_owned();
        Ok((client, grant, code))
    }
}

pub use server::{Options, Ready, StartError, run};
