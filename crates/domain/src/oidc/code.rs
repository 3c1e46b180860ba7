//! The `authorization_code` grant (RFC 6749 §4.1.3; PKCE, RFC 7636): the checks on the code,
//! its redemption (SQLite: in the writer's queued transaction; PostgreSQL: reads and one
//! statement, [`exchange_now`]), and what a second redemption revokes.

use super::clients::{Presented, authenticate_for_grant};
use super::error::OAuthError;
use super::issue::{
    Decision, PendingRefresh, Terms, TokenResponse, Unsigned, UserGrant, active_user, require, user_tokens,
};
use super::tokens::new_jti;
use crate::clock::Timestamp;
use crate::crypto::{b64url, sha256};
use crate::ordered::{self, token_key};
use crate::params::Params;
use crate::registry::TenantRuntime;
use crate::state::State;
use crate::store::apps::AppRow;
use crate::store::oidc::{CodeRow, Grants};
use crate::store::users::UserRow;
use crate::store::{self, TenantId, WriteTx};

/// What a code exchange's form names: the code (by its key), the redirect URI and the PKCE
/// verifier.
struct CodeForm<'a> {
    hash: Vec<u8>,
    redirect_uri: &'a str,
    verifier: Option<&'a str>,
}

impl<'a> CodeForm<'a> {
    fn read(form: &'a Params) -> Result<Self, OAuthError> {
        let hash = token_key(require(form, "code")?);
        Ok(CodeForm { hash, redirect_uri: require(form, "redirect_uri")?, verifier: form.get("code_verifier")? })
    }
}

/// Why a code cannot be redeemed.
enum Unredeemable {
    /// Redeemed before: whoever holds it may be an attacker, so what it issued is revoked.
    Reused,
    Refused(OAuthError),
}

/// The checks of a code exchange (RFC 6749 §4.1.3, RFC 7636 §4.6) on the code's row as read.
fn check_code(row: &CodeRow, app: &AppRow, form: &CodeForm<'_>, now: Timestamp) -> Result<(), Unredeemable> {
    let refused = |d: &str| Err(Unredeemable::Refused(OAuthError::invalid_grant(d)));
    if row.used_at.is_some() {
        return Err(Unredeemable::Reused);
    }
    if row.client_id != app.client_id {
        return refused("the code was issued to another client");
    }
    if row.expires_at <= now {
        return refused("the authorization code has expired");
    }
    if row.redirect_uri != form.redirect_uri {
        return refused("redirect_uri differs from the authorization request");
    }
    pkce_ok(row.code_challenge.as_deref(), form.verifier).or_else(refused)
}

/// A second redemption of the code `hash`: revokes the refresh tokens and the access token it
/// issued (as its row in `tx` records them); the refusal to answer.
fn revoke_reused(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    hash: &[u8],
    now: Timestamp,
    ttl: &Terms,
) -> Result<OAuthError, OAuthError> {
    if let Some(row) = store::oidc::code_for_use(tx, tenant, hash)? {
        let grants = match &row.family {
            Some(family) => Grants::Family(family),
            None => Grants::Code(hash),
        };
        store::oidc::revoke_grants(tx, tenant, grants, now)?;
        if let Some(jti) = &row.access_jti {
            store::oidc::revoke_access(tx, tenant, jti, now + ttl.access)?;
        }
    }
    Ok(OAuthError::invalid_grant("authorization code already used; the tokens issued for it are revoked"))
}

pub(super) fn exchange(
    tx: &WriteTx<'_>,
    tenant: &TenantRuntime,
    app: &AppRow,
    form: &Params,
    now: Timestamp,
    ttl: &Terms,
) -> Result<Decision, OAuthError> {
    let form = CodeForm::read(form)?;
    let hash = &form.hash;
    let Some(row) = store::oidc::code_for_use(tx, tenant.id, hash)? else {
        return Ok(Decision::Refused(OAuthError::invalid_grant("unknown authorization code")));
    };
    match check_code(&row, app, &form, now) {
        Ok(()) => {}
        Err(Unredeemable::Reused) => return revoke_reused(tx, tenant.id, hash, now, ttl).map(Decision::Refused),
        Err(Unredeemable::Refused(e)) => return Ok(Decision::Refused(e)),
    }
    let Some((user, roles)) = active_user(tx, tenant.id, row.user_id)? else {
        return Ok(Decision::Refused(OAuthError::invalid_grant("the user cannot sign in")));
    };
    let (unsigned, pending) = code_tokens(tenant, app, &row, hash, (user, roles), now, ttl)?;
    if !store::oidc::redeem_code(tx, tenant.id, hash, &pending.row(), now)? {
        return revoke_reused(tx, tenant.id, hash, now, ttl).map(Decision::Refused);
    }
    Ok(Decision::Issued(Box::new(unsigned)))
}

