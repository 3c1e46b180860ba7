//! OAuth 2.0 / OIDC errors (RFC 6749 §5.2, RFC 6750 §3): `{error, error_description}` with the
//! protocol's own codes.

use hyper::StatusCode;

use crate::crypto::CryptoError;
use crate::error::ApiError;
use crate::store::StoreError;

#[derive(Debug)]
pub struct OAuthError {
    pub status: StatusCode,
    pub error: &'static str,
    pub description: String,
    /// `WWW-Authenticate` value for 401 answers.
    pub www_authenticate: Option<String>,
    pub cause: Option<String>,
}

impl OAuthError {
    pub fn new(status: StatusCode, error: &'static str, description: impl Into<String>) -> OAuthError {
        OAuthError { status, error, description: description.into(), www_authenticate: None, cause: None }
    }
    pub fn invalid_request(d: impl Into<String>) -> OAuthError {
        OAuthError::new(StatusCode::BAD_REQUEST, "invalid_request", d)
    }
    pub fn invalid_grant(d: impl Into<String>) -> OAuthError {
        OAuthError::new(StatusCode::BAD_REQUEST, "invalid_grant", d)
    }
    pub fn invalid_scope(d: impl Into<String>) -> OAuthError {
        OAuthError::new(StatusCode::BAD_REQUEST, "invalid_scope", d)
    }
    pub fn unauthorized_client(d: impl Into<String>) -> OAuthError {
        OAuthError::new(StatusCode::BAD_REQUEST, "unauthorized_client", d)
    }
    /// Client authentication failed (RFC 6749 §5.2): 401, with a Basic challenge.
    pub fn invalid_client(d: impl Into<String>) -> OAuthError {
        let mut e = OAuthError::new(StatusCode::UNAUTHORIZED, "invalid_client", d);
        e.www_authenticate = Some("Basic realm=\"latchkey\"".into());
        e
    }
    /// A bad bearer token (RFC 6750 §3.1).
    pub fn invalid_token(d: impl Into<String>) -> OAuthError {
        let d = d.into();
        let mut e = OAuthError::new(StatusCode::UNAUTHORIZED, "invalid_token", d.clone());
        e.www_authenticate =
            Some(format!("Bearer error=\"invalid_token\", error_description=\"{}\"", d.replace('"', "'")));
        e
    }
    pub fn insufficient_scope(d: impl Into<String>, scope: &str) -> OAuthError {
        let mut e = OAuthError::new(StatusCode::FORBIDDEN, "insufficient_scope", d);
        e.www_authenticate = Some(format!("Bearer error=\"insufficient_scope\", scope=\"{scope}\""));
        e
    }
    pub fn server_error(cause: impl std::fmt::Display) -> OAuthError {
        let mut e = OAuthError::new(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "internal error");
        e.cause = Some(cause.to_string());
        e
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

impl From<ApiError> for OAuthError {
    fn from(e: ApiError) -> OAuthError {
        OAuthError::server_error(format!("{e} {}", e.cause.as_deref().unwrap_or_default()))
    }
}
