//! Reading request bodies: bounded in size, content type checked, JSON errors named precisely.

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, header};
use latchkey::codes;
use serde::de::DeserializeOwned;

use super::request::{content_type_is, query};
use crate::error::{Error, Kind};
use crate::params::Params;

/// Oversized bodies up to this size are read and discarded before the 413 is sent.
const DRAIN_MAX: u64 = 1 << 20;

/// Whether a request carries a body (so an early error may leave part of it unread).
pub fn has_body(req: &Request<Incoming>) -> bool {
    let h = req.headers();
    h.contains_key(header::TRANSFER_ENCODING)
        || h.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).is_some_and(|v| v.trim() != "0")
}

/// The body is over `limit` bytes; `what` names the part that is limited.
pub fn too_large(limit: u64, what: &str) -> Error {
    Error::new(Kind::TooLarge, codes::PAYLOAD_TOO_LARGE, format!("{what} is larger than the limit of {limit} bytes"))
}

/// The length the client declared in `Content-Length`, when it did.
pub fn declared_length<B>(req: &Request<B>) -> Option<u64> {
    req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse().ok())
}

/// Reads the whole body, refusing it past `limit` bytes (early, from Content-Length, when given).
pub async fn read_bounded(req: Request<Incoming>, limit: u64) -> Result<Bytes, Error> {
    if let Some(n) = declared_length(&req).filter(|n| *n > limit) {
        // Read and drop a modestly oversized body before answering: closing a socket with unread
        // data makes the kernel reset it, and the client would see a reset instead of the 413.
        if n <= DRAIN_MAX {
            let drain = Limited::new(req.into_body(), DRAIN_MAX as usize).collect();
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), drain).await;
        }
        return Err(too_large(limit, "request body"));
    }
    let limited = Limited::new(req.into_body(), usize::try_from(limit).unwrap_or(usize::MAX));
    match limited.collect().await {
        Ok(c) => Ok(c.to_bytes()),
        Err(e) if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() => {
            Err(too_large(limit, "request body"))
        }
        Err(e) => Err(Error::invalid(codes::INVALID_INPUT, format!("could not read the request body: {e}"))),
    }
}

/// Parses a JSON body. An empty body reads as `{}`-less default only when `T: Default` is wanted:
/// see [`read_json_or_default`].
pub async fn read_json<T: DeserializeOwned>(req: Request<Incoming>, limit: u64) -> Result<T, Error> {
    if !content_type_is(req.headers(), "application/json") {
        return Err(Error::new(
            Kind::UnsupportedMediaType,
            codes::UNSUPPORTED_MEDIA_TYPE,
            "send the body as JSON with Content-Type: application/json",
        ));
    }
    let body = read_bounded(req, limit).await?;
    parse_json(&body)
}

/// Like [`read_json`], but a request without a body yields `T::default()`.
pub async fn read_json_or_default<T: DeserializeOwned + Default>(
    req: Request<Incoming>,
    limit: u64,
) -> Result<T, Error> {
    let has_type = req.headers().contains_key(header::CONTENT_TYPE);
    if !has_type {
        let body = read_bounded(req, limit).await?;
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(T::default());
        }
        return parse_json(&body);
    }
    read_json(req, limit).await
}

/// An `application/x-www-form-urlencoded` body, bounded by `limit` bytes, with the parameter
/// rules of [`Params`].
pub async fn read_form(req: Request<Incoming>, limit: u64) -> Result<Params, Error> {
    if !content_type_is(req.headers(), "application/x-www-form-urlencoded") {
        return Err(Error::invalid(codes::INVALID_INPUT, "send parameters as application/x-www-form-urlencoded"));
    }
    Ok(Params::parse(&read_bounded(req, limit).await?))
}

/// The parameters of an endpoint that takes them either way: the form body of a POST, or the
/// query string otherwise.
pub async fn read_form_or_query(req: Request<Incoming>, limit: u64) -> Result<Params, Error> {
    if req.method() == Method::POST { read_form(req, limit).await } else { Ok(query(&req)) }
}

pub fn parse_json<T: DeserializeOwned>(body: &[u8]) -> Result<T, Error> {
    serde_json::from_slice(body).map_err(|e| {
        use serde_json::error::Category;
        match e.classify() {
            Category::Syntax | Category::Eof | Category::Io => {
                Error::invalid(codes::MALFORMED_JSON, format!("the body is not valid JSON: {e}"))
            }
            Category::Data => Error::invalid(codes::INVALID_INPUT, format!("the body does not fit: {e}")),
        }
    })
}
