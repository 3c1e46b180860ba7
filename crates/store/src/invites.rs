//! `invites` table: invitation and recovery tokens (hashed), single use.

use super::sql::{ConnExt, params};

use super::users::UserId;
use super::{InvitePurpose, Reader, StoreError, TenantId, WriteTx};
use crate::Timestamp;

pub type InviteId = i64;

#[derive(Debug, Clone)]
pub struct InviteRow {
    pub id: InviteId,
    pub user_id: UserId,
    pub purpose: InvitePurpose,
    pub expires_at: Timestamp,
}

impl InviteRow {
    pub fn is_recovery(&self) -> bool {
        self.purpose == InvitePurpose::Recovery
    }
}

pub fn insert(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    user: UserId,
    token_hash: &[u8],
    purpose: InvitePurpose,
    now: Timestamp,
    expires_at: Timestamp,
) -> Result<InviteId, StoreError> {
    super::insert_returning_id(
        tx.conn(),
        "INSERT INTO invites (tenant_id, user_id, token_hash, purpose, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
        params![tenant, user, token_hash, purpose, now, expires_at],
    )
}

/// An unused, unexpired invite or recovery token of this tenant.
pub fn valid(
    tx: &impl Reader,
    tenant: TenantId,
    token_hash: &[u8],
    now: Timestamp,
) -> Result<Option<InviteRow>, StoreError> {
    tx.conn().query_opt(
        "SELECT id, user_id, purpose, expires_at FROM invites
             WHERE tenant_id = ?1 AND token_hash = ?2 AND used_at IS NULL AND expires_at > ?3",
        params![tenant, token_hash, now],
        |r| Ok(InviteRow { id: r.get(0)?, user_id: r.get(1)?, purpose: r.get(2)?, expires_at: r.get(3)? }),
    )
}

/// Marks the invite used; false when it was already used (a concurrent registration won).
pub fn consume(tx: &WriteTx<'_>, tenant: TenantId, id: InviteId, now: Timestamp) -> Result<bool, StoreError> {
    let n = tx.conn().execute(
        "UPDATE invites SET used_at = ?3 WHERE tenant_id = ?1 AND id = ?2 AND used_at IS NULL AND expires_at > ?3",
        params![tenant, id, now],
    )?;
    Ok(n == 1)
}

/// Withdraws a user's outstanding tokens of `purpose` (a new invite replaces the old one).
pub fn revoke_unused(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    user: UserId,
    purpose: InvitePurpose,
    now: Timestamp,
) -> Result<(), StoreError> {
    tx.conn().execute(
        "UPDATE invites SET used_at = ?4 WHERE tenant_id = ?1 AND user_id = ?2 AND purpose = ?3 AND used_at IS NULL",
        params![tenant, user, purpose, now],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_corrupt, force, temp_db, tenant, user};

    use InvitePurpose::{Invite, Recovery};

    #[test]
    fn valid_then_consumed_once() {
        let t = temp_db();
        let (a, ada, id) = t.write(|tx| {
            let a = tenant(tx, "a");
            let ada = user(tx, a, "ada@example.com");
            (a, ada, insert(tx, a, ada, b"tok", Invite, 1, 100).unwrap())
        });
        let row = t.read(|tx| valid(tx, a, b"tok", 10).unwrap().unwrap());
        assert_eq!((row.id, row.user_id, row.purpose, row.expires_at), (id, ada, Invite, 100));
        assert!(!row.is_recovery());
        assert!(t.read(|tx| valid(tx, a, b"other", 10).unwrap()).is_none());
        t.write(|tx| {
            assert!(consume(tx, a, id, 10).unwrap());
            assert!(!consume(tx, a, id, 11).unwrap());
            assert!(valid(tx, a, b"tok", 12).unwrap().is_none());
        });
        let used: Option<i64> = t.read(|tx| {
            tx.conn().query_one("SELECT used_at FROM invites WHERE id = ?1", params![id], |r| r.get(0)).unwrap()
        });
        assert_eq!(used, Some(10));
    }

    #[test]
    fn expired_tokens_are_neither_valid_nor_consumable() {
        let t = temp_db();
        let (a, id) = t.write(|tx| {
            let a = tenant(tx, "a");
            let ada = user(tx, a, "ada@example.com");
            (a, insert(tx, a, ada, b"tok", Recovery, 1, 100).unwrap())
        });
        t.write(|tx| {
            assert!(valid(tx, a, b"tok", 99).unwrap().unwrap().is_recovery());
            assert!(valid(tx, a, b"tok", 100).unwrap().is_none());
            assert!(!consume(tx, a, id, 100).unwrap());
            assert!(consume(tx, a, id, 99).unwrap());
        });
    }

    #[test]
    fn revoke_unused_withdraws_that_users_tokens_of_that_purpose() {
        let t = temp_db();
        let (a, ada) = t.write(|tx| {
            let a = tenant(tx, "a");
            let ada = user(tx, a, "ada@example.com");
            let bob = user(tx, a, "bob@example.com");
            insert(tx, a, ada, b"ada-invite-1", Invite, 1, 100).unwrap();
            insert(tx, a, ada, b"ada-invite-2", Invite, 2, 100).unwrap();
            insert(tx, a, ada, b"ada-recovery", Recovery, 1, 100).unwrap();
            insert(tx, a, bob, b"bob-invite", Invite, 1, 100).unwrap();
            (a, ada)
        });
        t.write(|tx| revoke_unused(tx, a, ada, Invite, 5).unwrap());
        t.read(|tx| {
            assert!(valid(tx, a, b"ada-invite-1", 6).unwrap().is_none());
            assert!(valid(tx, a, b"ada-invite-2", 6).unwrap().is_none());
            assert!(valid(tx, a, b"ada-recovery", 6).unwrap().is_some());
            assert!(valid(tx, a, b"bob-invite", 6).unwrap().is_some());
        });
    }

    #[test]
    fn token_hashes_are_unique() {
        let t = temp_db();
        t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            let ada = user(tx, a, "ada@example.com");
            let eve = user(tx, b, "eve@example.com");
            insert(tx, a, ada, b"tok", Invite, 1, 100).unwrap();
            assert!(insert(tx, b, eve, b"tok", Invite, 1, 100).unwrap_err().is_unique_violation());
        });
    }

    #[test]
    fn another_tenant_cannot_read_consume_or_revoke_an_invite() {
        let t = temp_db();
        let (a, b, ada, id) = t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            let ada = user(tx, a, "ada@example.com");
            (a, b, ada, insert(tx, a, ada, b"tok", Invite, 1, 100).unwrap())
        });
        t.write(|tx| {
            assert!(valid(tx, b, b"tok", 10).unwrap().is_none());
            assert!(!consume(tx, b, id, 10).unwrap());
            revoke_unused(tx, b, ada, Invite, 10).unwrap();
        });
        let row = t.read(|tx| valid(tx, a, b"tok", 10).unwrap().unwrap());
        assert_eq!((row.id, row.user_id), (id, ada));
        assert!(t.write(|tx| consume(tx, a, id, 10).unwrap()));
    }

    #[test]
    fn unknown_purpose_is_corrupt() {
        let t = temp_db();
        let a = t.write(|tx| {
            let a = tenant(tx, "a");
            let ada = user(tx, a, "ada@example.com");
            insert(tx, a, ada, b"tok", Invite, 1, 100).unwrap();
            force(tx, "UPDATE invites SET purpose = 'promotion'");
            a
        });
        t.read(|tx| assert_corrupt(valid(tx, a, b"tok", 10), "invites.purpose"));
    }
}
