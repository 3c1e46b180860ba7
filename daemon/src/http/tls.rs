//! TLS on the public listener (rustls over aws-lc-rs), from PEM files. Handshakes run in their own
//! tasks with a deadline, so a slow or silent client cannot stall the accept loop.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::server::TlsStream;

use super::Acceptor;
use crate::reload::TlsSlot;

const HANDSHAKE_DEADLINE: Duration = Duration::from_secs(10);

/// Reads the certificate chain and private key; offers HTTP/2 and HTTP/1.1 by ALPN.
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("server.tls_cert {}: {e}", cert.display()))?;
    if certs.is_empty() {
        return Err(format!("server.tls_cert {}: no certificate in the file", cert.display()));
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("server.tls_key {}: {e}", key.display()))?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("server.tls_cert/tls_key do not match: {e}"))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

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
