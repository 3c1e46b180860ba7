//! Large uploads (CSV imports) go to a temporary file as they arrive instead of into memory: the
//! daemon's memory stays flat whatever the file's size, and the file can be read twice (a checking
//! pass, then a storing pass). The file is created beside the SQLite database (on PostgreSQL in
//! `TMPDIR`), mode 0600, and unlinked at once, so nothing is left behind even if the daemon is
//! killed.

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use bytes::Bytes;

use super::body::too_large;
use latchkey_domain::error::Error;

/// An unlinked, private (mode 0600) temporary file in `dir`, by the `tempfile` crate.
fn temp_file(dir: &Path) -> Result<File, Error> {
    tempfile::tempfile_in(dir)
        .map_err(|e| Error::internal(format!("cannot create a temporary file in {}: {e}", dir.display())))
}

/// Collects an upload's chunks into a temporary file, refusing it past `limit` bytes.
pub struct Spill {
    file: File,
    written: u64,
    limit: u64,
}

impl Spill {
    pub fn new(dir: &Path, limit: u64) -> Result<Spill, Error> {
        Ok(Spill { file: temp_file(dir)?, written: 0, limit })
    }

    /// Appends a chunk. Writes go to the page cache (tens of microseconds per chunk), so they are
    /// made on the calling task rather than paying a thread hop per chunk.
    pub fn add(&mut self, chunk: &Bytes) -> Result<(), Error> {
        self.written += chunk.len() as u64;
        if self.written > self.limit {
            return Err(too_large(self.limit, "the file"));
        }
        self.file.write_all(chunk).map_err(|e| Error::internal(format!("writing the upload: {e}")))
    }

    /// The file, rewound, and its size.
    pub fn finish(mut self) -> Result<(File, u64), Error> {
        self.file.seek(SeekFrom::Start(0)).map_err(|e| Error::internal(format!("rewinding the upload: {e}")))?;
        Ok((self.file, self.written))
    }
}

/// Reads a request body into a temporary file (see [`Spill`]).
pub async fn spill_body(req: super::body::Req, limit: u64, dir: &Path) -> Result<File, Error> {
    use http_body_util::BodyExt;
    if super::body::declared_length(&req).is_some_and(|n| n > limit) {
        return Err(too_large(limit, "request body"));
    }
    let mut spill = Spill::new(dir, limit)?;
    let mut body = req.into_body();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| super::body::unreadable(&e))?;
        if let Ok(data) = frame.into_data() {
            spill.add(&data)?;
        }
    }
    Ok(spill.finish()?.0)
}
