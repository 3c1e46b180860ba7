//! `users` table.

use rusqlite::{OptionalExtension, Row, params};

use super::{Reader, StoreError, TenantId, UserStatus, WriteTx};
use crate::clock::Timestamp;

pub use super::types::UserId;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRow {
    pub id: UserId,
    pub public_id: String,
    pub user_handle: Vec<u8>,
    pub email: String,
    pub name: String,
    pub picture: Option<String>,
    pub status: UserStatus,
    pub created_at: Timestamp,
    pub email_verified: bool,
}

pub struct NewUser<'a> {
    pub public_id: &'a str,
    pub user_handle: &'a [u8],
    pub email: &'a str,
    pub name: &'a str,
    pub status: UserStatus,
    pub created_at: Timestamp,
}

const COLUMNS: &str = "id, public_id, user_handle, email, name, picture, status, created_at, email_verified";

fn from_row(r: &Row<'_>) -> rusqlite::Result<UserRow> {
    Ok(UserRow {
        id: r.get(0)?,
        public_id: r.get(1)?,
        user_handle: r.get(2)?,
        email: r.get(3)?,
        name: r.get(4)?,
        picture: r.get(5)?,
        status: r.get(6)?,
        created_at: r.get(7)?,
        email_verified: r.get(8)?,
    })
}

/// E-mail addresses compare case-insensitively (SPEC §5).
pub fn normalise_email(email: &str) -> String {
    email.trim().to_lowercase()
}

pub fn insert(tx: &WriteTx<'_>, tenant: TenantId, u: &NewUser<'_>) -> Result<UserId, StoreError> {
    super::exec(
        tx.conn_mut(),
        "INSERT INTO users (tenant_id, public_id, user_handle, email, email_norm, name, status, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![tenant, u.public_id, u.user_handle, u.email, normalise_email(u.email), u.name, u.status, u.created_at],
    )?;
    Ok(UserId(tx.conn_mut().last_insert_rowid()))
}

pub fn by_email(tx: &impl Reader, tenant: TenantId, email: &str) -> Result<Option<UserRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM users WHERE tenant_id = ?1 AND email_norm = ?2");
    Ok(tx.conn().prepare_cached(&sql)?.query_row(params![tenant, normalise_email(email)], from_row).optional()?)
}

pub fn by_id(tx: &impl Reader, tenant: TenantId, id: UserId) -> Result<Option<UserRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM users WHERE tenant_id = ?1 AND id = ?2");
    Ok(tx.conn().query_row(&sql, params![tenant, id], from_row).optional()?)
}

pub fn by_public_id(tx: &impl Reader, tenant: TenantId, public_id: &str) -> Result<Option<UserRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM users WHERE tenant_id = ?1 AND public_id = ?2");
    Ok(tx.conn().query_row(&sql, params![tenant, public_id], from_row).optional()?)
}

pub fn by_handle(tx: &impl Reader, tenant: TenantId, handle: &[u8]) -> Result<Option<UserRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM users WHERE tenant_id = ?1 AND user_handle = ?2");
    Ok(tx.conn().query_row(&sql, params![tenant, handle], from_row).optional()?)
}

pub fn set_status(tx: &WriteTx<'_>, tenant: TenantId, id: UserId, status: UserStatus) -> Result<(), StoreError> {
    tx.conn_mut()
        .execute("UPDATE users SET status = ?3 WHERE tenant_id = ?1 AND id = ?2", params![tenant, id, status])?;
    Ok(())
}

/// The user proved control of the address (an invitation link sent to it, or a verified social login).
pub fn set_email_verified(tx: &WriteTx<'_>, tenant: TenantId, id: UserId) -> Result<(), StoreError> {
    tx.conn_mut()
        .execute("UPDATE users SET email_verified = 1 WHERE tenant_id = ?1 AND id = ?2", params![tenant, id])?;
    Ok(())
}

pub fn set_name(tx: &WriteTx<'_>, tenant: TenantId, id: UserId, name: &str) -> Result<(), StoreError> {
    super::exec(
        tx.conn_mut(),
        "UPDATE users SET name = ?3 WHERE tenant_id = ?1 AND id = ?2",
        params![tenant, id, name],
    )?;
    Ok(())
}

/// Users of a tenant, optionally only those with a role or a status, by e-mail.
pub fn list(
    tx: &impl Reader,
    tenant: TenantId,
    role: Option<&str>,
    status: Option<UserStatus>,
) -> Result<Vec<UserRow>, StoreError> {
    let cols = COLUMNS.split(", ").map(|c| format!("u.{c}")).collect::<Vec<_>>().join(", ");
    let sql = format!(
        "SELECT {cols} FROM users u WHERE u.tenant_id = ?1
           AND (?2 IS NULL OR EXISTS (SELECT 1 FROM user_roles ur JOIN roles r ON r.id = ur.role_id
                                      WHERE ur.user_id = u.id AND r.name = ?2))
           AND (?3 IS NULL OR u.status = ?3)
         ORDER BY u.email_norm"
    );
    let mut stmt = tx.conn().prepare(&sql)?;
    let rows = stmt.query_map(params![tenant, role, status], from_row)?.collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// Deletes a user; credentials, sessions, invites, codes and refresh tokens go with them.
pub fn delete(tx: &WriteTx<'_>, tenant: TenantId, id: UserId) -> Result<bool, StoreError> {
    Ok(super::exec(tx.conn_mut(), "DELETE FROM users WHERE tenant_id = ?1 AND id = ?2", params![tenant, id])? == 1)
}

/// Ends everything a user is signed in with: sessions and refresh tokens.
pub fn sign_out_everywhere(tx: &WriteTx<'_>, tenant: TenantId, id: UserId, now: Timestamp) -> Result<(), StoreError> {
    let c = tx.conn_mut();
    c.execute("DELETE FROM sessions WHERE tenant_id = ?1 AND user_id = ?2", params![tenant, id])?;
    c.execute(
        "UPDATE refresh_tokens SET revoked_at = ?3 WHERE tenant_id = ?1 AND user_id = ?2 AND revoked_at IS NULL",
        params![tenant, id, now],
    )?;
    Ok(())
}
