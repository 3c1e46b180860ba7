//! `POST /admin/v1/backup`: a consistent online copy of the database, streamed to the caller.
//! The copy is made next to the database (same file system, same permissions), sent in chunks,
//! and removed. It holds sealed signing keys and hashed secrets, not the key-encryption key:
//! back that file up separately.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Frame;
use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;

use latchkey::codes;
use latchkey_domain::crypto::random_token;
use latchkey_domain::error::{Error, Kind};
use latchkey_domain::state::State;

struct Chunks(mpsc::Receiver<Result<Bytes, std::io::Error>>);

impl hyper::body::Body for Chunks {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.0.poll_recv(cx).map(|c| c.map(|r| r.map(Frame::data)))
    }
}

pub async fn backup(state: &State) -> Result<Response<crate::http::Body>, Error> {
    let Some(db_path) = state.db.sqlite_path().map(std::path::Path::to_owned) else {
        return Err(Error::new(
            Kind::Conflict,
            codes::BACKUP_UNSUPPORTED,
            format!(
                "this daemon keeps its data in PostgreSQL ({}): back it up with PostgreSQL's own tools, e.g. \
                 `pg_dump --format=custom --file=latchkey.dump DBNAME`, and keep a copy of the key-encryption key \
                 file (keys.encryption_key_file) with it: without that file the signing keys in the dump cannot be opened",
                state.db.describe()
            ),
        ));
    };
    let tmp = db_path.with_file_name(format!(".latchkey-backup-{}.db", random_token()?.replace('-', "x")));
    state.db.backup_to(tmp.clone()).await?;
    let mut file = tokio::fs::File::open(&tmp).await.map_err(Error::internal)?;
    let size = file.metadata().await.map_err(Error::internal)?.len();
    let (tx, rx) = mpsc::channel(4);
    tokio::spawn(async move {
        let mut buf = vec![0u8; 256 * 1024];
        loop {
            match file.read(&mut buf).await {
                Ok(0) => break,
                Ok(n) => {
                    if tx.send(Ok(Bytes::copy_from_slice(&buf[..n]))).await.is_err() {
                        break;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    break;
                }
            }
        }
        if let Err(e) = tokio::fs::remove_file(&tmp).await {
            tracing::warn!(error = %e, path = %tmp.display(), "could not remove the backup copy");
        }
    });
    let mut r = Response::new(Chunks(rx).boxed());
    *r.status_mut() = StatusCode::OK;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/vnd.sqlite3"));
    if let Ok(v) = HeaderValue::from_str(&size.to_string()) {
        h.insert(header::CONTENT_LENGTH, v);
    }
    Ok(r)
}
