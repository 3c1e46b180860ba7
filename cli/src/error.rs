//! CLI errors and their exit codes (SPEC §1.3).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Exit 1: the daemon answered and said no.
    #[error("{message} ({code})")]
    Refused { code: String, message: String },
    /// Exit 2: the command line is wrong in a way clap cannot see.
    #[error("{0}")]
    Usage(String),
    /// Exit 3: nobody answers at the socket, or we may not connect.
    #[error(
        "cannot reach latchkeyd at {}: {reason}\n\
         hint: is the daemon running? Start one with `latchkeyd --dev`, or point --socket / \
         LATCHKEY_ADMIN_SOCKET at its admin socket (run as root or as the daemon's user)", socket.display()
    )]
    Unreachable { socket: PathBuf, reason: String },
    /// Exit 1: the daemon answered something we do not understand.
    #[error("{0}")]
    Protocol(String),
    /// Exit 1: a local problem (reading a file, writing output).
    #[error("{0}")]
    Local(String),
}

impl CliError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Refused { .. } | CliError::Protocol(_) | CliError::Local(_) => 1,
            CliError::Usage(_) => 2,
            CliError::Unreachable { .. } => 3,
        }
    }
}
