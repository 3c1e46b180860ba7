//! `latchkey user reinvite`: fresh invite links for users still invited, streamed like an import.

use std::path::PathBuf;

use latchkey::admin::{Reinvite, ReinviteLine, SkippedUser};
use serde_json::json;

use super::bulk::{self, Batches};
use super::seg;
use crate::args::Format;
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, table};

pub fn run(
    client: &Client,
    tenant: &str,
    req: Reinvite,
    links_out: Option<PathBuf>,
    force: bool,
    format: Format,
    quiet: bool,
) -> Result<Output, CliError> {
    let dry_run = req.dry_run;
    // The old links stop working, so the new ones must reach someone: without --links-out, the
    // links that were not e-mailed are printed (not only counted, as an import does).
    let print_links = links_out.is_none() && !dry_run;
    let body = serde_json::to_vec(&req).map_err(|e| CliError::Internal(e.to_string()))?;
    let path = format!("/tenants/{}/users/reinvite", seg(tenant)?);
    let mut batches = Batches::start(links_out.as_deref(), force, dry_run, quiet)?;
    let mut skipped: Vec<SkippedUser> = vec![];
    let mut summary = None;
    let streamed = client.stream_lines(&path, "application/json", body, |line| {
        if line.is_empty() {
            return Ok(());
        }
        let line: ReinviteLine =
            serde_json::from_str(line).map_err(|e| CliError::Protocol(format!("bad progress line: {e}")))?;
        match line {
            ReinviteLine::Progress { processed, total, invited, skipped: s } => {
                batches.add(processed, total, invited)?;
                skipped.extend(s);
            }
            summary_line @ ReinviteLine::Summary { .. } => summary = Some(summary_line),
        }
        Ok(())
    });
    let result = finish(streamed, summary);
    batches.finish(result.is_ok())?;
    let shown = result.is_ok() && (format == Format::Json || print_links);
    batches.warn_unsaved(links_out.as_deref(), shown, tenant);
    result?;
    let json = json!({
        "type": "summary",
        "dry_run": dry_run,
        "invited": batches.invited,
        "skipped": skipped,
        "error": null,
    });
    let problems = (!skipped.is_empty()).then(|| {
        let mut t = table(&["EMAIL", "SKIPPED BECAUSE"]);
        for s in &skipped {
            t.add_row(vec![s.email.clone(), s.reason.clone()]);
        }
        (t, "only users who are still invited get a new link")
    });
    let verb = if dry_run { "would get a new link" } else { "new links" };
    let emailed = batches.invited.iter().filter(|i| i.emailed == Some(true)).count();
    let mut counts = vec![(verb, batches.invited.len())];
    if batches.invited.iter().any(|i| i.emailed.is_some()) {
        counts.push(("e-mailed", emailed));
    }
    counts.push(("skipped", skipped.len()));
    let mut out = bulk::summary(json, &counts, problems, links_out.as_deref(), dry_run)?;
    let unmailed: Vec<_> = batches.invited.iter().filter(|i| i.emailed != Some(true)).collect();
    if print_links && !unmailed.is_empty() {
        let mut t = table(&["EMAIL", "NAME", "INVITE URL"]);
        for i in &unmailed {
            t.add_row(vec![i.email.clone(), i.name.clone(), i.invite_url.clone()]);
            out = out.secret(format!("{}\t{}", i.email, i.invite_url));
        }
        out =
            out.text(t.to_string()).note("Send each user their link: it works once; their older links no longer work.");
    }
    Ok(out)
}

/// The outcome of the stream, or why it failed.
fn finish(streamed: Result<(), CliError>, summary: Option<ReinviteLine>) -> Result<(), CliError> {
    streamed?;
    let Some(ReinviteLine::Summary { error, .. }) = summary else {
        return Err(CliError::Protocol("the daemon sent no summary".into()));
    };
    if let Some(err) = error {
        return Err(CliError::Refused {
            code: latchkey::codes::IMPORT_FAILED.into(),
            message: format!("reinvite stopped: {err}; users handled before it have new links"),
        });
    }
    Ok(())
}
