//! The `refresh_token` grant (RFC 6749 §6) with rotation: each refresh token is used once and
//! answered with its successor in the same family. A rotated token that comes back has leaked
//! (the client holds its successor), so the whole family is revoked. SQLite rotates in the
//! writer's queued transaction ([`rotate`]); PostgreSQL reads, then rotates in one statement
//! ([`rotate_now`]).

use super::clients::{Presented, authenticate_for_grant};
use super::dpop::Jkt;
use super::error::OAuthError;
use super::issue::{Decision, PendingRefresh, Terms, TokenResponse, Unsigned, UserGrant, active_user, require};
use super::issue::{narrow, user_tokens};
use super::tokens::{new_jti, scopes};
use crate::clock::Timestamp;
use crate::ordered::token_key;
use crate::params::Params;
use crate::registry::TenantRuntime;
use crate::state::State;
use crate::store::apps::AppRow;
use crate::store::oidc::{Grants, RefreshRow};
use crate::store::users::UserRow;
use crate::store::{self, TenantId, WriteTx};

/// Why a refresh token cannot be rotated.
enum Unusable {
    /// Rotated before: it has leaked, and its family is revoked.
    Reused,
    Refused(OAuthError),
}

fn reused() -> OAuthError {
    OAuthError::invalid_grant("refresh token reused; all tokens of this grant are revoked")
}

/// The checks on the token's row as read, in the order their refusals take precedence.
fn check_refresh(row: &RefreshRow, app: &AppRow, now: Timestamp, dpop: Option<Jkt>) -> Result<(), Unusable> {
    let refused = |d: &str| Err(Unusable::Refused(OAuthError::invalid_grant(d)));
    if row.client_id != app.client_id {
        return refused("the refresh token was issued to another client");
    }
    // A bound token is rotated only with a proof of its key (RFC 9449 §5), and checked before
    // its reuse: whoever sends it without that key cannot revoke the client's grant either.
    if let Some(bound) = &row.dpop_jkt
        && dpop.map(|k| k.text()).as_ref() != Some(bound)
    {
        return Err(Unusable::Refused(super::dpop::invalid(
            "the refresh token is bound to a DPoP key: send a proof signed with that key",
        )));
    }
    if row.revoked_at.is_some() {
        return refused("the refresh token was revoked");
    }
    if row.used_at.is_some() {
        return Err(Unusable::Reused);
    }
    if row.expires_at <= now {
        return refused("the refresh token has expired");
    }
    // A family without offline_access ends with the browser session it was granted in.
    if !row.offline && row.session_id.is_some() && row.session_expires_at.is_none_or(|end| end <= now) {
        return refused("the session this grant belongs to has ended; sign in again");
    }
    Ok(())
}

/// The scope of the successor: all that was granted by default, or the asked subset of it.
fn scope(row: &RefreshRow, form: &Params) -> Result<String, OAuthError> {
    let granted: Vec<&str> = scopes(&row.scope).collect();
    narrow(&granted, form.get("scope")?)
}

/// The successor's tokens, in the rotated token's family.
fn successor(
    tenant: &TenantRuntime,
    app: &AppRow,
    row: &RefreshRow,
    (user, roles): (UserRow, Vec<String>),
    scope: &str,
    now: Timestamp,
    ttl: &Terms,
) -> Result<(Unsigned, PendingRefresh), OAuthError> {
    let jti = new_jti()?;
    let claims = super::claims::Requested::from_column(row.claims.as_deref());
    let grant = UserGrant {
        user: &user,
        roles,
        scope,
        nonce: None,
        auth_time: row.auth_time,
        amr: &row.amr,
        session_id: row.session_id,
        family: Some(&row.family),
        code_hash: None,
        jti: &jti,
        claims: &claims,
        may_be_offline: row.offline,
    };
    user_tokens(tenant, app, grant, now, ttl)
}

