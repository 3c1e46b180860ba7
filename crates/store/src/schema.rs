//! Which releases can serve a database. The release that migrates a database records the schema
//! version it left and the oldest release that can still serve that schema (`latchkey_release`,
//! migration 0014, from [`crate::migrations::Migration::serves_from`]). Before migrating, both
//! engines' runners ask [`Schema::fit`]: an older schema is migrated, a newer one is served as it
//! is when its record names this release or an older one (a rolling upgrade: the new release's
//! migrations were additive), and refused, untouched, otherwise. `latchkeyd check-config` and
//! `latchkey status` show the same facts.

use std::fmt;

use crate::StoreError;
use crate::migrations::{MIGRATIONS, SCHEMA_VERSION};

/// This release's number, as its Cargo manifest says.
pub const RELEASE: &str = env!("CARGO_PKG_VERSION");

/// Reads the record (one row, absent before migration 0014).
pub(crate) const READ_RECORD: &str = "SELECT schema_version, serves_from FROM latchkey_release WHERE id = 1";

/// Writes the record once the database is at [`SCHEMA_VERSION`] (SQLite's placeholders;
/// PostgreSQL's in [`RECORD_POSTGRES`]).
pub(crate) const RECORD_SQLITE: &str = "INSERT INTO latchkey_release (id, schema_version, serves_from) VALUES (1, ?1, ?2) \
     ON CONFLICT (id) DO UPDATE SET schema_version = excluded.schema_version, serves_from = excluded.serves_from";
pub(crate) const RECORD_POSTGRES: &str = "INSERT INTO latchkey_release (id, schema_version, serves_from) VALUES (1, $1, $2) \
     ON CONFLICT (id) DO UPDATE SET schema_version = excluded.schema_version, serves_from = excluded.serves_from";

/// A release number, `MAJOR.MINOR.PATCH` (a pre-release or build suffix is ignored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Release {
    major: u32,
    minor: u32,
    patch: u32,
}

impl Release {
    pub fn parse(text: &str) -> Option<Release> {
        let core = text.trim().split(['-', '+']).next()?;
        let mut parts = core.split('.').map(|p| p.parse::<u32>().ok());
        let release = Release { major: parts.next()??, minor: parts.next()??, patch: parts.next()?? };
        parts.next().is_none().then_some(release)
    }

    /// The release this binary is.
    pub fn this() -> Release {
        Release::parse(RELEASE).unwrap_or(Release { major: 0, minor: 0, patch: 0 })
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The oldest release that can serve the schema this release writes.
pub fn serves_from() -> &'static str {
    MIGRATIONS.last().map(|m| m.serves_from).unwrap_or(RELEASE)
}

/// What a database says of itself: its schema version (0: nothing yet) and, when the record
/// matches that version, the oldest release that can serve it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema {
    pub version: usize,
    pub serves_from: Option<String>,
}

/// What this release does with a database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fit {
    /// At an older schema version (or empty): migrated at start.
    Migrate { from: usize },
    /// At this release's schema version.
    Current,
    /// At a newer schema version that this release can still serve, unchanged.
    Newer { serves_from: Release },
}

impl Schema {
    /// `version` as the engine counts it, with the record's row; a record left at another version
    /// (a newer release stopped between migrating and recording) says nothing.
    pub(crate) fn from_parts(version: usize, record: Option<(i64, String)>) -> Schema {
        let serves_from = record.filter(|(v, _)| usize::try_from(*v).ok() == Some(version)).map(|(_, r)| r);
        Schema { version, serves_from }
    }

    /// Whether this release may serve the database, and how; a refusal says what to run instead.
    pub fn fit(&self) -> Result<Fit, StoreError> {
        let version = self.version;
        if version < SCHEMA_VERSION {
            return Ok(Fit::Migrate { from: version });
        }
        if version == SCHEMA_VERSION {
            return Ok(Fit::Current);
        }
        let known = SCHEMA_VERSION;
        match self.serves_from.as_deref().map(|r| (r, Release::parse(r))) {
            Some((_, Some(release))) if release <= Release::this() => Ok(Fit::Newer { serves_from: release }),
            Some((release, _)) => Err(StoreError::Migration(format!(
                "the database is at schema version {version}, newer than this latchkeyd understands ({known}), and \
                 the release that wrote it says latchkeyd {release} or newer is needed to serve it; this is \
                 {RELEASE}. Run {release} or newer (see docs/upgrading.md), or restore the backup taken before \
                 the upgrade; the database was not modified"
            ))),
            None => Err(StoreError::Migration(format!(
                "the database is at schema version {version}, newer than this latchkeyd understands ({known}); \
                 it was written by a newer release. Run that release, or restore a backup; the database was not \
                 modified"
            ))),
        }
    }

