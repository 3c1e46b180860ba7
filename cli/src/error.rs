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
    #[error("cannot reach latchkeyd at {} ({chosen}): {reason}\nhint: {}", socket.display(), unreachable_hint(.reason))]
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

/// What to do next, by why the socket did not answer: a socket this user may not open is a
/// daemon that runs (a permission to get), not one to start.
fn unreachable_hint(reason: &str) -> &'static str {
    if reason.contains("Permission denied") || reason.contains("permission denied") {
        "the daemon is running but this user may not use its admin socket: run as root or as the daemon's \
         user, or add your uid to admin.allowed_uids in its configuration"
    } else {
        "is the daemon running? Start one with `latchkeyd --dev`, or point --socket / LATCHKEY_ADMIN_SOCKET at \
         its admin socket (run as root or as the daemon's user)"
    }
}

impl CliError {
    /// A stable name for scripts (`-o json` errors): the daemon's error code, or what failed here.
    pub fn code(&self) -> &str {
        match self {
            CliError::Refused { code, .. } => code,
            CliError::Usage(_) => "usage",
            CliError::Unreachable { .. } => "unreachable",
            CliError::Protocol(_) => "protocol",
            CliError::File(_) => "file",
            CliError::LocalWrite(_) => "local_write",
            CliError::ClosedPipe => "closed_pipe",
            CliError::Internal(_) => "internal",
        }
    }

    /// The message without the code the JSON form carries apart.
    pub fn description(&self) -> String {
        match self {
            CliError::Refused { message, .. } => message.clone(),
            other => other.to_string(),
        }
    }

    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Refused { .. } | CliError::Protocol(_) | CliError::Internal(_) | CliError::LocalWrite(_) => 1,
            CliError::Usage(_) | CliError::File(_) => 2,
            CliError::Unreachable { .. } => 3,
            CliError::ClosedPipe => 0,
        }
    }
}
