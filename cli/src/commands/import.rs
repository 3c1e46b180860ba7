//! `latchkey user import`: streams the CSV to the daemon and draws its progress lines.

use std::path::PathBuf;

use latchkey::admin::{ImportLine, RejectedReason, RejectedRow};
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
    let Rejected { dry_run, rows: rejected, count: rejected_rows, reasons } = result?;
    // `-o json`: the summary with every invitation and every e-mail already present.
    let json = json!({
        "type": "summary",
        "dry_run": dry_run,
        "invited": batches.invited,
        "already_present": already,
        "rejected": rejected,
        "rejected_rows": rejected_rows,
        "rejected_reasons": reasons,
        "error": null,
    });
    let problems = (!rejected.is_empty()).then(|| {
        let mut t = table(&["ROWS", "COLUMN", "REASON", "FIRST ROWS"]);
        for g in &reasons {
            t.add_row(vec![thousands(g.rows), g.column.clone(), g.reason.clone(), first_rows(g)]);
        }
        (t, "fix the rows above and run the import again (users already invited are skipped); -o json lists each row")
    });
    let verb = if dry_run { "would be invited" } else { "invited" };
    let counts =
        [(verb, batches.invited.len()), ("already present", already.len()), ("rejected", rejected_rows as usize)];
    bulk::summary(json, &counts, problems, links_out.as_deref(), dry_run)
}

/// What the summary says was rejected.
struct Rejected {
    dry_run: bool,
    /// The first problems, one by one (`-o json`).
    rows: Vec<RejectedRow>,
    /// Rows rejected, each once.
    count: u64,
    /// Every problem, grouped by reason (the table).
    reasons: Vec<RejectedReason>,
}

/// `3334` → `3,334`: counts an operator reads at a glance.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `2, 5, 9` and `…` when the reason has more rows than are named; `-` for the file's own.
fn first_rows(g: &RejectedReason) -> String {
    let named: Vec<String> = g.first_rows.iter().filter(|&&r| r > 0).map(u64::to_string).collect();
    match (named.is_empty(), g.rows > named.len() as u64) {
        (true, _) => "-".into(),
        (false, true) => format!("{}, …", named.join(", ")),
        (false, false) => named.join(", "),
    }
}

/// The outcome of the stream: the summary's dry-run flag and what it rejected, or why it failed.
fn finish(streamed: Result<(), CliError>, summary: Option<ImportLine>) -> Result<Rejected, CliError> {
    streamed?;
    let Some(ImportLine::Summary { dry_run, rejected, rejected_rows, rejected_reasons, error, .. }) = summary else {
        return Err(CliError::Protocol("the daemon sent no summary".into()));
    };
    if let Some(err) = error {
        return Err(CliError::Refused {
            code: latchkey::codes::IMPORT_FAILED.into(),
            message: format!("import stopped: {err}; re-run to continue"),
        });
    }
    Ok(Rejected { dry_run, rows: rejected, count: rejected_rows, reasons: rejected_reasons })
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_read_at_a_glance() {
        let t = super::thousands;
        assert_eq!([t(0), t(999), t(1000), t(3334), t(1_000_000)], ["0", "999", "1,000", "3,334", "1,000,000"]);
    }
}
