//! Many rows in few statements: `INSERT INTO t (…) VALUES (…), (…), …` in a handful of fixed
//! sizes, largest first. On PostgreSQL each statement is a round trip, so a batch of events costs
//! a few round trips rather than one per row; the sizes are few so that each engine prepares few
//! distinct texts. The audit trail and the webhook deliveries it queues go in this way.

use super::StoreError;
use super::sql::{Conn, ToValue};

/// A row of a [`BatchInsert`]: its parameters, in the order of the row template's `$1 … $n`.
pub trait InsertRow {
    fn params<'a>(&'a self, out: &mut Vec<&'a dyn ToValue>);
}

/// The statements of one multi-row insert, one per chunk size.
#[derive(Debug)]
pub struct BatchInsert {
    /// Rows per statement, largest first, ending in 1.
    chunks: &'static [usize],
    /// The statement for each of `chunks`.
    texts: Vec<String>,
}

impl BatchInsert {
    /// `head` is `INSERT INTO t (a, b, …)`; `row` is one row's tuple with `$1 … $cols` for its
    /// parameters (a parameter may appear twice, a literal stands as is): `($1, 'x', $2, $2)`.
    /// `chunks` must end in 1, so that any number of rows goes in.
    pub fn new(head: &str, row: &str, cols: usize, chunks: &'static [usize]) -> BatchInsert {
        debug_assert_eq!(chunks.last(), Some(&1));
        let texts = chunks
            .iter()
            .map(|&rows| {
                let values: Vec<String> = (0..rows).map(|r| numbered(row, r * cols)).collect();
                format!("{head} VALUES {}", values.join(", "))
            })
            .collect();
        BatchInsert { chunks, texts }
    }

    /// Inserts `rows` in their order (ids given by the database ascend in it).
    pub fn run<R: InsertRow>(&self, conn: &dyn Conn, rows: &[R]) -> Result<(), StoreError> {
        let mut rest = rows;
        let mut params = Vec::new();
        for (text, &size) in self.texts.iter().zip(self.chunks) {
            while rest.len() >= size {
                let (chunk, tail) = rest.split_at(size);
                params.clear();
                for r in chunk {
                    r.params(&mut params);
                }
                conn.execute(text, &params)?;
                rest = tail;
            }
        }
        Ok(())
    }
}

/// `row` with each `$k` turned into the placeholder `?{offset + k}`.
fn numbered(row: &str, offset: usize) -> String {
    let mut out = String::with_capacity(row.len() + 8);
    let mut chars = row.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        let start = i + 1;
        let mut end = start;
        while let Some(&(j, d)) = chars.peek()
            && d.is_ascii_digit()
        {
            end = j + 1;
            chars.next();
        }
        match row[start..end].parse::<usize>() {
            Ok(k) => out.push_str(&format!("?{}", offset + k)),
            Err(_) => out.push('$'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_numbered_in_turn() {
        assert_eq!(numbered("($1, 'x', $2, $2, $10)", 0), "(?1, 'x', ?2, ?2, ?10)");
        assert_eq!(numbered("($1, $3)", 6), "(?7, ?9)");
        let b = BatchInsert::new("INSERT INTO t (a, b)", "($1, $2)", 2, &[2, 1]);
        assert_eq!(b.texts, ["INSERT INTO t (a, b) VALUES (?1, ?2), (?3, ?4)", "INSERT INTO t (a, b) VALUES (?1, ?2)"]);
    }
}
