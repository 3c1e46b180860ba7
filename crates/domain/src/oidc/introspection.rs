//! Token-holding endpoints: userinfo (OIDC Core §5.3), revocation (RFC 7009), introspection
//! (RFC 7662) and RP-initiated logout (OIDC RP-Initiated Logout 1.0).

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value, json};

use super::clients::{Presented as Client, authenticate};
use super::dpop::{self, Proof};
use super::error::OAuthError;
use super::tokens::{AccessClaims, IdTokenHint, UserClaims, user_claims, verify_access, verify_id_hint};
use crate::clock::Timestamp;
use crate::ordered::token_key;
use crate::registry::TenantRuntime;
use crate::state::State;
use crate::store::oidc::Grants;
use crate::store::users::UserRow;
use crate::store::{self, Db, Reader, StoreError, UserStatus};

/// An access token as a resource received it: `Authorization: Bearer`, or `Authorization: DPoP`
/// with its proof, checked for this request but not yet spent.
pub struct Presented {
    pub token: String,
    pub proof: Option<Proof>,
}

/// [`check_access`] in a read of its own, and the token's DPoP binding: the token's verdict, or
/// the store's failure. A proof that fits is spent once the token is found good.
pub async fn check_access_alone(
    state: &State,
    tenant: Arc<TenantRuntime>,
    presented: Presented,
    now: i64,
) -> Result<Result<(AccessClaims, Option<UserRow>), OAuthError>, StoreError> {
    let t = tenant.id;
    let Presented { token, proof } = presented;
    let checked = state.db.read(move |tx| Ok::<_, StoreError>(check_access(tx, &tenant, &token, now))).await?;
    let bound = checked.and_then(|(claims, user)| {
        dpop::check_binding(claims.cnf.as_ref(), proof.as_ref())?;
        Ok((claims, user))
    });
    Ok(match (bound, proof) {
        (Ok(good), Some(proof)) => dpop::spend(state, t, &proof).await.map(|()| good),
        (bound, _) => bound,
    })
}

/// A valid access token of this tenant: signature, issuer, expiry, not revoked, and for user
/// tokens a user who may still sign in.
pub fn check_access(
    tx: &impl Reader,
    tenant: &TenantRuntime,
    token: &str,
    now: i64,
) -> Result<(AccessClaims, Option<UserRow>), OAuthError> {
    let claims = verify_access(tenant, token, now)?;
    if store::oidc::access_revoked(tx, tenant.id, &claims.jti)? {
        return Err(OAuthError::invalid_token("the access token was revoked"));
    }
    if claims.is_client_token() {
        if store::apps::get(tx, tenant.id, &claims.client_id)?.is_none() {
            return Err(OAuthError::invalid_token("the client no longer exists"));
        }
        return Ok((claims, None));
    }
    let user = store::users::by_public_id(tx, tenant.id, &claims.sub)?
        .filter(|u| u.status == UserStatus::Active)
        .ok_or_else(|| OAuthError::invalid_token("the user cannot sign in"))?;
    Ok((claims, Some(user)))
}

#[derive(Debug, Serialize)]
pub struct UserInfo {
    pub sub: String,
    #[serde(flatten)]
    pub claims: UserClaims,
}

pub async fn userinfo(
    state: &State,
    now: Timestamp,
    tenant: Arc<TenantRuntime>,
    presented: Presented,
) -> Result<UserInfo, OAuthError> {
    let Presented { token, proof } = presented;
    let (t, p) = (tenant.id, proof.clone());
    let info = state
        .db
        .read(move |tx| -> Result<UserInfo, OAuthError> {
            let (claims, user) = check_access(tx, &tenant, &token, now)?;
            dpop::check_binding(claims.cnf.as_ref(), p.as_ref())?;
            let user = user.ok_or_else(|| OAuthError::invalid_token("a client credentials token has no user"))?;
            if !claims.has_scope("openid") {
                return Err(OAuthError::insufficient_scope("userinfo needs the openid scope", "openid"));
            }
            // Current roles, which may have changed since the token was issued.
            let roles = store::roles::for_user(tx, tenant.id, user.id)?;
            Ok(UserInfo {
                sub: user.public_id.clone(),
                claims: user_claims(
                    &tenant,
                    &user,
                    user.email_verified,
                    &roles,
                    &claims.scope,
                    &claims.userinfo_claims,
                ),
            })
        })
        .await?;
    if let Some(proof) = proof {
        dpop::spend(state, t, &proof).await?;
    }
    Ok(info)
}

