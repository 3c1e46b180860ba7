//! OAuth 2.0 / OIDC errors (RFC 6749 §5.2, RFC 6750 §3) with the protocols' own codes. The HTTP
//! status and the `WWW-Authenticate` challenge are chosen by `http::errors::oauth`.

use crate::crypto::CryptoError;
use crate::error::{Error, Kind};
use crate::params::ParamError;
use crate::store::StoreError;

/// The registered OAuth error codes Latchkey answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OAuthCode {
    InvalidRequest,
    /// Client authentication failed (RFC 6749 §5.2).
    InvalidClient,
    InvalidGrant,
    UnauthorizedClient,
    UnsupportedGrantType,
    InvalidScope,
    /// A bad bearer token (RFC 6750 §3.1).
    InvalidToken,
    /// The token lacks a scope (RFC 6750 §3.1).
    InsufficientScope,
    ServerError,
    TemporarilyUnavailable,
    /// Authorization endpoint only (sent back in the redirect, RFC 6749 §4.1.2.1).
    UnsupportedResponseType,
    /// `prompt=none` without a usable session (OIDC Core §3.1.2.6).
    LoginRequired,
    /// `prompt=none` for an app the user has not allowed (OIDC Core §3.1.2.6).
    ConsentRequired,
    /// A request object (`request`) or its URI (`request_uri`), which discovery says are not
    /// supported (OIDC Core §6).
    RequestNotSupported,
    RequestUriNotSupported,
    /// Device grant (RFC 8628 §3.5): the user has not decided yet.
    AuthorizationPending,
    /// Device grant: polled faster than the interval, which grows by 5 seconds.
    SlowDown,
    /// Device grant: the user denied the request.
    AccessDenied,
    /// Device grant: the device code expired before it was approved and redeemed.
    ExpiredToken,
    /// A DPoP proof is missing, malformed or does not fit the request (RFC 9449 §5, §7.1).
    InvalidDpopProof,
    /// The DPoP proof must carry the server's current nonce (RFC 9449 §8, §9).
    UseDpopNonce,
}

impl OAuthCode {
    pub fn as_str(self) -> &'static str {
        match self {
            OAuthCode::InvalidRequest => "invalid_request",
            OAuthCode::InvalidClient => "invalid_client",
            OAuthCode::InvalidGrant => "invalid_grant",
            OAuthCode::UnauthorizedClient => "unauthorized_client",
            OAuthCode::UnsupportedGrantType => "unsupported_grant_type",
            OAuthCode::InvalidScope => "invalid_scope",
            OAuthCode::InvalidToken => "invalid_token",
            OAuthCode::InsufficientScope => "insufficient_scope",
            OAuthCode::ServerError => "server_error",
            OAuthCode::TemporarilyUnavailable => "temporarily_unavailable",
            OAuthCode::UnsupportedResponseType => "unsupported_response_type",
            OAuthCode::LoginRequired => "login_required",
            OAuthCode::ConsentRequired => "consent_required",
            OAuthCode::RequestNotSupported => "request_not_supported",
            OAuthCode::RequestUriNotSupported => "request_uri_not_supported",
            OAuthCode::AuthorizationPending => "authorization_pending",
            OAuthCode::SlowDown => "slow_down",
            OAuthCode::AccessDenied => "access_denied",
            OAuthCode::ExpiredToken => "expired_token",
            OAuthCode::InvalidDpopProof => "invalid_dpop_proof",
            OAuthCode::UseDpopNonce => "use_dpop_nonce",
        }
    }

    /// The class of failure each code stands for; a request-level failure (a body too large,
    /// a wrong content type) keeps its own kind (see [`From<Error>`]).
    fn kind(self) -> Kind {
        match self {
            OAuthCode::InvalidClient | OAuthCode::InvalidToken => Kind::Unauthenticated,
            OAuthCode::InsufficientScope => Kind::Forbidden,
            OAuthCode::ServerError => Kind::Internal,
            OAuthCode::TemporarilyUnavailable => Kind::Unavailable,
            OAuthCode::InvalidRequest
            | OAuthCode::InvalidGrant
            | OAuthCode::UnauthorizedClient
            | OAuthCode::UnsupportedGrantType
            | OAuthCode::InvalidScope
            | OAuthCode::UnsupportedResponseType
            | OAuthCode::LoginRequired
            | OAuthCode::ConsentRequired
            | OAuthCode::RequestNotSupported
            | OAuthCode::RequestUriNotSupported
            | OAuthCode::AuthorizationPending
            | OAuthCode::SlowDown
            | OAuthCode::AccessDenied
            | OAuthCode::ExpiredToken
            | OAuthCode::InvalidDpopProof
            | OAuthCode::UseDpopNonce => Kind::Invalid,
        }
    }
}

