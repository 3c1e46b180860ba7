//! `POST {api_url}/v1/users/invite`: a CSV file in `multipart/form-data`, from a client holding an
//! access token of this tenant with scope `users:invite` (docs/http-api.md).
//!
//! The file goes to a temporary file as it arrives (`http/spill.rs`); the domain's all-or-nothing
//! policy (`users::upload`) checks and stores it. The answer lists every invitation, streamed
//! from the temporary files the storing transaction wrote, after the commit.

use bytes::Bytes;

use futures_util::StreamExt;
use http_body_util::BodyExt;
use hyper::header;
use hyper::{Response, StatusCode};
use latchkey::codes;
use serde_json::json;

use super::body::{Req, declared_length, too_large};
use super::response::json;
use super::{Body, Cx};
use latchkey_domain::error::{Error, Kind};
use latchkey_domain::oidc::introspection::check_access_alone;
use latchkey_domain::users::upload::{self, Made};

fn file_too_large(max: u64) -> Error {
    too_large(max, "the file (limits.invite_file_max)")
}

pub async fn invite(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, Error> {
    let (state, tenant) = (cx.state, &cx.tenant);
    // Who: a Bearer token of this tenant with scope users:invite.
    let presented = super::dpop::access_token(cx, &req).map_err(super::ceremony::token_refused)?.ok_or_else(|| {
        Error::unauthenticated(codes::INVALID_TOKEN, "an access token is required (Authorization: Bearer)")
    })?;
    let now = cx.now();
    let t = tenant.clone();
    let checked = check_access_alone(state, t, presented, now).await?;
    let claims = checked.map_err(super::ceremony::token_refused)?.0;
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

    // The whole file is checked first: any bad row refuses it and nothing is stored.
    let terms = upload::Terms {
        rows_max: state.config.limits.invite_rows_max,
        ttl: state.config.tokens.invite.as_secs() as i64,
        now,
        dir,
    };
    let made = match upload::invite_file(&state.db, tenant, file, terms).await? {
        Ok(made) => made,
        Err(errors) => {
            let description = match (errors.rows(), errors.problems()) {
                (0, _) => "the file is invalid; nothing was stored".to_owned(),
                (rows, problems) if rows == problems => format!("{rows} row(s) are invalid; nothing was stored"),
                (rows, problems) => {
                    format!("{rows} row(s) are invalid ({problems} problems); nothing was stored")
                }
            };
            let (rows, reasons) = errors.into_parts();
            let body = json!({
                "error": codes::INVALID_ROWS,
                "error_description": description,
                "rows": rows,
                "reasons": reasons,
            });
            return Ok(json(StatusCode::UNPROCESSABLE_ENTITY, &body));
        }
    };
    let mut e = cx.event(&claims.client_id, "users.invite", "success");
    e.detail = Some(format!("{} invited, {} already present", made.invited, made.already));
    state.audit.record(e);
    Ok(answer(state.live.get().mailer.clone(), tenant.display_name.clone(), made))
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
    tokio::spawn(async move {
        let (mut invited, mut already) = made.read_back();
        let mut text = Vec::with_capacity(64 * 1024);
        text.extend_from_slice(b"{\"invited\":[");
        let mut first = true;
        // A client that goes away stops the answer, not the e-mails: every invited user still
        // gets theirs.
        let mut listening = true;
        while let Some(mut chunk) = invited.recv().await {
            latchkey_domain::mail::send_invitations(mailer.clone(), &tenant_name, &mut chunk).await;
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
