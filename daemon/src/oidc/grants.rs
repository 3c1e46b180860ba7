//! `POST {base_url}/token`: the `authorization_code`, `refresh_token` and `client_credentials`
//! grants (RFC 6749 §4.1, §6, §4.4; PKCE RFC 7636) and device code polling (RFC 8628 §3.4). Every grant that consumes something runs in
//! one write transaction, so a code or refresh token is consumed exactly once even under
//! concurrent redemption. The transaction decides the tokens' claims; they are signed beside the
//! writer while its batch commits (RSA signatures are the costly step and the write queue is
//! single-threaded), and answered once the commit is durable.

use serde::Serialize;

use super::clients::{Presented, authenticate, authenticate_for_grant};
use super::error::OAuthError;
use super::tokens::{AccessClaims, IdClaims, new_jti, scopes, sign_access, sign_id, user_claims};
use crate::State;
use crate::clock::Timestamp;
use crate::crypto::{b64url, sha256};
use crate::ordered::{self, token_key};
use crate::params::Params;
use crate::store::apps::AppRow;
use crate::store::oidc::{Grants, NewRefresh};
use crate::store::users::{UserId, UserRow};
use crate::store::{self, AppType, DeviceStatus, UserStatus, WriteTx};
use crate::tenants::TenantRuntime;

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
fn require<'a>(form: &'a Params, name: &str) -> Result<&'a str, OAuthError> {
    form.get(name)?.ok_or_else(|| OAuthError::invalid_request(format!("{name} is required")))
}

/// What a transaction decided; revocations must commit even when the answer is an error.
enum Decision {
    Issued(Box<Unsigned>),
    Refused(OAuthError),
}

/// Tokens whose claims are decided and stored, not yet signed.
struct Unsigned {
    access: AccessClaims,
    id: Option<IdClaims>,
    refresh_token: Option<String>,
    expires_in: i64,
    scope: String,
}

impl Unsigned {
    fn sign(self, tenant: &TenantRuntime) -> Result<TokenResponse, OAuthError> {
        let id_token = match &self.id {
            Some(claims) => Some(sign_id(tenant, claims)?),
            None => None,
        };
        Ok(TokenResponse {
            access_token: sign_access(tenant, &self.access)?,
            token_type: "Bearer",
            expires_in: self.expires_in,
            scope: self.scope,
            id_token,
            refresh_token: self.refresh_token,
        })
    }
}

struct Ttls {
    access: i64,
    id: i64,
    refresh: i64,
}

pub async fn token(
    state: &State,
    tenant: std::sync::Arc<TenantRuntime>,
    client: Presented,
    form: Params,
) -> Result<TokenResponse, OAuthError> {
    let grant = require(&form, "grant_type")?.to_owned();
    match grant.as_str() {
        "authorization_code" | "refresh_token" | "client_credentials" | super::device::GRANT_TYPE => {}
        "password" => return Err(unsupported("password login is not supported: users sign in with passkeys")),
        other => return Err(unsupported(&format!("grant_type {other:?} is not supported"))),
    }
    let now = state.clock.now();
    let c = &state.config.tokens;
    let ttl = Ttls {
        access: c.access_token.as_secs() as i64,
        id: c.id_token.as_secs() as i64,
        refresh: c.refresh_token.as_secs() as i64,
    };
    // Tokens are signed here on the async worker (an RSA-2048 signature is ~0.3 ms of CPU that
    // never waits): handing it to a blocking thread bought no throughput on a few cores and cost
    // two thread switches per grant and a longer tail (bench/run: client credentials p99 6.3 ms
    // on a blocking thread, 2.8 ms here, same rate).
    if grant == "client_credentials" {
        // Nothing to store: the client (usually from memory), then the signature here on the
        // async worker.
        let app = authenticate_for_grant(&state.db, tenant.id, &client).await?;
        return match client_credentials(&app, &form, now, &ttl, &tenant.base_url)? {
            Decision::Issued(unsigned) => unsigned.sign(&tenant),
            Decision::Refused(e) => Err(e),
        };
    }
    let t = tenant.clone();
    let (decision, durable) = state
        .db
        .write_early(move |tx| -> Result<Decision, OAuthError> {
            let app = authenticate(tx, t.id, &client)?;
            match grant.as_str() {
                "authorization_code" => authorization_code(tx, &t, &app, &form, now, &ttl),
                super::device::GRANT_TYPE => device_code(tx, &t, &app, &form, now, &ttl),
                _ => refresh(tx, &t, &app, &form, now, &ttl),
            }
        })
        .await?;
    // The tokens are signed while the writer commits the batch (the fsync and the signatures
    // overlap instead of adding up); they leave only once the code or refresh token is durably
    // consumed, and are thrown away if the commit fails.
    let answer = match decision {
        Decision::Issued(unsigned) => unsigned.sign(&tenant),
        Decision::Refused(e) => Err(e),
    };
    durable.wait().await?;
    answer
}

