//! The delivery loop of the outbox: back-channel logout tokens (OpenID Back-Channel Logout 1.0),
//! posted after the request that ended the session has answered, and webhook deliveries
//! (`webhooks::deliver`, which shares this loop's backoff but has slots of its own).
//!
//! Each node looks once a second for rows that are due (a read); when there are some it leases up
//! to [`BATCH`] of them in a write (on PostgreSQL only one node at a time, `cluster::claim_job`)
//! and delivers each on a task of its own ([`IN_FLIGHT`] at most), bounded by the HTTP client's
//! 10-second timeout, which records its outcome in a write of its own: delivered rows leave, a network error or a 5xx is tried again
//! after 5 s, 10 s, 20 s … (at most an hour apart) until 24 hours have passed, and any other
//! answer fails the row at once. A node stopped mid-delivery leaves its rows leased for
//! [`LEASE_SECS`], after which any node delivers them: at least once, never lost. Memory is
//! bounded by the batch, whatever the number of rows waiting.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::{Semaphore, watch};

use crate::clock::Timestamp;
use crate::error::Error;
use crate::oidc::{jwt, signer};
use crate::state::State;
use crate::store::outbox::{BACKCHANNEL_LOGOUT, Delivery};
use crate::store::{self, StoreError, TenantId};

/// Rows leased at once by one node.
pub const BATCH: i64 = 32;
/// Deliveries under way at once on one node: what bounds its memory and its sockets, however
/// many rows wait and however slowly their receivers answer.
pub const IN_FLIGHT: usize = 64;
/// How long a leased row waits before another attempt may take it: beyond the client's timeout.
pub const LEASE_SECS: i64 = 60;
/// How long a row is retried.
pub const GIVE_UP_AFTER_SECS: i64 = 24 * 3600;
/// A logout token's lifetime (`exp` − `iat`).
const TOKEN_TTL_SECS: i64 = 120;

/// The event a logout token carries.
pub const BACKCHANNEL_EVENT: &str = "http://schemas.openid.net/event/backchannel-logout";

/// When a row whose `attempt`-th try just failed is due again: 5 s, doubling, at most an hour;
/// `None` once that would be past 24 hours after it was queued.
pub fn next_attempt(created_at: Timestamp, attempt: i64, now: Timestamp) -> Option<Timestamp> {
    let delay = 5_i64.saturating_mul(1_i64 << (attempt - 1).clamp(0, 20)).min(3600);
    let next = now + delay;
    (next <= created_at + GIVE_UP_AFTER_SECS).then_some(next)
}

#[derive(Serialize)]
struct LogoutClaims<'a> {
    iss: &'a str,
    sub: &'a str,
    aud: &'a str,
    iat: Timestamp,
    exp: Timestamp,
    jti: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    sid: Option<String>,
    events: HashMap<&'static str, serde_json::Map<String, serde_json::Value>>,
}

/// Delivers until `shutdown` turns.
pub async fn run(state: Arc<State>, mut shutdown: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    let sending = Arc::new(crate::webhooks::deliver::Sending::default());
    let mut ticks: u64 = 0;
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = shutdown.changed() => return,
        }
        let now = state.clock.now();
        if let Err(e) = round(&state, &slots, now).await {
            tracing::warn!(error = %e, "delivering from the outbox failed; trying again shortly");
        }
        if let Err(e) = crate::webhooks::deliver::round(&state, &sending, now).await {
            tracing::warn!(error = %e, "sending webhooks failed; trying again shortly");
        }
        // The gauge, every five seconds.
        ticks += 1;
        if ticks % 5 == 1
            && let Ok((pending, failed)) = state.db.read(|tx| store::outbox::counts(tx)).await
        {
            state.metrics.outbox_rows(pending, failed);
        }
    }
}

/// One round: leases the rows due now, as many as there are free delivery slots, and starts
/// each delivery on a task of its own, which records its outcome. A receiver that hangs holds
/// one slot for the client's timeout and delays no other delivery. (A stop abandons deliveries
/// under way: their rows are taken again once their lease is over.) Returns the rows started.
pub async fn round(state: &Arc<State>, slots: &Arc<Semaphore>, now: Timestamp) -> Result<usize, Error> {
    let free = slots.available_permits().min(BATCH as usize) as i64;
    if free == 0 {
        return Ok(0);
    }
    let due = state.db.read(|tx| store::outbox::next_due(tx)).await?;
    if due.is_none_or(|at| at > now) {
        return Ok(0);
    }
    let leased = state
        .db
        .write(move |tx| -> Result<Vec<(Delivery, Option<String>)>, StoreError> {
            // One node at a time on PostgreSQL (always true on SQLite).
            if !store::cluster::claim_job(tx, "outbox", 0)? {
                return Ok(vec![]);
            }
            let rows = store::outbox::lease(tx, now, LEASE_SECS, free)?;
            let mut slugs: HashMap<TenantId, Option<String>> = HashMap::new();
            let mut out = Vec::with_capacity(rows.len());
            for d in rows {
                let slug = match slugs.get(&d.tenant_id) {
                    Some(s) => s.clone(),
                    None => {
                        let s = store::tenants::by_id(tx, d.tenant_id)?.map(|t| t.slug);
                        slugs.insert(d.tenant_id, s.clone());
                        s
                    }
                };
                out.push((d, slug));
            }
            Ok(out)
        })
        .await?;
    let n = leased.len();
    for (d, slug) in leased {
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            // Not expected (one round at a time takes the slots); the lease brings it back.
            break;
        };
        let state = state.clone();
        tokio::spawn(async move {
            let result = deliver(&state, &d, slug.as_deref(), now).await;
            if let Err(e) = record(&state, d, slug, result).await {
                tracing::warn!(error = %e, "recording an outbox delivery failed; it is tried again after its lease");
            }
            drop(permit);
        });
    }
    Ok(n)
}

