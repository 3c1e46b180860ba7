//! Sending webhook deliveries, from the outbox's delivery loop.
//!
//! Each round finds the subscriptions whose queue's head is due and starts, for each one not
//! already being sent by this node, a task holding one of [`SLOTS`] (webhooks have their own, so
//! that slow receivers never hold back back-channel logouts). The task leases a run of up to
//! [`RUN`] rows from the head, sends them one after another (in order), records the run in one
//! write, and leases the next run until the queue is empty or an attempt fails. A failed attempt
//! leaves its row at the head, due again after the outbox's backoff (5 s doubling, at most an
//! hour apart, for 24 hours), so later rows wait behind it: in order per subscription. A
//! receiver that hangs holds its own task for the client's 10-second timeout and delays no
//! other subscription; memory is one run per task, whatever the backlog.
//!
//! A run is leased for [`LEASE_SECS`], less than a run of slow answers may take, so the task
//! starts no attempt that could end after its lease (what is left goes back, due at once, and
//! is leased again): no other node ever sends a row this one still holds.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::clock::Timestamp;
use crate::error::Error;
use crate::outbox::{LEASE_SECS, next_attempt};
use crate::social::client::UpstreamError;
use crate::state::State;
use crate::store::webhooks::{Leased, RunOutcome};
use crate::store::{self, StoreError};

/// Rows leased, sent and recorded at once by one subscription's task.
pub const RUN: i64 = 32;
/// Subscriptions sent to at once by one node.
pub const SLOTS: usize = 32;
/// The longest an attempt takes (the HTTP client's timeout), and a margin for recording it.
const ATTEMPT_SECS: i64 = 10;
const RECORD_MARGIN_SECS: i64 = 10;

/// The subscriptions this node is sending now, and the slots they hold.
#[derive(Debug)]
pub struct Sending {
    ids: Mutex<HashSet<i64>>,
    slots: Arc<Semaphore>,
}

impl Default for Sending {
    fn default() -> Sending {
        Sending { ids: Mutex::default(), slots: Arc::new(Semaphore::new(SLOTS)) }
    }
}

impl Sending {
    fn start(&self, id: i64) -> bool {
        self.ids.lock().is_ok_and(|mut s| s.insert(id))
    }

    fn end(&self, id: i64) {
        if let Ok(mut s) = self.ids.lock() {
            s.remove(&id);
        }
    }
}

/// One round: starts a task for each due subscription, as free slots allow. Returns how many.
pub async fn round(state: &Arc<State>, sending: &Arc<Sending>, now: Timestamp) -> Result<usize, Error> {
    if sending.slots.available_permits() == 0 {
        return Ok(0);
    }
    let due = state.db.read(move |tx| store::webhooks::due(tx, now)).await?;
    let mut started = 0;
    for webhook in due {
        let Ok(permit) = sending.slots.clone().try_acquire_owned() else { break };
        if !sending.start(webhook) {
            continue;
        }
        started += 1;
        let (state, sending) = (state.clone(), sending.clone());
        tokio::spawn(async move {
            if let Err(e) = drain(&state, webhook, permit).await {
                tracing::warn!(webhook, error = %e, "sending webhook deliveries failed; trying again shortly");
            }
            sending.end(webhook);
        });
    }
    Ok(started)
}

