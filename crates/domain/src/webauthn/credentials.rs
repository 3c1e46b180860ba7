//! `GET/PATCH/DELETE {base_url}/api/credentials[/{id}]`: a user's own credentials.

use std::sync::Arc;

use latchkey::codes;
use serde::Deserialize;

use super::CredentialInfo;
use crate::crypto::b64url_decode;
use crate::error::Error;
use crate::registry::TenantRuntime;
use crate::store;
use crate::store::Db;
use crate::store::users::UserId;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rename {
    pub name: String,
}

fn not_found() -> Error {
    Error::not_found(codes::CREDENTIAL_NOT_FOUND, "no such credential on your account")
}

/// An id from the URL: base64url of the raw credential id. Anything else cannot exist.
fn raw_id(id: &str) -> Result<Vec<u8>, Error> {
    b64url_decode(id).filter(|v| !v.is_empty()).ok_or_else(not_found)
}

pub async fn list(db: &Db, tenant: Arc<TenantRuntime>, user: UserId) -> Result<Vec<CredentialInfo>, Error> {
    db.read(move |tx| -> Result<_, Error> {
        Ok(store::credentials::for_user(tx, tenant.id, user)?.iter().map(CredentialInfo::from_row).collect())
    })
    .await
}

/// 1–64 printable characters (see [`super::unprintable`]).
fn valid_label(name: &str) -> bool {
    let n = name.trim().chars().count();
    (1..=64).contains(&n) && !name.chars().any(super::unprintable)
}

pub async fn rename(
    db: &Db,
    tenant: Arc<TenantRuntime>,
    user: UserId,
    id: &str,
    req: Rename,
) -> Result<CredentialInfo, Error> {
    if !valid_label(&req.name) {
        return Err(Error::invalid(codes::INVALID_NAME, "name must be 1-64 printable characters"));
    }
    let raw = raw_id(id)?;
    db.write(move |tx| -> Result<_, Error> {
        let name = req.name.trim();
        if !store::credentials::rename(tx, tenant.id, user, &raw, name)? {
            return Err(not_found());
        }
        let row = store::credentials::by_credential_id(tx, tenant.id, &raw)?.ok_or_else(not_found)?;
        Ok(CredentialInfo::from_row(&row))
    })
    .await
}

pub async fn delete(db: &Db, tenant: Arc<TenantRuntime>, user: UserId, id: &str) -> Result<(), Error> {
    let raw = raw_id(id)?;
    db.write(move |tx| -> Result<_, Error> {
        // Two deletions of a user's two passkeys on two nodes must not both pass the check.
        store::users::lock(tx, tenant.id, user)?;
        let mine = store::credentials::by_credential_id(tx, tenant.id, &raw)?.filter(|c| c.user_id == user);
        if mine.is_none() {
            return Err(not_found());
        }
        if store::credentials::count_for_user(tx, tenant.id, user)? <= 1 {
            return Err(Error::conflict(
                codes::LAST_CREDENTIAL,
                "this is your only credential: add another passkey or security key before removing it",
            ));
        }
        store::credentials::delete(tx, tenant.id, user, &raw)?;
        Ok(())
    })
    .await
}
