//! Reading request bodies: bounded in size, content type checked, JSON errors named precisely.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::{Method, Request, header};
use latchkey::codes;
use serde::de::DeserializeOwned;

use super::request::{content_type_is, query};
use latchkey_domain::error::{Error, Kind};
use latchkey_domain::params::Params;

/// How long an unread body is read and discarded after an early answer.
const DRAIN_FOR: Duration = Duration::from_secs(10);
/// How long a body may stop arriving (nothing for this long, 1-2×) before it is given up.
pub const BODY_GAP: Duration = Duration::from_secs(10);
/// After its first [`BODY_GAP`], a body must have come at this many bytes per second on average:
/// a byte now and then is not a body arriving.
const BODY_MIN_RATE: u64 = 1024;

/// A request as handlers see it: its body is a [`RequestBody`].
pub type Req = Request<RequestBody>;

/// The request body. When a handler answers before reading all of it (401, 403, 413, 415 …) and
/// drops it, the rest is read and discarded in the background, up to `drain_max` bytes: a client
/// that sends its whole body before reading (Node's fetch, curl) then gets the answer instead of
/// a connection reset, which is what closing a socket with unread data would give it.
///
/// A body that stops arriving for [`BODY_GAP`] (1-2×), or comes slower than `BODY_MIN_RATE`
/// after its first [`BODY_GAP`], fails with [`BodyError::Stalled`]: a client that declares a
/// length and then sends nothing, or a byte now and then, would otherwise hold its request and
/// its connection for as long as it liked. The timer starts only when the body is waited for, so
/// one that came with its headers costs none, and it is looked at only when it fires.
pub struct RequestBody {
    inner: Option<Incoming>,
    drain_max: u64,
    /// Since when the body has been waited for, and the timer of its next check.
    stall: Option<(tokio::time::Instant, Pin<Box<tokio::time::Sleep>>)>,
    /// A frame arrived since the stall timer was set.
    progressed: bool,
    /// Bytes received so far.
    received: u64,
}

/// Why a request body could not be read to its end.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error(transparent)]
    Read(#[from] hyper::Error),
    #[error("it stopped for {} s, or came slower than {BODY_MIN_RATE} bytes a second", BODY_GAP.as_secs())]
    Stalled,
}

impl RequestBody {
    pub fn new(inner: Incoming, drain_max: u64) -> RequestBody {
        RequestBody { inner: Some(inner), drain_max, stall: None, progressed: false, received: 0 }
    }

    /// Called while the body is waited for: whether nothing has come for too long, or too little.
    fn stalled(&mut self, cx: &mut Context<'_>) -> bool {
        let (began, timer) =
            self.stall.get_or_insert_with(|| (tokio::time::Instant::now(), Box::pin(tokio::time::sleep(BODY_GAP))));
        loop {
            if timer.as_mut().poll(cx).is_pending() {
                return false;
            }
            let allowed = BODY_GAP + Duration::from_secs(self.received / BODY_MIN_RATE);
            if !std::mem::take(&mut self.progressed) || began.elapsed() > allowed {
                return true;
            }
            timer.as_mut().reset(tokio::time::Instant::now() + BODY_GAP);
        }
    }
}

impl hyper::body::Body for RequestBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let Some(body) = self.inner.as_mut() else { return Poll::Ready(None) };
        match Pin::new(body).poll_frame(cx) {
            Poll::Pending if self.stalled(cx) => Poll::Ready(Some(Err(BodyError::Stalled))),
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(Ok(frame))) => {
                self.progressed = true;
                self.received += frame.data_ref().map_or(0, |d| d.len() as u64);
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(BodyError::Read(e)))),
            Poll::Ready(None) => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(hyper::body::Body::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.as_ref().map(hyper::body::Body::size_hint).unwrap_or_default()
    }
}

impl Drop for RequestBody {
    fn drop(&mut self) {
        let Some(body) = self.inner.take().filter(|b| !hyper::body::Body::is_end_stream(b)) else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let max = self.drain_max;
        runtime.spawn(async move {
            let mut body = std::pin::pin!(body);
            let mut read = 0u64;
            let drained = tokio::time::timeout(DRAIN_FOR, async {
                while read <= max {
                    match body.frame().await {
                        Some(Ok(frame)) => read += frame.data_ref().map_or(0, |d| d.len() as u64),
                        Some(Err(_)) | None => break,
                    }
                }
            });
            let _ = drained.await;
        });
    }
}

