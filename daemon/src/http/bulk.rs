//! `POST {api_url}/v1/users/invite`: a CSV file in `multipart/form-data`, from a client holding an
//! access token of this tenant with scope `users:invite` (docs/http-api.md).
//!
//! The file goes to a temporary file as it arrives (`http/spill.rs`); a first pass checks every
//! row (any bad row refuses the file, nothing stored), and the storing transaction reads the rows
//! from the file again, so the parsed file is never held in memory. The answer lists every
//! invitation: it is written to temporary files during the transaction and streamed from them
//! after the commit, so the daemon's memory does not grow with the number of new users either.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::Path;

use bytes::Bytes;
use latchkey::admin::InvitedRow;
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;

use futures_util::StreamExt;
use http_body_util::BodyExt;
use hyper::header;
use hyper::{Response, StatusCode};
use latchkey::codes;
use serde_json::json;

use super::body::{Req, declared_length, too_large};
use super::request::bearer;
use super::response::json;
use super::{Body, Cx};
use latchkey_domain::error::{Error, Kind};
use latchkey_domain::oidc::introspection::check_access;
use latchkey_domain::users::import::{self, Outcome};
use latchkey_store as store;

fn file_too_large(max: u64) -> Error {
    too_large(max, "the file (limits.invite_file_max)")
}

pub async fn invite(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, Error> {
    let (state, tenant) = (cx.state, &cx.tenant);
    // Who: a Bearer token of this tenant with scope users:invite.
    let token = bearer(req.headers()).ok_or_else(|| {
        Error::unauthenticated(codes::INVALID_TOKEN, "an access token is required (Authorization: Bearer)")
    })?;
    let now = cx.now();
    let t = tenant.clone();
    let checked = state.db.read(move |tx| Ok::<_, store::StoreError>(check_access(tx, &t, &token, now))).await?;
    let claims = checked.map_err(|e| Error::unauthenticated(codes::INVALID_TOKEN, e.description))?.0;
    if !claims.has_scope("users:invite") {
        return Err(Error::forbidden(codes::INSUFFICIENT_SCOPE, "the access token lacks the users:invite scope"));
    }

    // What: exactly one file field, within the size limit, read as a stream.
    let max = state.config.limits.invite_file_max;
    let boundary = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|ct| multer::parse_boundary(ct).ok())
        .ok_or_else(|| {
            Error::new(
                Kind::UnsupportedMediaType,
                codes::UNSUPPORTED_MEDIA_TYPE,
                "send the CSV as multipart/form-data with a field named file",
            )
        })?;
    // Room for the multipart framing around the file itself.
    let envelope = max + 64 * 1024;
    if declared_length(&req).is_some_and(|n| n > envelope) {
        return Err(file_too_large(max));
    }
    let stream = req.into_body().into_data_stream().map(|r| r.map_err(std::io::Error::other));
    let limits = multer::Constraints::new().size_limit(multer::SizeLimit::new().whole_stream(envelope).per_field(max));
    let mut multipart = multer::Multipart::with_constraints(stream, boundary, limits);
    let dir = state.config.spill_dir();
    let mut file: Option<std::fs::File> = None;
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => return Err(multipart_error(e, max)),
        };
        if field.name() != Some("file") {
            continue;
        }
        if file.is_some() {
            return Err(Error::invalid(codes::INVALID_INPUT, "send exactly one file field, not several"));
        }
        let mut spill = super::spill::Spill::new(&dir, max)?;
        let mut field = field;
        loop {
            match field.chunk().await {
                Ok(Some(chunk)) => spill.add(&chunk).map_err(|_| file_too_large(max))?,
                Ok(None) => break,
                Err(e) => return Err(multipart_error(e, max)),
            }
        }
        file = Some(spill.finish()?.0);
    }
    let file =
        file.ok_or_else(|| Error::invalid(codes::INVALID_INPUT, "no file field: send the CSV in a field named file"))?;

    // Whole-file validation first: any bad row refuses the file and nothing is stored.
    let t = tenant.id;
    let known: HashSet<String> =
        state.db.read(move |tx| store::roles::list(tx, t)).await?.into_iter().map(|r| r.name).collect();
    let rows_max = state.config.limits.invite_rows_max;
    let roles = known.clone();
    let (file, errors) = tokio::task::spawn_blocking(move || {
        let mut file = file;
        let mut errors = vec![];
        let scanned = import::scan(BufReader::new(&mut file), &roles, rows_max, |row| {
            if let Err(e) = row {
                errors.push(e);
            }
            true
        });
        if let Err(header) = scanned {
            errors.push(header);
        }
        (file, errors)
    })
    .await
    .map_err(Error::internal)?;
    if !errors.is_empty() {
        let body = json!({
            "error": codes::INVALID_ROWS,
            "error_description": format!("{} row(s) are invalid; nothing was stored", errors.len()),
            "rows": errors,
        });
        return Ok(json(StatusCode::UNPROCESSABLE_ENTITY, &body));
    }
    let ttl = state.config.tokens.invite.as_secs() as i64;
    let base = tenant.base_url.clone();
    let t = tenant.id;
    // One transaction for the whole file (all or nothing), reading the checked rows again in
    // batches: only one batch of parsed rows is in memory at a time. What each batch did goes to
    // two more temporary files, read back for the answer once the transaction has committed.
    let made = state
        .db
        .write(move |tx| -> Result<Made, Error> {
            let mut file = file;
            file.seek(SeekFrom::Start(0)).map_err(|e| Error::internal(format!("rewinding the upload: {e}")))?;
            let mut made = Made::new(&dir)?;
            let mut out = Outcome::default();
            let mut batch = Vec::with_capacity(BATCH);
            let mut failed = None;
            let _ = import::scan(BufReader::new(file), &known, rows_max, |row| {
                if let Ok(r) = row {
                    batch.push(r);
                }
                if batch.len() == BATCH {
                    let stored = import::invite_rows(tx, t, &base, &batch, now, now + ttl, &mut out)
                        .and_then(|()| made.keep(&mut out));
                    if let Err(e) = stored {
                        failed = Some(e);
                        return false;
                    }
                    batch.clear();
                }
                true
            });
            if let Some(e) = failed {
                return Err(e);
            }
            import::invite_rows(tx, t, &base, &batch, now, now + ttl, &mut out)?;
            made.keep(&mut out)?;
            Ok(made)
        })
        .await?;
    let mut e = cx.event(&claims.client_id, "users.invite", "success");
    e.detail = Some(format!("{} invited, {} already present", made.invited, made.already));
    state.audit.record(e);
    Ok(answer(state.live.get().mailer.clone(), tenant.name.clone(), made))
}

