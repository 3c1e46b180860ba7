//! systemd readiness notification (`sd_notify`): a datagram to `$NOTIFY_SOCKET`.

use std::os::unix::net::UnixDatagram;

/// Sends `state` (e.g. `READY=1`) when running under systemd; does nothing otherwise.
pub fn notify(state: &str) {
    let Some(path) = std::env::var_os("NOTIFY_SOCKET") else {
        return;
    };
    let result = (|| -> std::io::Result<()> {
        let sock = UnixDatagram::unbound()?;
        let bytes = path.as_encoded_bytes();
        if let Some(name) = bytes.strip_prefix(b"@") {
            // Abstract namespace socket.
            use std::os::linux::net::SocketAddrExt;
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
            sock.send_to_addr(state.as_bytes(), &addr)?;
        } else {
            sock.send_to(state.as_bytes(), &path)?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        tracing::warn!(error = %e, state, "could not notify systemd");
    }
}
