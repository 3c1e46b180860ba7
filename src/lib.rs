//! The vocabulary that `latchkeyd` and the `latchkey` CLI share.
//!
//! Everything here is plain data: admin-protocol request and response types, the error body both
//! sides speak, and the stable error codes. It depends on serde only, so the CLI never pulls in the
//! daemon's runtime, HTTP server or database.

pub mod admin;
pub mod codes;

pub use admin::ErrorBody;

/// Version of both binaries, taken from the workspace.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
