//! HTTP plumbing shared by the public listener and the admin socket: the accept loop with
//! graceful shutdown, request reading, error rendering and response helpers.
//!
//! A public request goes `public::handle` → `route` (one parse of method and path) → one
//! handler in `ceremony`, `oauth`, `pages` or `bulk` → a domain module → `store`. Handlers read
//! the request with `request` and `body`, and their errors become responses in `errors`.

pub mod body;
pub mod bulk;
pub mod ceremony;
pub mod device;
pub mod dpop;
pub mod errors;
pub mod html;
pub mod i18n;
pub mod idle;
pub mod lines;
pub mod oauth;
pub mod pages;
pub mod public;
pub mod request;
pub mod response;
pub mod route;
pub mod scim;
pub mod scrape;
pub mod social;
pub mod spill;
pub mod tls;

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{Semaphore, watch};

/// What every tenant handler is given: the daemon, the tenant the request was routed to, and the
/// facts about the request computed once (the caller's address).
pub struct Cx<'a> {
    pub state: &'a latchkey_domain::state::State,
    pub tenant: std::sync::Arc<latchkey_domain::registry::TenantRuntime>,
    pub ip: std::net::IpAddr,
    /// The language of the pages this request gets ([`i18n::negotiate`]).
    pub tr: i18n::Tr,
    /// The request's path and query, where the language menu comes back to.
    pub here: String,
}

impl Cx<'_> {
    /// The strings of a page for a request that named `ui_locales` (a pending authorization
    /// request's), which come before the browser's own preferences.
    pub fn tr_for(&self, ui_locales: Option<&str>) -> i18n::Tr {
        match ui_locales.and_then(|v| v.split_whitespace().find_map(i18n::Locale::parse)) {
            Some(l) => i18n::Tr(l),
            None => self.tr,
        }
    }

    pub fn now(&self) -> latchkey_domain::clock::Timestamp {
        self.state.clock.now()
    }

    /// An audit event of this request's tenant and address.
    pub fn event(&self, actor: &str, action: &str, outcome: &str) -> latchkey_store::audit::Event {
        let mut e = latchkey_domain::audit::event(self.now(), Some(&self.tenant.slug), actor, action, outcome);
        e.ip = Some(self.ip.to_string());
        e
    }
}

/// Response body of every handler: full bytes now, a stream for bulk import later.
pub type Body = BoxBody<Bytes, std::io::Error>;

/// How long a client may take to send its request headers.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Read buffer of one HTTP/1 connection: request line and headers must fit (hyper's minimum is
/// 8 KiB).
const MAX_HEADER_BUFFER: usize = 64 * 1024;
/// How long in-flight requests may run after shutdown begins.
pub const DRAIN_DEADLINE: Duration = Duration::from_secs(10);

/// Something that hands out connections: a TCP listener or the admin Unix socket.
pub trait Acceptor: Send + 'static {
    type Io: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    /// Who is on the other end, for logs and per-IP limits.
    type Peer: Clone + Send + Sync + 'static;
    fn accept(&mut self) -> impl Future<Output = std::io::Result<Option<(Self::Io, Self::Peer)>>> + Send;
}

/// How many connections a listener serves at once, and what to count refusals with.
pub struct Capacity {
    pub max_connections: usize,
    pub on_refused: Box<dyn Fn() + Send + Sync>,
}

/// Serves connections from `acceptor` until `shutdown` turns true, then waits for in-flight
/// requests up to [`DRAIN_DEADLINE`]. Past `capacity.max_connections` open connections, a new
/// one is closed as soon as it is accepted: cheap for us, a clear signal for the client, and the
/// daemon's memory stays bounded under a flood.
pub async fn serve<A, H, F>(
    mut acceptor: A,
    handler: H,
    mut shutdown: watch::Receiver<bool>,
    what: &'static str,
    capacity: Capacity,
) where
    A: Acceptor,
    H: Fn(Request<Incoming>, A::Peer) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<Body>> + Send + 'static,
{
    let graceful = GracefulShutdown::new();
    let slots = Arc::new(Semaphore::new(capacity.max_connections));
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // Headers must arrive within the timeout and fit a modest buffer (hyper's default allows
    // ~400 KiB per connection, which a flood of slow clients would multiply).
    builder.http1().timer(TokioTimer::new()).header_read_timeout(HEADER_READ_TIMEOUT).max_buf_size(MAX_HEADER_BUFFER);
    loop {
        tokio::select! {
            accepted = acceptor.accept() => {
                let (io, peer) = match accepted {
                    Ok(Some(c)) => c,
                    // Refused before any byte was read (e.g. a peer uid not allowed).
                    Ok(None) => continue,
                    Err(e) => {
                        tracing::warn!(listener = what, error = %e, "accept failed");
                        // Back off briefly: EMFILE and friends would otherwise spin.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let Ok(slot) = slots.clone().try_acquire_owned() else {
                    (capacity.on_refused)();
                    tracing::debug!(listener = what, "connection limit reached; connection closed");
                    drop(io);
                    continue;
                };
                let handler = handler.clone();
                // A connection that does nothing while none of its requests is being answered is
                // closed: it would hold its slot for ever (see `idle`).
                let activity = Arc::new(idle::Activity::default());
                let io = idle::IdleIo::new(io, activity.clone());
                let service = service_fn(move |req| {
                    let busy = activity.begin();
                    let fut = handler(req, peer.clone());
                    async move { Ok::<_, Infallible>(fut.await.map(|body| idle::answered_with(body, busy))) }
                });
                let conn = builder.serve_connection_with_upgrades(TokioIo::new(io), service);
                let watched = graceful.watch(conn.into_owned());
                tokio::spawn(async move {
                    if let Err(e) = watched.await {
                        tracing::debug!(listener = what, error = %e, "connection ended with an error");
                    }
                    drop(slot);
                });
            }
            _ = shutdown.changed() => break,
        }
    }
    drop(acceptor);
    tokio::select! {
        _ = graceful.shutdown() => tracing::debug!(listener = what, "drained"),
        _ = tokio::time::sleep(DRAIN_DEADLINE) => tracing::warn!(listener = what, "drain deadline passed; closing open connections"),
    }
}

pub struct TcpAcceptor(pub tokio::net::TcpListener);

impl Acceptor for TcpAcceptor {
    type Io = tokio::net::TcpStream;
    type Peer = std::net::SocketAddr;
    async fn accept(&mut self) -> std::io::Result<Option<(Self::Io, Self::Peer)>> {
        let (stream, addr) = self.0.accept().await?;
        let _ = stream.set_nodelay(true);
        Ok(Some((stream, addr)))
    }
}
