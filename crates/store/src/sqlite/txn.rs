//! SQLite transactions begun and ended by statements prepared once per connection.
//!
//! rusqlite's `Transaction` runs `BEGIN` and `COMMIT` through `execute_batch`, which parses them
//! again every time; here they come from the connection's statement cache like every other hot
//! statement (saving about a seventh of a point lookup's read transaction: bench/README.md,
//! "Measurements behind the design"). A sign-in makes two read transactions and the writer two
//! statements per commit: a small saving, on the hottest path there is.

use rusqlite::Connection;

/// How a transaction takes its locks (SQLite's `BEGIN` variants).
#[derive(Clone, Copy)]
pub(super) enum Begin {
    /// A read snapshot, taken at the first read.
    Deferred,
    /// The write lock at once: the writer's batches.
    Immediate,
}

/// An open transaction on `conn`: [`Open::commit`] ends it; dropped without that (an error, a
/// panic in the caller's closure), it is rolled back, so a pooled connection never goes back to
/// its pool with a snapshot or a lock still held.
pub(super) struct Open<'c> {
    conn: &'c Connection,
}

impl<'c> Open<'c> {
    pub(super) fn begin(conn: &'c Connection, how: Begin) -> Result<Open<'c>, rusqlite::Error> {
        let sql = match how {
            Begin::Deferred => "BEGIN DEFERRED",
            Begin::Immediate => "BEGIN IMMEDIATE",
        };
        conn.prepare_cached(sql)?.execute([])?;
        Ok(Open { conn })
    }

    /// The connection, inside the transaction.
    pub(super) fn conn(&self) -> &'c Connection {
        self.conn
    }

    /// Commits. On an error the transaction may still be open; it is rolled back when `self`
    /// drops, as rusqlite's `Transaction` does.
    pub(super) fn commit(self) -> Result<(), rusqlite::Error> {
        self.conn.prepare_cached("COMMIT")?.execute([])?;
        Ok(())
    }
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        // After a successful COMMIT, or a rollback SQLite made itself (disk full, I/O error), the
        // connection is back in autocommit mode and there is nothing to end.
        if !self.conn.is_autocommit() {
            let rolled_back = self.conn.prepare_cached("ROLLBACK").and_then(|mut s| s.execute([]));
            if let Err(e) = rolled_back {
                tracing::error!(error = %e, "cannot roll back a transaction");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch("CREATE TABLE t (x INTEGER)").unwrap();
        c
    }

    fn count(c: &Connection) -> i64 {
        c.query_row("SELECT count(*) FROM t", [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn committed_changes_stay_and_dropped_ones_do_not() {
        let c = conn();
        let tx = Open::begin(&c, Begin::Immediate).unwrap();
        tx.conn().execute("INSERT INTO t VALUES (1)", []).unwrap();
        tx.commit().unwrap();
        assert!(c.is_autocommit());
        assert_eq!(count(&c), 1);

        let tx = Open::begin(&c, Begin::Deferred).unwrap();
        tx.conn().execute("INSERT INTO t VALUES (2)", []).unwrap();
        drop(tx);
        assert!(c.is_autocommit(), "dropped without commit: rolled back, not left open");
        assert_eq!(count(&c), 1);

        // Again and again from the statement cache.
        for i in 0..3 {
            let tx = Open::begin(&c, Begin::Deferred).unwrap();
            tx.conn().execute("INSERT INTO t VALUES (?1)", [i]).unwrap();
            tx.commit().unwrap();
        }
        assert_eq!(count(&c), 4);
    }

    #[test]
    fn a_panic_inside_rolls_back() {
        let c = conn();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let tx = Open::begin(&c, Begin::Immediate).unwrap();
            tx.conn().execute("INSERT INTO t VALUES (1)", []).unwrap();
            panic!("the caller's closure failed");
        }));
        assert!(caught.is_err());
        assert!(c.is_autocommit());
        assert_eq!(count(&c), 0);
    }
}
