//! What the PostgreSQL engine and the cluster's coordination ([`crate::cluster`]) share: errors
//! as sentences, how a dedicated connection is opened, and the advisory-lock keys.

/// A PostgreSQL error as a sentence: the server's message and detail, or the client's error with
/// its causes (`postgres::Error` itself only says "db error" or "error serializing parameter 0").
pub fn error_text(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let mut text = format!("{} ({})", db.message(), db.code().code());
        if let Some(detail) = db.detail() {
            text.push_str(&format!(": {detail}"));
        }
        return text;
    }
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    text
}

/// Opens a dedicated connection for the listener (outside the pool: it waits on notifications).
pub type Connect = Box<dyn FnMut() -> Result<postgres::Client, String> + Send>;

/// Advisory-lock keys, one place for all of them ("LKADMIN", "LKJOB…" in ASCII, to be
/// recognisable in `pg_locks`).
pub mod locks {
    pub const MIGRATE: i64 = 0x4C4B_4D49_4752_0001;
    pub const ADMIN: i64 = 0x4C4B_4144_4D49_4E00;
    pub const JOB: i64 = 0x4C4B_4A4F_4200_0000;
}