fn unsupported(d: &str) -> OAuthError {
    OAuthError::unsupported_grant_type(d)
}

/// The scope of a new token: all of `granted` by default, or the asked subset of it.
fn narrow(granted: &[&str], asked: Option<&str>) -> Result<String, OAuthError> {
    let Some(asked) = asked else { return Ok(granted.join(" ")) };
    if let Some(extra) = scopes(asked).find(|s| !granted.contains(s)) {
        return Err(OAuthError::invalid_scope(format!("scope {extra:?} is not granted")));
    }
    Ok(scopes(asked).collect::<Vec<_>>().join(" "))
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

#[allow(clippy::too_many_arguments)]
fn issue_user_tokens(
    tx: &WriteTx<'_>,
    tenant: &TenantRuntime,
    app: &AppRow,
    user: &UserRow,
    roles: Vec<String>,
    scope: &str,
    nonce: Option<&str>,
    auth_time: Timestamp,
    amr: &str,
    session_id: Option<i64>,
    family: Option<&str>,
    code_hash: Option<&[u8]>,
    jti: &str,
    now: Timestamp,
    ttl: &Ttls,
) -> Result<Unsigned, OAuthError> {
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
            amr,
            user: user_claims(tenant, user, user.email_verified, &roles, scope),
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
    store::oidc::insert_refresh(
        tx,
        tenant.id,
        &NewRefresh {
            hash: &refresh_key,
            family: &family,
            client_id: &app.client_id,
            user_id: user.id,
            session_id,
            code_hash,
            scope,
            auth_time,
            amr,
            expires_at: now + ttl.refresh,
            access_jti: jti,
            access_expires_at: now + ttl.access,
        },
        now,
    )?;
    Ok(Unsigned { access, id, refresh_token: Some(refresh), expires_in: ttl.access, scope: scope.to_owned() })
}

/// The grant's user with their roles (one statement), if the account is still active.
fn active_user(
    tx: &WriteTx<'_>,
    tenant: &TenantRuntime,
    id: UserId,
) -> Result<Option<(UserRow, Vec<String>)>, OAuthError> {
    Ok(store::users::by_id_with_roles(tx, tenant.id, id)?.filter(|(u, _)| u.status == UserStatus::Active))
}

fn authorization_code(
    tx: &WriteTx<'_>,
    tenant: &TenantRuntime,
    app: &AppRow,
    form: &Params,
    now: Timestamp,
    ttl: &Ttls,
) -> Result<Decision, OAuthError> {
    let code = require(form, "code")?;
    let redirect_uri = require(form, "redirect_uri")?;
    let verifier = form.get("code_verifier")?;
    let hash = token_key(code);
    let Some(row) = store::oidc::code_for_use(tx, tenant.id, &hash)? else {
        return Ok(Decision::Refused(OAuthError::invalid_grant("unknown authorization code")));
    };
    let reused = || -> Result<Decision, OAuthError> {
        // A second redemption: whoever holds the code may be an attacker; revoke what it issued.
        let grants = match &row.family {
            Some(family) => Grants::Family(family),
            None => Grants::Code(&hash),
        };
        store::oidc::revoke_grants(tx, tenant.id, grants, now)?;
        if let Some(jti) = &row.access_jti {
            store::oidc::revoke_access(tx, tenant.id, jti, now + ttl.access)?;
        }
        Ok(Decision::Refused(OAuthError::invalid_grant(
            "authorization code already used; the tokens issued for it are revoked",
        )))
    };
    if row.used_at.is_some() {
        return reused();
    }
    if row.client_id != app.client_id {
        return Ok(Decision::Refused(OAuthError::invalid_grant("the code was issued to another client")));
    }
    if row.expires_at <= now {
        return Ok(Decision::Refused(OAuthError::invalid_grant("the authorization code has expired")));
    }
    if row.redirect_uri != redirect_uri {
        return Ok(Decision::Refused(OAuthError::invalid_grant("redirect_uri differs from the authorization request")));
    }
    if let Err(why) = pkce_ok(row.code_challenge.as_deref(), verifier) {
        return Ok(Decision::Refused(OAuthError::invalid_grant(why)));
    }
    let Some((user, roles)) = active_user(tx, tenant, row.user_id)? else {
        return Ok(Decision::Refused(OAuthError::invalid_grant("the user cannot sign in")));
    };
    // The access token's id is recorded with the code, so a replay of the code can revoke it.
    let jti = new_jti()?;
    // The family too, so that a replay finds the grant by its index.
    let family = ordered::uuid_text(&ordered::uuid_v7()?);
    if !store::oidc::use_code(tx, tenant.id, &hash, &jti, &family, now)? {
        return reused();
    }
    let response = issue_user_tokens(
        tx,
        tenant,
        app,
        &user,
        roles,
        &row.scope,
        row.nonce.as_deref(),
        row.auth_time,
        &row.amr,
        row.session_id,
        Some(&family),
        Some(&hash),
        &jti,
        now,
        ttl,
    )?;
    Ok(Decision::Issued(Box::new(response)))
}

/// Device code polling (RFC 8628 §3.4, §3.5). Every answer but the tokens is an error; each poll
/// is recorded (the refusals commit too), so that a client polling faster than its interval gets
/// `slow_down` and an interval 5 seconds longer. An approved code is consumed by one conditional
/// update: the tokens are issued once.
fn device_code(
    tx: &WriteTx<'_>,
    tenant: &TenantRuntime,
    app: &AppRow,
    form: &Params,
    now: Timestamp,
    ttl: &Ttls,
) -> Result<Decision, OAuthError> {
    use super::error::OAuthCode;
    let refused = |code: OAuthCode, d: &str| Ok(Decision::Refused(OAuthError::new(code, d)));
    let code = require(form, "device_code")?;
    let Some(row) = store::device::for_poll(tx, tenant.id, &sha256(code.as_bytes()))? else {
        return refused(OAuthCode::InvalidGrant, "unknown device code");
    };
    if row.client_id != app.client_id {
        return refused(OAuthCode::InvalidGrant, "the device code was issued to another client");
    }
    if row.status == DeviceStatus::Redeemed {
        return refused(OAuthCode::InvalidGrant, "the device code was used already");
    }
    if row.expires_at <= now {
        return refused(OAuthCode::ExpiredToken, "the device code has expired; start again");
    }
    if row.status == DeviceStatus::Denied {
        return refused(OAuthCode::AccessDenied, "the user denied the request");
    }
    if row.last_poll_at.is_some_and(|last| now - last < row.interval) {
        let interval = row.interval + super::device::SLOW_DOWN_STEP;
        store::device::record_poll(tx, tenant.id, row.id, now, interval)?;
        return refused(OAuthCode::SlowDown, &format!("polling too fast: wait {interval} seconds between requests"));
    }
    store::device::record_poll(tx, tenant.id, row.id, now, row.interval)?;
    if row.status == DeviceStatus::Pending {
        return refused(OAuthCode::AuthorizationPending, "the user has not approved the request yet");
    }
    let (Some(user_id), Some(auth_time), Some(amr)) = (row.user_id, row.auth_time, row.amr.as_deref()) else {
        return Err(OAuthError::server_error("an approved device code without its approval"));
    };
    let Some((user, roles)) = active_user(tx, tenant, user_id)? else {
        return refused(OAuthCode::InvalidGrant, "the user cannot sign in");
    };
    if !store::device::redeem(tx, tenant.id, row.id, now)? {
        return refused(OAuthCode::InvalidGrant, "the device code was used already");
    }
    let response = issue_user_tokens(
        tx,
        tenant,
        app,
        &user,
        roles,
        &row.scope,
        None,
        auth_time,
        amr,
        row.session_id,
        None,
        None,
        &new_jti()?,
        now,
        ttl,
    )?;
    Ok(Decision::Issued(Box::new(response)))
}

fn refresh(
    tx: &WriteTx<'_>,
    tenant: &TenantRuntime,
    app: &AppRow,
    form: &Params,
    now: Timestamp,
    ttl: &Ttls,
) -> Result<Decision, OAuthError> {
    let token = require(form, "refresh_token")?;
    let Some(row) = store::oidc::refresh_for_use(tx, tenant.id, &token_key(token))? else {
        return Ok(Decision::Refused(OAuthError::invalid_grant("unknown refresh token")));
    };
    if row.client_id != app.client_id {
        return Ok(Decision::Refused(OAuthError::invalid_grant("the refresh token was issued to another client")));
    }
    if row.revoked_at.is_some() {
        return Ok(Decision::Refused(OAuthError::invalid_grant("the refresh token was revoked")));
    }
    if row.used_at.is_some() {
        // A rotated token came back: it has leaked. End the whole family.
        store::oidc::revoke_grants(tx, tenant.id, Grants::Family(&row.family), now)?;
        return Ok(Decision::Refused(OAuthError::invalid_grant(
            "refresh token reused; all tokens of this grant are revoked",
        )));
    }
    if row.expires_at <= now {
        return Ok(Decision::Refused(OAuthError::invalid_grant("the refresh token has expired")));
    }
    let Some((user, roles)) = active_user(tx, tenant, row.user_id)? else {
        return Ok(Decision::Refused(OAuthError::invalid_grant("the user cannot sign in")));
    };
    let granted: Vec<&str> = scopes(&row.scope).collect();
    let scope = match narrow(&granted, form.get("scope")?) {
        Ok(s) => s,
        Err(e) => return Ok(Decision::Refused(e)),
    };
    if !store::oidc::use_refresh(tx, tenant.id, row.id, now)? {
        store::oidc::revoke_grants(tx, tenant.id, Grants::Family(&row.family), now)?;
        return Ok(Decision::Refused(OAuthError::invalid_grant(
            "refresh token reused; all tokens of this grant are revoked",
        )));
    }
    let response = issue_user_tokens(
        tx,
        tenant,
        app,
        &user,
        roles,
        &scope,
        None,
        row.auth_time,
        &row.amr,
        row.session_id,
        Some(&row.family),
        None,
        &new_jti()?,
        now,
        ttl,
    )?;
    Ok(Decision::Issued(Box::new(response)))
}

fn client_credentials(
    app: &AppRow,
    form: &Params,
    now: Timestamp,
    ttl: &Ttls,
    issuer: &str,
) -> Result<Decision, OAuthError> {
    if app.app_type != AppType::M2m {
        return Ok(Decision::Refused(OAuthError::unauthorized_client(
            "only machine-to-machine applications may use the client credentials grant",
        )));
    }
    let granted: Vec<&str> =
        app.scopes.iter().map(String::as_str).filter(|s| !super::authorize::USER_SCOPES.contains(s)).collect();
    let scope = match narrow(&granted, form.get("scope")?) {
        Ok(s) => s,
        Err(e) => return Ok(Decision::Refused(e)),
    };
    let access = AccessClaims {
        iss: issuer.to_owned(),
        sub: app.client_id.clone(),
        aud: app.client_id.clone(),
        client_id: app.client_id.clone(),
        scope: scope.clone(),
        exp: now + ttl.access,
        iat: now,
        jti: new_jti()?,
        auth_time: None,
        roles: vec![],
    };
    Ok(Decision::Issued(Box::new(Unsigned { access, id: None, refresh_token: None, expires_in: ttl.access, scope })))
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
