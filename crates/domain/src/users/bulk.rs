//! The one path of the bulk admin calls (`user import`, `user reinvite`): their rows arrive in
//! batches; each batch is stored in a write transaction of its own (or only read, in a dry run),
//! its invitations are e-mailed when `[smtp]` is configured, and its progress line is sent before
//! the next batch starts. A failure, or a client that goes away, stops the run after the batches
//! already committed: a re-run goes on from there, since neither call invites anyone twice. One
//! audit event then tells the whole run with its counts.
//!
//! What differs between the calls is a parameter: how a batch is stored and previewed, and how its
//! line reads. Where the batches come from is the caller's (an uploaded file checked and sorted by
//! address, or a list of users).

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufReader, Seek, SeekFrom};
use std::path::Path;

use bytes::Bytes;
use latchkey::codes;
use tokio::sync::mpsc;

use super::batch::{Batch, PreviewStep, Steps, StoreStep, batches};
use super::import::{self, Row};
use super::rejections::Rejections;
use super::sorted::{Sorted, Sorter};
use crate::error::Error;
use crate::state::State;

/// An uploaded file after its one pass: how many rows it has, the rejected ones, and the good
/// ones sorted by address into temporary runs.
pub struct Checked {
    pub total: usize,
    pub rejected: Rejections,
    pub sorted: Sorted,
}

/// The pass over an uploaded CSV file (blocking): counts its rows, collects the rejected ones
/// (kept up to a bound: a file of a million bad rows must not fill the memory either) and sorts
/// the good ones by address (`users::sorted`). A bad header refuses the whole file. Memory stays
/// flat whatever the file's size; the upload is closed (and gone) when this returns.
pub fn check_and_sort(mut file: File, known: &HashSet<String>, rows_max: u64, dir: &Path) -> Result<Checked, Error> {
    // The duplicate check's table made once at its size: grown as it fills, it would hold
    // the old table and the new one at once (28 MiB instead of 19 at a million rows).
    let lines = import::count_lines(BufReader::new(&mut file))
        .map_err(|e| Error::internal(format!("reading the upload: {e}")))?;
    file.seek(SeekFrom::Start(0)).map_err(|e| Error::internal(format!("rewinding the upload: {e}")))?;
    let (mut total, mut rejected) = (0usize, Rejections::default());
    let mut sorter = Sorter::new(dir);
    let mut failed = None;
    let scanned = import::scan_with(BufReader::new(&mut file), known, rows_max, lines, |row| {
        total += 1;
        match row {
            Ok(r) => match sorter.push(r) {
                Ok(()) => true,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            },
            Err(e) => {
                rejected.add(e);
                true
            }
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    scanned.map_err(|header| Error::invalid(codes::INVALID_INPUT, header.reason))?;
    let sorted = sorter.finish()?;
    // The duplicate check's table (18 MiB at a million rows) and the runs' rows are free now,
    // but glibc keeps them in this thread's arena: given back before the batches are stored
    // (while the writer's page cache fills), they do not add to the daemon's peak.
    crate::memory::trim();
    // The upload is closed (and gone) as this returns: the runs hold what is left to store.
    Ok(Checked { total, rejected, sorted })
}

/// How a run went: counts for the summary and the audit trail, and why it stopped early.
#[derive(Debug, Default)]
pub struct Totals {
    pub invited: usize,
    pub others: usize,
    pub failure: Option<String>,
}

impl Totals {
    /// The audit event's outcome: `success`, or `failure: <code>` when the run stopped early.
    pub fn outcome(&self, code: &str) -> String {
        if self.failure.is_some() { format!("failure: {code}") } else { "success".into() }
    }

    /// `detail` with why the run stopped, if it did.
    pub fn detail(&self, detail: String) -> String {
        match &self.failure {
            Some(f) => format!("{detail}; stopped: {f}"),
            None => detail,
        }
    }
}

/// Runs every batch from `batches` in order (see the module's description); `line` makes a
/// batch's progress line from its number of rows and what it did. Returns the totals once the
/// batches end, one fails, or the client stops reading `lines`.
pub async fn run<T, O, W, P>(
    state: &State,
    tenant_name: &str,
    mut batches: mpsc::Receiver<Result<Vec<T>, Error>>,
    steps: Steps<W, P>,
    mut line: impl FnMut(usize, O) -> Bytes,
    lines: &mpsc::Sender<Bytes>,
) -> Totals
where
    T: Send + 'static,
    O: Batch,
    W: StoreStep<T, O>,
    P: PreviewStep<T, O>,
{
    let mut totals = Totals::default();
    while let Some(batch) = batches.recv().await {
        let rows = match batch {
            Ok(rows) => rows,
            Err(e) => {
                totals.failure = Some(e.to_string());
                break;
            }
        };
        let size = rows.len();
        let done = if steps.dry_run {
            let preview = steps.preview.clone();
            state.db.read(move |tx| done_by(|o| preview(tx, &rows, o))).await
        } else {
            let store = steps.store.clone();
            state.db.write(move |tx| done_by(|o| store(tx, &rows, o))).await
        };
        let mut done = match done {
            Ok(done) => done,
            Err(e) => {
                totals.failure = Some(e.to_string());
                break;
            }
        };
        if !steps.dry_run {
            crate::mail::send_invitations(state.live.get().mailer.clone(), tenant_name, done.invited()).await;
        }
        totals.invited += done.invited().len();
        totals.others += done.others();
        if lines.send(line(size, done)).await.is_err() {
            // The client went away: stop, but the trail still says what was done.
            totals.failure = Some("the client went away; a re-run continues".into());
            break;
        }
    }
    totals
}

fn done_by<O: Batch>(step: impl FnOnce(&mut O) -> Result<(), Error>) -> Result<O, Error> {
    let mut done = O::default();
    step(&mut done)?;
    Ok(done)
}

/// The sorted rows in batches of [`BATCH`](super::batch::BATCH), read from their runs on a blocking thread.
pub fn sorted_batches(sorted: Sorted) -> mpsc::Receiver<Result<Vec<Row>, Error>> {
    batches(sorted)
}

/// `items` in batches of [`BATCH`](super::batch::BATCH), for a run whose rows are all in hand.
pub fn batches_of<T: Send + 'static>(items: Vec<T>) -> mpsc::Receiver<Result<Vec<T>, Error>> {
    batches(items.into_iter().map(Ok))
}
