//! The domain error: what went wrong ([`Kind`]), a stable code from [`latchkey::codes`] that
//! scripts match on, and a sentence for the caller. The internal cause is logged, never sent.
//!
//! Nothing here knows HTTP: each boundary (`http::errors` for the public JSON API, pages and
//! OAuth, `admin` for the socket) turns a [`Kind`] into a status in one place.

use latchkey::codes;

use crate::crypto::CryptoError;
use crate::store::StoreError;

/// The class of a failure, which decides how every boundary answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The input is malformed or breaks a rule.
    Invalid,
    /// The caller is not (or no longer) authenticated.
    Unauthenticated,
    /// The caller is known but may not do this.
    Forbidden,
    NotFound,
    /// The path exists, the method does not (the boundary adds the allowed methods).
    MethodNotAllowed,
    /// The request clashes with what exists (a name taken, the last credential).
    Conflict,
    /// The body is over its size limit.
    TooLarge,
    /// The body is not of the expected content type.
    UnsupportedMediaType,
    /// The input parsed but some of its rows or fields are unacceptable.
    Unprocessable,
    /// Too many requests from this caller.
    RateLimited,
    /// A dependency (the database) does not answer.
    Unavailable,
    /// A bug or a broken environment: the cause is logged, the caller is told to look there.
    Internal,
}

#[derive(Debug)]
pub struct Error {
    pub kind: Kind,
    pub code: &'static str,
    pub message: String,
    /// What went wrong inside, for the log only.
    pub cause: Option<String>,
}

impl Error {
    pub fn new(kind: Kind, code: &'static str, message: impl Into<String>) -> Error {
        Error { kind, code, message: message.into(), cause: None }
    }

    pub fn invalid(code: &'static str, message: impl Into<String>) -> Error {
        Error::new(Kind::Invalid, code, message)
    }

    pub fn unauthenticated(code: &'static str, message: impl Into<String>) -> Error {
        Error::new(Kind::Unauthenticated, code, message)
    }

    pub fn forbidden(code: &'static str, message: impl Into<String>) -> Error {
        Error::new(Kind::Forbidden, code, message)
    }

    pub fn not_found(code: &'static str, message: impl Into<String>) -> Error {
        Error::new(Kind::NotFound, code, message)
    }

    pub fn conflict(code: &'static str, message: impl Into<String>) -> Error {
        Error::new(Kind::Conflict, code, message)
    }

    pub fn internal(cause: impl std::fmt::Display) -> Error {
        Error {
            kind: Kind::Internal,
            code: codes::INTERNAL,
            message: "internal error; the daemon's log has the details".into(),
            cause: Some(cause.to_string()),
        }
    }

    /// Keeps `cause` for the log.
    pub fn caused_by(mut self, cause: impl std::fmt::Display) -> Error {
        self.cause = Some(cause.to_string());
        self
    }

    /// The stable code, as sent and logged.
    pub fn code(&self) -> &'static str {
        self.code
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Error {
        match e {
            // The database is down or every connection is busy: the caller may retry.
            StoreError::Unavailable(_) => {
                Error::new(Kind::Unavailable, codes::UNAVAILABLE, "the database does not answer; try again shortly")
                    .caused_by(e)
            }
            e => Error::internal(e),
        }
    }
}

impl From<CryptoError> for Error {
    fn from(e: CryptoError) -> Error {
        Error::internal(e)
    }
}
