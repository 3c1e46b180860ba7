//! `scim_users`, `scim_groups` and `tenants.scim_token_hash`: what SCIM provisioning keeps beyond
//! Latchkey's own users and roles.

use super::sql::{ConnExt, Row, params};
use super::users::UserId;
use super::{Reader, StoreError, TenantId, WriteTx, cluster};
use crate::Timestamp;

/// What a SCIM client said of a user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScimUser {
    pub user_id: UserId,
    pub user_name: String,
    pub external_id: Option<String>,
    /// The other attributes, JSON (an object).
    pub attributes: String,
    pub version: i64,
    pub updated_at: Timestamp,
}

/// What a SCIM client said of a group (a role).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScimGroup {
    pub role_id: i64,
    pub display_name: String,
    pub external_id: Option<String>,
    pub version: i64,
    pub updated_at: Timestamp,
}

/// Sets (`Some`) or clears a tenant's SCIM token hash; every node sees it at once.
pub fn set_token(tx: &WriteTx<'_>, tenant: TenantId, hash: Option<&[u8]>) -> Result<(), StoreError> {
    tx.conn().execute("UPDATE tenants SET scim_token_hash = ?2 WHERE id = ?1", params![tenant, hash])?;
    cluster::changed(tx.conn(), tenant)
}

/// The hash of a tenant's SCIM token, `None` while SCIM is off.
pub fn token(tx: &impl Reader, tenant: TenantId) -> Result<Option<Vec<u8>>, StoreError> {
    let v: Option<Option<Vec<u8>>> =
        tx.conn().query_opt("SELECT scim_token_hash FROM tenants WHERE id = ?1", params![tenant], |r| r.get(0))?;
    Ok(v.flatten())
}

fn user_row(r: &Row<'_>) -> Result<ScimUser, StoreError> {
    Ok(ScimUser {
        user_id: r.get(0)?,
        user_name: r.get(1)?,
        external_id: r.get(2)?,
        attributes: r.get(3)?,
        version: r.get(4)?,
        updated_at: r.get(5)?,
    })
}

const USER_COLUMNS: &str = "user_id, user_name, external_id, attributes, version, updated_at";

/// Stores what a client said of a user (a new row, or the next version of its row).
pub fn put_user(tx: &WriteTx<'_>, tenant: TenantId, u: &ScimUser) -> Result<(), StoreError> {
    tx.conn().execute(
        "INSERT INTO scim_users (user_id, tenant_id, user_name, user_name_norm, external_id, attributes, version,
                                 updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (user_id) DO UPDATE SET user_name = excluded.user_name,
             user_name_norm = excluded.user_name_norm, external_id = excluded.external_id,
             attributes = excluded.attributes, version = excluded.version, updated_at = excluded.updated_at",
        params![
            u.user_id,
            tenant,
            u.user_name,
            u.user_name.to_lowercase(),
            u.external_id,
            u.attributes,
            u.version,
            u.updated_at
        ],
    )?;
    Ok(())
}

pub fn user(tx: &impl Reader, tenant: TenantId, user: UserId) -> Result<Option<ScimUser>, StoreError> {
    tx.conn().query_opt(
        &format!("SELECT {USER_COLUMNS} FROM scim_users WHERE tenant_id = ?1 AND user_id = ?2"),
        params![tenant, user],
        user_row,
    )
}

/// Every SCIM row of a tenant's users.
pub fn users(tx: &impl Reader, tenant: TenantId) -> Result<Vec<ScimUser>, StoreError> {
    tx.conn().query_all(
        &format!("SELECT {USER_COLUMNS} FROM scim_users WHERE tenant_id = ?1"),
        params![tenant],
        user_row,
    )
}

/// The user whose userName is `name` (case-insensitively), by SCIM row.
pub fn user_by_name(tx: &impl Reader, tenant: TenantId, name: &str) -> Result<Option<ScimUser>, StoreError> {
    tx.conn().query_opt(
        &format!("SELECT {USER_COLUMNS} FROM scim_users WHERE tenant_id = ?1 AND user_name_norm = ?2"),
        params![tenant, name.to_lowercase()],
        user_row,
    )
}

