//! CLI errors and their exit codes: 0, 1, 2 and 3 only (SPEC §1.3).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Exit 1: the daemon answered and said no.
    #[error("{message} ({code})")]
    Refused { code: String, message: String },
    /// Exit 2: the command line is wrong in a way clap cannot see.
    #[error("{0}")]
    Usage(String),
    /// Exit 3: nobody answers at the socket, we may not connect, or the daemon went away before
    /// its answer was complete. `chosen` says how the socket path was picked.
    #[error(
        "cannot reach latchkeyd at {} ({chosen}): {reason}\n\
         hint: is the daemon running? Start one with `latchkeyd --dev`, or point --socket / \
         LATCHKEY_ADMIN_SOCKET at its admin socket (run as root or as the daemon's user)", socket.display()
    )]
    Unreachable { socket: PathBuf, chosen: String, reason: String },
    /// Exit 1: the daemon answered something we do not understand.
    #[error("{0}")]
    Protocol(String),
    /// Exit 2, like a usage error: a file the command line names (an input, a secret file,
    /// --links-out, a backup) cannot be used, found before anything is sent.
    #[error("{0}")]
    File(String),
    /// Exit 1: writing locally failed after the daemon had acted (--links-out, a backup,
    /// standard output); the message says what was done.
    #[error("{0}")]
    LocalWrite(String),
    /// Exit 0, silently: standard output was closed by its reader (`latchkey user list | head -1`),
    /// as coreutils behave.
    #[error("standard output was closed")]
    ClosedPipe,
    /// Exit 1: anything else that went wrong on this side (it should not happen).
    #[error("{0}")]
    Internal(String),
}

impl CliError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Refused { .. } | CliError::Protocol(_) | CliError::Internal(_) | CliError::LocalWrite(_) => 1,
            CliError::Usage(_) | CliError::File(_) => 2,
            CliError::Unreachable { .. } => 3,
            CliError::ClosedPipe => 0,
        }
    }
}
