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
use latchkey_domain::users::bulk;
use latchkey_domain::users::reinvite::{self, Outcome};

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
    let (tenant, targets) = reinvite::tenant_and_targets(&state.db, slug.clone(), r).await?;

    let (tx_lines, response) = stream();
    let state = state.clone();
    tokio::spawn(async move {
        let now = state.clock.now();
        let expires_at = now + state.config.tokens.invite.as_secs() as i64;
        let steps = reinvite::steps(&tenant, now, expires_at, dry_run);
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
        let totals = bulk::run(
            &state,
            tenant.brand.display_name.as_deref().unwrap_or(&tenant.name),
            bulk::batches_of(targets),
            steps,
            progress,
            &tx_lines,
        )
        .await;
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
