//! `latchkey user import`: streams the CSV to the daemon and draws its progress lines.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;

use super::seg;
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, fields, table};

/// A spreadsheet would run a cell beginning with one of these as a formula (CSV injection);
/// prefixing a quote keeps the text and defuses it.
pub fn neutralise(cell: &str) -> String {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{cell}") } else { cell.to_owned() }
}

fn write_links(path: &Path, invited: &[Value]) -> Result<(), CliError> {
    let local = |e: &dyn std::fmt::Display| CliError::Local(format!("writing {}: {e}", path.display()));
    let mut w = csv::Writer::from_path(path).map_err(|e| local(&e))?;
    w.write_record(["email", "name", "invite_url"]).map_err(|e| local(&e))?;
    for i in invited {
        let cell = |k: &str| neutralise(i[k].as_str().unwrap_or_default());
        w.write_record([cell("email"), cell("name"), cell("invite_url")]).map_err(|e| local(&e))?;
    }
    w.flush().map_err(|e| local(&e))
}

pub fn run(
    client: &Client,
    tenant: &str,
    file: &Path,
    dry_run: bool,
    links_out: Option<PathBuf>,
    quiet: bool,
) -> Result<Output, CliError> {
    let data = std::fs::read(file).map_err(|e| CliError::Local(format!("cannot read {}: {e}", file.display())))?;
    let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template("{spinner} {wide_bar} {pos}/{len} rows  {per_sec}  ETA {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    });
    let mut summary = Value::Null;
    let path = format!("/tenants/{}/users/import{}", seg(tenant)?, if dry_run { "?dry_run=true" } else { "" });
    client.stream_lines(&path, "text/csv", data, |line| {
        if line.is_empty() {
            return Ok(());
        }
        let v: Value = serde_json::from_str(line).map_err(|e| CliError::Protocol(format!("bad progress line: {e}")))?;
        match v["type"].as_str() {
            Some("progress") => {
                if let Some(b) = &bar {
                    b.set_length(v["total"].as_u64().unwrap_or(0));
                    b.set_position(v["processed"].as_u64().unwrap_or(0));
                }
            }
            Some("summary") => summary = v,
            _ => {}
        }
        Ok(())
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if summary.is_null() {
        return Err(CliError::Protocol("the daemon sent no summary".into()));
    }
    if let Some(err) = summary["error"].as_str() {
        return Err(CliError::Refused {
            code: "import_failed".into(),
            message: format!("import stopped: {err}; re-run to continue"),
        });
    }
    let list = |k: &str| summary[k].as_array().cloned().unwrap_or_default();
    let (invited, already, rejected) = (list("invited"), list("already_present"), list("rejected"));
    if let (Some(path), false) = (&links_out, dry_run) {
        write_links(path, &invited)?;
    }
    let verb = if dry_run { "would be invited" } else { "invited" };
    let mut out = Output::new(&summary)?.table(fields(&[
        (verb, invited.len().to_string()),
        ("already present", already.len().to_string()),
        ("rejected", rejected.len().to_string()),
    ]));
    if !rejected.is_empty() {
        let mut t = table(&["ROW", "COLUMN", "REASON"]);
        for r in &rejected {
            t.add_row(vec![
                r["row"].to_string(),
                r["column"].as_str().unwrap_or("").to_owned(),
                r["reason"].as_str().unwrap_or("").to_owned(),
            ]);
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
