//! `POST /admin/v1/tenants/{slug}/users/import[?dry_run=true]`: the CSV as the body; the answer is
//! a stream of JSON lines — `{"type":"progress",…}` as rows are handled, then one
//! `{"type":"summary",…}`. Unlike the API endpoint, bad rows are rejected one by one and the good
//! ones are invited; rows are committed in batches, and a re-run skips who is already present.
//!
//! The file may have any number of rows, up to [`import::CLI_FILE_MAX`] bytes (the upload API's
//! limits are not this endpoint's). Memory stays flat whatever the file's size: the body goes to a temporary file as it arrives;
//! its lines are counted, then one pass finds the rejected rows (header errors are refused before
//! any answer) and sorts the good ones by address into temporary runs (`users::sorted`); the
//! batches take the good rows in that order, and each batch's links leave with its progress line.
//! The links therefore come in address order, not the file's.

use hyper::Response;
use latchkey::admin::ImportLine;
use latchkey::codes;

use super::audit::AdminAction;
use crate::http::body::Req;
use crate::http::lines::{json_line, stream};
use latchkey_domain::error::Error;
use latchkey_domain::state::State;
use latchkey_domain::users::bulk;
use latchkey_domain::users::import::{self, Outcome};

pub async fn import(
    state: &std::sync::Arc<State>,
    slug: String,
    dry_run: bool,
    req: Req,
    actor: String,
    file_name: Option<String>,
) -> Result<Response<crate::http::Body>, Error> {
    // The body is the CSV file itself: `text/csv` (what the CLI sends), or no type at all.
    if req.headers().contains_key(hyper::header::CONTENT_TYPE)
        && !crate::http::request::content_type_is(req.headers(), "text/csv")
    {
        return Err(Error::new(
            latchkey_domain::error::Kind::UnsupportedMediaType,
            latchkey::codes::UNSUPPORTED_MEDIA_TYPE,
            "send the CSV file as the body with Content-Type: text/csv",
        ));
    }
    // The upload API's limits (`limits.invite_file_max`, `invite_rows_max`) protect a public
    // endpoint; the admin socket is the operator's, whose file may have any number of rows: it
    // is bounded only by its size, checked as it is received, before anything is stored.
    let file = crate::http::spill::spill_body(req, import::CLI_FILE_MAX, &state.config.spill_dir()).await?;
    let (tenant, known) = import::tenant_and_roles(&state.db, slug.clone()).await?;
    let rows_max = u64::MAX;
    let dir = state.config.spill_dir();
    let bulk::Checked { total, rejected, sorted } =
        tokio::task::spawn_blocking(move || bulk::check_and_sort(file, &known, rows_max, &dir))
            .await
            .map_err(Error::internal)??;
    let rx_rows = bulk::sorted_batches(sorted);

    let (tx_lines, response) = stream();
    let state = state.clone();
    tokio::spawn(async move {
        let now = state.clock.now();
        let expires_at = now + state.config.tokens.invite.as_secs() as i64;
        let steps = import::steps(&tenant, now, expires_at, dry_run);
        // Each batch's links leave with its progress line: the daemon's memory does not grow with
        // the number of invitations.
        let mut done = rejected.rows() as usize;
        let progress = |size: usize, batch: Outcome| {
            done += size;
            json_line(&ImportLine::Progress {
                processed: done as u64,
                total: total as u64,
                invited: batch.invited,
                already_present: batch.already_present,
            })
        };
        let totals = bulk::run(
            &state,
            tenant.brand.display_name.as_deref().unwrap_or(&tenant.name),
            rx_rows,
            steps,
            progress,
            &tx_lines,
        )
        .await;
        let (invited, already) = (totals.invited, totals.others);
        let rejected_rows = rejected.rows();
        tracing::info!(tenant = %slug, invited, already, rejected = rejected_rows, dry_run, "user import");
        if !dry_run {
            // One event for the whole file, with its counts: a 10,000-row import is one line of
            // the trail that still says what it did.
            let detail = totals.detail(format!("invited={invited} already_present={already} rejected={rejected_rows}"));
            let outcome = totals.outcome(codes::IMPORT_FAILED);
            let mut event = latchkey_domain::audit::event(
                state.clock.now(),
                Some(&slug),
                &actor,
                AdminAction::UserImport.as_str(),
                &outcome,
            );
            event.detail = Some(detail);
            event.subject = file_name;
            state.audit.record(event);
        }
        let (rejected, rejected_reasons) = rejected.into_parts();
        let summary = ImportLine::Summary {
            dry_run,
            invited: invited as u64,
            already_present: already as u64,
            rejected,
            rejected_rows,
            rejected_reasons,
            error: totals.failure,
        };
        let _ = tx_lines.send(json_line(&summary)).await;
    });

    Ok(response)
}
