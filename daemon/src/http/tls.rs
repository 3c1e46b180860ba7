//! TLS on the public listener (rustls over aws-lc-rs; its configuration from [`crate::certs`]). Handshakes run in their own
//! tasks with a deadline, so a slow or silent client cannot stall the accept loop.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::server::TlsStream;

use super::Acceptor;
use latchkey_domain::live::TlsSlot;

const HANDSHAKE_DEADLINE: Duration = Duration::from_secs(10);

/// Accepts TCP connections and hands out those whose TLS handshake completed.
pub struct TlsAcceptor {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    accept_task: tokio::task::JoinHandle<()>,
}

impl TlsAcceptor {
    /// `config` is read at every connection, so a reload's new certificate serves the next one.
    pub fn new(listener: TcpListener, config: TlsSlot) -> TlsAcceptor {
        let (tx, ready) = mpsc::channel(64);
        let accept_task = tokio::spawn(async move {
            loop {
                let (tcp, peer) = match listener.accept().await {
                    Ok(c) => c,
                    Err(e) => {
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = tcp.set_nodelay(true);
                let (acceptor, tx) = (tokio_rustls::TlsAcceptor::from(config.get()), tx.clone());
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_DEADLINE, acceptor.accept(tcp)).await {
                        Ok(Ok(tls)) => {
                            let _ = tx.send((tls, peer)).await;
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                });
            }
        });
        TlsAcceptor { ready, accept_task }
    }
}

impl Drop for TlsAcceptor {
    fn drop(&mut self) {
        self.accept_task.abort();
    }
}

impl Acceptor for TlsAcceptor {
    type Io = TlsStream<TcpStream>;
    type Peer = SocketAddr;
    async fn accept(&mut self) -> std::io::Result<Option<(Self::Io, Self::Peer)>> {
        match self.ready.recv().await {
            Some(c) => Ok(Some(c)),
            None => Err(std::io::Error::other("the TLS accept task ended")),
        }
    }
}
