//! OpenID Connect provider: signing keys, tokens, discovery.

pub mod authorize;
pub mod claims;
pub mod client_assertion;
pub mod clients;
mod code;
pub mod device;
pub mod discovery;
pub mod dpop;
pub mod error;
pub mod grants;
pub mod introspection;
pub mod issue;
pub mod jwt;
pub mod keygen;
pub mod keys;
pub mod par;
mod refresh;
pub mod rotation;
pub mod signer;
pub mod spare;
pub mod spare_file;
pub mod tokens;

/// The opt-in pair signer, a crate of its own (the workspace's only unsafe code).
pub use latchkey_rsa_ifma as rsa_ifma;
