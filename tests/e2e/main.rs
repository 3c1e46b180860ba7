//! End-to-end tests: one test binary, one module per capability.

mod authenticator;
mod support;

mod admin_socket;
mod apps;
mod audit;
mod browser;
mod bulk;
mod cli_behaviour;
mod cluster;
mod config;
mod declarative;
mod dev_mode;
mod device;
mod docs;
mod harness;
mod keys;
mod lazy_tenants;
mod mail;
mod migrate_store;
mod oidc;
mod oidc_browser;
mod oidc_negative;
mod oidc_support;
mod ops;
mod passkeys;
mod passkeys_negative;
mod routing;
mod security;
mod signing;
mod social;
mod tenants;
mod tls;
mod upstream;
mod users;
