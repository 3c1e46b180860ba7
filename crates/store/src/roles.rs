//! `roles` and `user_roles`.

use super::sql::{ConnExt, Row, params};

use super::users::UserId;
use super::{Reader, StoreError, TenantId, WriteTx};
use crate::Timestamp;

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
    tx.conn().execute(
        "INSERT INTO roles (tenant_id, name, description, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![tenant, name, description, now],
    )?;
    Ok(())
}

const SELECT: &str = "SELECT r.id, r.name, r.description, r.created_at,
    (SELECT count(*) FROM user_roles ur WHERE ur.role_id = r.id) FROM roles r";

fn row(r: &Row<'_>) -> Result<RoleRow, StoreError> {
    Ok(RoleRow {
        id: r.get(0)?,
        name: r.get(1)?,
        description: r.get(2)?,
        created_at: r.get(3)?,
        users: r.get::<_, i64>(4)? as u64,
    })
}

pub fn list(tx: &impl Reader, tenant: TenantId) -> Result<Vec<RoleRow>, StoreError> {
    let rows =
        tx.conn().query_all(&format!("{SELECT} WHERE r.tenant_id = ?1 ORDER BY r.name"), params![tenant], row)?;
    Ok(rows)
}

pub fn by_name(tx: &impl Reader, tenant: TenantId, name: &str) -> Result<Option<RoleRow>, StoreError> {
    tx.conn().query_opt(&format!("{SELECT} WHERE r.tenant_id = ?1 AND r.name = ?2"), params![tenant, name], row)
}

pub fn delete(tx: &WriteTx<'_>, tenant: TenantId, id: i64) -> Result<(), StoreError> {
    tx.conn().execute("DELETE FROM roles WHERE tenant_id = ?1 AND id = ?2", params![tenant, id])?;
    Ok(())
}

/// Assigns; false when the user already had the role, or when the user or the role is not of
/// `tenant` (user_roles has no tenant column: both ends are checked here).
pub fn assign(tx: &WriteTx<'_>, tenant: TenantId, user: UserId, role: i64) -> Result<bool, StoreError> {
    let n = tx.conn().execute(
        "INSERT INTO user_roles (user_id, role_id)
         SELECT u.id, r.id FROM users u JOIN roles r ON r.tenant_id = u.tenant_id
         WHERE u.tenant_id = ?1 AND u.id = ?2 AND r.id = ?3
         ON CONFLICT DO NOTHING",
        params![tenant, user, role],
    )?;
    Ok(n == 1)
}

pub fn unassign(tx: &WriteTx<'_>, tenant: TenantId, user: UserId, role: i64) -> Result<bool, StoreError> {
    let n = tx.conn().execute(
        "DELETE FROM user_roles WHERE user_id = ?2 AND role_id = ?3
           AND role_id IN (SELECT id FROM roles WHERE tenant_id = ?1)",
        params![tenant, user, role],
    )?;
    Ok(n == 1)
}

/// A user's role names, sorted.
pub fn for_user(tx: &impl Reader, tenant: TenantId, user: UserId) -> Result<Vec<String>, StoreError> {
    tx.conn().query_all(
        "SELECT r.name FROM user_roles ur JOIN roles r ON r.id = ur.role_id
         WHERE r.tenant_id = ?1 AND ur.user_id = ?2 ORDER BY r.name",
        params![tenant, user],
        |r| r.get(0),
    )
}

