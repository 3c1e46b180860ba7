//! `POST /admin/v1/tenants/{slug}/users/reinvite` with `{"emails": [...]}` or
//! `{"all_pending": true}` (and `"dry_run"`): new invite links for users still `invited`,
//! answered like an import — a stream of JSON lines, `{"type":"progress",…}` per batch (with its
//! links, e-mailed when `[smtp]` is configured), then one `{"type":"summary",…}`.

use std::sync::Arc;

use hyper::Response;
use latchkey::admin::{Reinvite, ReinviteLine};

use super::audit::AdminAction;
use crate::http::body::{Req, Text, read_json};
use crate::http::lines::{json_line, stream};
use latchkey_domain::error::Error;
use latchkey_domain::state::State;
use latchkey_domain::tenants::require;
use latchkey_domain::users::bulk;
use latchkey_domain::users::reinvite::{self, Outcome};
use latchkey_store::{ReadTx, WriteTx};

pub async fn reinvite(
    state: &Arc<State>,
    slug: String,
    req: Req,
    actor: String,
) -> Result<Response<crate::http::Body>, Error> {
    // As large as an import file may be: `--all-pending` sends no list, but a script may.
    let r: Reinvite = read_json(req, state.config.limits.invite_file_max, Text::NoNul).await?;
    reinvite::validate(&r)?;
    let dry_run = r.dry_run;
    // One named user is the event's subject; a list or `--all-pending` is counted in its detail.
    let subject = match r.emails.as_slice() {
        [one] if !r.all_pending => Some(one.clone()),
        _ => None,
    };
    let s = slug.clone();
    let (tenant_id, base_url, tenant_name, targets) = state
        .db
        .read(move |tx| -> Result<_, Error> {
            let t = require(tx, &s)?;
            let targets = reinvite::targets(tx, t.id, &r)?;
            Ok((t.id, t.base_url, t.name, targets))
        })
        .await?;

    let (tx_lines, response) = stream();
    let state = state.clone();
    tokio::spawn(async move {
        let now = state.clock.now();
        let expires_at = now + state.config.tokens.invite.as_secs() as i64;
        let steps = bulk::Steps {
            store: move |tx: &WriteTx<'_>, emails: &[String], o: &mut Outcome| {
                reinvite::reinvite_rows(tx, tenant_id, &base_url, emails, now, expires_at, o)
            },
            preview: move |tx: &ReadTx<'_>, emails: &[String], o: &mut Outcome| {
                reinvite::preview_rows(tx, tenant_id, emails, o)
            },
            dry_run,
        };
        let total = targets.len();
        let mut done = 0;
        let progress = |size: usize, batch: Outcome| {
            done += size;
            json_line(&ReinviteLine::Progress {
                processed: done as u64,
                total: total as u64,
                invited: batch.invited,
                skipped: batch.skipped,
            })
        };
        let totals = bulk::run(&state, &tenant_name, bulk::batches_of(targets), steps, progress, &tx_lines).await;
        let (invited, skipped) = (totals.invited, totals.others);
        tracing::info!(tenant = %slug, invited, skipped, dry_run, "user reinvite");
        if !dry_run {
            let outcome = totals.outcome(latchkey::codes::INTERNAL);
            let mut event = latchkey_domain::audit::event(
                state.clock.now(),
                Some(&slug),
                &actor,
                AdminAction::UserReinvite.as_str(),
                &outcome,
            );
            event.subject = subject;
            event.detail = Some(totals.detail(format!("invited={invited} skipped={skipped}")));
            state.audit.record(event);
        }
        let summary =
            ReinviteLine::Summary { dry_run, invited: invited as u64, skipped: skipped as u64, error: totals.failure };
        let _ = tx_lines.send(json_line(&summary)).await;
    });
    Ok(response)
}
