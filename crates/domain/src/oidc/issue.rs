//! What every grant decides and issues, shared by the token endpoint ([`super::grants`]) and the
//! grants that consume something (`oidc/code.rs`, `oidc/refresh.rs`): the answer's shape, a
//! decision whose tokens are still to be signed, the lifetimes, a refresh token to store, and the
//! tokens of a user's grant.

use serde::Serialize;

use super::claims::Requested;
use super::dpop::Jkt;
use super::error::OAuthError;
use super::tokens::{AccessClaims, Confirmation, IdClaims, scopes, sign_tokens, user_claims};
use crate::clock::Timestamp;
use crate::ordered;
use crate::params::Params;
use crate::registry::TenantRuntime;
use crate::store::apps::AppRow;
use crate::store::oidc::NewRefresh;
use crate::store::users::{UserId, UserRow};
use crate::store::{self, Reader, SigningAlg, TenantId, UserStatus, WriteTx};

#[derive(Debug, Serialize)]
pub struct TokenResponse {
    pub access_token: String,
    pub token_type: &'static str,
    pub expires_in: i64,
    pub scope: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id_token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
}

/// `name`, which must be present.
pub fn require<'a>(form: &'a Params, name: &str) -> Result<&'a str, OAuthError> {
    form.get(name)?.ok_or_else(|| OAuthError::invalid_request(format!("{name} is required")))
}

/// What a transaction decided; revocations must commit even when the answer is an error.
pub(super) enum Decision {
    Issued(Box<Unsigned>),
    Refused(OAuthError),
}

/// Tokens whose claims are decided and stored, not yet signed.
pub(super) struct Unsigned {
    pub(super) access: AccessClaims,
    pub(super) id: Option<IdClaims>,
    pub(super) refresh_token: Option<String>,
    pub(super) expires_in: i64,
    pub(super) scope: String,
    /// The app's choice (`--signing-alg`).
    pub(super) alg: SigningAlg,
}

impl Unsigned {
    pub(super) async fn sign(self, tenant: &TenantRuntime) -> Result<TokenResponse, OAuthError> {
        let (access_token, id_token) = sign_tokens(tenant, self.alg, &self.access, self.id.as_ref()).await?;
        Ok(TokenResponse {
            access_token,
            token_type: if self.access.cnf.is_some() { "DPoP" } else { "Bearer" },
            expires_in: self.expires_in,
            scope: self.scope,
            id_token,
            refresh_token: self.refresh_token,
        })
    }
}

/// The confirmation claim of the tokens `app` gets with a proof of `dpop` (none without one);
/// an app that requires DPoP is refused tokens without a proof.
pub(super) fn bound(app: &AppRow, dpop: Option<Jkt>) -> Result<Option<Confirmation>, OAuthError> {
    match dpop {
        Some(jkt) => Ok(Some(Confirmation { jkt: jkt.text() })),
        None if app.require_dpop => Err(super::dpop::invalid("this application must send a DPoP proof")),
        None => Ok(None),
    }
}

/// The scope that asks for a refresh token family outliving the browser session.
pub const OFFLINE_ACCESS: &str = "offline_access";

/// What a request's tokens are issued on: their lifetimes, and the DPoP key they are bound to.
#[derive(Clone, Copy)]
pub(super) struct Terms {
    /// The key of the request's DPoP proof, checked and spent (RFC 9449).
    pub(super) dpop: Option<Jkt>,
    pub(super) access: i64,
    pub(super) id: i64,
    pub(super) refresh: i64,
    /// Of an `offline_access` family, counted from each rotation as `refresh` is.
    pub(super) offline: i64,
}

/// The scope of a new token: all of `granted` by default, or the asked subset of it.
pub(super) fn narrow(granted: &[&str], asked: Option<&str>) -> Result<String, OAuthError> {
    let Some(asked) = asked else { return Ok(granted.join(" ")) };
    if let Some(extra) = scopes(asked).find(|s| !granted.contains(s)) {
        return Err(OAuthError::invalid_scope(format!("scope {extra:?} is not granted")));
    }
    Ok(scopes(asked).collect::<Vec<_>>().join(" "))
}

/// A refresh token decided and not yet stored: [`NewRefresh`]'s fields, owned, so that the
/// write can run on another thread (and twice, on a connection found closed).
pub(super) struct PendingRefresh {
    key: Vec<u8>,
    family: String,
    client_id: String,
    user_id: UserId,
    session_id: Option<i64>,
    code_hash: Option<Vec<u8>>,
    scope: String,
    auth_time: Timestamp,
    amr: String,
    expires_at: Timestamp,
    access_jti: String,
    access_expires_at: Timestamp,
    claims: Option<String>,
    offline: bool,
    dpop_jkt: Option<String>,
}

impl PendingRefresh {
    pub(super) fn row(&self) -> NewRefresh<'_> {
        NewRefresh {
            hash: &self.key,
            family: &self.family,
            client_id: &self.client_id,
            user_id: self.user_id,
            session_id: self.session_id,
            code_hash: self.code_hash.as_deref(),
            scope: &self.scope,
            auth_time: self.auth_time,
            amr: &self.amr,
            expires_at: self.expires_at,
            access_jti: &self.access_jti,
            access_expires_at: self.access_expires_at,
            claims: self.claims.as_deref(),
            offline: self.offline,
            dpop_jkt: self.dpop_jkt.as_deref(),
        }
    }
}