pub fn set_description(tx: &WriteTx<'_>, tenant: TenantId, id: i64, description: &str) -> Result<(), StoreError> {
    tx.conn().execute(
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
    let mut map: std::collections::HashMap<UserId, Vec<String>> = std::collections::HashMap::new();
    tx.conn().query(
        "SELECT ur.user_id, r.name FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE r.tenant_id = ?1 ORDER BY r.name",
        params![tenant],
        &mut |r| {
            map.entry(r.get::<_, UserId>(0)?).or_default().push(r.get::<_, String>(1)?);
            Ok(true)
        },
    )?;
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{temp_db, tenant, user};

    fn role_id(tx: &impl Reader, tenant: TenantId, name: &str) -> i64 {
        by_name(tx, tenant, name).unwrap().unwrap().id
    }

    #[test]
    fn insert_list_and_describe() {
        let t = temp_db();
        let a = t.write(|tx| {
            let a = tenant(tx, "a");
            insert(tx, a, "viewer", "Reads", 2).unwrap();
            insert(tx, a, "admin", "Everything", 1).unwrap();
            assert!(insert(tx, a, "admin", "again", 3).unwrap_err().is_unique_violation());
            a
        });
        t.read(|tx| {
            let all = list(tx, a).unwrap();
            let names: Vec<_> = all.iter().map(|r| (r.name.as_str(), r.description.as_str(), r.created_at)).collect();
            assert_eq!(names, [("admin", "Everything", 1), ("viewer", "Reads", 2)]);
            assert_eq!(by_name(tx, a, "viewer").unwrap().unwrap().description, "Reads");
            assert!(by_name(tx, a, "nobody").unwrap().is_none());
        });
        t.write(|tx| set_description(tx, a, role_id(tx, a, "viewer"), "Reads all").unwrap());
        t.read(|tx| {
            assert_eq!(by_name(tx, a, "viewer").unwrap().unwrap().description, "Reads all");
            assert_eq!(by_name(tx, a, "admin").unwrap().unwrap().description, "Everything");
        });
    }

    #[test]
    fn assign_unassign_and_read_per_user() {
        let t = temp_db();
        let (a, ada, bob) = t.write(|tx| {
            let a = tenant(tx, "a");
            let ada = user(tx, a, "ada@example.com");
            let bob = user(tx, a, "bob@example.com");
            insert(tx, a, "viewer", "", 1).unwrap();
            insert(tx, a, "admin", "", 1).unwrap();
            (a, ada, bob)
        });
        t.write(|tx| {
            let (admin, viewer) = (role_id(tx, a, "admin"), role_id(tx, a, "viewer"));
            assert!(assign(tx, a, ada, viewer).unwrap());
            assert!(assign(tx, a, ada, admin).unwrap());
            assert!(!assign(tx, a, ada, admin).unwrap(), "a second assignment changes nothing");
            assert!(assign(tx, a, bob, viewer).unwrap());
            assert_eq!(for_user(tx, a, ada).unwrap(), ["admin", "viewer"]);
            assert_eq!(by_name(tx, a, "viewer").unwrap().unwrap().users, 2);
            let map = by_user(tx, a).unwrap();
            assert_eq!(map.get(&ada).unwrap(), &["admin", "viewer"]);
            assert_eq!(map.get(&bob).unwrap(), &["viewer"]);
            assert!(unassign(tx, a, ada, viewer).unwrap());
            assert!(!unassign(tx, a, ada, viewer).unwrap());
            assert_eq!(for_user(tx, a, ada).unwrap(), ["admin"]);
            assert_eq!(by_name(tx, a, "viewer").unwrap().unwrap().users, 1);
        });
    }

    #[test]
    fn delete_removes_the_role_and_its_assignments() {
        let t = temp_db();
        let (a, ada) = t.write(|tx| {
            let a = tenant(tx, "a");
            let ada = user(tx, a, "ada@example.com");
            insert(tx, a, "admin", "", 1).unwrap();
            insert(tx, a, "viewer", "", 1).unwrap();
            assign(tx, a, ada, role_id(tx, a, "admin")).unwrap();
            assign(tx, a, ada, role_id(tx, a, "viewer")).unwrap();
            (a, ada)
        });
        t.write(|tx| delete(tx, a, role_id(tx, a, "admin")).unwrap());
        t.read(|tx| {
            assert!(by_name(tx, a, "admin").unwrap().is_none());
            assert_eq!(for_user(tx, a, ada).unwrap(), ["viewer"]);
            assert_eq!(list(tx, a).unwrap().len(), 1);
        });
    }

    #[test]
    fn another_tenant_cannot_read_change_or_delete_a_role() {
        let t = temp_db();
        let (a, b, ada, admin) = t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            let ada = user(tx, a, "ada@example.com");
            insert(tx, a, "admin", "Everything", 1).unwrap();
            let admin = role_id(tx, a, "admin");
            assign(tx, a, ada, admin).unwrap();
            (a, b, ada, admin)
        });
        t.write(|tx| {
            assert!(by_name(tx, b, "admin").unwrap().is_none());
            assert!(list(tx, b).unwrap().is_empty());
            assert!(by_user(tx, b).unwrap().is_empty());
            set_description(tx, b, admin, "Nothing").unwrap();
            delete(tx, b, admin).unwrap();
            // The same name is free in another tenant.
            insert(tx, b, "admin", "B's", 1).unwrap();
            // A role of B is never given to a user of A, nor is A's role taken away through B.
            let b_admin = role_id(tx, b, "admin");
            assert!(!assign(tx, b, ada, b_admin).unwrap());
            assert!(!assign(tx, a, ada, b_admin).unwrap());
            assert!(!unassign(tx, b, ada, admin).unwrap());
            assert!(for_user(tx, b, ada).unwrap().is_empty());
        });
        t.read(|tx| {
            let row = by_name(tx, a, "admin").unwrap().unwrap();
            assert_eq!((row.id, row.description.as_str(), row.users), (admin, "Everything", 1));
            assert_eq!(for_user(tx, a, ada).unwrap(), ["admin"]);
            assert_eq!(by_name(tx, b, "admin").unwrap().unwrap().users, 0);
        });
    }
}
