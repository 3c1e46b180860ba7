//! The admin-socket client: one HTTP/1.1 request per call over the daemon's Unix socket.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use latchkey::ErrorBody;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::net::UnixStream;

use crate::error::CliError;

/// The admin socket to call and how it was chosen (the exit-3 hint says both).
#[derive(Debug, Clone)]
pub struct Socket {
    pub path: PathBuf,
    pub chosen: String,
}

/// Where the daemon's configuration is when `LATCHKEY_CONFIG` does not say (as for latchkeyd).
const DEFAULT_CONFIG: &str = "/etc/latchkey/config.toml";

/// Where the CLI looks for the socket when neither `--socket` nor `LATCHKEY_ADMIN_SOCKET` is set:
/// `./latchkey-data/admin.sock` (a `--dev` daemon started here), else `admin.socket` of the
/// daemon's configuration (`LATCHKEY_CONFIG`, as latchkeyd reads it, else
/// /etc/latchkey/config.toml), else /run/latchkey/admin.sock (latchkeyd's default).
pub fn default_socket() -> Socket {
    let dev = PathBuf::from("latchkey-data/admin.sock");
    if dev.exists() {
        return Socket { path: dev, chosen: "found in ./latchkey-data".into() };
    }
    let (config, whence) = match std::env::var_os("LATCHKEY_CONFIG").filter(|v| !v.is_empty()) {
        Some(p) => (PathBuf::from(p), " (from LATCHKEY_CONFIG)"),
        None => (PathBuf::from(DEFAULT_CONFIG), ""),
    };
    let why_not = match socket_from_config(&config) {
        Ok(Some(path)) => {
            return Socket { path, chosen: format!("admin.socket in {}{whence}", config.display()) };
        }
        Ok(None) => format!("{}{whence} sets no admin.socket", config.display()),
        Err(e) => format!("{}{whence}: {e}", config.display()),
    };
    Socket {
        path: PathBuf::from("/run/latchkey/admin.sock"),
        chosen: format!("the default: no ./latchkey-data/admin.sock here, and {why_not}"),
    }
}

/// `admin.socket` of a daemon configuration file; `Err` says why the file could not be used.
fn socket_from_config(path: &Path) -> Result<Option<PathBuf>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "does not exist".to_owned(),
        _ => format!("cannot be read ({e})"),
    })?;
    let table: toml::Table = toml::from_str(&text).map_err(|_| "is not valid TOML".to_owned())?;
    Ok(table.get("admin").and_then(|a| a.get("socket")).and_then(|s| s.as_str()).map(PathBuf::from))
}

pub struct Client {
    socket: Socket,
    runtime: tokio::runtime::Runtime,
}

