//! `latchkeyd`: the Latchkey identity daemon as a library, the server over the domain crate
//! (`latchkey-domain`). `main.rs` parses arguments and calls [`server::run`]; tests call the same
//! function in-process with their own clock and listener. [`server`] wires the listeners to their
//! handlers: [`http`] for the public listener, [`admin`] for the admin socket.

pub mod admin;
pub mod args;
pub mod certs;
pub mod checkfiles;
pub mod http;
pub mod notify;
pub mod reload;
pub mod server;

#[doc(hidden)]
pub mod fuzzing;
