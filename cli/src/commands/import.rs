//! `latchkey user import`: streams the CSV to the daemon and draws its progress lines.

use std::path::PathBuf;

use latchkey::admin::ImportLine;
use serde_json::json;

use super::bulk::{self, Batches};
use super::seg;
use crate::args::Format;
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, table};

pub struct Import {
    pub tenant: String,
    pub file: PathBuf,
    pub dry_run: bool,
    pub links_out: Option<PathBuf>,
    pub force: bool,
}

pub fn run(client: &Client, cmd: Import, format: Format, quiet: bool) -> Result<Output, CliError> {
    let Import { tenant, file, dry_run, links_out, force } = cmd;
    let data = std::fs::read(&file).map_err(|e| CliError::File(format!("cannot read {}: {e}", file.display())))?;
    // The file's name is the audit event's subject.
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut path = format!("/tenants/{}/users/import?file={}", seg(&tenant)?, seg(&name)?.replace('+', "%2B"));
    if dry_run {
        path.push_str("&dry_run=true");
    }
    let mut batches = Batches::start(links_out.as_deref(), force, dry_run, quiet)?;
    let mut already: Vec<String> = vec![];
    let mut summary = None;
    let streamed = client.stream_lines(&path, "text/csv", data, |line| {
        if line.is_empty() {
            return Ok(());
        }
        let line: ImportLine =
            serde_json::from_str(line).map_err(|e| CliError::Protocol(format!("bad progress line: {e}")))?;
        match line {
            ImportLine::Progress { processed, total, invited, already_present } => {
                batches.add(processed, total, invited)?;
                already.extend(already_present);
            }
            summary_line @ ImportLine::Summary { .. } => summary = Some(summary_line),
        }
        Ok(())
    });
    let result = finish(streamed, summary);
    batches.finish(result.is_ok())?;
    batches.warn_unsaved(links_out.as_deref(), result.is_ok() && format == Format::Json, &tenant);
    let (dry_run, rejected) = result?;
    // `-o json`: the summary with every invitation and every e-mail already present.
    let json = json!({
        "type": "summary",
        "dry_run": dry_run,
        "invited": batches.invited,
        "already_present": already,
        "rejected": rejected,
        "error": null,
    });
    let problems = (!rejected.is_empty()).then(|| {
        let mut t = table(&["ROW", "COLUMN", "REASON"]);
        for r in &rejected {
            t.add_row(vec![r.row.to_string(), r.column.clone(), r.reason.clone()]);
        }
        (t, "fix the rejected rows and run the import again; users already invited are skipped")
    });
    let verb = if dry_run { "would be invited" } else { "invited" };
    let counts = [(verb, batches.invited.len()), ("already present", already.len()), ("rejected", rejected.len())];
    bulk::summary(json, &counts, problems, links_out.as_deref(), dry_run)
}

/// The outcome of the stream: the summary's dry-run flag and rejected rows, or why it failed.
fn finish(
    streamed: Result<(), CliError>,
    summary: Option<ImportLine>,
) -> Result<(bool, Vec<latchkey::admin::RejectedRow>), CliError> {
    streamed?;
    let Some(ImportLine::Summary { dry_run, rejected, error, .. }) = summary else {
        return Err(CliError::Protocol("the daemon sent no summary".into()));
    };
    if let Some(err) = error {
        return Err(CliError::Refused {
            code: latchkey::codes::IMPORT_FAILED.into(),
            message: format!("import stopped: {err}; re-run to continue"),
        });
    }
    Ok((dry_run, rejected))
}
