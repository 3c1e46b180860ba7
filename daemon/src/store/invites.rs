//! `invites` table: invitation and recovery tokens (hashed), single use.

use rusqlite::{OptionalExtension, params};

use super::users::UserId;
use super::{InvitePurpose, Reader, StoreError, TenantId, WriteTx};
use crate::clock::Timestamp;

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
    super::exec(
        tx.conn_mut(),
        "INSERT INTO invites (tenant_id, user_id, token_hash, purpose, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![tenant, user, token_hash, purpose, now, expires_at],
    )?;
    Ok(tx.conn_mut().last_insert_rowid())
}

/// An unused, unexpired invite or recovery token of this tenant.
pub fn valid(
    tx: &impl Reader,
    tenant: TenantId,
    token_hash: &[u8],
    now: Timestamp,
) -> Result<Option<InviteRow>, StoreError> {
    Ok(tx
        .conn()
        .query_row(
            "SELECT id, user_id, purpose, expires_at FROM invites
             WHERE tenant_id = ?1 AND token_hash = ?2 AND used_at IS NULL AND expires_at > ?3",
            params![tenant, token_hash, now],
            |r| Ok(InviteRow { id: r.get(0)?, user_id: r.get(1)?, purpose: r.get(2)?, expires_at: r.get(3)? }),
        )
        .optional()?)
}

/// Marks the invite used; false when it was already used (a concurrent registration won).
pub fn consume(tx: &WriteTx<'_>, tenant: TenantId, id: InviteId, now: Timestamp) -> Result<bool, StoreError> {
    let n = super::exec(
        tx.conn_mut(),
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
    super::exec(
        tx.conn_mut(),
        "UPDATE invites SET used_at = ?4 WHERE tenant_id = ?1 AND user_id = ?2 AND purpose = ?3 AND used_at IS NULL",
        params![tenant, user, purpose, now],
    )?;
    Ok(())
}
