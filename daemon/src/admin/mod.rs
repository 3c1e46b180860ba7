//! The admin socket: a Unix socket speaking HTTP/1.1 + JSON under `/admin/v1`. Every connection's
//! peer uid (SO_PEERCRED) is checked before a byte of it is read.

mod audit;
mod backup;
mod import;
mod reinvite;
mod route;
mod router;

pub use router::handle;

use std::io::ErrorKind;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tokio::net::{UnixListener, UnixStream};

use crate::http::Acceptor;

#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    #[error("admin socket {path}: another latchkeyd is already listening there")]
    InUse { path: PathBuf },
    #[error("admin socket {path}: the path exists and is not a socket; remove it or set admin.socket")]
    NotASocket { path: PathBuf },
    #[error("admin socket {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// Binds the socket at `path` with `mode`. A socket file left by a crashed daemon is removed, but
/// only after a connection to it fails: a live daemon's socket is never taken over.
pub fn bind(path: &Path, mode: u32) -> Result<UnixListener, SocketError> {
    let io = |source| SocketError::Io { path: path.to_owned(), source };
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(SocketError::NotASocket { path: path.to_owned() });
        }
        match std::os::unix::net::UnixStream::connect(path) {
            Ok(_) => return Err(SocketError::InUse { path: path.to_owned() }),
            Err(e) if e.kind() == ErrorKind::ConnectionRefused || e.kind() == ErrorKind::NotFound => {
                tracing::info!(path = %path.display(), "removing stale admin socket");
                std::fs::remove_file(path).map_err(io)?;
            }
            Err(e) => return Err(io(e)),
        }
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let listener = UnixListener::bind(path).map_err(io)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(io)?;
    Ok(listener)
}

/// Accepts admin connections, dropping those whose peer uid is not allowed.
pub struct AdminAcceptor {
    pub listener: UnixListener,
    pub allowed_uids: Vec<u32>,
}

/// The peer of an admin connection.
#[derive(Debug, Clone, Copy)]
pub struct AdminPeer {
    pub uid: u32,
}

impl Acceptor for AdminAcceptor {
    type Io = UnixStream;
    type Peer = AdminPeer;
    async fn accept(&mut self) -> std::io::Result<Option<(UnixStream, AdminPeer)>> {
        let (stream, _) = self.listener.accept().await?;
        let uid = match stream.peer_cred() {
            Ok(c) => c.uid(),
            Err(e) => {
                tracing::warn!(error = %e, "admin connection without peer credentials; closed");
                return Ok(None);
            }
        };
        if !self.allowed_uids.contains(&uid) {
            tracing::warn!(uid, allowed = ?self.allowed_uids, "admin connection from a uid that is not allowed; closed unread");
            return Ok(None);
        }
        Ok(Some((stream, AdminPeer { uid })))
    }
}

/// The uids allowed by default: root and the daemon's own.
pub fn default_allowed_uids() -> Vec<u32> {
    let me = rustix::process::geteuid().as_raw();
    if me == 0 { vec![0] } else { vec![0, me] }
}
