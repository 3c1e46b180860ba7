//! Building responses: bodies, JSON, redirects, and the headers every response carries.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};
use serde::Serialize;

use super::Body;

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
        Err(e) => {
            // Our own types always serialise; this is a bug, answered without a body to render.
            tracing::error!(error = %e, "response could not be serialised");
            empty(StatusCode::INTERNAL_SERVER_ERROR)
        }
    }
}

/// A `302 Found` to `to`, which the caller has checked (an exact registered URI, or our own).
pub fn redirect(to: &str) -> Response<Body> {
    match HeaderValue::from_str(to) {
        Ok(v) => {
            let mut r = empty(StatusCode::FOUND);
            r.headers_mut().insert(header::LOCATION, v);
            no_store(r)
        }
        Err(e) => {
            tracing::error!(error = %e, "redirect target is not a valid header value");
            empty(StatusCode::INTERNAL_SERVER_ERROR)
        }
    }
}

/// Marks a response that carries a token or personal data as never to be cached.
pub fn no_store(mut r: Response<Body>) -> Response<Body> {
    let h = r.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    r
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

/// Adds a header whose value is computed; a value that is not a valid header is left out.
pub fn with_header_value(mut r: Response<Body>, name: header::HeaderName, value: &str) -> Response<Body> {
    if let Ok(v) = HeaderValue::from_str(value) {
        r.headers_mut().insert(name, v);
    }
    r
}
