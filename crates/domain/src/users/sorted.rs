//! Import rows in address order, in bounded memory: an external merge sort. The rows are kept
//! in memory [`RUN_ROWS`] at a time; each full set is sorted and written to an unlinked temporary
//! file (a run), and reading merges the runs and the last set.
//!
//! Why: the users' e-mail index is keyed by the addresses. Stored in the file's order, a batch of
//! a shuffled file touches leaf pages all over that index, and every commit writes each page it
//! touched, so a shuffled file wrote several times the bytes of the same rows in address order
//! (figures in bench/README.md, "Measurements behind the design"). In address order every batch
//! covers one stretch of the index, and each of its pages is written about once for the whole
//! import.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::import::Row;
use crate::error::Error;
use crate::store::users::normalise_email;

/// Rows held in memory before they are sorted and written out: about 2.5 MiB of typical rows.
pub const RUN_ROWS: usize = 16_384;

/// A row with its sort key: the address as the e-mail index orders it, then the file's line.
struct Keyed {
    key: String,
    row: Row,
}

impl Keyed {
    fn new(row: Row) -> Keyed {
        Keyed { key: normalise_email(&row.email), row }
    }

    fn order(&self, other: &Keyed) -> Ordering {
        self.key.cmp(&other.key).then(self.row.line.cmp(&other.row.line))
    }
}

/// Collects rows, writing sorted runs as it goes; [`Sorter::finish`] reads them back in order.
pub struct Sorter {
    dir: PathBuf,
    run_rows: usize,
    rows: Vec<Keyed>,
    runs: Vec<(File, usize)>,
}

impl Sorter {
    /// Runs are written in `dir` (beside the database, like the spilled upload).
    pub fn new(dir: &Path) -> Sorter {
        Sorter::with_run_rows(dir, RUN_ROWS)
    }

    fn with_run_rows(dir: &Path, run_rows: usize) -> Sorter {
        Sorter { dir: dir.to_owned(), run_rows: run_rows.max(1), rows: Vec::new(), runs: Vec::new() }
    }

    pub fn push(&mut self, row: Row) -> Result<(), Error> {
        self.rows.push(Keyed::new(row));
        if self.rows.len() >= self.run_rows { self.spill() } else { Ok(()) }
    }

    fn spill(&mut self) -> Result<(), Error> {
        self.rows.sort_unstable_by(Keyed::order);
        let mut file = tempfile::tempfile_in(&self.dir)
            .map_err(|e| Error::internal(format!("cannot create a temporary file in {}: {e}", self.dir.display())))?;
        let count = self.rows.len();
        let written = (|| -> io::Result<()> {
            let mut out = BufWriter::new(&mut file);
            for k in self.rows.drain(..) {
                write_row(&mut out, &k.row)?;
            }
            out.flush()?;
            drop(out);
            file.seek(SeekFrom::Start(0))?;
            Ok(())
        })();
        written.map_err(|e| Error::internal(format!("writing sorted import rows to a temporary file: {e}")))?;
        self.runs.push((file, count));
        Ok(())
    }

    /// Every row pushed, in address order (then line order).
    pub fn finish(mut self) -> Result<Sorted, Error> {
        // A file of fewer than RUN_ROWS rows is sorted in memory. A larger one's last rows are
        // written out too, so that no run stays in memory while the batches are being stored.
        if !self.runs.is_empty() && !self.rows.is_empty() {
            self.spill()?;
        }
        self.rows.sort_unstable_by(Keyed::order);
        // Small buffers: a million rows make 62 runs, all read at once.
        let mut sources: Vec<Source> = self
            .runs
            .into_iter()
            .map(|(file, left)| Source::Run { reader: BufReader::with_capacity(8 * 1024, file), left })
            .collect();
        sources.push(Source::Memory(std::mem::take(&mut self.rows).into_iter()));
        let mut heap = BinaryHeap::with_capacity(sources.len());
        for (source, s) in sources.iter_mut().enumerate() {
            if let Some(keyed) = s.next()? {
                heap.push(Head { keyed, source });
            }
        }
        Ok(Sorted { sources, heap })
    }
}

/// The rows of a [`Sorter`], in order; an I/O error reading a run ends them.
pub struct Sorted {
    sources: Vec<Source>,
    heap: BinaryHeap<Head>,
}

impl Iterator for Sorted {
    type Item = Result<Row, Error>;

    fn next(&mut self) -> Option<Result<Row, Error>> {
        let Head { keyed, source } = self.heap.pop()?;
        match self.sources[source].next() {
            Ok(Some(next)) => self.heap.push(Head { keyed: next, source }),
            Ok(None) => {}
            Err(e) => {
                self.heap.clear();
                return Some(Err(e));
            }
        }
        Some(Ok(keyed.row))
    }
}

enum Source {
    Run { reader: BufReader<File>, left: usize },
    Memory(std::vec::IntoIter<Keyed>),
}

impl Source {
    fn next(&mut self) -> Result<Option<Keyed>, Error> {
        match self {
            Source::Memory(rows) => Ok(rows.next()),
            Source::Run { left: 0, .. } => Ok(None),
            Source::Run { reader, left } => {
                *left -= 1;
                let row = read_row(reader).map_err(|e| {
                    Error::internal(format!("reading sorted import rows back from a temporary file: {e}"))
                })?;
                Ok(Some(Keyed::new(row)))
            }
        }
    }
}

/// The next row of one source; the heap pops the smallest first.
struct Head {
    keyed: Keyed,
    source: usize,
}

impl Ord for Head {
    fn cmp(&self, other: &Head) -> Ordering {
        // BinaryHeap is a max-heap: reversed, it yields the smallest key first.
        other.keyed.order(&self.keyed)
    }
}

impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Head) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Head {
    fn eq(&self, other: &Head) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Head {}

// A run's rows: the line as 8 bytes, then each text as a 4-byte length and its bytes, the roles
// after their count. Written and read by this process only, little-endian.

fn write_text(out: &mut impl Write, text: &str) -> io::Result<()> {
    let len = u32::try_from(text.len()).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "text too long"))?;
    out.write_all(&len.to_le_bytes())?;
    out.write_all(text.as_bytes())
}

fn write_row(out: &mut impl Write, row: &Row) -> io::Result<()> {
    out.write_all(&row.line.to_le_bytes())?;
    write_text(out, &row.email)?;
    write_text(out, &row.name)?;
    let roles = u32::try_from(row.roles.len()).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "roles"))?;
    out.write_all(&roles.to_le_bytes())?;
    row.roles.iter().try_for_each(|r| write_text(out, r))?;
    // The locale as one byte: 0 for none, else its place among the shipped ones, plus one.
    let locale =
        row.locale.map_or(0, |l| 1 + crate::i18n::LOCALES.iter().position(|(x, _, _)| *x == l).unwrap_or(0) as u8);
    out.write_all(&[locale])
}

fn read_u32(input: &mut impl Read) -> io::Result<u32> {
    let mut b = [0u8; 4];
    input.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn read_text(input: &mut impl Read) -> io::Result<String> {
    let len = read_u32(input)? as usize;
    let mut bytes = vec![0u8; len];
    input.read_exact(&mut bytes)?;
    String::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

fn read_row(input: &mut impl Read) -> io::Result<Row> {
    let mut line = [0u8; 8];
    input.read_exact(&mut line)?;
    let email = read_text(input)?;
    let name = read_text(input)?;
    let roles = (0..read_u32(input)?).map(|_| read_text(input)).collect::<io::Result<Vec<_>>>()?;
    let mut locale = [0u8; 1];
    input.read_exact(&mut locale)?;
    let locale = crate::i18n::LOCALES.get(usize::from(locale[0]).wrapping_sub(1)).map(|(l, _, _)| *l);
    Ok(Row { line: u64::from_le_bytes(line), email, name, roles, locale })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(line: u64, email: &str) -> Row {
        Row {
            line,
            email: email.into(),
            name: format!("N{line}"),
            roles: vec!["staff".into(), "ops".into()],
            locale: if line.is_multiple_of(2) { Some(crate::i18n::Locale::Ja) } else { None },
        }
    }

    fn sorted(run_rows: usize, rows: Vec<Row>) -> Vec<Row> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let dir =
            std::env::temp_dir().join(format!("lk-sorted-{}-{}", std::process::id(), N.fetch_add(1, Ordering::SeqCst)));
        std::fs::create_dir_all(&dir).unwrap();
        let mut s = Sorter::with_run_rows(&dir, run_rows);
        rows.into_iter().for_each(|r| s.push(r).unwrap());
        let runs = s.runs.len();
        let finished = s.finish().unwrap();
        // Rows stay in memory only when they never filled a run.
        let in_memory = |i: usize| matches!(&finished.sources[i], Source::Memory(m) if m.len() > 0);
        let kept = (0..finished.sources.len()).any(in_memory)
            || finished.heap.iter().any(|h| matches!(finished.sources[h.source], Source::Memory(_)));
        assert!(!kept || runs == 0, "{runs} runs written, and rows kept in memory too");
        let out: Vec<Row> = finished.map(Result::unwrap).collect();
        // The runs are unlinked files: nothing is left in the directory.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "{runs} runs left files behind");
        std::fs::remove_dir(&dir).unwrap();
        out
    }

    #[test]
    fn rows_come_back_in_address_order_whatever_the_runs() {
        // A shuffled file of 1,000 addresses, some differing only in case.
        let rows: Vec<Row> = (0..1000u64)
            .map(|k| {
                let i = k * 7919 % 1000;
                let email = if i % 3 == 0 { format!("User{i:04}@X.test") } else { format!("user{i:04}@x.test") };
                row(k + 2, &email)
            })
            .collect();
        for run_rows in [1, 7, 64, 1000, 5000] {
            let out = sorted(run_rows, rows.clone());
            assert_eq!(out.len(), 1000, "run of {run_rows}");
            let keys: Vec<String> = out.iter().map(|r| normalise_email(&r.email)).collect();
            assert!(keys.windows(2).all(|w| w[0] < w[1]), "run of {run_rows}: out of order");
            // Each row comes back whole, its line, name and roles with it.
            let first = out.iter().find(|r| r.line == 2).unwrap();
            assert_eq!((first.email.as_str(), first.name.as_str()), ("User0000@X.test", "N2"));
            assert_eq!(first.roles, ["staff", "ops"]);
        }
    }

    #[test]
    fn equal_keys_keep_the_file_order_and_nothing_is_returned_for_nothing() {
        let out = sorted(2, vec![row(5, "b@x.test"), row(3, "a@x.test"), row(4, "b@x.test"), row(2, "c@x.test")]);
        let lines: Vec<u64> = out.iter().map(|r| r.line).collect();
        assert_eq!(lines, [3, 4, 5, 2]);
        assert!(sorted(3, vec![]).is_empty());
    }

    #[test]
    fn texts_of_any_content_survive_a_run() {
        let odd = Row {
            line: 9,
            email: "é@x.test".into(),
            name: "Ünïcode, \"quoted\"\n".into(),
            roles: vec![],
            locale: Some(crate::i18n::Locale::ZhCn),
        };
        let out = sorted(1, vec![odd.clone(), row(2, "a@x.test")]);
        assert_eq!((out[1].email.as_str(), out[1].name.as_str()), (odd.email.as_str(), odd.name.as_str()));
        assert!(out[1].roles.is_empty());
    }
}