    /// What a start does with the database: `Ok(true)` migrate it (or it is current), `Ok(false)`
    /// serve a newer schema unchanged (logged: a rolling upgrade is under way), `Err` refuse it.
    pub(crate) fn migrate_at_start(&self) -> Result<bool, StoreError> {
        match self.fit()? {
            Fit::Newer { serves_from } => {
                tracing::warn!(
                    schema = self.version,
                    known = SCHEMA_VERSION,
                    %serves_from,
                    "the database was migrated by a newer release that says this one can still serve it; serving it \
                     unchanged"
                );
                Ok(false)
            }
            Fit::Migrate { .. } | Fit::Current => Ok(true),
        }
    }
}

impl fmt::Display for Fit {
    /// How `check-config` and the start's log put it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fit::Migrate { from: 0 } => write!(f, "empty: it is created at schema version {SCHEMA_VERSION} at start"),
            Fit::Migrate { from } => write!(
                f,
                "at schema version {from}: latchkeyd {RELEASE} migrates it to {SCHEMA_VERSION} at start (take a \
                 backup first: latchkey backup)"
            ),
            Fit::Current => write!(f, "at schema version {SCHEMA_VERSION}, this release's"),
            Fit::Newer { serves_from } => write!(
                f,
                "at a newer schema version than this release's ({SCHEMA_VERSION}), written by a newer release that \
                 says {serves_from} and later can serve it: latchkeyd {RELEASE} serves it unchanged"
            ),
        }
    }
}

/// The schema of the database a transaction reads (`version_sql`: the engine's way to count it).
pub(crate) fn current(tx: &impl crate::Reader, version_sql: &str) -> Result<Schema, StoreError> {
    use crate::sql::ConnExt;
    let version: i64 = tx.conn().query_one(version_sql, &[], |r| r.get(0))?;
    let record = tx.conn().query_opt(READ_RECORD, &[], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
    Ok(Schema::from_parts(usize::try_from(version).unwrap_or(0), record))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_parse_and_order() {
        let r = |s| Release::parse(s).unwrap();
        assert!(r("0.2.0") < r("0.2.1") && r("0.2.1") < r("0.10.0") && r("0.10.0") < r("1.0.0"));
        assert_eq!(r("1.2.3-rc.1"), r("1.2.3"));
        for bad in ["", "1", "1.2", "1.2.3.4", "a.b.c", "1..3"] {
            assert_eq!(Release::parse(bad), None, "{bad}");
        }
        assert_eq!(r("0.2.0").to_string(), "0.2.0");
    }

    #[test]
    fn a_newer_schema_is_served_only_when_its_record_names_this_release_or_older() {
        let newer = SCHEMA_VERSION + 1;
        let at = |version, record: Option<(i64, &str)>| {
            Schema::from_parts(version, record.map(|(v, r)| (v, r.to_owned()))).fit()
        };
        assert_eq!(at(0, None).unwrap(), Fit::Migrate { from: 0 });
        assert_eq!(at(SCHEMA_VERSION, None).unwrap(), Fit::Current);
        assert_eq!(
            at(newer, Some((newer as i64, serves_from()))).unwrap(),
            Fit::Newer { serves_from: Release::parse(serves_from()).unwrap() }
        );
        let refused = at(newer, Some((newer as i64, "99.0.0"))).unwrap_err().to_string();
        assert!(refused.contains("latchkeyd 99.0.0 or newer") && refused.contains("not modified"), "{refused}");
        // No record, or one left at another version: nothing says this release may serve it.
        for record in [None, Some((SCHEMA_VERSION as i64, serves_from()))] {
            let refused = at(newer, record).unwrap_err().to_string();
            assert!(refused.contains("written by a newer release"), "{refused}");
        }
    }
}
