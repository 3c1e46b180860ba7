//! `consents` table: what a user allowed an application that asks (`--consent explicit`).

use super::sql::{ConnExt, params};

use super::users::UserId;
use super::{Reader, StoreError, TenantId, WriteTx};
use crate::Timestamp;

/// One application a user allowed, as `/account` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentRow {
    pub client_id: String,
    /// The application's name (the client id if the app is gone).
    pub app_name: String,
    pub scopes: Vec<String>,
    pub granted_at: Timestamp,
}

/// The scopes `user` allowed `client_id`, if any.
pub fn scopes(
    tx: &impl Reader,
    tenant: TenantId,
    user: UserId,
    client_id: &str,
) -> Result<Option<Vec<String>>, StoreError> {
    let row: Option<String> = tx.conn().query_opt(
        "SELECT scopes FROM consents WHERE tenant_id = ?1 AND user_id = ?2 AND client_id = ?3",
        params![tenant, user, client_id],
        |r| r.get(0),
    )?;
    Ok(row.map(|s| s.split(' ').filter(|s| !s.is_empty()).map(str::to_owned).collect()))
}

/// Records that `user` allowed `client_id` these `scopes` (replacing what was recorded).
pub fn grant(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    user: UserId,
    client_id: &str,
    scopes: &[String],
    now: Timestamp,
) -> Result<(), StoreError> {
    let mut sorted = scopes.to_vec();
    sorted.sort();
    sorted.dedup();
    tx.conn().execute(
        "INSERT INTO consents (tenant_id, user_id, client_id, scopes, granted_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (tenant_id, user_id, client_id) DO UPDATE SET scopes = excluded.scopes, granted_at = excluded.granted_at",
        params![tenant, user, client_id, sorted.join(" "), now],
    )?;
    Ok(())
}

/// The applications `user` allowed, by name.
pub fn for_user(tx: &impl Reader, tenant: TenantId, user: UserId) -> Result<Vec<ConsentRow>, StoreError> {
    tx.conn().query_all(
        "SELECT c.client_id, COALESCE(a.name, c.client_id), c.scopes, c.granted_at FROM consents c
         LEFT JOIN applications a ON a.tenant_id = c.tenant_id AND a.client_id = c.client_id
         WHERE c.tenant_id = ?1 AND c.user_id = ?2 ORDER BY 2, 1",
        params![tenant, user],
        |r| {
            let scopes: String = r.get(2)?;
            Ok(ConsentRow {
                client_id: r.get(0)?,
                app_name: r.get(1)?,
                scopes: scopes.split(' ').filter(|s| !s.is_empty()).map(str::to_owned).collect(),
                granted_at: r.get(3)?,
            })
        },
    )
}

/// Forgets what `user` allowed `client_id`; true when there was something.
pub fn revoke(tx: &WriteTx<'_>, tenant: TenantId, user: UserId, client_id: &str) -> Result<bool, StoreError> {
    Ok(tx.conn().execute(
        "DELETE FROM consents WHERE tenant_id = ?1 AND user_id = ?2 AND client_id = ?3",
        params![tenant, user, client_id],
    )? == 1)
}

/// Forgets every consent given to an application (it was deleted).
pub fn delete_for_app(tx: &WriteTx<'_>, tenant: TenantId, client_id: &str) -> Result<usize, StoreError> {
    tx.conn().execute("DELETE FROM consents WHERE tenant_id = ?1 AND client_id = ?2", params![tenant, client_id])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{temp_db, tenant, user};

    #[test]
    fn granted_listed_replaced_and_revoked_per_tenant_and_user() {
        let t = temp_db();
        let (a, b, ada, bob) = t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            (a, b, user(tx, a, "ada@example.com"), user(tx, a, "bob@example.com"))
        });
        t.write(|tx| {
            grant(tx, a, ada, "app1", &["profile".into(), "openid".into(), "openid".into()], 10).unwrap();
            grant(tx, a, bob, "app1", &["openid".into()], 11).unwrap();
        });
        t.read(|tx| {
            assert_eq!(scopes(tx, a, ada, "app1").unwrap(), Some(vec!["openid".into(), "profile".into()]));
            assert_eq!(scopes(tx, a, ada, "app2").unwrap(), None);
            assert_eq!(scopes(tx, b, ada, "app1").unwrap(), None);
            let listed = for_user(tx, a, ada).unwrap();
            assert_eq!(listed.len(), 1);
            assert_eq!((listed[0].app_name.as_str(), listed[0].granted_at), ("app1", 10));
        });
        t.write(|tx| {
            grant(tx, a, ada, "app1", &["openid".into(), "email".into()], 12).unwrap();
            assert!(!revoke(tx, b, ada, "app1").unwrap());
        });
        assert_eq!(t.read(|tx| scopes(tx, a, ada, "app1").unwrap()), Some(vec!["email".into(), "openid".into()]));
        t.write(|tx| {
            assert!(revoke(tx, a, ada, "app1").unwrap());
            assert!(!revoke(tx, a, ada, "app1").unwrap());
            assert_eq!(delete_for_app(tx, a, "app1").unwrap(), 1);
        });
        assert!(t.read(|tx| for_user(tx, a, bob).unwrap()).is_empty());
    }
}
