//! `audit`: an append-only trail of registrations, logins, credential changes, recoveries, token
//! grants and admin operations.

use super::sql::{ConnExt, params};

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
    tx.conn().execute(
        "INSERT INTO audit (at, tenant, actor, action, outcome, ip, subject, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![e.at, e.tenant, e.actor, e.action, e.outcome, e.ip, e.subject, e.detail],
    )?;
    Ok(())
}

/// Events after row `after_id`, since `since`, of one tenant (`None`: every tenant's and the
/// daemon-wide ones), optionally about `subject` (compared case-insensitively, as e-mails are);
/// oldest first.
pub fn query(
    tx: &impl Reader,
    tenant: Option<&str>,
    since: Timestamp,
    subject: Option<&str>,
    after_id: i64,
    limit: u32,
) -> Result<Vec<(i64, Event)>, StoreError> {
    // Two texts rather than `(?1 IS NULL OR tenant = ?1)`, which would keep SQLite from using the
    // (tenant, at) index for one tenant's trail. NULL tests name their parameter's type, and case
    // is folded with lower() rather than SQLite's NOCASE: the same text is then valid SQL for
    // PostgreSQL too (docs/dev/postgres-plan.md).
    let by_tenant = if tenant.is_some() { "tenant = ?1" } else { "CAST(?1 AS TEXT) IS NULL" };
    let sql = format!(
        "SELECT id, at, tenant, actor, action, outcome, ip, subject, detail FROM audit
         WHERE {by_tenant} AND at >= ?2 AND id > ?3 AND (CAST(?4 AS TEXT) IS NULL OR lower(subject) = lower(?4))
         ORDER BY id LIMIT ?5"
    );
    let rows = tx.conn().query_all(&sql, params![tenant, since, after_id, subject, limit], |r| {
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
    })?;
    Ok(rows)
}

pub fn sweep(tx: &WriteTx<'_>, before: Timestamp) -> Result<usize, StoreError> {
    tx.conn().execute("DELETE FROM audit WHERE at < ?1", params![before])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::temp_db;

    fn event(at: Timestamp, tenant: Option<&str>, subject: Option<&str>, action: &str) -> Event {
        Event {
            at,
            tenant: tenant.map(str::to_owned),
            actor: "admin".into(),
            action: action.into(),
            outcome: "success".into(),
            ip: Some("127.0.0.1".into()),
            subject: subject.map(str::to_owned),
            detail: None,
        }
    }

    fn actions(rows: Vec<(i64, Event)>) -> Vec<String> {
        rows.into_iter().map(|(_, e)| e.action).collect()
    }

    #[test]
    fn query_filters_by_tenant_time_subject_and_position() {
        let t = temp_db();
        t.write(|tx| {
            insert(tx, &event(10, Some("a"), Some("ada"), "a1")).unwrap();
            insert(tx, &event(20, Some("a"), Some("bob"), "a2")).unwrap();
            insert(tx, &event(30, Some("a"), Some("ada"), "a3")).unwrap();
            insert(tx, &event(15, Some("b"), Some("ada"), "b1")).unwrap();
            insert(tx, &event(15, None, None, "daemon")).unwrap();
        });
        t.read(|tx| {
            let all = query(tx, Some("a"), 0, None, 0, 100).unwrap();
            let first = &all[0].1;
            assert_eq!(
                (first.at, first.tenant.as_deref(), first.actor.as_str(), first.outcome.as_str(), first.ip.as_deref()),
                (10, Some("a"), "admin", "success", Some("127.0.0.1"))
            );
            assert_eq!(actions(all.clone()), ["a1", "a2", "a3"]);
            assert_eq!(actions(query(tx, Some("a"), 20, None, 0, 100).unwrap()), ["a2", "a3"]);
            assert_eq!(actions(query(tx, Some("a"), 0, Some("ada"), 0, 100).unwrap()), ["a1", "a3"]);
            assert_eq!(actions(query(tx, Some("a"), 0, None, all[0].0, 100).unwrap()), ["a2", "a3"]);
            assert_eq!(actions(query(tx, Some("a"), 0, None, 0, 2).unwrap()), ["a1", "a2"]);
            // Tenants see only their own trail.
            assert_eq!(actions(query(tx, Some("b"), 0, None, 0, 100).unwrap()), ["b1"]);
            assert!(query(tx, Some("c"), 0, None, 0, 100).unwrap().is_empty());
            // Without a tenant: everything, daemon-wide events included; subjects ignore case.
            assert_eq!(actions(query(tx, None, 0, None, 0, 100).unwrap()), ["a1", "a2", "a3", "b1", "daemon"]);
            assert_eq!(actions(query(tx, None, 0, Some("ADA"), 0, 100).unwrap()), ["a1", "a3", "b1"]);
        });
    }

    #[test]
    fn sweep_removes_events_before_the_cut() {
        let t = temp_db();
        t.write(|tx| {
            insert(tx, &event(10, Some("a"), None, "old")).unwrap();
            insert(tx, &event(20, Some("b"), None, "edge")).unwrap();
            insert(tx, &event(30, Some("a"), None, "new")).unwrap();
            assert_eq!(sweep(tx, 20).unwrap(), 1);
            assert_eq!(sweep(tx, 20).unwrap(), 0);
            assert_eq!(actions(query(tx, Some("a"), 0, None, 0, 100).unwrap()), ["new"]);
            assert_eq!(actions(query(tx, Some("b"), 0, None, 0, 100).unwrap()), ["edge"]);
        });
    }
}