/// Sends `webhook`'s queue, run after run, until it is empty or an attempt fails.
async fn drain(state: &State, webhook: i64, _slot: OwnedSemaphorePermit) -> Result<(), Error> {
    loop {
        let now = state.clock.now();
        let leased = state
            .db
            .write(move |tx| -> Result<Vec<Leased>, StoreError> {
                // One node at a time on PostgreSQL; the head's lease keeps the others off.
                if !store::cluster::claim_job(tx, "outbox", 0)? {
                    return Ok(vec![]);
                }
                store::webhooks::lease(tx, webhook, now, LEASE_SECS, RUN)
            })
            .await?;
        let Some(first) = leased.first() else { return Ok(()) };
        let tenant_id = first.tenant_id;
        let hook = state.db.read(move |tx| store::webhooks::get(tx, tenant_id, webhook)).await?;
        // Removed since: its rows went with it.
        let Some(hook) = hook else { return Ok(()) };
        let run = match super::open_secret(&state.kek, tenant_id, &hook.url, &hook.secret_sealed) {
            Ok(secret) => send_run(state, &secret, &leased).await,
            // Not expected (the key file changed under a running daemon?): retried like an
            // unreachable receiver, so that it is listed, and given up after a day if it lasts.
            Err(e) => stop_at(&leased, 0, next_attempt(first.created_at, first.attempt, now), e.to_string()),
        };
        let again = run.stopped.is_none() && (leased.len() as i64 == RUN || !run.untried.is_empty());
        for _ in &run.delivered {
            state.metrics.delivery(store::webhooks::WEBHOOK, "delivered");
        }
        if let Some((id, next, why)) = &run.stopped {
            let outcome = if next.is_some() { "retried" } else { "failed" };
            state.metrics.delivery(store::webhooks::WEBHOOK, outcome);
            tracing::info!(webhook, delivery = id, outcome, error = %why, "webhook delivery not delivered");
        }
        let done = state.clock.now();
        state.db.write(move |tx| store::webhooks::record(tx, &run, done)).await?;
        if !again {
            return Ok(());
        }
    }
}

/// A run's outcome when its `i`-th row stopped it.
fn stop_at(run: &[Leased], i: usize, next: Option<Timestamp>, why: String) -> RunOutcome {
    RunOutcome {
        delivered: vec![],
        stopped: Some((run[i].id, next, why.chars().take(300).collect())),
        untried: run[i + 1..].iter().map(|d| d.id).collect(),
        lease_until: run[i].lease_until,
    }
}

/// Sends a run in order, stopping at the first attempt that fails, and before any attempt that
/// could outlast the lease.
async fn send_run(state: &State, secret: &str, run: &[Leased]) -> RunOutcome {
    let lease_until = run.first().map_or(0, |d| d.lease_until);
    let mut delivered = vec![];
    for (i, d) in run.iter().enumerate() {
        let now = state.clock.now();
        if now + ATTEMPT_SECS + RECORD_MARGIN_SECS > lease_until {
            return RunOutcome {
                delivered,
                stopped: None,
                untried: run[i..].iter().map(|d| d.id).collect(),
                lease_until,
            };
        }
        match send(state, secret, d).await {
            Ok(answer) => delivered.push((d.id, answer)),
            Err((retry, why)) => {
                let now = state.clock.now();
                let next = if retry { next_attempt(d.created_at, d.attempt, now) } else { None };
                return RunOutcome { delivered, ..stop_at(run, i, next, why) };
            }
        }
    }
    RunOutcome { delivered, stopped: None, untried: vec![], lease_until }
}

/// One attempt: the answer's status line, or why it failed and whether to try again. Any answer
/// but a 2xx is tried again (the receiver may be mid-deployment); a URL the outbound rules
/// refuse is not.
async fn send(state: &State, secret: &str, d: &Leased) -> Result<String, (bool, String)> {
    let id = format!("msg_{}", d.id);
    let timestamp = state.clock.now();
    let stamp = timestamp.to_string();
    let signature = super::sign::sign(secret, &id, timestamp, &d.payload)
        .ok_or_else(|| (false, "the subscription's secret is not a whsec_ secret".to_owned()))?;
    let headers =
        [("webhook-id", id.as_str()), ("webhook-timestamp", stamp.as_str()), ("webhook-signature", signature.as_str())];
    match state.upstream.notify_json(&d.url, &headers, d.payload.clone()).await {
        Ok(status) if (200..300).contains(&status) => Ok(format!("HTTP {status}")),
        Ok(status) => Err((true, format!("HTTP {status}"))),
        Err(UpstreamError::Url { message, .. }) => Err((false, message)),
        Err(e) => Err((true, e.to_string())),
    }
}