#[derive(Debug)]
pub struct OAuthError {
    pub code: OAuthCode,
    pub kind: Kind,
    pub description: String,
    /// For `insufficient_scope`: the scope the resource needs.
    pub scope: Option<&'static str>,
    /// No token was presented at all (RFC 6750 §3.1: the challenge then names no error).
    pub token_missing: bool,
    /// The token came with the DPoP scheme, or is DPoP-bound: the challenge is `DPoP`'s.
    pub dpop: bool,
    pub cause: Option<String>,
}

impl OAuthError {
    pub fn new(code: OAuthCode, description: impl Into<String>) -> OAuthError {
        OAuthError {
            code,
            kind: code.kind(),
            description: description.into(),
            scope: None,
            token_missing: false,
            dpop: false,
            cause: None,
        }
    }
    pub fn invalid_request(d: impl Into<String>) -> OAuthError {
        OAuthError::new(OAuthCode::InvalidRequest, d)
    }
    pub fn invalid_grant(d: impl Into<String>) -> OAuthError {
        OAuthError::new(OAuthCode::InvalidGrant, d)
    }
    pub fn invalid_scope(d: impl Into<String>) -> OAuthError {
        OAuthError::new(OAuthCode::InvalidScope, d)
    }
    pub fn unauthorized_client(d: impl Into<String>) -> OAuthError {
        OAuthError::new(OAuthCode::UnauthorizedClient, d)
    }
    pub fn unsupported_grant_type(d: impl Into<String>) -> OAuthError {
        OAuthError::new(OAuthCode::UnsupportedGrantType, d)
    }
    pub fn invalid_client(d: impl Into<String>) -> OAuthError {
        OAuthError::new(OAuthCode::InvalidClient, d)
    }
    pub fn invalid_token(d: impl Into<String>) -> OAuthError {
        OAuthError::new(OAuthCode::InvalidToken, d)
    }
    /// No access token at all.
    pub fn token_required() -> OAuthError {
        let mut e = OAuthError::invalid_token("an access token is required");
        e.token_missing = true;
        e
    }
    pub fn insufficient_scope(d: impl Into<String>, scope: &'static str) -> OAuthError {
        let mut e = OAuthError::new(OAuthCode::InsufficientScope, d);
        e.scope = Some(scope);
        e
    }
    pub fn server_error(cause: impl std::fmt::Display) -> OAuthError {
        let mut e = OAuthError::new(OAuthCode::ServerError, "internal error");
        e.cause = Some(cause.to_string());
        e
    }

    /// The error as a resource (userinfo, the credentials API) answers it: a DPoP failure is a
    /// 401 with a `DPoP` challenge there (RFC 9449 §7.1), a 400 at the token endpoint.
    pub fn at_resource(mut self) -> OAuthError {
        if matches!(self.code, OAuthCode::InvalidDpopProof | OAuthCode::UseDpopNonce) {
            self.kind = Kind::Unauthenticated;
            self.dpop = true;
        }
        self
    }

    /// An `invalid_token` whose challenge is `DPoP`'s (RFC 9449 §7.1).
    pub fn invalid_dpop_token(d: impl Into<String>) -> OAuthError {
        let mut e = OAuthError::invalid_token(d);
        e.dpop = true;
        e
    }

    /// The stable code, as sent and logged.
    pub fn code(&self) -> &'static str {
        self.code.as_str()
    }
}

impl std::fmt::Display for OAuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code(), self.description)
    }
}

impl From<ParamError> for OAuthError {
    fn from(r: ParamError) -> OAuthError {
        OAuthError::invalid_request(r.to_string())
    }
}

impl From<StoreError> for OAuthError {
    fn from(e: StoreError) -> OAuthError {
        OAuthError::server_error(e)
    }
}

impl From<CryptoError> for OAuthError {
    fn from(e: CryptoError) -> OAuthError {
        OAuthError::server_error(e)
    }
}

/// A domain or request error met on an OAuth endpoint keeps its class (a 404 stays a 404, a body
/// too large a 413); only its code is the protocol's.
impl From<Error> for OAuthError {
    fn from(e: Error) -> OAuthError {
        let code = match e.kind {
            Kind::Internal => OAuthCode::ServerError,
            Kind::Unavailable => OAuthCode::TemporarilyUnavailable,
            Kind::Unauthenticated => OAuthCode::InvalidToken,
            Kind::Invalid
            | Kind::Forbidden
            | Kind::NotFound
            | Kind::MethodNotAllowed
            | Kind::Conflict
            | Kind::TooLarge
            | Kind::UnsupportedMediaType
            | Kind::Unprocessable
            | Kind::RateLimited => OAuthCode::InvalidRequest,
        };
        let description = if e.kind == Kind::Internal { "internal error".to_owned() } else { e.message };
        OAuthError { code, kind: e.kind, description, scope: None, token_missing: false, dpop: false, cause: e.cause }
    }
}