/// The tokens a code redeems: the access token's id and the grant's family are recorded with
/// the code, so that a replay of the code can revoke them.
fn code_tokens(
    tenant: &TenantRuntime,
    app: &AppRow,
    row: &CodeRow,
    hash: &[u8],
    (user, roles): (UserRow, Vec<String>),
    now: Timestamp,
    ttl: &Terms,
) -> Result<(Unsigned, PendingRefresh), OAuthError> {
    let jti = new_jti()?;
    let family = ordered::uuid_text(&ordered::uuid_v7()?);
    let claims = super::claims::Requested::from_column(row.claims.as_deref());
    let grant = UserGrant {
        user: &user,
        roles,
        scope: &row.scope,
        nonce: row.nonce.as_deref(),
        auth_time: row.auth_time,
        amr: &row.amr,
        session_id: row.session_id,
        family: Some(&family),
        code_hash: Some(hash),
        jti: &jti,
        claims: &claims,
        may_be_offline: true,
    };
    user_tokens(tenant, app, grant, now, ttl)
}

/// The code exchange on PostgreSQL, without a transaction: the application from memory when
/// current, the code and its user read by two statements, the checks, then one statement that
/// marks the code used and stores the refresh token only if the code was still unused
/// ([`store::oidc::redeem_code`]). Three round trips where the transaction took seven. What the
/// reads saw is checked again where it matters: the write's condition catches a concurrent
/// redemption, which is then treated as a reuse, as in the transaction. The tokens are signed
/// while that statement's round trip is under way ([`crate::store::Db::write_one_begun`]) and
/// leave only once it has redeemed the code.
pub(super) async fn exchange_now(
    state: &State,
    tenant: std::sync::Arc<TenantRuntime>,
    client: Presented,
    form: Params,
    now: Timestamp,
    ttl: &Terms,
) -> Result<TokenResponse, OAuthError> {
    let app = authenticate_for_grant(&state.db, tenant.id, &client).await?;
    let form = CodeForm::read(&form)?;
    let hash = form.hash.clone();
    let t = tenant.id;
    let h = hash.clone();
    let found = state
        .db
        .read_now(move |tx| -> Result<_, OAuthError> {
            let Some(row) = store::oidc::code(tx, t, &h)? else { return Ok(None) };
            // The user is read only for a code that may still be redeemed.
            let user = match row.used_at {
                None => active_user(tx, t, row.user_id)?,
                Some(_) => None,
            };
            Ok(Some((row, user)))
        })
        .await?;
    let Some((row, user)) = found else {
        return Err(OAuthError::invalid_grant("unknown authorization code"));
    };
    let reused = || async {
        let ttl = *ttl;
        let hash = hash.clone();
        Err(state.db.write(move |tx| revoke_reused(tx, t, &hash, now, &ttl)).await?)
    };
    match check_code(&row, &app, &form, now) {
        Ok(()) => {}
        Err(Unredeemable::Reused) => return reused().await,
        Err(Unredeemable::Refused(e)) => return Err(e),
    }
    let Some((user, roles)) = user else {
        return Err(OAuthError::invalid_grant("the user cannot sign in"));
    };
    let (unsigned, pending) = code_tokens(&tenant, &app, &row, &hash, (user, roles), now, ttl)?;
    let h = hash.clone();
    let redeeming = state.db.write_one_begun(move |tx| store::oidc::redeem_code(tx, t, &h, &pending.row(), now));
    // Signed while the write is under way; thrown away unless it redeemed the code durably.
    let answer = unsigned.sign(&tenant).await;
    if !redeeming.await? {
        return reused().await;
    }
    answer
}

/// PKCE (RFC 7636 §4.6): BASE64URL(SHA256(verifier)) == challenge.
fn pkce_ok(challenge: Option<&str>, verifier: Option<&str>) -> Result<(), &'static str> {
    match (challenge, verifier) {
        (None, None) => Ok(()),
        (None, Some(_)) => Err("code_verifier given for a code issued without a code_challenge"),
        (Some(_), None) => Err("code_verifier is required"),
        (Some(c), Some(v)) => {
            let well_formed = (43..=128).contains(&v.len())
                && v.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
            if well_formed && b64url(&sha256(v.as_bytes())) == c {
                Ok(())
            } else {
                Err("code_verifier does not match the code_challenge")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::pkce_ok;

    #[test]
    fn pkce_rfc7636_appendix_b() {
        let v = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let c = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert!(pkce_ok(Some(c), Some(v)).is_ok());
        assert!(pkce_ok(Some(c), Some("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXX")).is_err());
        assert!(pkce_ok(Some(c), None).is_err());
        assert!(pkce_ok(None, Some(v)).is_err());
        assert!(pkce_ok(None, None).is_ok());
    }
}
