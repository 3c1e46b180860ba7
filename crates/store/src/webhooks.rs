//! `webhooks` (WIP, issue 50): a tenant's subscriptions to its audit events.

use super::sql::{ConnExt, Row, params};
use super::{Reader, StoreError, TenantId, WriteTx};
use crate::Timestamp;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookRow {
    pub id: i64,
    pub url: String,
    /// Globs of audit actions (`user.*`).
    pub events: Vec<String>,
    pub secret_sealed: Vec<u8>,
    pub created_at: Timestamp,
}

fn row(r: &Row<'_>) -> Result<WebhookRow, StoreError> {
    Ok(WebhookRow {
        id: r.get(0)?,
        url: r.get(1)?,
        events: r.get::<_, String>(2)?.split(',').filter(|e| !e.is_empty()).map(str::to_owned).collect(),
        secret_sealed: r.get(3)?,
        created_at: r.get(4)?,
    })
}

pub fn insert(tx: &WriteTx<'_>, tenant: TenantId, w: &WebhookRow) -> Result<i64, StoreError> {
    super::insert_returning_id(
        tx.conn(),
        "INSERT INTO webhooks (tenant_id, url, events, secret_sealed, created_at) VALUES (?1, ?2, ?3, ?4, ?5)
         RETURNING id",
        params![tenant, w.url, w.events.join(","), w.secret_sealed, w.created_at],
    )
}

/// A tenant's subscriptions, oldest first.
pub fn list(tx: &impl Reader, tenant: TenantId) -> Result<Vec<WebhookRow>, StoreError> {
    tx.conn().query_all(
        "SELECT id, url, events, secret_sealed, created_at FROM webhooks WHERE tenant_id = ?1 ORDER BY id",
        params![tenant],
        row,
    )
}

/// Deletes a subscription and, by cascade, its pending deliveries. Whether it existed.
pub fn delete(tx: &WriteTx<'_>, tenant: TenantId, id: i64) -> Result<bool, StoreError> {
    Ok(tx.conn().execute("DELETE FROM webhooks WHERE tenant_id = ?1 AND id = ?2", params![tenant, id])? == 1)
}

/// Whether an audit action matches one of a subscription's globs (`*` matches any run of
/// characters, `user.*` every user event, `*` all).
pub fn matches(events: &[String], action: &str) -> bool {
    fn glob(p: &[u8], s: &[u8]) -> bool {
        match (p.first(), s.first()) {
            (None, None) => true,
            (Some(b'*'), _) => glob(&p[1..], s) || (!s.is_empty() && glob(p, &s[1..])),
            (Some(a), Some(b)) if a == b => glob(&p[1..], &s[1..]),
            _ => false,
        }
    }
    events.iter().any(|e| glob(e.as_bytes(), action.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{temp_db, tenant};

    #[test]
    fn subscriptions_round_trip_per_tenant() {
        let t = temp_db();
        t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            let w = WebhookRow {
                id: 0,
                url: "https://hooks.a.test/in".into(),
                events: vec!["user.*".into(), "role.assign".into()],
                secret_sealed: vec![1, 2],
                created_at: 7,
            };
            let id = insert(tx, a, &w).unwrap();
            assert_eq!(list(tx, a).unwrap(), vec![WebhookRow { id, ..w }]);
            assert!(list(tx, b).unwrap().is_empty());
            assert!(!delete(tx, b, id).unwrap(), "another tenant's");
            assert!(delete(tx, a, id).unwrap());
            assert!(list(tx, a).unwrap().is_empty());
        });
    }

    #[test]
    fn globs() {
        let e = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(matches(&e(&["user.*"]), "user.invite"));
        assert!(!matches(&e(&["user.*"]), "role.assign"));
        assert!(matches(&e(&["*"]), "anything"));
        assert!(matches(&e(&["role.assign", "*.delete"]), "app.delete"));
        assert!(!matches(&e(&[]), "user.invite"));
    }
}