/// Records one attempt's outcome: in the metrics, the audit trail and the row.
async fn record(state: &State, d: Delivery, slug: Option<String>, result: Result<(), Failure>) -> Result<(), Error> {
    let now = state.clock.now();
    let (outcome, next) = match &result {
        Ok(()) => ("delivered", None),
        Err(Failure::Retry(_)) => match next_attempt(d.created_at, d.attempt, now) {
            Some(at) => ("retried", Some(at)),
            None => ("failed", None),
        },
        Err(Failure::Final(_)) => ("failed", None),
    };
    state.metrics.delivery(BACKCHANNEL_LOGOUT, outcome);
    let error: String = match &result {
        Ok(()) => String::new(),
        Err(Failure::Retry(e) | Failure::Final(e)) => e.chars().take(300).collect(),
    };
    let audit_outcome = if outcome == "delivered" { "success".to_owned() } else { format!("failure: {outcome}") };
    let mut e = crate::audit::event(now, slug.as_deref(), "latchkeyd", "logout.backchannel", &audit_outcome);
    e.subject = Some(d.subject.clone());
    e.detail = Some(match error.as_str() {
        "" => format!("{} attempt {}", d.client_id, d.attempt),
        why => format!("{} attempt {}: {why}", d.client_id, d.attempt),
    });
    state.audit.record(e);
    if outcome != "delivered" {
        tracing::info!(client_id = %d.client_id, attempt = d.attempt, outcome, error = %error, "back-channel logout not delivered");
    }
    let id = d.id;
    state
        .db
        .write(move |tx| match next {
            _ if outcome == "delivered" => store::outbox::delivered(tx, id),
            Some(at) => store::outbox::retry(tx, id, at, &error),
            None => store::outbox::give_up(tx, id, now, &error),
        })
        .await?;
    Ok(())
}

/// Why an attempt did not deliver: worth a retry (no answer, a 5xx), or not (any other answer,
/// a tenant or application gone).
enum Failure {
    Retry(String),
    Final(String),
}

async fn deliver(state: &State, d: &Delivery, slug: Option<&str>, now: Timestamp) -> Result<(), Failure> {
    let tenant = slug.and_then(|s| state.registry.get(s)).ok_or_else(|| Failure::Final("the tenant is gone".into()))?;
    let hot = match tenant.load(&state.registry).await {
        Ok(_) => tenant.hot_shared().map_err(|e| Failure::Retry(e.to_string()))?,
        Err(e) => return Err(Failure::Retry(format!("the tenant's keys cannot be loaded: {e}"))),
    };
    let claims = LogoutClaims {
        iss: &tenant.base_url,
        sub: &d.subject,
        aud: &d.client_id,
        iat: now,
        exp: now + TOKEN_TTL_SECS,
        jti: hot.session_ids.logout_jti(tenant.id, d.id),
        sid: d.session_id.map(|s| hot.session_ids.sid(tenant.id, s)),
        events: HashMap::from([(BACKCHANNEL_EVENT, serde_json::Map::new())]),
    };
    // Signed as the app's ID tokens are (Back-Channel Logout 1.0 §2.4).
    let key = hot.signing_key(d.signing_alg).map_err(|e| Failure::Retry(e.to_string()))?;
    let input = jwt::signing_input(key, "logout+jwt", &claims).map_err(|e| Failure::Retry(e.to_string()))?;
    let token = signer::sign_one(&hot, key, input).await.map_err(|e| Failure::Retry(e.to_string()))?;
    match state.upstream.notify_form(&d.target, &[("logout_token", &token)]).await {
        Ok(status) if (200..300).contains(&status) => Ok(()),
        Ok(status) if status >= 500 => Err(Failure::Retry(format!("HTTP {status}"))),
        Ok(status) => Err(Failure::Final(format!("HTTP {status}: the application refused the logout token"))),
        Err(crate::social::client::UpstreamError::Url { message, .. }) => Err(Failure::Final(message)),
        Err(e) => Err(Failure::Retry(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_to_an_hour_and_stop_after_a_day() {
        let created = 1_000;
        assert_eq!(next_attempt(created, 1, created), Some(created + 5));
        assert_eq!(next_attempt(created, 2, created + 5), Some(created + 15));
        assert_eq!(next_attempt(created, 3, created + 15), Some(created + 35));
        assert_eq!(next_attempt(created, 12, created + 100), Some(created + 3700));
        assert_eq!(next_attempt(created, 60, created + 100), Some(created + 3700));
        assert_eq!(next_attempt(created, 30, created + GIVE_UP_AFTER_SECS - 3600), Some(created + GIVE_UP_AFTER_SECS));
        assert_eq!(next_attempt(created, 30, created + GIVE_UP_AFTER_SECS - 3599), None);
    }
}
