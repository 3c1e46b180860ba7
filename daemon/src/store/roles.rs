//! `roles` and `user_roles`.

use rusqlite::{OptionalExtension, params};

use super::users::UserId;
use super::{Reader, StoreError, TenantId, WriteTx};
use crate::clock::Timestamp;

#[derive(Debug, Clone)]
pub struct RoleRow {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub created_at: Timestamp,
    pub users: u64,
}

pub fn insert(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    name: &str,
    description: &str,
    now: Timestamp,
) -> Result<(), StoreError> {
    super::exec(
        tx.conn_mut(),
        "INSERT INTO roles (tenant_id, name, description, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![tenant, name, description, now],
    )?;
    Ok(())
}

const SELECT: &str = "SELECT r.id, r.name, r.description, r.created_at,
    (SELECT count(*) FROM user_roles ur WHERE ur.role_id = r.id) FROM roles r";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RoleRow> {
    Ok(RoleRow {
        id: r.get(0)?,
        name: r.get(1)?,
        description: r.get(2)?,
        created_at: r.get(3)?,
        users: r.get::<_, i64>(4)? as u64,
    })
}

pub fn list(tx: &impl Reader, tenant: TenantId) -> Result<Vec<RoleRow>, StoreError> {
    let mut stmt = tx.conn().prepare(&format!("{SELECT} WHERE r.tenant_id = ?1 ORDER BY r.name"))?;
    let rows = stmt.query_map([tenant], row)?.collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

pub fn by_name(tx: &impl Reader, tenant: TenantId, name: &str) -> Result<Option<RoleRow>, StoreError> {
    Ok(tx
        .conn()
        .query_row(&format!("{SELECT} WHERE r.tenant_id = ?1 AND r.name = ?2"), params![tenant, name], row)
        .optional()?)
}

pub fn delete(tx: &WriteTx<'_>, tenant: TenantId, id: i64) -> Result<(), StoreError> {
    super::exec(tx.conn_mut(), "DELETE FROM roles WHERE tenant_id = ?1 AND id = ?2", params![tenant, id])?;
    Ok(())
}

/// Assigns; false when the user already had the role.
pub fn assign(tx: &WriteTx<'_>, user: UserId, role: i64) -> Result<bool, StoreError> {
    Ok(tx
        .conn_mut()
        .execute("INSERT OR IGNORE INTO user_roles (user_id, role_id) VALUES (?1, ?2)", params![user, role])?
        == 1)
}

pub fn unassign(tx: &WriteTx<'_>, user: UserId, role: i64) -> Result<bool, StoreError> {
    Ok(super::exec(tx.conn_mut(), "DELETE FROM user_roles WHERE user_id = ?1 AND role_id = ?2", params![user, role])?
        == 1)
}

/// A user's role names, sorted.
pub fn for_user(tx: &impl Reader, user: UserId) -> Result<Vec<String>, StoreError> {
    let mut stmt = tx.conn().prepare_cached(
        "SELECT r.name FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = ?1 ORDER BY r.name",
    )?;
    let names = stmt.query_map([user], |r| r.get(0))?.collect::<Result<Vec<String>, _>>()?;
    Ok(names)
}

pub fn set_description(tx: &WriteTx<'_>, tenant: TenantId, id: i64, description: &str) -> Result<(), StoreError> {
    super::exec(
        tx.conn_mut(),
        "UPDATE roles SET description = ?3 WHERE tenant_id = ?1 AND id = ?2",
        params![tenant, id, description],
    )?;
    Ok(())
}

/// Every user's role names in a tenant, in one query (for listing many users).
pub fn by_user(
    tx: &impl Reader,
    tenant: TenantId,
) -> Result<std::collections::HashMap<UserId, Vec<String>>, StoreError> {
    let mut stmt = tx.conn().prepare(
        "SELECT ur.user_id, r.name FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE r.tenant_id = ?1 ORDER BY r.name",
    )?;
    let mut map: std::collections::HashMap<UserId, Vec<String>> = std::collections::HashMap::new();
    for row in stmt.query_map([tenant], |r| Ok((r.get::<_, UserId>(0)?, r.get::<_, String>(1)?)))? {
        let (user, name) = row?;
        map.entry(user).or_default().push(name);
    }
    Ok(map)
}
