//! Closing connections that hold a slot and do nothing.
//!
//! hyper's `header_read_timeout` starts with the first byte of a request: a connection that sends
//! nothing at all, or an HTTP/2 one that sends its preface and then nothing, would otherwise hold
//! one of the listener's `max_connections` for ever, and a thousand of them from one client would
//! shut everyone else out. [`IdleIo`] closes a connection once nothing has been read from it or
//! written to it for [`IDLE`] to twice that, while none of its requests is being answered; a
//! request counts from its arrival until its response body is dropped ([`Activity::begin`]), so a
//! slow handler or a long streamed answer is never cut. A body that stops arriving mid-request is
//! [`super::body::RequestBody`]'s to time out.
//!
//! The clock is touched only while the connection waits: a read or write that makes progress just
//! sets a flag, and the timer, when it fires, starts again if the flag was set.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use super::Body;

/// How long a connection may stay silent with no request in progress (closed after 1-2×).
pub const IDLE: Duration = Duration::from_secs(10);

/// The requests of one connection that are being answered.
#[derive(Debug, Default)]
pub struct Activity {
    in_flight: AtomicUsize,
}

impl Activity {
    /// A request has arrived: the connection is busy until the guard is dropped.
    pub fn begin(self: &Arc<Self>) -> Busy {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        Busy(self.clone())
    }

    fn busy(&self) -> bool {
        self.in_flight.load(Ordering::Relaxed) > 0
    }
}

/// A request in progress ([`Activity::begin`]); hand it to [`answered_with`] to keep the
/// connection busy until the response body is done.
pub struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// `body`, keeping `busy` until hyper has sent it all (or the connection ends) and drops it.
pub fn answered_with(body: Body, busy: Busy) -> Body {
    http_body_util::BodyExt::boxed(Guarded { body, _busy: busy })
}

struct Guarded {
    body: Body,
    _busy: Busy,
}

impl hyper::body::Body for Guarded {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A connection's reads and writes, failing with `TimedOut` once it has been idle too long.
pub struct IdleIo<T> {
    inner: T,
    activity: Arc<Activity>,
    timer: Pin<Box<Sleep>>,
    /// Something was read or written (or a request was in progress) since the timer was set.
    progressed: bool,
}

impl<T> IdleIo<T> {
    pub fn new(inner: T, activity: Arc<Activity>) -> IdleIo<T> {
        IdleIo { inner, activity, timer: Box::pin(tokio::time::sleep(IDLE)), progressed: false }
    }

    /// Called when the connection waits: whether it has waited too long with nothing to do.
    fn expired(&mut self, cx: &mut Context<'_>) -> bool {
        if self.activity.busy() {
            self.progressed = true;
            return false;
        }
        loop {
            if self.timer.as_mut().poll(cx).is_pending() {
                return false;
            }
            if !std::mem::take(&mut self.progressed) {
                return true;
            }
            self.timer.as_mut().reset(Instant::now() + IDLE);
        }
    }
}

fn timed_out() -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, "the connection was idle too long")
}

impl<T: AsyncRead + Unpin> AsyncRead for IdleIo<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Pending if self.expired(cx) => Poll::Ready(Err(timed_out())),
            Poll::Ready(Ok(())) if buf.filled().len() > before => {
                self.progressed = true;
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for IdleIo<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            self.progressed = true;
        }
        written
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            self.progressed = true;
        }
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test(start_paused = true)]
    async fn a_silent_connection_is_closed_and_a_busy_one_is_not() {
        // Silent from the start: closed after IDLE.
        let (ours, _theirs) = tokio::io::duplex(64);
        let activity = Arc::new(Activity::default());
        let mut io = IdleIo::new(ours, activity.clone());
        let started = Instant::now();
        let e = io.read(&mut [0; 8]).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), IDLE);

        // Talking, then silent: closed between IDLE and 2×IDLE after the last byte.
        let (ours, mut theirs) = tokio::io::duplex(64);
        let mut io = IdleIo::new(ours, activity.clone());
        tokio::time::sleep(IDLE / 2).await;
        theirs.write_all(b"x").await.unwrap();
        assert_eq!(io.read(&mut [0; 8]).await.unwrap(), 1);
        let last = Instant::now();
        assert_eq!(io.read(&mut [0; 8]).await.unwrap_err().kind(), io::ErrorKind::TimedOut);
        assert!(last.elapsed() >= IDLE && last.elapsed() <= 2 * IDLE, "{:?}", last.elapsed());

        // A request in progress (a slow handler): never closed, however long; afterwards the
        // wait starts again.
        let (ours, _theirs) = tokio::io::duplex(64);
        let mut io = IdleIo::new(ours, activity.clone());
        let busy = activity.begin();
        let waited = tokio::time::timeout(10 * IDLE, io.read(&mut [0; 8])).await;
        assert!(waited.is_err(), "still open while busy");
        drop(busy);
        let done = Instant::now();
        assert_eq!(io.read(&mut [0; 8]).await.unwrap_err().kind(), io::ErrorKind::TimedOut);
        assert!(done.elapsed() >= IDLE, "{:?}", done.elapsed());
    }
}
