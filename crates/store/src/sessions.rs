//! `sessions` table: signed-in browsers. Only the SHA-256 of the cookie value is stored.

use super::sql::{ConnExt, params};

use super::users::UserId;
use super::{Reader, StoreError, TenantId, WriteTx};
use crate::Timestamp;

#[derive(Debug, Clone)]
pub struct SessionRow {
    pub id: i64,
    pub user_id: UserId,
    pub auth_time: Timestamp,
    pub amr: String,
    pub expires_at: Timestamp,
}

pub struct NewSession<'a> {
    pub user_id: UserId,
    pub token_hash: &'a [u8],
    pub auth_time: Timestamp,
    pub amr: &'a str,
    pub created_at: Timestamp,
    pub expires_at: Timestamp,
}

pub fn insert(tx: &WriteTx<'_>, tenant: TenantId, s: &NewSession<'_>) -> Result<i64, StoreError> {
    super::insert_returning_id(
        tx.conn(),
        "INSERT INTO sessions (tenant_id, user_id, token_hash, auth_time, amr, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id",
        params![tenant, s.user_id, s.token_hash, s.auth_time, s.amr, s.created_at, s.expires_at],
    )
}

/// A live session of an active user of this tenant.
pub fn valid(
    tx: &impl Reader,
    tenant: TenantId,
    token_hash: &[u8],
    now: Timestamp,
) -> Result<Option<SessionRow>, StoreError> {
    tx.conn().query_opt(
        "SELECT s.id, s.user_id, s.auth_time, s.amr, s.expires_at FROM sessions s JOIN users u ON u.id = s.user_id
             WHERE s.tenant_id = ?1 AND s.token_hash = ?2 AND s.expires_at > ?3 AND u.status = 'active'",
        params![tenant, token_hash, now],
        |r| {
            Ok(SessionRow {
                id: r.get(0)?,
                user_id: r.get(1)?,
                auth_time: r.get(2)?,
                amr: r.get(3)?,
                expires_at: r.get(4)?,
            })
        },
    )
}

pub fn delete(tx: &WriteTx<'_>, tenant: TenantId, token_hash: &[u8]) -> Result<bool, StoreError> {
    Ok(tx
        .conn()
        .execute("DELETE FROM sessions WHERE tenant_id = ?1 AND token_hash = ?2", params![tenant, token_hash])?
        == 1)
}

pub fn sweep(tx: &WriteTx<'_>, now: Timestamp) -> Result<usize, StoreError> {
    tx.conn().execute("DELETE FROM sessions WHERE expires_at <= ?1", params![now])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::UserStatus;
    use crate::testing::{temp_db, tenant, user, user_with};

    fn new(user_id: UserId, hash: &[u8], expires_at: Timestamp) -> NewSession<'_> {
        NewSession { user_id, token_hash: hash, auth_time: 3, amr: r#"["hwk","user"]"#, created_at: 4, expires_at }
    }

    fn rows(tx: &impl Reader) -> i64 {
        tx.conn().query_one("SELECT count(*) FROM sessions", params![], |r| r.get(0)).unwrap()
    }

    #[test]
    fn valid_until_expiry() {
        let t = temp_db();
        let (a, ada, id) = t.write(|tx| {
            let a = tenant(tx, "a");
            let ada = user(tx, a, "ada@example.com");
            (a, ada, insert(tx, a, &new(ada, b"tok", 100)).unwrap())
        });
        t.read(|tx| {
            let s = valid(tx, a, b"tok", 99).unwrap().unwrap();
            assert_eq!(
                (s.id, s.user_id, s.auth_time, s.amr.as_str(), s.expires_at),
                (id, ada, 3, r#"["hwk","user"]"#, 100)
            );
            assert!(valid(tx, a, b"tok", 100).unwrap().is_none());
            assert!(valid(tx, a, b"other", 10).unwrap().is_none());
        });
    }

    #[test]
    fn only_active_users_have_valid_sessions() {
        let t = temp_db();
        let (a, ada) = t.write(|tx| {
            let a = tenant(tx, "a");
            let ada = user(tx, a, "ada@example.com");
            let bob = user_with(tx, a, "bob@example.com", UserStatus::Invited);
            insert(tx, a, &new(ada, b"ada", 100)).unwrap();
            insert(tx, a, &new(bob, b"bob", 100)).unwrap();
            (a, ada)
        });
        assert!(t.read(|tx| valid(tx, a, b"bob", 10).unwrap()).is_none());
        t.write(|tx| crate::users::set_status(tx, a, ada, UserStatus::Disabled).unwrap());
        assert!(t.read(|tx| valid(tx, a, b"ada", 10).unwrap()).is_none());
        t.write(|tx| crate::users::set_status(tx, a, ada, UserStatus::Active).unwrap());
        assert!(t.read(|tx| valid(tx, a, b"ada", 10).unwrap()).is_some());
    }

    #[test]
    fn delete_once() {
        let t = temp_db();
        let a = t.write(|tx| {
            let a = tenant(tx, "a");
            let bob = user(tx, a, "bob@example.com");
            insert(tx, a, &new(bob, b"bob", 100)).unwrap();
            a
        });
        t.write(|tx| {
            let ada = user(tx, a, "ada@example.com");
            insert(tx, a, &new(ada, b"one", 100)).unwrap();
            assert!(delete(tx, a, b"one").unwrap());
            assert!(!delete(tx, a, b"one").unwrap());
            assert!(valid(tx, a, b"one", 10).unwrap().is_none());
            // The other user's session stays.
            assert!(valid(tx, a, b"bob", 10).unwrap().is_some());
        });
    }

    #[test]
    fn sweep_removes_expired_sessions_only() {
        let t = temp_db();
        let a = t.write(|tx| {
            let a = tenant(tx, "a");
            let ada = user(tx, a, "ada@example.com");
            insert(tx, a, &new(ada, b"old", 100)).unwrap();
            insert(tx, a, &new(ada, b"new", 200)).unwrap();
            a
        });
        t.write(|tx| {
            assert_eq!(sweep(tx, 100).unwrap(), 1);
            assert_eq!(sweep(tx, 100).unwrap(), 0);
            assert_eq!(rows(tx), 1);
            assert!(valid(tx, a, b"new", 150).unwrap().is_some());
        });
    }

    #[test]
    fn another_tenant_cannot_use_or_end_a_session() {
        let t = temp_db();
        let (a, b, id) = t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            let ada = user(tx, a, "ada@example.com");
            (a, b, insert(tx, a, &new(ada, b"tok", 100)).unwrap())
        });
        t.write(|tx| {
            assert!(valid(tx, b, b"tok", 10).unwrap().is_none());
            assert!(!delete(tx, b, b"tok").unwrap());
        });
        assert_eq!(t.read(|tx| valid(tx, a, b"tok", 10).unwrap().unwrap().id), id);
    }
}
