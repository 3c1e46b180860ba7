//! PostgreSQL migrations: `migrations/NNNN-name/postgres.sql` of the one list
//! ([`crate::migrations`]) that SQLite's runner reads too, so both engines count the same schema versions (what "refuse a newer schema" and
//! `migrate-store` compare). Several nodes may start at once: the run holds a session advisory
//! lock, and each migration commits in its own transaction (PostgreSQL DDL is transactional, so a
//! failed migration leaves nothing half-done).

use crate::StoreError;

use crate::migrations::MIGRATIONS;
use crate::schema::Schema;

/// The advisory lock key of a migration run, held for the whole run.
const MIGRATE_LOCK: i64 = super::common::locks::MIGRATE;

/// Brings the database to the latest schema; refuses, changing nothing, a database of a newer one.
pub fn migrate(client: &mut postgres::Client) -> Result<(), StoreError> {
    let locked: bool = client.query_one("SELECT pg_try_advisory_lock($1)", &[&MIGRATE_LOCK])?.try_get(0)?;
    if !locked {
        tracing::info!("waiting for another node's migration of the PostgreSQL database");
        client.execute("SELECT pg_advisory_lock($1)", &[&MIGRATE_LOCK])?;
    }
    let result = run(client);
    // Closing the session would release the lock too; unlock anyway for callers that keep it.
    let unlocked = client.execute("SELECT pg_advisory_unlock($1)", &[&MIGRATE_LOCK]);
    result?;
    unlocked?;
    Ok(())
}

/// The schema version the database is at (0: none yet).
pub fn version(client: &mut postgres::Client) -> Result<usize, StoreError> {
    let exists: bool = client.query_one("SELECT to_regclass('latchkey_schema') IS NOT NULL", &[])?.try_get(0)?;
    if !exists {
        return Ok(0);
    }
    let v: i32 = client.query_one("SELECT coalesce(max(version), 0) FROM latchkey_schema", &[])?.try_get(0)?;
    Ok(usize::try_from(v).unwrap_or(0))
}

fn run(client: &mut postgres::Client) -> Result<(), StoreError> {
    let known = MIGRATIONS.len();
    let schema = schema(client)?;
    let version = schema.version;
    if !schema.migrate_at_start()? {
        return Ok(());
    }
    // Under the lock, so two nodes don't race the CREATE. The server's NOTICE that the table
    // exists would reach the daemon's log on every start: this connection hears warnings only.
    client.batch_execute(
        "SET client_min_messages TO warning;
         CREATE TABLE IF NOT EXISTS latchkey_schema (
             version    INTEGER     PRIMARY KEY,
             name       TEXT        NOT NULL,
             applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
         )",
    )?;
    for (i, m) in MIGRATIONS.iter().enumerate().skip(version) {
        let (name, sql) = (m.name, m.postgres);
        let number = i32::try_from(i + 1).unwrap_or(i32::MAX);
        let fail =
            |e: postgres::Error| StoreError::Migration(format!("applying PostgreSQL migration {name} failed: {e}"));
        let mut tx = client.transaction().map_err(fail)?;
        tx.batch_execute(sql).map_err(fail)?;
        tx.execute("INSERT INTO latchkey_schema (version, name) VALUES ($1, $2)", &[&number, &name]).map_err(fail)?;
        tx.commit().map_err(fail)?;
        tracing::info!(version = number, name, "applied PostgreSQL migration");
    }
    let known = i64::try_from(known).unwrap_or(i64::MAX);
    client
        .execute(crate::schema::RECORD_POSTGRES, &[&known, &crate::schema::serves_from()])
        .map_err(|e| StoreError::Migration(format!("recording the schema's release failed: {e}")))?;
    Ok(())
}

/// The schema version and the release record, changing nothing.
pub fn schema(client: &mut postgres::Client) -> Result<Schema, StoreError> {
    let version = version(client)?;
    let recorded: bool = client.query_one("SELECT to_regclass('latchkey_release') IS NOT NULL", &[])?.try_get(0)?;
    let record = if recorded {
        client
            .query_opt(crate::schema::READ_RECORD, &[])?
            .map(|row| Ok::<_, postgres::Error>((row.try_get::<_, i64>(0)?, row.try_get::<_, String>(1)?)))
            .transpose()?
    } else {
        None
    };
    Ok(Schema::from_parts(version, record))
}
