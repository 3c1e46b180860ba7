//! `POST {base_url}/token`: the `authorization_code`, `refresh_token` and `client_credentials`
//! grants (RFC 6749 §4.1, §6, §4.4; PKCE RFC 7636) and device code polling (RFC 8628 §3.4). Every
//! grant that consumes something consumes it in one write (a transaction, or on PostgreSQL a code
//! exchange's or a refresh rotation's one statement, `code::exchange_now`,
//! `refresh::rotate_now`) whose condition lets only one of concurrent redemptions through, so a
//! code or refresh token is consumed exactly once. On SQLite the transaction decides the tokens'
//! claims; they are signed beside the writer while its batch commits (RSA signatures are the
//! costly step and the write queue is single-threaded), and answered once the commit is durable.
//! On PostgreSQL they are signed while the one statement's round trip is under way.

use super::clients::{Presented, authenticate_for_grant};
use super::dpop::Jkt;
use super::error::OAuthError;
use super::issue::{
    Decision, Terms, TokenResponse, Unsigned, UserGrant, active_user, bound, issue_user_tokens, narrow, require,
};
use super::tokens::{AccessClaims, new_jti};
use super::{code, refresh};
use crate::clock::Timestamp;
use crate::crypto::sha256;
use crate::params::Params;
use crate::registry::TenantRuntime;
use crate::state::State;
use crate::store::apps::AppRow;
use crate::store::{self, AppType, DeviceStatus, WriteTx};

/// The fixed name of a `grant_type` for audit actions and metric labels: what a client sends is
/// never one of them as such, so that a request cannot write its own action names.
pub fn grant_name(grant_type: &str) -> &'static str {
    match grant_type {
        "authorization_code" => "authorization_code",
        "refresh_token" => "refresh_token",
        "client_credentials" => "client_credentials",
        "password" => "password",
        super::device::GRANT_TYPE => "device_code",
        _ => "other",
    }
}

pub async fn token(
    state: &State,
    tenant: std::sync::Arc<TenantRuntime>,
    client: Presented,
    form: Params,
    dpop: Option<Jkt>,
) -> Result<TokenResponse, OAuthError> {
    let grant = require(&form, "grant_type")?.to_owned();
    match grant.as_str() {
        "authorization_code" | "refresh_token" | "client_credentials" | super::device::GRANT_TYPE => {}
        "password" => return Err(unsupported("password login is not supported: users sign in with passkeys")),
        other => return Err(unsupported(&format!("grant_type {other:?} is not supported"))),
    }
    // A tenant created moments ago may not have its key yet: it is made now and waited for,
    // before any code or refresh token is consumed (a 503 here leaves them good for a retry).
    // Only for a client that authenticates: a stranger's request must not turn the background's
    // idle-priority work into work at normal priority.
    let tenant = if tenant.load(&state.registry).await?.rs256().is_some() {
        tenant
    } else {
        authenticate_for_grant(&state.db, tenant.id, &client).await?;
        super::keygen::ready_to_sign(state, tenant).await?
    };
    let now = state.clock.now();
    let c = &state.config.tokens;
    let ttl = Terms {
        dpop,
        access: c.access_token.as_secs() as i64,
        id: c.id_token.as_secs() as i64,
        refresh: c.refresh_token.as_secs() as i64,
        offline: c.offline.as_secs() as i64,
    };
    // Tokens are signed here on the async worker (an RSA-2048 signature is a fraction of a
    // millisecond of CPU that never waits): handing it to a blocking thread bought no throughput
    // on a few cores and cost two thread switches per grant and a longer tail (figures in
    // bench/README.md, "Measurements behind the design").
    if grant == "client_credentials" {
        // Nothing to store: the client (usually from memory), then the signature here on the
        // async worker.
        let app = authenticate_for_grant(&state.db, tenant.id, &client).await?;
        return match client_credentials(&app, &form, now, &ttl, &tenant.base_url)? {
            Decision::Issued(unsigned) => unsigned.sign(&tenant).await,
            Decision::Refused(e) => Err(e),
        };
    }
    // Where a transaction costs round trips (PostgreSQL), read first and write once; a queued,
    // batched transaction (SQLite's writer) costs none. The read-then-write shape was measured on
    // SQLite too, and so was signing while that write is under way: neither gained, both shrank
    // the writer's batches (figures in bench/README.md, "Measurements behind the design"). Each
    // request then waits only for its own signatures, so little queues behind an fsync. Device
    // codes are polled every few seconds, not worth a second path.
    if state.db.write_cost() == store::WriteCost::RoundTrips {
        match grant.as_str() {
            "authorization_code" => return code::exchange_now(state, tenant, client, form, now, &ttl).await,
            "refresh_token" => return refresh::rotate_now(state, tenant, client, form, now, &ttl).await,
            _ => {}
        }
    }
    // The client from the in-memory copy when current, as for client credentials: the writer
    // thread, which every write waits for, then neither reads nor decodes the application.
    let app = authenticate_for_grant(&state.db, tenant.id, &client).await?;
    let t = tenant.clone();
    let (decision, durable) = state
        .db
        .write_early(move |tx| -> Result<Decision, OAuthError> {
            match grant.as_str() {
                "authorization_code" => code::exchange(tx, &t, &app, &form, now, &ttl),
                super::device::GRANT_TYPE => device_code(tx, &t, &app, &form, now, &ttl),
                _ => refresh::rotate(tx, &t, &app, &form, now, &ttl),
            }
        })
        .await?;
    // The tokens are signed while the writer commits the batch (the fsync and the signatures
    // overlap instead of adding up); they leave only once the code or refresh token is durably
    // consumed, and are thrown away if the commit fails.
    let answer = match decision {
        Decision::Issued(unsigned) => unsigned.sign(&tenant).await,
        Decision::Refused(e) => Err(e),
    };
    durable.wait().await?;
    answer
}

fn unsupported(d: &str) -> OAuthError {
    OAuthError::unsupported_grant_type(d)
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
    ttl: &Terms,
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
    let Some((user, roles)) = active_user(tx, tenant.id, user_id)? else {
        return refused(OAuthCode::InvalidGrant, "the user cannot sign in");
    };
    if !store::device::redeem(tx, tenant.id, row.id, now)? {
        return refused(OAuthCode::InvalidGrant, "the device code was used already");
    }
    let jti = new_jti()?;
    let grant = UserGrant {
        user: &user,
        roles,
        scope: &row.scope,
        nonce: None,
        auth_time,
        amr,
        session_id: row.session_id,
        family: None,
        code_hash: None,
        jti: &jti,
        claims: &Default::default(),
        may_be_offline: true,
    };
    let response = issue_user_tokens(tx, tenant, app, grant, now, ttl)?;
    Ok(Decision::Issued(Box::new(response)))
}

fn client_credentials(
    app: &AppRow,
    form: &Params,
    now: Timestamp,
    ttl: &Terms,
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
        userinfo_claims: vec![],
        cnf: bound(app, ttl.dpop)?,
    };
    let alg = app.signing_alg;
    Ok(Decision::Issued(Box::new(Unsigned {
        access,
        id: None,
        refresh_token: None,
        expires_in: ttl.access,
        scope,
        alg,
    })))
}
