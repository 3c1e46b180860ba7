//! Where the data lives, as the configuration names it: the one place outside the engines that
//! knows there are two. The daemon asks it the questions a start needs (is there data sealed with
//! the key-encryption key, may another process hold it) without naming an engine itself.

use std::path::PathBuf;

use crate::lockfile::{self, DataLock};
use crate::pg::PgSettings;
use crate::{Db, StoreError};

/// A database to open: one SQLite file, or a PostgreSQL database several nodes share.
#[derive(Debug, Clone)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(Box<PgSettings>),
}

impl Location {
    /// Opens the database, creating and migrating it as needed (see [`Db::open`] and
    /// [`Db::open_postgres`]).
    pub fn open(&self) -> Result<Db, StoreError> {
        match self {
            Location::Sqlite(path) => Db::open(path),
            Location::Postgres(settings) => Db::open_postgres(settings),
        }
    }

    /// Whether the database already holds signing keys, which only the key-encryption key that
    /// sealed them can open. Read without changing anything (no file created, no migration): a
    /// start refused for a missing key leaves the database as it was. A SQLite file with any
    /// content counts (an empty one is what a failed first start leaves).
    pub fn holds_sealed_keys(&self) -> Result<bool, StoreError> {
        match self {
            Location::Sqlite(path) => Ok(std::fs::metadata(path).map(|m| m.len() > 0).unwrap_or(false)),
            Location::Postgres(settings) => crate::pg::holds_signing_keys(settings),
        }
    }

    /// The database's schema version and what its release record says, read without changing
    /// anything; `None` when there is no database yet (a SQLite file not created).
    pub fn schema(&self) -> Result<Option<crate::schema::Schema>, StoreError> {
        match self {
            Location::Sqlite(path) => crate::sqlite::peek_schema(path),
            Location::Postgres(settings) => crate::pg::peek_schema(settings).map(Some),
        }
    }

    /// Keeps a second daemon off a SQLite file for as long as the lock is held; `None` on
    /// PostgreSQL, where several nodes are the point.
    pub fn lock(&self) -> Result<Option<DataLock>, String> {
        match self {
            Location::Sqlite(path) => lockfile::acquire(path).map(Some),
            Location::Postgres(_) => Ok(None),
        }
    }

    /// Several processes may serve this database at once.
    pub fn is_shared(&self) -> bool {
        matches!(self, Location::Postgres(_))
    }

    /// Where the data is, for people (never a password).
    pub fn describe(&self) -> String {
        match self {
            Location::Sqlite(path) => path.display().to_string(),
            Location::Postgres(settings) => {
                settings.resolve().map(|t| t.describe()).unwrap_or_else(|_| "(postgres)".into())
            }
        }
    }

    /// The SQLite file, when the data is one.
    pub fn sqlite_path(&self) -> Option<&std::path::Path> {
        match self {
            Location::Sqlite(path) => Some(path),
            Location::Postgres(_) => None,
        }
    }
}
