//! Roles: lowercase names per tenant, assigned to users, carried in the `roles` claim.

use latchkey::admin::{CreateRole, Emails, Role, RoleChange};
use latchkey::codes;

use super::require_user;
use crate::clock::Timestamp;
use crate::clock::date;
use crate::error::Error;
use crate::store::Db;
use crate::store::roles::RoleRow;
use crate::store::{self, Reader, TenantId};
use crate::tenants::require;

/// `[a-z0-9][a-z0-9_.:-]{0,63}`.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '.' | ':' | '-'))
}

fn to_wire(r: &RoleRow) -> Role {
    Role { name: r.name.clone(), description: r.description.clone(), users: r.users, created: date(r.created_at) }
}

pub fn require_role(tx: &impl Reader, tenant: TenantId, slug: &str, name: &str) -> Result<RoleRow, Error> {
    store::roles::by_name(tx, tenant, name)?.ok_or_else(|| {
        Error::not_found(
            codes::UNKNOWN_ROLE,
            format!("role {name:?} does not exist in tenant {slug:?}; create it with `latchkey role create --tenant {slug} {name}`"),
        )
    })
}

pub async fn create(db: &Db, now: Timestamp, slug: String, req: CreateRole) -> Result<Role, Error> {
    if !valid_name(&req.name) {
        return Err(Error::invalid(
            codes::INVALID_NAME,
            format!(
                "{:?} is not a role name: lowercase a-z, 0-9 and _ . : -, starting with a letter or digit, at most 64",
                req.name
            ),
        ));
    }
    if req.description.chars().count() > 200 || req.description.chars().any(char::is_control) {
        return Err(Error::invalid(codes::INVALID_INPUT, "description: at most 200 printable characters"));
    }
    db.write(move |tx| -> Result<Role, Error> {
        crate::store::cluster::admin_lock(tx)?;
        let tenant = require(tx, &slug)?;
        if store::roles::by_name(tx, tenant.id, &req.name)?.is_some() {
            return Err(Error::conflict(codes::ROLE_EXISTS, format!("role {:?} already exists", req.name)));
        }
        store::roles::insert(tx, tenant.id, &req.name, &req.description, now)?;
        let row = require_role(tx, tenant.id, &slug, &req.name)?;
        Ok(to_wire(&row))
    })
    .await
}

pub async fn list(db: &Db, slug: String) -> Result<Vec<Role>, Error> {
    db.read(move |tx| -> Result<_, Error> {
        let tenant = require(tx, &slug)?;
        Ok(store::roles::list(tx, tenant.id)?.iter().map(to_wire).collect())
    })
    .await
}

pub async fn delete(db: &Db, slug: String, name: String) -> Result<(), Error> {
    db.write(move |tx| -> Result<(), Error> {
        crate::store::cluster::admin_lock(tx)?;
        let tenant = require(tx, &slug)?;
        let role = require_role(tx, tenant.id, &slug, &name)?;
        store::roles::delete(tx, tenant.id, role.id)?;
        Ok(())
    })
    .await
}

/// Assigns (or unassigns) a role to every listed user, all or nothing: an unknown user refuses
/// the whole call.
pub async fn change(db: &Db, slug: String, name: String, req: Emails, assign: bool) -> Result<RoleChange, Error> {
    if req.emails.is_empty() {
        return Err(Error::invalid(codes::INVALID_INPUT, "name at least one user's e-mail"));
    }
    db.write(move |tx| -> Result<RoleChange, Error> {
        crate::store::cluster::admin_lock(tx)?;
        let tenant = require(tx, &slug)?;
        let role = require_role(tx, tenant.id, &slug, &name)?;
        let (mut changed, mut unchanged) = (vec![], vec![]);
        for email in &req.emails {
            let user = require_user(tx, tenant.id, &slug, email)?;
            let did = if assign {
                store::roles::assign(tx, tenant.id, user.id, role.id)?
            } else {
                store::roles::unassign(tx, tenant.id, user.id, role.id)?
            };
            if did { changed.push(user.email) } else { unchanged.push(user.email) }
        }
        Ok(RoleChange { role: name, changed, unchanged })
    })
    .await
}

#[cfg(test)]
mod tests {
    #[test]
    fn role_names() {
        for ok in ["admin", "team:billing", "a", "ops.read-only", "x_1"] {
            assert!(super::valid_name(ok), "{ok}");
        }
        for bad in ["", "Admin", "-x", "with space", &"a".repeat(65)] {
            assert!(!super::valid_name(bad), "{bad}");
        }
    }
}