/// What a grant to a user is made of: its user, what they agreed to and how they signed in, and
/// the ids the tokens will carry.
pub(super) struct UserGrant<'a> {
    pub(super) user: &'a UserRow,
    pub(super) roles: Vec<String>,
    pub(super) scope: &'a str,
    pub(super) nonce: Option<&'a str>,
    pub(super) auth_time: Timestamp,
    pub(super) amr: &'a str,
    pub(super) session_id: Option<i64>,
    /// The refresh token family it continues; a new one if `None`.
    pub(super) family: Option<&'a str>,
    /// The authorization code it redeems, if any.
    pub(super) code_hash: Option<&'a [u8]>,
    pub(super) jti: &'a str,
    /// What the authorization request's `claims` parameter asked for (kept by its refreshes).
    pub(super) claims: &'a Requested,
    /// Whether this grant may be `offline_access` (a new grant may; a rotation only continues
    /// an offline family, so that grants made before offline families existed stay bound).
    pub(super) may_be_offline: bool,
}

/// What a grant to a user issues: the tokens' claims and the refresh token to store with them.
pub(super) fn user_tokens(
    tenant: &TenantRuntime,
    app: &AppRow,
    grant: UserGrant<'_>,
    now: Timestamp,
    ttl: &Terms,
) -> Result<(Unsigned, PendingRefresh), OAuthError> {
    let UserGrant {
        user,
        roles,
        scope,
        nonce,
        auth_time,
        amr,
        session_id,
        family,
        code_hash,
        jti,
        claims,
        may_be_offline,
    } = grant;
    let cnf = bound(app, ttl.dpop)?;
    // Offline when asked for (the scope) and allowed (the app's configuration); a refresh
    // family that is not outlives nothing, ending with its session.
    let offline =
        may_be_offline && scopes(scope).any(|s| s == OFFLINE_ACCESS) && app.scopes.iter().any(|s| s == OFFLINE_ACCESS);
    let access = AccessClaims {
        iss: tenant.base_url.clone(),
        sub: user.public_id.clone(),
        aud: app.client_id.clone(),
        client_id: app.client_id.clone(),
        scope: scope.to_owned(),
        exp: now + ttl.access,
        iat: now,
        jti: jti.to_owned(),
        auth_time: Some(auth_time),
        roles: roles.clone(),
        userinfo_claims: claims.userinfo.clone(),
        cnf: cnf.clone(),
    };
    let id = if scopes(scope).any(|s| s == "openid") {
        let amr: Vec<String> = serde_json::from_str(amr).unwrap_or_default();
        Some(IdClaims {
            iss: tenant.base_url.clone(),
            sub: user.public_id.clone(),
            aud: app.client_id.clone(),
            exp: now + ttl.id,
            iat: now,
            auth_time,
            nonce: nonce.map(str::to_owned),
            acr: super::tokens::acr_of(&amr),
            amr,
            sid: match session_id {
                Some(s) => Some(tenant.hot().map_err(OAuthError::server_error)?.session_ids.sid(tenant.id, s)),
                None => None,
            },
            user: user_claims(tenant, user, user.email_verified, &roles, scope, &claims.id_token),
        })
    } else {
        None
    };
    let (refresh, refresh_key) = ordered::token()?;
    // A family is an internal grouping, found by its index: time-ordered like the token's key.
    let family = match family {
        Some(f) => f.to_owned(),
        None => ordered::uuid_text(&ordered::uuid_v7()?),
    };
    let pending = PendingRefresh {
        key: refresh_key,
        family,
        client_id: app.client_id.clone(),
        user_id: user.id,
        session_id,
        code_hash: code_hash.map(<[u8]>::to_vec),
        scope: scope.to_owned(),
        auth_time,
        amr: amr.to_owned(),
        expires_at: now + if offline { ttl.offline } else { ttl.refresh },
        access_jti: jti.to_owned(),
        access_expires_at: now + ttl.access,
        claims: claims.to_column(),
        offline,
        // A public client's refresh token is bound too: it has no other proof of who uses it
        // (RFC 9449 §5); a confidential client's is bound by its authentication.
        dpop_jkt: cnf.filter(|_| !app.confidential()).map(|c| c.jkt),
    };
    let unsigned = Unsigned {
        access,
        id,
        refresh_token: Some(refresh),
        expires_in: ttl.access,
        scope: scope.to_owned(),
        alg: app.signing_alg,
    };
    Ok((unsigned, pending))
}

/// [`user_tokens`], with the refresh token stored in `tx`.
pub(super) fn issue_user_tokens(
    tx: &WriteTx<'_>,
    tenant: &TenantRuntime,
    app: &AppRow,
    grant: UserGrant<'_>,
    now: Timestamp,
    ttl: &Terms,
) -> Result<Unsigned, OAuthError> {
    let (unsigned, pending) = user_tokens(tenant, app, grant, now, ttl)?;
    store::oidc::insert_refresh(tx, tenant.id, &pending.row(), now)?;
    Ok(unsigned)
}

/// The grant's user with their roles (one statement), if the account is still active.
pub(super) fn active_user(
    tx: &impl Reader,
    tenant: TenantId,
    id: UserId,
) -> Result<Option<(UserRow, Vec<String>)>, OAuthError> {
    Ok(store::users::by_id_with_roles(tx, tenant, id)?.filter(|(u, _)| u.status == UserStatus::Active))
}
