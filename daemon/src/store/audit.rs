//! `audit`: an append-only trail of registrations, logins, credential changes, recoveries, token
//! grants and admin operations.

use rusqlite::params;

use super::{Reader, StoreError, WriteTx};
use crate::clock::Timestamp;

#[derive(Debug, Clone, Default)]
pub struct Event {
    pub at: Timestamp,
    pub tenant: Option<String>,
    pub actor: String,
    pub action: String,
    pub outcome: String,
    pub ip: Option<String>,
    pub subject: Option<String>,
    pub detail: Option<String>,
}

pub fn insert(tx: &WriteTx<'_>, e: &Event) -> Result<(), StoreError> {
    tx.conn_mut().execute(
        "INSERT INTO audit (at, tenant, actor, action, outcome, ip, subject, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![e.at, e.tenant, e.actor, e.action, e.outcome, e.ip, e.subject, e.detail],
    )?;
    Ok(())
}

/// Events of a tenant after row `after_id`, since `since`, optionally about `subject`; oldest first.
pub fn query(
    tx: &impl Reader,
    tenant: &str,
    since: Timestamp,
    subject: Option<&str>,
    after_id: i64,
    limit: u32,
) -> Result<Vec<(i64, Event)>, StoreError> {
    let mut stmt = tx.conn().prepare(
        "SELECT id, at, tenant, actor, action, outcome, ip, subject, detail FROM audit
         WHERE tenant = ?1 AND at >= ?2 AND id > ?3 AND (?4 IS NULL OR subject = ?4) ORDER BY id LIMIT ?5",
    )?;
    let rows = stmt
        .query_map(params![tenant, since, after_id, subject, limit], |r| {
            Ok((
                r.get(0)?,
                Event {
                    at: r.get(1)?,
                    tenant: r.get(2)?,
                    actor: r.get(3)?,
                    action: r.get(4)?,
                    outcome: r.get(5)?,
                    ip: r.get(6)?,
                    subject: r.get(7)?,
                    detail: r.get(8)?,
                },
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

pub fn sweep(tx: &WriteTx<'_>, before: Timestamp) -> Result<usize, StoreError> {
    Ok(tx.conn_mut().execute("DELETE FROM audit WHERE at < ?1", [before])?)
}
