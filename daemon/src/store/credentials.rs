//! `credentials` table: a user's registered passkeys and security keys.

use rusqlite::{OptionalExtension, Row, params};

use super::users::UserId;
use super::{CredentialKind, Reader, StoreError, TenantId, WriteTx};
use crate::clock::Timestamp;

#[derive(Debug, Clone)]
pub struct CredentialRow {
    pub user_id: UserId,
    pub credential_id: Vec<u8>,
    /// webauthn-rs `Passkey`, JSON.
    pub passkey: String,
    pub kind: CredentialKind,
    pub aaguid: Option<Vec<u8>>,
    pub device: String,
    pub name: String,
    pub backup_eligible: bool,
    pub backed_up: bool,
    pub sign_count: u32,
    pub created_at: Timestamp,
    pub last_used_at: Option<Timestamp>,
}

const COLUMNS: &str = "user_id, credential_id, passkey, kind, aaguid, device, name, backup_eligible, backed_up, \
                       sign_count, created_at, last_used_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<CredentialRow> {
    Ok(CredentialRow {
        user_id: r.get(0)?,
        credential_id: r.get(1)?,
        passkey: r.get(2)?,
        kind: r.get(3)?,
        aaguid: r.get(4)?,
        device: r.get(5)?,
        name: r.get(6)?,
        backup_eligible: r.get(7)?,
        backed_up: r.get(8)?,
        sign_count: r.get(9)?,
        created_at: r.get(10)?,
        last_used_at: r.get(11)?,
    })
}

pub fn insert(tx: &WriteTx<'_>, tenant: TenantId, c: &CredentialRow) -> Result<(), StoreError> {
    tx.conn_mut().execute(
        &format!("INSERT INTO credentials (tenant_id, {COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"),
        params![
            tenant,
            c.user_id,
            c.credential_id,
            c.passkey,
            c.kind,
            c.aaguid,
            c.device,
            c.name,
            c.backup_eligible,
            c.backed_up,
            c.sign_count,
            c.created_at,
            c.last_used_at
        ],
    )?;
    Ok(())
}

/// A user's credentials, oldest first.
pub fn for_user(tx: &impl Reader, tenant: TenantId, user: UserId) -> Result<Vec<CredentialRow>, StoreError> {
    let sql =
        format!("SELECT {COLUMNS} FROM credentials WHERE tenant_id = ?1 AND user_id = ?2 ORDER BY created_at, id");
    let mut stmt = tx.conn().prepare(&sql)?;
    let rows = stmt.query_map(params![tenant, user], from_row)?.collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

pub fn by_credential_id(tx: &impl Reader, tenant: TenantId, id: &[u8]) -> Result<Option<CredentialRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM credentials WHERE tenant_id = ?1 AND credential_id = ?2");
    Ok(tx.conn().query_row(&sql, params![tenant, id], from_row).optional()?)
}

/// Records a successful sign-in: new counter and backup state, time of use.
pub fn record_use(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    id: &[u8],
    passkey: &str,
    sign_count: u32,
    backed_up: bool,
    now: Timestamp,
) -> Result<(), StoreError> {
    tx.conn_mut().execute(
        "UPDATE credentials SET passkey = ?3, sign_count = ?4, backed_up = ?5, last_used_at = ?6
         WHERE tenant_id = ?1 AND credential_id = ?2",
        params![tenant, id, passkey, sign_count, backed_up, now],
    )?;
    Ok(())
}

pub fn rename(tx: &WriteTx<'_>, tenant: TenantId, user: UserId, id: &[u8], name: &str) -> Result<bool, StoreError> {
    let n = tx.conn_mut().execute(
        "UPDATE credentials SET name = ?4 WHERE tenant_id = ?1 AND user_id = ?2 AND credential_id = ?3",
        params![tenant, user, id, name],
    )?;
    Ok(n == 1)
}

pub fn delete(tx: &WriteTx<'_>, tenant: TenantId, user: UserId, id: &[u8]) -> Result<bool, StoreError> {
    let n = tx.conn_mut().execute(
        "DELETE FROM credentials WHERE tenant_id = ?1 AND user_id = ?2 AND credential_id = ?3",
        params![tenant, user, id],
    )?;
    Ok(n == 1)
}

pub fn count_for_user(tx: &impl Reader, tenant: TenantId, user: UserId) -> Result<u64, StoreError> {
    let n: i64 = tx.conn().query_row(
        "SELECT count(*) FROM credentials WHERE tenant_id = ?1 AND user_id = ?2",
        params![tenant, user],
        |r| r.get(0),
    )?;
    Ok(n.max(0) as u64)
}

/// Number of credentials per user in a tenant, in one query.
pub fn counts_by_user(
    tx: &impl Reader,
    tenant: TenantId,
) -> Result<std::collections::HashMap<UserId, u64>, StoreError> {
    let mut stmt =
        tx.conn().prepare("SELECT user_id, count(*) FROM credentials WHERE tenant_id = ?1 GROUP BY user_id")?;
    let rows = stmt.query_map([tenant], |r| Ok((r.get::<_, UserId>(0)?, r.get::<_, i64>(1)?.max(0) as u64)))?;
    rows.collect::<Result<_, _>>().map_err(StoreError::from)
}
