//! `sessions` table: signed-in browsers. Only the SHA-256 of the cookie value is stored.

use rusqlite::{OptionalExtension, params};

use super::users::UserId;
use super::{Reader, StoreError, TenantId, WriteTx};
use crate::clock::Timestamp;

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
    tx.conn_mut().execute(
        "INSERT INTO sessions (tenant_id, user_id, token_hash, auth_time, amr, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![tenant, s.user_id, s.token_hash, s.auth_time, s.amr, s.created_at, s.expires_at],
    )?;
    Ok(tx.conn_mut().last_insert_rowid())
}

/// A live session of an active user of this tenant.
pub fn valid(
    tx: &impl Reader,
    tenant: TenantId,
    token_hash: &[u8],
    now: Timestamp,
) -> Result<Option<SessionRow>, StoreError> {
    Ok(tx
        .conn()
        .query_row(
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
        .optional()?)
}

/// Ends every session of a user except `keep` (recovery ends the others).
pub fn delete_for_user_except(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    user: UserId,
    keep: Option<i64>,
) -> Result<usize, StoreError> {
    Ok(tx.conn_mut().execute(
        "DELETE FROM sessions WHERE tenant_id = ?1 AND user_id = ?2 AND id IS NOT ?3",
        params![tenant, user, keep],
    )?)
}

pub fn delete(tx: &WriteTx<'_>, tenant: TenantId, token_hash: &[u8]) -> Result<bool, StoreError> {
    Ok(tx
        .conn_mut()
        .execute("DELETE FROM sessions WHERE tenant_id = ?1 AND token_hash = ?2", params![tenant, token_hash])?
        == 1)
}

pub fn sweep(tx: &WriteTx<'_>, now: Timestamp) -> Result<usize, StoreError> {
    Ok(tx.conn_mut().execute("DELETE FROM sessions WHERE expires_at <= ?1", [now])?)
}