/// RFC 7009: revokes a refresh token (and its whole grant) or an access token of the calling
/// client. Unknown tokens are not an error.
pub async fn revoke(
    state: &State,
    tenant: Arc<TenantRuntime>,
    client: Client,
    token: String,
) -> Result<(), OAuthError> {
    let now = state.clock.now();
    let access_ttl = state.config.tokens.access_token.as_secs() as i64;
    state
        .db
        .write(move |tx| -> Result<(), OAuthError> {
            let app = authenticate(tx, tenant.id, &client)?;
            if let Some(row) = store::oidc::refresh(tx, tenant.id, &token_key(&token))? {
                if row.client_id == app.client_id {
                    store::oidc::revoke_grants(tx, tenant.id, Grants::Family(&row.family), now)?;
                }
                return Ok(());
            }
            if let Ok(claims) = verify_access(&tenant, &token, now)
                && claims.client_id == app.client_id
            {
                store::oidc::revoke_access(tx, tenant.id, &claims.jti, claims.exp.min(now + access_ttl))?;
            }
            Ok(())
        })
        .await
}

/// RFC 7662, for confidential clients: a client learns about its own tokens; an app granted the
/// `introspect` scope (a resource server) about every token of the tenant. Anything else is
/// answered `{"active": false}`, as for an unknown token, so that nothing leaks.
pub async fn introspect(
    db: &Db,
    now: Timestamp,
    tenant: Arc<TenantRuntime>,
    client: Client,
    token: String,
) -> Result<Value, OAuthError> {
    db.read(move |tx| -> Result<Value, OAuthError> {
        let app = authenticate(tx, tenant.id, &client)?;
        if !app.confidential() {
            return Err(OAuthError::invalid_client("introspection is for confidential clients"));
        }
        let may_see = |client_id: &str| client_id == app.client_id || app.scopes.iter().any(|s| s == "introspect");
        if let Some(row) = store::oidc::refresh(tx, tenant.id, &token_key(&token))? {
            let live =
                row.used_at.is_none() && row.revoked_at.is_none() && row.expires_at > now && may_see(&row.client_id);
            let user = store::users::by_id(tx, tenant.id, row.user_id)?.filter(|u| u.status == UserStatus::Active);
            return Ok(match (live, user) {
                (true, Some(u)) => json!({
                    "active": true, "token_type": "refresh_token", "scope": row.scope, "client_id": row.client_id,
                    "sub": u.public_id, "exp": row.expires_at, "iss": tenant.base_url,
                }),
                _ => json!({"active": false}),
            });
        }
        Ok(match check_access(tx, &tenant, &token, now) {
            Ok((c, _)) if may_see(&c.client_id) => {
                let mut v = json!({
                    "active": true, "token_type": "access_token", "scope": c.scope, "client_id": c.client_id,
                    "sub": c.sub, "aud": c.aud, "exp": c.exp, "iat": c.iat, "iss": c.iss, "jti": c.jti,
                });
                // A DPoP-bound token's key (RFC 9449 §6.2), for the resource server to check.
                if let Some(cnf) = c.cnf {
                    v["cnf"] = json!(cnf);
                }
                v
            }
            _ => json!({"active": false}),
        })
    })
    .await
}

/// Whether `hint` vouches for ending this session without asking: an ID token of the very user
/// signed in here. Anyone's own ID token (or another user's) must not sign a user out through a
/// link (logout CSRF).
async fn hint_is_the_sessions(
    state: &State,
    tenant: &TenantRuntime,
    req: &LogoutRequest,
    hint: &Option<IdTokenHint>,
    now: Timestamp,
) -> Result<bool, OAuthError> {
    let (Some(hint), Some(token)) = (hint, &req.session_token) else { return Ok(false) };
    let (t, hash, sub) = (tenant.id, token_key(token), hint.sub.clone());
    let same = state
        .db
        .read(move |tx| -> Result<bool, StoreError> {
            let Some(session) = store::sessions::valid(tx, t, &hash, now)? else { return Ok(false) };
            Ok(store::users::by_id(tx, t, session.user_id)?.is_some_and(|u| u.public_id == sub))
        })
        .await?;
    Ok(same)
}

