//! What `user import` and `user reinvite` share: the `--links-out` file, the progress bar, the
//! warning about links that went nowhere, and the end-of-run summary.

use std::fs::File;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};
use latchkey::admin::InvitedRow;

use crate::error::CliError;
use crate::output::{Output, fields};

/// A spreadsheet would run a cell beginning with one of these as a formula (CSV injection);
/// prefixing a quote keeps the text and defuses it.
pub fn neutralise(cell: &str) -> String {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{cell}") } else { cell.to_owned() }
}

/// Opens the `--links-out` file: a new file of mode 0600 (the links are credentials), or with
/// `force` an existing one truncated and set to 0600. Called before anything is sent, so a path
/// that is taken invites no one.
fn open_private(path: &Path, force: bool) -> Result<File, CliError> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut options = std::fs::OpenOptions::new();
    options.write(true).mode(0o600);
    if force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    let file = options.open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            CliError::File(format!(
                "{} already exists; pass --force to overwrite it, or choose another path (nothing was sent)",
                path.display()
            ))
        } else {
            CliError::File(format!("cannot create {}: {e} (nothing was sent)", path.display()))
        }
    })?;
    // `mode` applies only to a file created now; an overwritten one may have been readable.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(|e| CliError::File(format!("cannot make {} private: {e}", path.display())))?;
    Ok(file)
}

/// The `--links-out` file (`email,name,invite_url`), written batch by batch as links arrive.
pub struct Links {
    path: PathBuf,
    writer: csv::Writer<File>,
    rows: u64,
}

impl Links {
    pub fn create(path: &Path, force: bool) -> Result<Links, CliError> {
        let mut writer = csv::Writer::from_writer(open_private(path, force)?);
        writer.write_record(["email", "name", "invite_url"]).map_err(|e| Links::error(path, &e))?;
        Ok(Links { path: path.to_owned(), writer, rows: 0 })
    }

    fn error(path: &Path, e: &dyn std::fmt::Display) -> CliError {
        CliError::LocalWrite(format!("writing {}: {e}", path.display()))
    }

    pub fn add(&mut self, invited: &[InvitedRow]) -> Result<(), CliError> {
        for i in invited {
            self.writer
                .write_record([neutralise(&i.email), neutralise(&i.name), neutralise(&i.invite_url)])
                .map_err(|e| Links::error(&self.path, &e))?;
            self.rows += 1;
        }
        // Flushed per batch: if the run stops later, the links issued so far are on disk.
        self.writer.flush().map_err(|e| Links::error(&self.path, &e))
    }

    pub fn finish(mut self) -> Result<(), CliError> {
        self.writer.flush().map_err(|e| Links::error(&self.path, &e))?;
        self.writer.get_ref().sync_all().map_err(|e| Links::error(&self.path, &e))
    }

    /// After a failed run: a file that received no link is removed (a re-run may use the path
    /// again); one that holds links is kept, since those links work.
    pub fn abandon(self) {
        if self.rows == 0 {
            let _ = std::fs::remove_file(&self.path);
        } else {
            let _ = self.finish();
        }
    }
}

/// The state of a run as batches of invitations arrive: progress bar, links file, links so far.
pub struct Batches {
    bar: Option<ProgressBar>,
    links: Option<Links>,
    pub invited: Vec<InvitedRow>,
}

impl Batches {
    /// Opens `links_out` (unless `dry_run`) and draws a progress bar on a terminal unless `quiet`.
    pub fn start(links_out: Option<&Path>, force: bool, dry_run: bool, quiet: bool) -> Result<Batches, CliError> {
        let links = match (links_out, dry_run) {
            (Some(p), false) => Some(Links::create(p, force)?),
            _ => None,
        };
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template("{spinner} {wide_bar} {pos}/{len} rows  {rate}  ETA {eta}")
                    .map(|style| {
                        // Whole rows a second: indicatif's own {per_sec} prints four decimals.
                        style.with_key("rate", |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                            let _ = write!(w, "{:.0} rows/s", state.per_sec());
                        })
                    })
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        });
        Ok(Batches { bar, links, invited: vec![] })
    }

    /// One progress line: moves the bar and saves the batch's links.
    pub fn add(&mut self, processed: u64, total: u64, batch: Vec<InvitedRow>) -> Result<(), CliError> {
        if let Some(b) = &self.bar {
            b.set_length(total);
            b.set_position(processed);
        }
        if let Some(l) = self.links.as_mut() {
            l.add(&batch)?;
        }
        self.invited.extend(batch);
        Ok(())
    }

    /// Ends the run: clears the bar and closes the links file; on failure keeps what holds links.
    pub fn finish(&mut self, ok: bool) -> Result<(), CliError> {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        match self.links.take() {
            Some(l) if ok => l.finish(),
            Some(l) => {
                l.abandon();
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Links that reached nobody: not e-mailed (no `[smtp]`, or sending failed), not written to
    /// `--links-out`, and not `shown` on stdout. They cannot be shown again, so say so on stderr
    /// (even with `-q`) with the command that issues fresh ones.
    pub fn warn_unsaved(&self, links_out: Option<&Path>, shown: bool, tenant: &str) {
        if links_out.is_some() || shown {
            return;
        }
        let lost = self.invited.iter().filter(|i| i.emailed != Some(true) && !i.invite_url.is_empty()).count();
        if lost == 0 {
            return;
        }
        let why = if self.invited.iter().any(|i| i.emailed == Some(false)) {
            "e-mail to them failed"
        } else {
            "the daemon has no [smtp] to e-mail them"
        };
        eprintln!(
            "warning: {lost} invitation link(s) were not saved: {why} and no --links-out was given, and they are \
             not shown again.\n\
             To issue fresh links (the old ones stop working) and save them:\n  \
             latchkey user reinvite --tenant {tenant} --all-pending --links-out links.csv"
        );
    }
}

/// The end-of-run summary: counts for people, the whole `json` for scripts, the problems table
/// (exit 1 when there is one) and where the links went.
pub fn summary(
    json: serde_json::Value,
    counts: &[(&str, usize)],
    problems: Option<(comfy_table::Table, &str)>,
    links_out: Option<&Path>,
    dry_run: bool,
) -> Result<Output, CliError> {
    let rows: Vec<(&str, String)> = counts.iter().map(|(k, v)| (*k, v.to_string())).collect();
    let mut out = Output::new(&json)?.table(fields(&rows));
    if let Some((t, hint)) = problems {
        out = out.problem(t).note(hint);
        out.exit_code = 1;
    }
    if let (Some(p), false) = (links_out, dry_run) {
        out = out.note(format!("invite links written to {} (mode 0600)", p.display()));
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
