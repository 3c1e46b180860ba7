//! Building responses: JSON, errors, and the security headers every response carries.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};
use serde::Serialize;

use super::Body;
use crate::error::ApiError;

pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).map_err(|never| match never {}).boxed()
}

pub fn empty(status: StatusCode) -> Response<Body> {
    let mut r = Response::new(full(Bytes::new()));
    *r.status_mut() = status;
    r
}

pub fn bytes(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Response<Body> {
    let mut r = Response::new(full(body));
    *r.status_mut() = status;
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

pub fn json<T: Serialize>(status: StatusCode, value: &T) -> Response<Body> {
    match serde_json::to_vec(value) {
        Ok(body) => bytes(status, "application/json", body),
        Err(e) => public_error(&ApiError::internal(e)),
    }
}

#[derive(Serialize)]
struct PublicError<'a> {
    error: &'a str,
    error_description: &'a str,
}

/// The JSON error body of public endpoints: `{error, error_description}`.
pub fn public_error(e: &ApiError) -> Response<Body> {
    log_cause(e);
    json(e.status, &PublicError { error: e.code, error_description: &e.message })
}

/// The admin error body: `{code, message}`.
pub fn admin_error(e: &ApiError) -> Response<Body> {
    log_cause(e);
    json(e.status, &latchkey::ErrorBody { code: e.code.to_owned(), message: e.message.clone() })
}

fn log_cause(e: &ApiError) {
    if let Some(cause) = &e.cause {
        tracing::error!(code = e.code, cause = %cause, "request failed");
    }
}

/// Headers on every public response. Pages add their own Content-Security-Policy.
pub fn secure(mut r: Response<Body>) -> Response<Body> {
    let h = r.headers_mut();
    h.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    r
}

pub fn with_header(mut r: Response<Body>, name: header::HeaderName, value: &'static str) -> Response<Body> {
    r.headers_mut().insert(name, HeaderValue::from_static(value));
    r
}
