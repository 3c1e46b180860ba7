//! OpenID Connect provider: signing keys, tokens, discovery.

pub mod discovery;
pub mod jwt;
pub mod keys;
pub mod rotation;