pub struct LogoutRequest {
    /// The user confirmed on our own page (a POST: the session cookie, SameSite=Lax, is not sent
    /// with a cross-site POST, so only our page can end the session this way).
    pub confirmed: bool,
    pub session_token: Option<String>,
    pub id_token_hint: Option<String>,
    pub client_id: Option<String>,
    pub post_logout_redirect_uri: Option<String>,
    pub state: Option<String>,
}

/// What `/logout` does.
#[derive(Debug, PartialEq, Eq)]
pub enum LogoutOutcome {
    /// Nothing yet: without a valid `id_token_hint` the user is asked to confirm, so that another
    /// site cannot sign them out by linking here. `returns_to`: where the confirmed sign-out
    /// will send the browser, when that place is registered for the client (its origin, or its
    /// scheme for a native app's), which the question page's form may then lead to.
    Confirm { returns_to: Option<String> },
    /// Signed out; send the browser there when the place is registered for the client.
    SignedOut(Option<String>),
}

/// A Content-Security-Policy source for a registered redirect: its origin, or for a native app's
/// custom scheme (an opaque origin) the scheme.
pub fn form_target(uri: &str) -> Option<String> {
    let url = url::Url::parse(uri).ok()?;
    match url.origin() {
        url::Origin::Tuple(..) => Some(url.origin().ascii_serialization()),
        url::Origin::Opaque(_) => Some(format!("{}:", url.scheme())),
    }
}

/// Ends the session (and every grant made within it, refresh and access tokens alike).
pub async fn logout(
    state: &State,
    tenant: Arc<TenantRuntime>,
    req: LogoutRequest,
) -> Result<LogoutOutcome, OAuthError> {
    let now = state.clock.now();
    // A hint that does not check out counts as none: the user is asked, and only a registered
    // place of the `client_id` parameter's app can be returned to.
    let max_age = state.config.tokens.session.as_secs() as i64;
    let hint = req
        .id_token_hint
        .as_deref()
        .and_then(|h| verify_id_hint(&tenant, h, now, req.client_id.as_deref(), max_age).ok());
    if !req.confirmed && req.session_token.is_some() && !hint_is_the_sessions(state, &tenant, &req, &hint, now).await? {
        let client_id = hint.as_ref().map(|h| h.aud.clone()).or_else(|| req.client_id.clone());
        let returns_to = match (client_id, req.post_logout_redirect_uri.clone()) {
            (Some(client_id), Some(uri)) => {
                let t = tenant.id;
                let app = state.db.read(move |tx| store::apps::get(tx, t, &client_id)).await?;
                app.filter(|a| a.post_logout_redirect_uris.contains(&uri)).and_then(|_| form_target(&uri))
            }
            _ => None,
        };
        return Ok(LogoutOutcome::Confirm { returns_to });
    }
    state
        .db
        .write(move |tx| -> Result<LogoutOutcome, OAuthError> {
            if let Some(token) = &req.session_token {
                crate::sessions::end(tx, tenant.id, token, now)?;
            }
            let client_id = hint.map(|h| h.aud).or(req.client_id);
            let (Some(client_id), Some(uri)) = (client_id, req.post_logout_redirect_uri) else {
                return Ok(LogoutOutcome::SignedOut(None));
            };
            let app = store::apps::get(tx, tenant.id, &client_id)?;
            Ok(LogoutOutcome::SignedOut(app.filter(|a| a.post_logout_redirect_uris.contains(&uri)).map(|_| {
                match &req.state {
                    Some(s) => super::authorize::with_query(&uri, &[("state", s)]),
                    None => uri,
                }
            })))
        })
        .await
}