/// The rotation in the writer's transaction (SQLite).
pub(super) fn rotate(
    tx: &WriteTx<'_>,
    tenant: &TenantRuntime,
    app: &AppRow,
    form: &Params,
    now: Timestamp,
    ttl: &Terms,
) -> Result<Decision, OAuthError> {
    let token = require(form, "refresh_token")?;
    let Some(row) = store::oidc::refresh_for_use(tx, tenant.id, &token_key(token))? else {
        return Ok(Decision::Refused(OAuthError::invalid_grant("unknown refresh token")));
    };
    match check_refresh(&row, app, now, ttl.dpop) {
        Ok(()) => {}
        Err(Unusable::Reused) => return revoke_family(tx, tenant.id, &row.family, now).map(Decision::Refused),
        Err(Unusable::Refused(e)) => return Ok(Decision::Refused(e)),
    }
    let Some(user) = active_user(tx, tenant.id, row.user_id)? else {
        return Ok(Decision::Refused(OAuthError::invalid_grant("the user cannot sign in")));
    };
    // Nothing is written before this point: a refusal needs no commit.
    let scope = scope(&row, form)?;
    let (unsigned, pending) = successor(tenant, app, &row, user, &scope, now, ttl)?;
    if !store::oidc::rotate_refresh(tx, tenant.id, row.id, &pending.row(), now)? {
        return revoke_family(tx, tenant.id, &row.family, now).map(Decision::Refused);
    }
    Ok(Decision::Issued(Box::new(unsigned)))
}

/// A reuse: revokes the family's refresh tokens and the access tokens issued with them; the
/// refusal to answer.
fn revoke_family(tx: &WriteTx<'_>, tenant: TenantId, family: &str, now: Timestamp) -> Result<OAuthError, OAuthError> {
    store::oidc::revoke_grants(tx, tenant, Grants::Family(family), now)?;
    Ok(reused())
}

/// The rotation on PostgreSQL, without a transaction: the application from memory when current,
/// the token and its user read by two statements, the checks, then one statement that marks the
/// token used and stores its successor only if it was neither used nor revoked
/// ([`store::oidc::rotate_refresh`]). Three round trips where the transaction took seven. A
/// rotation that loses to a concurrent one (or to a revocation) is refused as a reuse, as in the
/// transaction: the family is revoked. The tokens are signed while that statement's round trip
/// is under way ([`crate::store::Db::write_one_begun`]) and leave only once it has rotated the
/// token.
pub(super) async fn rotate_now(
    state: &State,
    tenant: std::sync::Arc<TenantRuntime>,
    client: Presented,
    form: Params,
    now: Timestamp,
    ttl: &Terms,
) -> Result<TokenResponse, OAuthError> {
    let app = authenticate_for_grant(&state.db, tenant.id, &client).await?;
    let key = token_key(require(&form, "refresh_token")?);
    let t = tenant.id;
    let found = state
        .db
        .read_now(move |tx| -> Result<_, OAuthError> {
            let Some(row) = store::oidc::refresh(tx, t, &key)? else { return Ok(None) };
            // The user is read only for a token that may still be rotated.
            let user = match (row.used_at, row.revoked_at) {
                (None, None) => active_user(tx, t, row.user_id)?,
                _ => None,
            };
            Ok(Some((row, user)))
        })
        .await?;
    let Some((row, user)) = found else {
        return Err(OAuthError::invalid_grant("unknown refresh token"));
    };
    let revoke =
        |family: String| async move { Err(state.db.write(move |tx| revoke_family(tx, t, &family, now)).await?) };
    match check_refresh(&row, &app, now, ttl.dpop) {
        Ok(()) => {}
        Err(Unusable::Reused) => return revoke(row.family).await,
        Err(Unusable::Refused(e)) => return Err(e),
    }
    let Some(user) = user else {
        return Err(OAuthError::invalid_grant("the user cannot sign in"));
    };
    let scope = scope(&row, &form)?;
    let (unsigned, pending) = successor(&tenant, &app, &row, user, &scope, now, ttl)?;
    let id = row.id;
    let rotating = state.db.write_one_begun(move |tx| store::oidc::rotate_refresh(tx, t, id, &pending.row(), now));
    // Signed while the write is under way; thrown away unless it rotated the token durably.
    let answer = unsigned.sign(&tenant).await;
    if !rotating.await? {
        return revoke(row.family).await;
    }
    answer
}