/// Whether a request carries a body (so an early error may leave part of it unread).
pub fn has_body<B>(req: &Request<B>) -> bool {
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
pub async fn read_bounded(req: Req, limit: u64) -> Result<Bytes, Error> {
    // Refused from the declared length alone; the unread body is discarded when dropped.
    if declared_length(&req).is_some_and(|n| n > limit) {
        return Err(too_large(limit, "request body"));
    }
    let limited = Limited::new(req.into_body(), usize::try_from(limit).unwrap_or(usize::MAX));
    match limited.collect().await {
        Ok(c) => Ok(c.to_bytes()),
        Err(e) if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() => {
            Err(too_large(limit, "request body"))
        }
        Err(e) => Err(unreadable(&*e)),
    }
}

/// The refusal of a body that could not be read to its end: it stopped arriving, or the
/// connection broke.
pub fn unreadable(e: &(dyn std::error::Error + 'static)) -> Error {
    match e.downcast_ref::<BodyError>() {
        Some(stalled @ BodyError::Stalled) => Error::invalid(
            codes::INVALID_INPUT,
            format!("the request body stopped arriving: {stalled}; send it whole and promptly"),
        ),
        _ => Error::invalid(codes::INVALID_INPUT, "the request body could not be read to its end").caused_by(e),
    }
}

/// What a JSON body's strings may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Text {
    /// No control character at all: the public endpoints, whose fields are names, identifiers
    /// and encoded bytes.
    Printable,
    /// Anything but a NUL byte (which PostgreSQL cannot store): the admin socket, whose callers
    /// may pass a secret read from a file with its line ending (trimmed where it is used).
    NoNul,
}

/// Parses a JSON body. An empty body reads as `{}`-less default only when `T: Default` is wanted:
/// see [`read_json_or_default`].
pub async fn read_json<T: DeserializeOwned>(req: Req, limit: u64, text: Text) -> Result<T, Error> {
    if !content_type_is(req.headers(), "application/json") {
        return Err(Error::new(
            Kind::UnsupportedMediaType,
            codes::UNSUPPORTED_MEDIA_TYPE,
            "send the body as JSON with Content-Type: application/json",
        ));
    }
    let body = read_bounded(req, limit).await?;
    parse_json(&body, text)
}

/// Like [`read_json`], but a request without a body yields `T::default()`.
pub async fn read_json_or_default<T: DeserializeOwned + Default>(req: Req, limit: u64, text: Text) -> Result<T, Error> {
    let has_type = req.headers().contains_key(header::CONTENT_TYPE);
    if !has_type {
        let body = read_bounded(req, limit).await?;
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(T::default());
        }
        return parse_json(&body, text);
    }
    read_json(req, limit, text).await
}

/// An `application/x-www-form-urlencoded` body, bounded by `limit` bytes, with the parameter
/// rules of [`Params`].
pub async fn read_form(req: Req, limit: u64) -> Result<Params, Error> {
    if !content_type_is(req.headers(), "application/x-www-form-urlencoded") {
        return Err(Error::invalid(codes::INVALID_INPUT, "send parameters as application/x-www-form-urlencoded"));
    }
    Ok(Params::parse(&read_bounded(req, limit).await?))
}

/// The parameters of an endpoint that takes them either way: the form body of a POST, or the
/// query string otherwise.
pub async fn read_form_or_query(req: Req, limit: u64) -> Result<Params, Error> {
    if req.method() == Method::POST { read_form(req, limit).await } else { Ok(query(&req)) }
}

pub fn parse_json<T: DeserializeOwned>(body: &[u8], text: Text) -> Result<T, Error> {
    let value = serde_json::from_slice(body).map_err(|e| {
        use serde_json::error::Category;
        let (code, message) = match e.classify() {
            Category::Syntax | Category::Eof | Category::Io => (
                codes::MALFORMED_JSON,
                format!("the body is not valid JSON (line {}, column {})", e.line(), e.column()),
            ),
            Category::Data => (codes::INVALID_INPUT, describe(&e.to_string())),
        };
        Error::invalid(code, message).caused_by(e)
    })?;
    // After the parse, so that a body that is not JSON is named as such; a byte scan, no second parse.
    if strings_hold_control(body, text) {
        let message = match text {
            Text::Printable => {
                "a text field holds a control character (a NUL byte, a line break, an escape…); remove it"
            }
            Text::NoNul => "a text field holds a NUL byte, which cannot be stored; remove it",
        };
        return Err(Error::invalid(codes::INVALID_REQUEST, message));
    }
    Ok(value)
}

