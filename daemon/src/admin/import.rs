//! `POST /admin/v1/tenants/{slug}/users/import[?dry_run=true]`: the CSV as the body; the answer is
//! a stream of JSON lines — `{"type":"progress",…}` as rows are handled, then one
//! `{"type":"summary",…}`. Unlike the API endpoint, bad rows are rejected one by one and the good
//! ones are invited; rows are committed in batches, and a re-run skips who is already present.
//!
//! Memory stays flat whatever the file's size: the body goes to a temporary file as it arrives;
//! its lines are counted, then one pass finds the rejected rows (header errors are refused before
//! any answer) and sorts the good ones by address into temporary runs (`users::sorted`); the
//! batches take the good rows in that order, and each batch's links leave with its progress line.
//! The links therefore come in address order, not the file's.

use std::collections::HashSet;
use std::io::{BufReader, Seek, SeekFrom};

use hyper::Response;
use latchkey::admin::{ImportLine, InvitedRow};
use latchkey::codes;

use super::audit::AdminAction;
use crate::error::Error;
use crate::http::body::Req;
use crate::http::lines::{json_line, stream};
use crate::state::State;
use crate::store;
use crate::tenants::require;
use crate::users::import::{self, Outcome, Row};
use crate::users::sorted::Sorter;

/// Rows per write transaction. Each commit writes every index page its rows touched: new users'
/// ids, handles and token keys begin with the time and append (`users::ids`), and the rows come
/// in address order, so the e-mail index's pages are each written about once. Small enough to
/// hold the writer for about 0.1 s (other writes wait behind it), to send a progress line as
/// often, and to keep a bounded batch in memory.
pub(super) const BATCH: usize = 10_000;

/// Rejected rows listed in the summary at most; beyond, a count.
const REJECTED_KEPT: usize = 10_000;