impl Client {
    pub fn new(socket: Socket) -> Result<Client, CliError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| CliError::Internal(format!("cannot start the I/O runtime: {e}")))?;
        Ok(Client { socket, runtime })
    }

    pub fn socket(&self) -> &Path {
        &self.socket.path
    }

    /// Exit 3: the socket does not answer, or the daemon went away during the call.
    fn unreachable(&self, reason: String) -> CliError {
        CliError::Unreachable { socket: self.socket.path.clone(), chosen: self.socket.chosen.clone(), reason }
    }

    /// A body that breaks off is a daemon that stopped (or was killed) while answering: exit 3,
    /// like a daemon that is not there, rather than 1, which means it said no.
    fn cut_off(&self, e: hyper::Error) -> CliError {
        self.unreachable(format!("the connection ended before the answer was complete ({e}); did the daemon stop?"))
    }

    pub fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, CliError> {
        self.call(Method::GET, path, None::<&()>)
    }

    pub fn post<B: Serialize, T: DeserializeOwned>(&self, path: &str, body: &B) -> Result<T, CliError> {
        self.call(Method::POST, path, Some(body))
    }

    pub fn delete<B: Serialize>(&self, path: &str, body: &B) -> Result<(), CliError> {
        self.call::<B, serde_json::Value>(Method::DELETE, path, Some(body)).map(|_| ())
    }

    /// Sends one request; a 2xx answer is parsed as `T` (204 as JSON `null`), anything else as
    /// the daemon's `{code, message}`.
    pub fn call<B: Serialize, T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<T, CliError> {
        let payload = match body {
            Some(b) => Some(serde_json::to_vec(b).map_err(|e| CliError::Internal(e.to_string()))?),
            None => None,
        };
        let content_type = payload.as_ref().map(|_| "application/json");
        let bytes = self.runtime.block_on(async {
            let (status, body) = self.request(method, path, content_type, payload.unwrap_or_default()).await?;
            let bytes = body.collect().await.map_err(|e| self.cut_off(e))?;
            Ok::<_, CliError>(if status == StatusCode::NO_CONTENT { Bytes::new() } else { bytes.to_bytes() })
        })?;
        let bytes = if bytes.is_empty() { Bytes::from_static(b"null") } else { bytes };
        serde_json::from_slice(&bytes)
            .map_err(|e| CliError::Protocol(format!("unexpected answer from the daemon: {e}")))
    }

    /// POSTs to `path` and writes the streamed answer to `dest`, a new file of mode 0600 (a
    /// partial file is removed on failure). Returns the bytes written.
    pub fn download(&self, path: &str, dest: &Path) -> Result<u64, CliError> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let local =
            |e: std::io::Error| CliError::LocalWrite(format!("{}: {e} (the partial file is removed)", dest.display()));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(dest)
            .map_err(|e| CliError::File(format!("{}: {e} (nothing was sent)", dest.display())))?;
        let result = self.runtime.block_on(async {
            let (_, mut body) = self.request(Method::POST, path, None, vec![]).await?;
            let mut written = 0u64;
            while let Some(frame) = body.frame().await {
                let frame = frame.map_err(|e| self.cut_off(e))?;
                if let Ok(data) = frame.into_data() {
                    file.write_all(&data).map_err(local)?;
                    written += data.len() as u64;
                }
            }
            file.sync_all().map_err(local)?;
            Ok(written)
        });
        if result.is_err() {
            let _ = std::fs::remove_file(dest);
        }
        result
    }

    /// Sends `body` and hands each line of a streamed answer to `on_line` as it arrives.
    pub fn stream_lines(
        &self,
        path: &str,
        content_type: &str,
        body: Vec<u8>,
        mut on_line: impl FnMut(&str) -> Result<(), CliError>,
    ) -> Result<(), CliError> {
        self.runtime.block_on(async {
            let (_, mut body) = self.request(Method::POST, path, Some(content_type), body).await?;
            let mut pending: Vec<u8> = vec![];
            while let Some(frame) = body.frame().await {
                let frame = frame.map_err(|e| self.cut_off(e))?;
                if let Ok(data) = frame.into_data() {
                    pending.extend_from_slice(&data);
                    while let Some(pos) = pending.iter().position(|b| *b == b'\n') {
                        let line: Vec<u8> = pending.drain(..=pos).collect();
                        on_line(String::from_utf8_lossy(&line).trim())?;
                    }
                }
            }
            if !pending.is_empty() {
                on_line(String::from_utf8_lossy(&pending).trim())?;
            }
            Ok(())
        })
    }

    /// Connects, sends one request and returns a successful answer's status and (unread) body;
    /// any other answer becomes the daemon's refusal.
    async fn request(
        &self,
        method: Method,
        path: &str,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> Result<(StatusCode, Incoming), CliError> {
        let stream = UnixStream::connect(&self.socket.path).await.map_err(|e| self.unreachable(e.to_string()))?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| self.unreachable(e.to_string()))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut req = Request::builder()
            .method(method)
            .uri(format!("{}{path}", latchkey::admin::PREFIX))
            .header("host", "latchkeyd");
        if let Some(ct) = content_type {
            req = req.header("content-type", ct);
        }
        let req = req.body(Full::new(Bytes::from(body))).map_err(|e| CliError::Internal(e.to_string()))?;
        let res = sender.send_request(req).await.map_err(|e| {
            // The daemon closes connections from uids it does not allow without answering; a
            // daemon that stops (or crashes) mid-call looks the same from here.
            self.unreachable(format!(
                "{e}; the daemon closed the connection without answering: it stopped, or your uid is not in \
                 admin.allowed_uids"
            ))
        })?;
        let status = res.status();
        if status.is_success() {
            return Ok((status, res.into_body()));
        }
        let bytes = res.into_body().collect().await.map_err(|e| self.cut_off(e))?.to_bytes();
        Err(match serde_json::from_slice::<ErrorBody>(&bytes) {
            Ok(e) => CliError::Refused { code: e.code, message: e.message },
            Err(_) => CliError::Protocol(format!(
                "the daemon answered {status} without an error body: {}",
                String::from_utf8_lossy(&bytes)
            )),
        })
    }
}