/// Rows per batch of the storing pass, and per chunk of the answer.
const BATCH: usize = 1000;

/// What the storing transaction did, kept in unlinked temporary files (one JSON value a line)
/// rather than in memory: the answer can list a hundred thousand links with flat memory.
struct Made {
    invited_rows: BufWriter<File>,
    already_rows: BufWriter<File>,
    invited: usize,
    already: usize,
}

impl Made {
    fn new(dir: &Path) -> Result<Made, Error> {
        Ok(Made {
            invited_rows: BufWriter::new(super::spill::temp_file(dir)?),
            already_rows: BufWriter::new(super::spill::temp_file(dir)?),
            invited: 0,
            already: 0,
        })
    }

    /// Moves a batch's outcome to the files.
    fn keep(&mut self, out: &mut Outcome) -> Result<(), Error> {
        let io = |e: std::io::Error| Error::internal(format!("writing the import's answer: {e}"));
        for row in out.invited.drain(..) {
            serde_json::to_writer(&mut self.invited_rows, &row).map_err(|e| io(e.into()))?;
            self.invited_rows.write_all(b"\n").map_err(io)?;
            self.invited += 1;
        }
        for email in out.already_present.drain(..) {
            serde_json::to_writer(&mut self.already_rows, &email).map_err(|e| io(e.into()))?;
            self.already_rows.write_all(b"\n").map_err(io)?;
            self.already += 1;
        }
        Ok(())
    }
}

