//! OpenID Connect provider: signing keys, tokens, discovery.

pub mod authorize;
pub mod clients;
mod code;
pub mod device;
pub mod discovery;
pub mod error;
pub mod grants;
pub mod introspection;
pub mod jwt;
pub mod keys;
mod refresh;
pub mod rotation;
#[cfg(target_arch = "x86_64")]
pub mod rsa_ifma;
pub mod signer;
pub mod spare;
pub mod spare_file;
pub mod tokens;
