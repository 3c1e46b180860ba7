//! Streamed JSON-lines answers (`application/x-ndjson`) of the bulk admin calls (import,
//! reinvite): a task sends lines into a channel as batches finish; the body forwards them.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Frame;
use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};
use serde::Serialize;
use tokio::sync::mpsc;

/// One line of the answer. Serialising our own wire types cannot fail; an empty line would be
/// skipped by the client.
pub fn json_line<T: Serialize>(line: &T) -> Bytes {
    let mut text = serde_json::to_vec(line).unwrap_or_default();
    text.push(b'\n');
    Bytes::from(text)
}

/// A response body fed line by line from a channel.
struct Lines(mpsc::Receiver<Bytes>);

impl hyper::body::Body for Lines {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.0.poll_recv(cx).map(|line| line.map(|b| Ok(Frame::data(b))))
    }
}

/// A channel to send lines into, and the 200 response that streams them.
pub fn stream() -> (mpsc::Sender<Bytes>, Response<crate::http::Body>) {
    stream_as("application/x-ndjson")
}

/// Chunks waiting for the client at most: a line can carry a batch of 10,000 links (1.5 MB), and
/// a producer ahead of its reader must wait rather than fill the memory.
const QUEUED: usize = 2;

/// A channel to send chunks into, and the 200 response of `content_type` that streams them.
pub fn stream_as(content_type: &'static str) -> (mpsc::Sender<Bytes>, Response<crate::http::Body>) {
    let (tx, rx) = mpsc::channel::<Bytes>(QUEUED);
    let mut r = Response::new(Lines(rx).boxed());
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    *r.status_mut() = StatusCode::OK;
    (tx, r)
}