/// Whether the strings of a (valid) JSON text hold a character `text` does not allow, written as
/// an escape (`\n`, `\u0000`) or raw (DEL, and the C1 controls, which JSON lets through
/// unescaped; raw C0 bytes are not valid JSON).
fn strings_hold_control(body: &[u8], text: Text) -> bool {
    let printable = text == Text::Printable;
    let (mut i, mut in_string) = (0, false);
    while let Some(&b) = body.get(i) {
        if !in_string {
            in_string = b == b'"';
            i += 1;
            continue;
        }
        match b {
            b'"' => in_string = false,
            b'\\' => match body.get(i + 1) {
                Some(b'u') => {
                    let unit = body
                        .get(i + 2..i + 6)
                        .and_then(|hex| std::str::from_utf8(hex).ok())
                        .and_then(|hex| u16::from_str_radix(hex, 16).ok());
                    if unit.is_some_and(|c| c == 0 || (printable && (c < 0x20 || (0x7f..=0x9f).contains(&c)))) {
                        return true;
                    }
                    i += 6;
                    continue;
                }
                Some(b'b' | b'f' | b'n' | b'r' | b't') if printable => return true,
                _ => {
                    i += 2;
                    continue;
                }
            },
            0x7f if printable => return true,
            0xc2 if printable && matches!(body.get(i + 1), Some(0x80..=0x9f)) => return true,
            _ => {}
        }
        i += 1;
    }
    false
}

/// Says in our own words what does not fit in a JSON body; the parser's message is only logged.
fn describe(parser: &str) -> String {
    // Names the parser quotes in backticks: fields, values, expected variants.
    let quoted: Vec<&str> = parser.split('`').skip(1).step_by(2).collect();
    let first = quoted.first().copied().unwrap_or("?");
    if parser.starts_with("missing field") {
        format!("the field {first:?} is required")
    } else if parser.starts_with("unknown field") {
        format!("the field {first:?} is not accepted here")
    } else if parser.starts_with("unknown variant") {
        let allowed: Vec<String> = quoted.iter().skip(1).map(|v| format!("{v:?}")).collect();
        format!("the value {first:?} is not accepted here; use one of {}", allowed.join(", "))
    } else if parser.starts_with("invalid type") || parser.starts_with("invalid value") {
        "a field has a value of the wrong type".to_owned()
    } else {
        "the body does not have the expected fields and values".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Shape {
        name: String,
        kind: Kind2,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Kind2 {
        Platform,
        Roaming,
    }

    #[test]
    fn json_errors_are_our_sentences() {
        let msg = |body: &str| parse_json::<Shape>(body.as_bytes(), Text::Printable).unwrap_err().message;
        assert_eq!(msg(r#"{"kind":"platform"}"#), "the field \"name\" is required");
        assert_eq!(msg(r#"{"name":"a","kind":"platform","x":1}"#), "the field \"x\" is not accepted here");
        assert_eq!(
            msg(r#"{"name":"a","kind":"none"}"#),
            "the value \"none\" is not accepted here; use one of \"platform\", \"roaming\""
        );
        assert_eq!(msg(r#"{"name":1,"kind":"platform"}"#), "a field has a value of the wrong type");
        assert_eq!(msg("{"), "the body is not valid JSON (line 1, column 1)");
    }

    #[test]
    fn control_characters_in_strings() {
        let code = |body: &str, text| parse_json::<serde_json::Value>(body.as_bytes(), text).err().map(|e| e.code);
        let refused = Some(codes::INVALID_REQUEST);
        for body in [
            r#"{"username":"a\u0000b"}"#,
            r#"{"username":"a\nb"}"#,
            r#"{"username":"a\tb"}"#,
            r#"{"username":"a\u001Bb"}"#,
            r#"{"username":"a\u007fb"}"#,
            r#"{"username":"a\u0085b"}"#,
            "{\"username\":\"a\u{7f}b\"}",
            "{\"username\":\"a\u{85}b\"}",
            r#"{"a\u0000":1}"#,
            r#"["x",{"y":["\r"]}]"#,
        ] {
            assert_eq!(code(body, Text::Printable), refused, "{body}");
        }
        for body in [
            r#"{"username":"a\\nb"}"#,
            r#"{"u":"\u00e9\u20ac\"\\"}"#,
            r#"{"n":1,"s":"caf\u00e9"}"#,
            r#"{"k":"\\u0000"}"#,
        ] {
            assert_eq!(code(body, Text::Printable), None, "{body}");
        }
        // The admin socket takes a secret's line ending, never a NUL.
        assert_eq!(code(r#"{"client_secret":"s\n"}"#, Text::NoNul), None);
        assert_eq!(code(r#"{"client_secret":"s\u0000"}"#, Text::NoNul), refused);
        // A body that is not JSON is named as such first.
        assert_eq!(code("{\"a\":\"\\u0000", Text::Printable), Some(codes::MALFORMED_JSON));
    }
}
