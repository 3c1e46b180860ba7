//! `latchkey user import`: streams the CSV to the daemon and draws its progress lines.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};
use latchkey::admin::{ImportLine, InvitedRow};
use serde_json::json;

use super::seg;
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, fields, table};

/// A spreadsheet would run a cell beginning with one of these as a formula (CSV injection);
/// prefixing a quote keeps the text and defuses it.
pub fn neutralise(cell: &str) -> String {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{cell}") } else { cell.to_owned() }
}

/// The `--links-out` file, written batch by batch as the daemon reports invitations.
struct Links {
    path: PathBuf,
    writer: csv::Writer<std::fs::File>,
}

impl Links {
    fn create(path: &Path) -> Result<Links, CliError> {
        let mut writer = csv::Writer::from_path(path).map_err(|e| Links::error(path, &e))?;
        writer.write_record(["email", "name", "invite_url"]).map_err(|e| Links::error(path, &e))?;
        Ok(Links { path: path.to_owned(), writer })
    }
    fn error(path: &Path, e: &dyn std::fmt::Display) -> CliError {
        CliError::File(format!("writing {}: {e}", path.display()))
    }
    fn add(&mut self, invited: &[InvitedRow]) -> Result<(), CliError> {
        for i in invited {
            self.writer
                .write_record([neutralise(&i.email), neutralise(&i.name), neutralise(&i.invite_url)])
                .map_err(|e| Links::error(&self.path, &e))?;
        }
        Ok(())
    }
    fn finish(mut self) -> Result<(), CliError> {
        self.writer.flush().map_err(|e| Links::error(&self.path, &e))
    }
}

pub fn run(
    client: &Client,
    tenant: &str,
    file: &Path,
    dry_run: bool,
    links_out: Option<PathBuf>,
    quiet: bool,
) -> Result<Output, CliError> {
    let data = std::fs::read(file).map_err(|e| CliError::File(format!("cannot read {}: {e}", file.display())))?;
    let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template("{spinner} {wide_bar} {pos}/{len} rows  {per_sec}  ETA {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    });
    let mut summary = None;
    let mut links = match (&links_out, dry_run) {
        (Some(p), false) => Some(Links::create(p)?),
        _ => None,
    };
    let (mut invited, mut already): (Vec<InvitedRow>, Vec<String>) = (vec![], vec![]);
    let path = format!("/tenants/{}/users/import{}", seg(tenant)?, if dry_run { "?dry_run=true" } else { "" });
    client.stream_lines(&path, "text/csv", data, |line| {
        if line.is_empty() {
            return Ok(());
        }
        let line: ImportLine =
            serde_json::from_str(line).map_err(|e| CliError::Protocol(format!("bad progress line: {e}")))?;
        match line {
            ImportLine::Progress { processed, total, invited: batch, already_present } => {
                if let Some(b) = &bar {
                    b.set_length(total);
                    b.set_position(processed);
                }
                if let Some(l) = links.as_mut() {
                    l.add(&batch)?;
                }
                invited.extend(batch);
                already.extend(already_present);
            }
            summary_line @ ImportLine::Summary { .. } => summary = Some(summary_line),
        }
        Ok(())
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let Some(ImportLine::Summary { dry_run, rejected, error, .. }) = summary else {
        return Err(CliError::Protocol("the daemon sent no summary".into()));
    };
    if let Some(err) = error {
        return Err(CliError::Refused {
            code: latchkey::codes::IMPORT_FAILED.into(),
            message: format!("import stopped: {err}; re-run to continue"),
        });
    }
    if let Some(l) = links {
        l.finish()?;
    }
    // `-o json`: the summary with every invitation and every e-mail already present.
    let summary = json!({
        "type": "summary",
        "dry_run": dry_run,
        "invited": invited,
        "already_present": already,
        "rejected": rejected,
        "error": null,
    });
    let verb = if dry_run { "would be invited" } else { "invited" };
    let mut out = Output::new(&summary)?.table(fields(&[
        (verb, invited.len().to_string()),
        ("already present", already.len().to_string()),
        ("rejected", rejected.len().to_string()),
    ]));
    if !rejected.is_empty() {
        let mut t = table(&["ROW", "COLUMN", "REASON"]);
        for r in &rejected {
            t.add_row(vec![r.row.to_string(), r.column.clone(), r.reason.clone()]);
        }
        out = out
            .note(t.to_string())
            .note("fix the rejected rows and run the import again; users already invited are skipped");
        out.exit_code = 1;
    }
    if let (Some(p), false) = (&links_out, dry_run) {
        out = out.note(format!("invite links written to {}", p.display()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn formula_cells_are_defused() {
        for bad in ["=1+1", "+x", "-2", "@SUM(A1)", "\tx"] {
            assert!(super::neutralise(bad).starts_with('\''), "{bad}");
        }
        assert_eq!(super::neutralise("ada@example.com"), "ada@example.com");
    }
}
