//! Every error becomes a response here, one renderer per boundary:
//!
//! | boundary | body | used by |
//! |---|---|---|
//! | [`api`] | `{error, error_description}` JSON | ceremonies, credentials, bulk invites, routing |
//! | [`oauth`] | RFC 6749 §5.2 JSON, `no-store`, `WWW-Authenticate` | `/token`, `/userinfo`, `/revoke`, `/introspect`, `/logout` |
//! | [`page`] | an HTML page | invite, recovery, account, authorize pages |
//! | [`admin`] | `{error, error_description}` JSON | the admin socket |
//!
//! The HTTP status of a failure is chosen once, from its [`Kind`], by [`status`]. The internal
//! cause is logged (at ERROR only when it is ours to fix), never sent.

use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};
use serde::Serialize;

use super::Body;
use super::html::{Page, html, render};
use super::response::{json, no_store, with_header};
use latchkey_domain::error::{Error, Kind};
use latchkey_domain::oidc::client_assertion::ASSERTION_ALGS as DPOP_ALGS;
use latchkey_domain::oidc::error::{OAuthCode, OAuthError};

/// The HTTP status of each kind of failure.
pub fn status(kind: Kind) -> StatusCode {
    match kind {
        Kind::Invalid => StatusCode::BAD_REQUEST,
        Kind::Unauthenticated => StatusCode::UNAUTHORIZED,
        Kind::Forbidden => StatusCode::FORBIDDEN,
        Kind::NotFound => StatusCode::NOT_FOUND,
        Kind::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
        Kind::Conflict => StatusCode::CONFLICT,
        Kind::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        Kind::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        Kind::Unprocessable => StatusCode::UNPROCESSABLE_ENTITY,
        Kind::RateLimited => StatusCode::TOO_MANY_REQUESTS,
        Kind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        Kind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// Logs the internal cause: at ERROR when the daemon or its environment is at fault, at DEBUG
/// when a caller sent something we refused (callers must not be able to flood the error log).
fn log(kind: Kind, code: &str, cause: Option<&str>) {
    let Some(cause) = cause else { return };
    match kind {
        Kind::Internal | Kind::Unavailable => tracing::error!(code, cause, "request failed"),
        _ => tracing::debug!(code, cause, "request refused"),
    }
}

#[derive(Serialize)]
struct PublicError<'a> {
    error: &'a str,
    error_description: &'a str,
}

/// Extra headers some failures carry on every boundary.
fn decorate(mut r: Response<Body>, kind: Kind) -> Response<Body> {
    match kind {
        Kind::RateLimited => {
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
        }
        // A tenant's first key being made, a database coming back: moments, not minutes.
        Kind::Unavailable => {
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        _ => {}
    }
    r
}

/// The JSON error of the public API: `{error, error_description}`. A refused Bearer token adds
/// its RFC 6750 challenge: `invalid_token` (401, with the `DPoP` scheme offered beside it), or
/// `insufficient_scope` (403) for a valid token without the scope the endpoint needs (its
/// description names the scope); a refused DPoP proof its RFC 9449 one.
pub fn api(e: &Error) -> Response<Body> {
    log(e.kind, e.code, e.cause.as_deref());
    let mut r = json(status(e.kind), &PublicError { error: e.code, error_description: &e.message });
    let scheme = match (e.kind, e.code) {
        (Kind::Unauthenticated, latchkey::codes::INVALID_TOKEN) => Some("Bearer"),
        (Kind::Forbidden, latchkey::codes::INSUFFICIENT_SCOPE) => Some("Bearer"),
        (Kind::Unauthenticated, latchkey::codes::INVALID_DPOP_PROOF | latchkey::codes::USE_DPOP_NONCE) => Some("DPoP"),
        _ => None,
    };
    if let Some(scheme) = scheme {
        let mut challenge = challenge(scheme, e.code, &e.message);
        // These resources take DPoP-bound tokens too (RFC 9449 §7.2): both schemes are offered.
        if e.code == latchkey::codes::INVALID_TOKEN {
            challenge.push_str(&format!(", DPoP algs=\"{}\"", DPOP_ALGS.join(" ")));
        }
        if let Ok(v) = HeaderValue::from_str(&challenge) {
            r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
    }
    decorate(r, e.kind)
}

/// The admin socket's error: `{error, error_description}`, as the public JSON API.
pub fn admin(e: &Error) -> Response<Body> {
    log(e.kind, e.code, e.cause.as_deref());
    let body = latchkey::ErrorBody { code: e.code.to_owned(), message: e.message.clone() };
    decorate(json(status(e.kind), &body), e.kind)
}

/// A `WWW-Authenticate` challenge naming the error; a `DPoP` one lists the algorithms proofs may
/// use (RFC 9449 §7.1).
fn challenge(scheme: &str, code: &str, message: &str) -> String {
    let algs = if scheme == "DPoP" { format!(", algs=\"{}\"", DPOP_ALGS.join(" ")) } else { String::new() };
    format!("{scheme} error=\"{code}\", error_description=\"{}\"{algs}", quoted(message))
}

/// An OAuth error (RFC 6749 §5.2, RFC 6750 §3): never cached; client authentication failures
/// carry a Basic challenge, token failures a Bearer one.
pub fn oauth(e: &OAuthError) -> Response<Body> {
    log(e.kind, e.code(), e.cause.as_deref());
    let body = PublicError { error: e.code(), error_description: &e.description };
    let mut r = no_store(json(status(e.kind), &body));
    let challenge = match e.code {
        OAuthCode::InvalidClient => Some("Basic realm=\"latchkey\"".to_owned()),
        // Both schemes are taken (RFC 9449 §7.2).
        OAuthCode::InvalidToken if e.token_missing => {
            Some(format!("Bearer realm=\"latchkey\", DPoP algs=\"{}\"", DPOP_ALGS.join(" ")))
        }
        OAuthCode::InvalidToken if e.dpop => Some(challenge("DPoP", e.code(), &e.description)),
        OAuthCode::InvalidToken => {
            Some(format!("Bearer error=\"invalid_token\", error_description=\"{}\"", quoted(&e.description)))
        }
        OAuthCode::InsufficientScope => {
            Some(format!("Bearer error=\"insufficient_scope\", scope=\"{}\"", e.scope.unwrap_or_default()))
        }
        // At a resource; the token endpoint answers these with a plain 400 (RFC 9449 §5).
        OAuthCode::InvalidDpopProof | OAuthCode::UseDpopNonce if e.kind == Kind::Unauthenticated => {
            Some(challenge("DPoP", e.code(), &e.description))
        }
        _ => None,
    };
    if let Some(v) = challenge.and_then(|c| HeaderValue::from_str(&c).ok()) {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    decorate(r, e.kind)
}

/// An error on a page a person looks at: the tenant's page layout with the message.
/// The error's description stays in English, as in every other boundary's body (`lang="en"`); the
/// page around it is in the request's language.
pub fn page(cx: &super::Cx<'_>, e: &Error) -> Response<Body> {
    log(e.kind, e.code, e.cause.as_deref());
    let tr = cx.tr;
    let main = maud::html! {
        h1 { (tr.t("error-heading")) }
        p #error-message role="alert" lang="en" { (e.message) }
    };
    let title = tr.t("error-title");
    decorate(html(status(e.kind), render(&cx.tenant, &Page::of(cx, tr, &title, "error"), main)), e.kind)
}

/// A plain-text error, for the few endpoints that serve no JSON (avatars).
pub fn text(e: &Error) -> Response<Body> {
    log(e.kind, e.code, e.cause.as_deref());
    let r = super::response::bytes(status(e.kind), "text/plain; charset=utf-8", format!("{}\n", e.message));
    with_header(r, header::CACHE_CONTROL, "no-store")
}

/// A value safe inside a double-quoted header parameter.
fn quoted(s: &str) -> String {
    s.replace(['"', '\\'], "'")
}

#[cfg(test)]
mod tests {
    use super::*;
    use latchkey::codes;

    #[test]
    fn each_kind_has_its_status() {
        assert_eq!(status(Kind::Invalid), 400);
        assert_eq!(status(Kind::MethodNotAllowed), 405);
        assert_eq!(status(Kind::Internal), 500);
        let r = api(&Error::new(Kind::RateLimited, codes::RATE_LIMITED, "slow down"));
        assert_eq!(r.status(), 429);
        assert_eq!(r.headers()["retry-after"], "60");
    }

    #[test]
    fn oauth_errors_keep_their_class() {
        let r = oauth(&OAuthError::invalid_client("no"));
        assert_eq!(r.status(), 401);
        assert!(r.headers()["www-authenticate"].to_str().unwrap().starts_with("Basic"));
        let r = oauth(&Error::not_found(codes::NOT_FOUND, "gone").into());
        assert_eq!(r.status(), 404, "a 404 stays a 404 on OAuth endpoints");
        let r = oauth(&Error::internal("boom").into());
        assert_eq!(r.status(), 500);
        let r = oauth(&OAuthError::insufficient_scope("needs openid", "openid"));
        assert_eq!(r.status(), 403);
        assert!(r.headers()["www-authenticate"].to_str().unwrap().contains("scope=\"openid\""));
        // The JSON API's resource endpoints (credentials, bulk invitations) say the same.
        let r = api(&Error::forbidden(codes::INSUFFICIENT_SCOPE, "the access token lacks the credentials scope"));
        assert_eq!(r.status(), 403);
        let challenge = r.headers()["www-authenticate"].to_str().unwrap().to_owned();
        assert!(challenge.starts_with("Bearer error=\"insufficient_scope\""), "{challenge}");
        let r = api(&Error::forbidden(codes::INVALID_ORIGIN_HEADER, "not from here"));
        assert!(r.headers().get("www-authenticate").is_none());
    }
}