/// The answer, `{"invited":[…],"already_present":[…]}`, streamed from the files a chunk at a
/// time; with `[smtp]`, each chunk's invitations are e-mailed just before it is sent. The rows
/// are committed already: a client that goes away loses nothing but the answer, and the
/// e-mails still go out.
fn answer(
    mailer: Option<std::sync::Arc<latchkey_domain::mail::Mailer>>,
    tenant_name: String,
    made: Made,
) -> Response<Body> {
    let (tx, response) = super::lines::stream_as("application/json");
    let Made { invited_rows, already_rows, .. } = made;
    tokio::spawn(async move {
        let mut invited = read_back::<InvitedRow>(invited_rows);
        let mut already = read_back::<String>(already_rows);
        let mut text = Vec::with_capacity(64 * 1024);
        text.extend_from_slice(b"{\"invited\":[");
        let mut first = true;
        // A client that goes away stops the answer, not the e-mails: every invited user still
        // gets theirs.
        let mut listening = true;
        while let Some(mut chunk) = invited.recv().await {
            import::deliver_with(mailer.clone(), &tenant_name, &mut chunk).await;
            if !listening {
                continue;
            }
            append(&mut text, &mut first, &chunk);
            listening = tx.send(Bytes::from(std::mem::take(&mut text))).await.is_ok();
        }
        if !listening {
            return;
        }
        text.extend_from_slice(b"],\"already_present\":[");
        first = true;
        while let Some(chunk) = already.recv().await {
            append(&mut text, &mut first, &chunk);
            if tx.send(Bytes::from(std::mem::take(&mut text))).await.is_err() {
                return;
            }
        }
        text.extend_from_slice(b"]}");
        let _ = tx.send(Bytes::from(text)).await;
    });
    response
}

/// Appends `items` to a JSON array being written, commas between elements.
fn append<T: serde::Serialize>(text: &mut Vec<u8>, first: &mut bool, items: &[T]) {
    for item in items {
        if !std::mem::take(first) {
            text.push(b',');
        }
        // Our own wire types always serialise.
        let _ = serde_json::to_writer(&mut *text, item);
    }
}

/// Reads a file of JSON lines back in chunks of [`BATCH`], on a blocking thread. A file that
/// cannot be read back ends the answer early (the client sees a truncated document); it was
/// written by this process moments ago, so that is a disk failure, logged.
fn read_back<T: DeserializeOwned + Send + 'static>(rows: BufWriter<File>) -> mpsc::Receiver<Vec<T>> {
    let (tx, rx) = mpsc::channel(2);
    tokio::task::spawn_blocking(move || {
        let mut file = match rows.into_inner().map_err(|e| e.into_error()) {
            Ok(f) => f,
            Err(e) => return tracing::error!(error = %e, "the import's answer could not be written"),
        };
        if let Err(e) = file.seek(SeekFrom::Start(0)) {
            return tracing::error!(error = %e, "the import's answer could not be read back");
        }
        let mut chunk = Vec::with_capacity(BATCH);
        for line in BufReader::new(file).lines() {
            match line.map_err(|e| e.to_string()).and_then(|l| serde_json::from_str(&l).map_err(|e| e.to_string())) {
                Ok(v) => chunk.push(v),
                Err(e) => return tracing::error!(error = %e, "the import's answer could not be read back"),
            }
            if chunk.len() == BATCH && tx.blocking_send(std::mem::take(&mut chunk)).is_err() {
                return;
            }
        }
        if !chunk.is_empty() {
            let _ = tx.blocking_send(chunk);
        }
    });
    rx
}

/// The body's own error inside the stream error that multer reports.
fn body_error<'a>(
    read: &'a (dyn std::error::Error + Send + Sync + 'static),
) -> Option<&'a (dyn std::error::Error + 'static)> {
    let io = read.downcast_ref::<std::io::Error>()?;
    let inner = io.get_ref()?;
    inner.downcast_ref::<super::body::BodyError>().map(|b| b as &(dyn std::error::Error + 'static))
}

fn multipart_error(e: multer::Error, max: u64) -> Error {
    match e {
        multer::Error::StreamSizeExceeded { .. } | multer::Error::FieldSizeExceeded { .. } => file_too_large(max),
        // The body itself failed (it stopped arriving): not a multipart mistake.
        multer::Error::StreamReadFailed(read) => match body_error(&*read) {
            Some(body) => super::body::unreadable(body),
            None => not_multipart(read),
        },
        other => not_multipart(other),
    }
}

fn not_multipart(cause: impl std::fmt::Display) -> Error {
    Error::invalid(
        codes::INVALID_INPUT,
        "the body is not well-formed multipart/form-data; send the CSV as a file field named file",
    )
    .caused_by(cause)
}
