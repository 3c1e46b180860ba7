//! What users allowed the applications that ask them (`--consent explicit`): listed on
//! `/account`, and revoked there.

use crate::clock::Timestamp;
use crate::error::Error;
use crate::store::consents::ConsentRow;
use crate::store::oidc::Grants;
use crate::store::users::UserId;
use crate::store::{self, Db, TenantId};

/// The applications `user` allowed, by name.
pub async fn list(db: &Db, tenant: TenantId, user: UserId) -> Result<Vec<ConsentRow>, Error> {
    Ok(db.read(move |tx| store::consents::for_user(tx, tenant, user)).await?)
}

/// Forgets what `user` allowed `client_id`, and ends what the app holds from it: its refresh
/// tokens for the user (offline ones too) and the access tokens issued with them. The next
/// sign-in to the app asks again. False when there was nothing to revoke.
pub async fn revoke(db: &Db, tenant: TenantId, user: UserId, client_id: String, now: Timestamp) -> Result<bool, Error> {
    db.write(move |tx| -> Result<bool, Error> {
        if !store::consents::revoke(tx, tenant, user, &client_id)? {
            return Ok(false);
        }
        for family in &store::oidc::live_families(tx, tenant, user, &client_id)? {
            store::oidc::revoke_grants(tx, tenant, Grants::Family(family), now)?;
        }
        Ok(true)
    })
    .await
}