pub async fn import(
    state: &std::sync::Arc<State>,
    slug: String,
    dry_run: bool,
    req: Req,
    actor: String,
) -> Result<Response<crate::http::Body>, Error> {
    // The body is the CSV file itself: `text/csv` (what the CLI sends), or no type at all.
    if req.headers().contains_key(hyper::header::CONTENT_TYPE)
        && !crate::http::request::content_type_is(req.headers(), "text/csv")
    {
        return Err(Error::new(
            crate::error::Kind::UnsupportedMediaType,
            latchkey::codes::UNSUPPORTED_MEDIA_TYPE,
            "send the CSV file as the body with Content-Type: text/csv",
        ));
    }
    let max = state.config.limits.invite_file_max;
    let dir = state.config.spill_dir();
    let mut file = crate::http::spill::spill_body(req, max, &dir).await?;
    let s = slug.clone();
    let (tenant_id, base_url, tenant_name, known) = state
        .db
        .read(move |tx| -> Result<_, Error> {
            let t = require(tx, &s)?;
            let roles: HashSet<String> = store::roles::list(tx, t.id)?.into_iter().map(|r| r.name).collect();
            Ok((t.id, t.base_url, t.name, roles))
        })
        .await?;
    let rows_max = state.config.limits.invite_rows_max;
    // The pass over the file: count the rows, collect the rejected ones (kept up to a bound: a
    // file of a million bad rows must not fill the memory either) and sort the good ones.
    let (total, rejected, sorted) = tokio::task::spawn_blocking(move || {
        // The duplicate check's table made once at its size: grown as it fills, it would hold
        // the old table and the new one at once (28 MiB instead of 19 at a million rows).
        let lines = import::count_lines(BufReader::new(&mut file))
            .map_err(|e| Error::internal(format!("reading the upload: {e}")))?;
        file.seek(SeekFrom::Start(0)).map_err(|e| Error::internal(format!("rewinding the upload: {e}")))?;
        let (mut total, mut rejected, mut omitted) = (0usize, Vec::new(), 0u64);
        let mut sorter = Sorter::new(&dir);
        let mut failed = None;
        let scanned = import::scan_with(BufReader::new(&mut file), &known, rows_max, lines, |row| {
            total += 1;
            match row {
                Ok(r) => match sorter.push(r) {
                    Ok(()) => true,
                    Err(e) => {
                        failed = Some(e);
                        false
                    }
                },
                Err(e) => {
                    if rejected.len() < REJECTED_KEPT {
                        rejected.push(e)
                    } else {
                        omitted += 1
                    }
                    true
                }
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        scanned.map_err(|header| Error::invalid(codes::INVALID_INPUT, header.reason))?;
        if omitted > 0 {
            let reason = format!("{omitted} more rejected row(s) are not listed; fix the ones above and run again");
            rejected.push(latchkey::admin::RejectedRow { row: 0, column: "file".into(), reason });
        }
        let sorted = sorter.finish()?;
        // The duplicate check's table (18 MiB at a million rows) and the runs' rows are free now,
        // but glibc keeps them in this thread's arena: given back before the batches are stored
        // (while the writer's page cache fills), they do not add to the daemon's peak.
        crate::memory::trim();
        // The upload is closed (and gone) here: the runs hold what is left to store.
        Ok((total, rejected, sorted))
    })
    .await
    .map_err(Error::internal)??;

    // On a blocking thread: the good rows in address order, in batches handed to the task below.
    let (tx_rows, mut rx_rows) = tokio::sync::mpsc::channel::<Result<Vec<Row>, Error>>(1);
    tokio::task::spawn_blocking(move || {
        let mut batch = Vec::with_capacity(BATCH);
        for row in sorted {
            let full = match row {
                Ok(r) => {
                    batch.push(r);
                    batch.len() == BATCH
                }
                Err(e) => {
                    let _ = tx_rows.blocking_send(Err(e));
                    return;
                }
            };
            if full && tx_rows.blocking_send(Ok(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)))).is_err() {
                return;
            }
        }
        if !batch.is_empty() {
            let _ = tx_rows.blocking_send(Ok(batch));
        }
    });

    let (tx_lines, response) = stream();
    let state = state.clone();
    tokio::spawn(async move {
        let now = state.clock.now();
        let ttl = state.config.tokens.invite.as_secs() as i64;
        // Only counts are kept: each batch's links leave with its progress line, so the daemon's
        // memory does not grow with the number of invitations.
        let (mut invited, mut already) = (0usize, 0usize);
        let mut failure = None;
        let mut done = rejected.len();
        while let Some(chunk) = rx_rows.recv().await {
            let chunk = match chunk {
                Ok(c) => c,
                Err(e) => {
                    failure = Some(format!("{e}"));
                    break;
                }
            };
            let size = chunk.len();
            let base = base_url.clone();
            let result = if dry_run {
                state
                    .db
                    .read(move |tx| -> Result<Outcome, Error> {
                        let mut o = Outcome::default();
                        for row in &chunk {
                            if store::users::by_email(tx, tenant_id, &row.email)?.is_some() {
                                o.already_present.push(row.email.clone());
                            } else {
                                o.invited.push(InvitedRow {
                                    email: row.email.clone(),
                                    name: row.name.clone(),
                                    invite_url: String::new(),
                                    emailed: None,
                                    email_error: None,
                                });
                            }
                        }
                        Ok(o)
                    })
                    .await
            } else {
                state
                    .db
                    .write(move |tx| -> Result<Outcome, Error> {
                        let mut o = Outcome::default();
                        import::invite_rows(tx, tenant_id, &base, &chunk, now, now + ttl, &mut o)?;
                        Ok(o)
                    })
                    .await
            };
            let mut batch = match result {
                Ok(o) => o,
                Err(e) => {
                    failure = Some(format!("{e}"));
                    break;
                }
            };
            if !dry_run {
                import::deliver_all(&state, &tenant_name, &mut batch.invited).await;
            }
            invited += batch.invited.len();
            already += batch.already_present.len();
            done += size;
            let line = ImportLine::Progress {
                processed: done as u64,
                total: total as u64,
                invited: batch.invited,
                already_present: batch.already_present,
            };
            if tx_lines.send(json_line(&line)).await.is_err() {
                // The client went away: stop, but the trail still says what was done.
                failure = Some("the client went away; a re-run continues".into());
                break;
            }
        }
        tracing::info!(tenant = %slug, invited, already, rejected = rejected.len(), dry_run, "user import");
        if !dry_run {
            // One event for the whole file, with its counts: a 10,000-row import is one line of
            // the trail that still says what it did.
            let mut detail = format!("invited={invited} already_present={already} rejected={}", rejected.len());
            if let Some(f) = &failure {
                detail.push_str(&format!("; stopped: {f}"));
            }
            let outcome =
                if failure.is_some() { format!("failure: {}", codes::IMPORT_FAILED) } else { "success".into() };
            let mut event =
                crate::audit::event(state.clock.now(), Some(&slug), &actor, AdminAction::UserImport.as_str(), &outcome);
            event.detail = Some(detail);
            state.audit.record(event);
        }
        let summary = ImportLine::Summary {
            dry_run,
            invited: invited as u64,
            already_present: already as u64,
            rejected,
            error: failure,
        };
        let _ = tx_lines.send(json_line(&summary)).await;
    });

    Ok(response)
}