/// The users whose externalId is `id` (case-exact).
pub fn users_by_external_id(tx: &impl Reader, tenant: TenantId, id: &str) -> Result<Vec<ScimUser>, StoreError> {
    tx.conn().query_all(
        &format!("SELECT {USER_COLUMNS} FROM scim_users WHERE tenant_id = ?1 AND external_id = ?2"),
        params![tenant, id],
        user_row,
    )
}

fn group_row(r: &Row<'_>) -> Result<ScimGroup, StoreError> {
    Ok(ScimGroup {
        role_id: r.get(0)?,
        display_name: r.get(1)?,
        external_id: r.get(2)?,
        version: r.get(3)?,
        updated_at: r.get(4)?,
    })
}

pub fn put_group(tx: &WriteTx<'_>, tenant: TenantId, g: &ScimGroup) -> Result<(), StoreError> {
    tx.conn().execute(
        "INSERT INTO scim_groups (role_id, tenant_id, display_name, external_id, version, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (role_id) DO UPDATE SET display_name = excluded.display_name,
             external_id = excluded.external_id, version = excluded.version, updated_at = excluded.updated_at",
        params![g.role_id, tenant, g.display_name, g.external_id, g.version, g.updated_at],
    )?;
    Ok(())
}

pub fn groups(tx: &impl Reader, tenant: TenantId) -> Result<Vec<ScimGroup>, StoreError> {
    tx.conn().query_all(
        "SELECT role_id, display_name, external_id, version, updated_at FROM scim_groups WHERE tenant_id = ?1",
        params![tenant],
        group_row,
    )
}

/// A user's roles as groups: (role id, the SCIM display name, else the role's name), by name.
pub fn groups_of_user(tx: &impl Reader, tenant: TenantId, user: UserId) -> Result<Vec<(i64, String)>, StoreError> {
    tx.conn().query_all(
        "SELECT r.id, COALESCE(g.display_name, r.name) FROM user_roles ur JOIN roles r ON r.id = ur.role_id
         LEFT JOIN scim_groups g ON g.role_id = r.id
         WHERE r.tenant_id = ?1 AND ur.user_id = ?2 ORDER BY r.name",
        params![tenant, user],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Each (role id, user public id) membership of a tenant.
pub fn memberships(tx: &impl Reader, tenant: TenantId) -> Result<Vec<(i64, String)>, StoreError> {
    tx.conn().query_all(
        "SELECT ur.role_id, u.public_id FROM user_roles ur JOIN users u ON u.id = ur.user_id
         WHERE u.tenant_id = ?1 ORDER BY ur.role_id, u.public_id",
        params![tenant],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{temp_db, tenant, user as new_user};

    #[test]
    fn rows_round_trip_and_names_are_unique_per_tenant() {
        let t = temp_db();
        t.write(|tx| {
            let a = tenant(tx, "a");
            let u = new_user(tx, a, "ada@a.test");
            let row = ScimUser {
                user_id: u,
                user_name: "Ada".into(),
                external_id: Some("E1".into()),
                attributes: "{}".into(),
                version: 1,
                updated_at: 5,
            };
            put_user(tx, a, &row).unwrap();
            assert_eq!(user_by_name(tx, a, "ADA").unwrap(), Some(row.clone()));
            assert_eq!(users_by_external_id(tx, a, "E1").unwrap().len(), 1);
            assert!(users_by_external_id(tx, a, "e1").unwrap().is_empty());
            put_user(tx, a, &ScimUser { version: 2, ..row.clone() }).unwrap();
            assert_eq!(user(tx, a, u).unwrap().map(|r| r.version), Some(2));
            let other = new_user(tx, a, "bea@a.test");
            assert!(put_user(tx, a, &ScimUser { user_id: other, ..row }).is_err(), "userName taken");
            set_token(tx, a, Some(&[1, 2, 3])).unwrap();
            assert_eq!(token(tx, a).unwrap(), Some(vec![1, 2, 3]));
            set_token(tx, a, None).unwrap();
            assert_eq!(token(tx, a).unwrap(), None);
        });
    }
}
