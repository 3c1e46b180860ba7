//! The API upload's policy (`POST {api_url}/v1/users/invite`): all or nothing. A first pass checks
//! every row (any bad row refuses the file, nothing stored); one transaction then stores the whole
//! file, reading the checked rows from it again in batches, so the parsed file is never held in
//! memory. What the transaction did goes to two unlinked temporary files, read back for the answer
//! once it has committed: memory does not grow with the number of new users either.
//!
//! The CLI's import and reinvite take the other policy (row by row, batches committed as they go):
//! [`super::bulk`].

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use latchkey::admin::InvitedRow;
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;

use super::import::{self, Outcome};
use super::rejections::Rejections;
use crate::clock::Timestamp;
use crate::error::Error;
use crate::registry::TenantRuntime;
use crate::store::{self, Db};

/// Rows per batch of the storing pass, and per chunk read back for the answer.
pub const BATCH: usize = 1000;

/// What the upload's limits and clock say.
#[derive(Debug, Clone)]
pub struct Terms {
    pub rows_max: u64,
    /// How long an invitation link stays valid, in seconds.
    pub ttl: i64,
    pub now: Timestamp,
    /// Where the answer's temporary files go.
    pub dir: PathBuf,
}

/// Checks every row of `file` (a spilled upload), then stores them all in one transaction.
/// `Ok(Err(problems))`: the file was refused for these problems and nothing was stored.
pub async fn invite_file(
    db: &Db,
    tenant: &TenantRuntime,
    file: File,
    terms: Terms,
) -> Result<Result<Made, Rejections>, Error> {
    let t = tenant.id;
    let known: HashSet<String> =
        db.read(move |tx| store::roles::list(tx, t)).await?.into_iter().map(|r| r.name).collect();
    let (file, known, errors) = check(file, known, terms.rows_max).await?;
    if !errors.is_empty() {
        return Ok(Err(errors));
    }
    let base = tenant.base_url.clone();
    let Terms { rows_max, ttl, now, dir } = terms;
    let made = db
        .write(move |tx| -> Result<Made, Error> {
            let mut file = file;
            file.seek(SeekFrom::Start(0)).map_err(|e| Error::internal(format!("rewinding the upload: {e}")))?;
            let mut made = Made::new(&dir)?;
            let mut out = Outcome::default();
            let mut batch = Vec::with_capacity(BATCH);
            let mut failed = None;
            let _ = import::scan(BufReader::new(file), &known, rows_max, |row| {
                if let Ok(r) = row {
                    batch.push(r);
                }
                if batch.len() == BATCH {
                    let stored = import::invite_rows(tx, t, &base, &batch, now, now + ttl, &mut out)
                        .and_then(|()| made.keep(&mut out));
                    if let Err(e) = stored {
                        failed = Some(e);
                        return false;
                    }
                    batch.clear();
                }
                true
            });
            if let Some(e) = failed {
                return Err(e);
            }
            import::invite_rows(tx, t, &base, &batch, now, now + ttl, &mut out)?;
            made.keep(&mut out)?;
            Ok(made)
        })
        .await?;
    Ok(Ok(made))
}

/// The first pass, on a blocking thread: every bad row of the file, and the header's error.
async fn check(
    file: File,
    known: HashSet<String>,
    rows_max: u64,
) -> Result<(File, HashSet<String>, Rejections), Error> {
    tokio::task::spawn_blocking(move || {
        let mut file = file;
        let mut errors = Rejections::default();
        let scanned = import::scan(BufReader::new(&mut file), &known, rows_max, |row| {
            if let Err(e) = row {
                errors.add(e);
            }
            true
        });
        if let Err(header) = scanned {
            errors.add(header);
        }
        (file, known, errors)
    })
    .await
    .map_err(Error::internal)
}

/// What the storing transaction did, kept in unlinked temporary files (one JSON value a line)
/// rather than in memory: the answer can list a hundred thousand links with flat memory.
pub struct Made {
    invited_rows: BufWriter<File>,
    already_rows: BufWriter<File>,
    pub invited: usize,
    pub already: usize,
}

impl Made {
    fn new(dir: &Path) -> Result<Made, Error> {
        let temp = || {
            tempfile::tempfile_in(dir)
                .map_err(|e| Error::internal(format!("cannot create a temporary file in {}: {e}", dir.display())))
        };
        Ok(Made {
            invited_rows: BufWriter::new(temp()?),
            already_rows: BufWriter::new(temp()?),
            invited: 0,
            already: 0,
        })
    }

    /// Moves a batch's outcome to the files.
    fn keep(&mut self, out: &mut Outcome) -> Result<(), Error> {
        let io = |e: std::io::Error| Error::internal(format!("writing the import's answer: {e}"));
        for row in out.invited.drain(..) {
            serde_json::to_writer(&mut self.invited_rows, &row).map_err(|e| io(e.into()))?;
            self.invited_rows.write_all(b"\n").map_err(io)?;
            self.invited += 1;
        }
        for email in out.already_present.drain(..) {
            serde_json::to_writer(&mut self.already_rows, &email).map_err(|e| io(e.into()))?;
            self.already_rows.write_all(b"\n").map_err(io)?;
            self.already += 1;
        }
        Ok(())
    }

    /// The invitations and the addresses already present, read back in chunks of [`BATCH`].
    pub fn read_back(self) -> (mpsc::Receiver<Vec<InvitedRow>>, mpsc::Receiver<Vec<String>>) {
        (read_back(self.invited_rows), read_back(self.already_rows))
    }
}

/// Reads a file of JSON lines back in chunks of [`BATCH`], on a blocking thread. A file that
/// cannot be read back ends the stream early (the client sees a truncated document); it was
/// written by this process moments ago, so that is a disk failure, logged.
fn read_back<T: DeserializeOwned + Send + 'static>(rows: BufWriter<File>) -> mpsc::Receiver<Vec<T>> {
    let (tx, rx) = mpsc::channel(2);
    tokio::task::spawn_blocking(move || {
        let mut file = match rows.into_inner().map_err(|e| e.into_error()) {
            Ok(f) => f,
            Err(e) => return tracing::error!(error = %e, "the import's answer could not be written"),
        };
        if let Err(e) = file.seek(SeekFrom::Start(0)) {
            return tracing::error!(error = %e, "the import's answer could not be read back");
        }
        let mut chunk = Vec::with_capacity(BATCH);
        for line in BufReader::new(file).lines() {
            match line.map_err(|e| e.to_string()).and_then(|l| serde_json::from_str(&l).map_err(|e| e.to_string())) {
                Ok(v) => chunk.push(v),
                Err(e) => return tracing::error!(error = %e, "the import's answer could not be read back"),
            }
            if chunk.len() == BATCH && tx.blocking_send(std::mem::take(&mut chunk)).is_err() {
                return;
            }
        }
        if !chunk.is_empty() {
            let _ = tx.blocking_send(chunk);
        }
    });
    rx
}
