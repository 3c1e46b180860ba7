//! `POST /admin/v1/tenants/{slug}/users/reinvite` with `{"emails": [...]}` or
//! `{"all_pending": true}` (and `"dry_run"`): new invite links for users still `invited`,
//! answered like an import — a stream of JSON lines, `{"type":"progress",…}` per batch (with its
//! links, e-mailed when `[smtp]` is configured), then one `{"type":"summary",…}`.

use std::sync::Arc;

use hyper::Response;
use latchkey::admin::{Reinvite, ReinviteLine};

use super::audit::AdminAction;
use super::import::BATCH;
use crate::error::Error;
use crate::http::body::{Req, Text, read_json};
use crate::http::lines::{json_line, stream};
use crate::state::State;
use crate::tenants::require;
use crate::users::import::deliver_all;
use crate::users::reinvite::{self, Outcome};

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
        let (mut invited, mut skipped) = (0usize, 0usize);
        let mut failure = None;
        for (i, chunk) in targets.chunks(BATCH).enumerate() {
            let chunk = chunk.to_vec();
            let base = base_url.clone();
            let result = if dry_run {
                state
                    .db
                    .read(move |tx| -> Result<Outcome, Error> {
                        let mut o = Outcome::default();
                        reinvite::preview_rows(tx, tenant_id, &chunk, &mut o)?;
                        Ok(o)
                    })
                    .await
            } else {
                state
                    .db
                    .write(move |tx| -> Result<Outcome, Error> {
                        let mut o = Outcome::default();
                        reinvite::reinvite_rows(tx, tenant_id, &base, &chunk, now, expires_at, &mut o)?;
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
                deliver_all(&state, &tenant_name, &mut batch.invited).await;
            }
            invited += batch.invited.len();
            skipped += batch.skipped.len();
            let line = ReinviteLine::Progress {
                processed: ((i + 1) * BATCH).min(targets.len()) as u64,
                total: targets.len() as u64,
                invited: batch.invited,
                skipped: batch.skipped,
            };
            if tx_lines.send(json_line(&line)).await.is_err() {
                // The client went away: stop, but the trail still says what was done.
                failure = Some("the client went away; a re-run continues".into());
                break;
            }
        }
        tracing::info!(tenant = %slug, invited, skipped, dry_run, "user reinvite");
        if !dry_run {
            let mut detail = format!("invited={invited} skipped={skipped}");
            if let Some(f) = &failure {
                detail.push_str(&format!("; stopped: {f}"));
            }
            let outcome =
                if failure.is_some() { format!("failure: {}", latchkey::codes::INTERNAL) } else { "success".into() };
            let mut event = crate::audit::event(
                state.clock.now(),
                Some(&slug),
                &actor,
                AdminAction::UserReinvite.as_str(),
                &outcome,
            );
            event.subject = subject;
            event.detail = Some(detail);
            state.audit.record(event);
        }
        let summary =
            ReinviteLine::Summary { dry_run, invited: invited as u64, skipped: skipped as u64, error: failure };
        let _ = tx_lines.send(json_line(&summary)).await;
    });
    Ok(response)
}
