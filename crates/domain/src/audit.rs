//! The audit log: events are queued without waiting and written by one background task in
//! batches gathered over up to 50 ms (one durable commit per batch), so recording a sign-in or a
//! token grant adds no fsync to the request. Readers flush the queue first; shutdown flushes it
//! too. The transaction that writes a batch also queues its webhook deliveries
//! (`webhooks::queue`), so an event is in the trail exactly when its deliveries are queued.
//!
//! One event never costs another: fields are cleaned when recorded (a NUL byte, which PostgreSQL
//! cannot store, becomes U+FFFD; lengths are bounded, since some fields come from unauthenticated
//! requests), and a batch the database refuses is written again one event at a time. An event
//! that still cannot be written is logged and counted (`latchkey_audit_events_lost_total`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::{mpsc, oneshot};

use crate::clock::Timestamp;
use crate::store::audit::Event;
use crate::store::{Db, StoreError};

enum Msg {
    Event(Event),
    Flush(oneshot::Sender<()>),
}

#[derive(Debug, Clone)]
pub struct AuditLog {
    tx: mpsc::Sender<Msg>,
}

impl std::fmt::Debug for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("audit message")
    }
}

/// Queue length; beyond it events are dropped with a warning rather than slowing requests down.
const QUEUE: usize = 50_000;
const BATCH: usize = 1_000;
/// How long the writer gathers events before writing them (at most this much of the trail is
/// lost if the machine stops, on top of what is still queued).
const LINGER: std::time::Duration = std::time::Duration::from_millis(50);

/// Characters kept of each field. An actor or a subject may be a Client ID or an e-mail a request
/// claimed; a detail may quote an identity provider's answer.
const ACTOR_MAX: usize = 200;
const ACTION_MAX: usize = 64;
/// A slug has at most 63.
const TENANT_MAX: usize = 64;
const OUTCOME_MAX: usize = 200;
const SUBJECT_MAX: usize = 320;
const DETAIL_MAX: usize = 1000;
const IP_MAX: usize = 64;

/// Events lost since the start (`/metrics`), by why: the queue was full, the database refused
/// the event on its own, or the database could not be reached.
static LOST_QUEUE_FULL: AtomicU64 = AtomicU64::new(0);
static LOST_REFUSED: AtomicU64 = AtomicU64::new(0);
static LOST_UNAVAILABLE: AtomicU64 = AtomicU64::new(0);

/// (reason, events lost for it) since the process started.
pub fn lost() -> [(&'static str, u64); 3] {
    [
        ("queue_full", LOST_QUEUE_FULL.load(Ordering::Relaxed)),
        ("refused", LOST_REFUSED.load(Ordering::Relaxed)),
        ("unavailable", LOST_UNAVAILABLE.load(Ordering::Relaxed)),
    ]
}

/// `text` with NUL bytes replaced and at most `max` characters.
fn clean_field(text: &mut String, max: usize) {
    if text.contains('\0') {
        *text = text.replace('\0', "\u{FFFD}");
    }
    if let Some((cut, _)) = text.char_indices().nth(max) {
        text.truncate(cut);
        text.push('…');
    }
}

/// The event as it can be stored whatever its fields held.
fn clean(mut e: Event) -> Event {
    clean_field(&mut e.actor, ACTOR_MAX);
    clean_field(&mut e.action, ACTION_MAX);
    clean_field(&mut e.outcome, OUTCOME_MAX);
    for (field, max) in [(&mut e.tenant, TENANT_MAX), (&mut e.subject, SUBJECT_MAX), (&mut e.detail, DETAIL_MAX)] {
        if let Some(text) = field {
            clean_field(text, max);
        }
    }
    if let Some(ip) = &mut e.ip {
        clean_field(ip, IP_MAX);
    }
    e
}

/// Appends events to the trail and, in the same transaction, queues their webhook deliveries.
fn insert_and_queue(tx: &crate::store::WriteTx<'_>, events: &[Event]) -> Result<(), StoreError> {
    crate::store::audit::insert_all(tx, events)?;
    let now = events.iter().map(|e| e.at).max().unwrap_or_default();
    crate::webhooks::queue::for_events(tx, events, now)?;
    Ok(())
}

/// Writes a batch in one commit; when the database refuses it, each event on its own, so that
/// one it cannot take does not take the others down with it.
pub(crate) async fn write_batch(db: &Db, events: Vec<Event>) {
    let events = Arc::new(events);
    let all = events.clone();
    let written = db.write(move |tx| -> Result<(), StoreError> { insert_and_queue(tx, &all) }).await;
    let Err(e) = written else { return };
    if matches!(e, StoreError::Unavailable(_)) {
        // Each event alone would wait for the database as long again.
        LOST_UNAVAILABLE.fetch_add(events.len() as u64, Ordering::Relaxed);
        tracing::error!(error = %e, events = events.len(), "audit events lost: the database cannot be reached");
        return;
    }
    tracing::warn!(error = %e, events = events.len(), "an audit batch was refused; writing its events one by one");
    for i in 0..events.len() {
        let all = events.clone();
        let one =
            db.write(move |tx| -> Result<(), StoreError> { insert_and_queue(tx, std::slice::from_ref(&all[i])) }).await;
        if let Err(e) = one {
            let lost = &events[i];
            let counter = if matches!(e, StoreError::Unavailable(_)) { &LOST_UNAVAILABLE } else { &LOST_REFUSED };
            counter.fetch_add(1, Ordering::Relaxed);
            tracing::error!(
                error = %e,
                action = %lost.action,
                tenant = lost.tenant.as_deref().unwrap_or("-"),
                at = lost.at,
                "an audit event could not be written"
            );
        }
    }
}

impl AuditLog {
    /// Starts the writer; it ends when every `AuditLog` handle is dropped.
    pub fn start(db: Db) -> (AuditLog, tokio::task::JoinHandle<()>) {
        let (tx, mut rx) = mpsc::channel::<Msg>(QUEUE);
        let task = tokio::spawn(async move {
            while let Some(first) = rx.recv().await {
                let mut events = vec![];
                let mut waiters = vec![];
                let take = |m: Msg, events: &mut Vec<Event>, waiters: &mut Vec<oneshot::Sender<()>>| match m {
                    Msg::Event(e) => events.push(e),
                    Msg::Flush(w) => waiters.push(w),
                };
                take(first, &mut events, &mut waiters);
                // Gather what arrives in the next moment, so that a busy daemon (thousands of
                // grants a second) writes its trail in a few commits a second instead of one
                // fsync every handful of events; a reader's flush ends the wait at once.
                let deadline = tokio::time::Instant::now() + LINGER;
                loop {
                    if events.len() >= BATCH || !waiters.is_empty() {
                        break;
                    }
                    match tokio::time::timeout_at(deadline, rx.recv()).await {
                        Ok(Some(m)) => take(m, &mut events, &mut waiters),
                        Ok(None) | Err(_) => break,
                    }
                }
                while events.len() < BATCH {
                    match rx.try_recv() {
                        Ok(m) => take(m, &mut events, &mut waiters),
                        Err(_) => break,
                    }
                }
                if !events.is_empty() {
                    write_batch(&db, events).await;
                }
                for w in waiters {
                    let _ = w.send(());
                }
            }
        });
        (AuditLog { tx }, task)
    }

    /// Queues an event, cleaned; never waits.
    pub fn record(&self, e: Event) {
        if let Err(err) = self.tx.try_send(Msg::Event(clean(e))) {
            LOST_QUEUE_FULL.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(error = %err, "audit queue full; event dropped");
        }
    }

    /// Waits until everything queued so far is written.
    pub async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Msg::Flush(tx)).await.is_ok() {
            let _ = rx.await;
        }
    }
}

/// Builds an event.
pub fn event(at: Timestamp, tenant: Option<&str>, actor: &str, action: &str, outcome: &str) -> Event {
    Event {
        at,
        tenant: tenant.map(str::to_owned),
        actor: actor.to_owned(),
        action: action.to_owned(),
        outcome: outcome.to_owned(),
        ..Event::default()
    }
}

/// `success`, or `failure: <code>`.
pub fn outcome<T, E>(r: &Result<T, E>, code: impl Fn(&E) -> String) -> String {
    match r {
        Ok(_) => "success".to_owned(),
        Err(e) => format!("failure: {}", code(e)),
    }
}

pub use crate::store::audit::{Cursor, Filter, like_pattern};

/// The events `f` chooses, in the admin API's terms: oldest first by id, or with `cursor` those
/// after it in commit order, each with its own cursor (what a follow reads; see [`Cursor`]).
/// Events still queued in `log` are written first, so that what was just done is in the answer.
pub async fn query(
    log: &AuditLog,
    db: &Db,
    f: Filter,
    cursor: Option<Cursor>,
) -> Result<Vec<latchkey::admin::AuditEvent>, StoreError> {
    log.flush().await;
    let rows = match cursor {
        None => db
            .read(move |tx| crate::store::audit::query(tx, &f))
            .await?
            .into_iter()
            .map(|(id, e)| (id, None, e))
            .collect::<Vec<_>>(),
        Some(at) => db
            .read(move |tx| crate::store::audit::follow(tx, &f, at))
            .await?
            .into_iter()
            .map(|(c, e)| (c.id, Some(c.text()), e))
            .collect(),
    };
    Ok(rows
        .into_iter()
        .map(|(id, cursor, e)| latchkey::admin::AuditEvent {
            id,
            time: crate::clock::rfc3339(e.at),
            tenant: e.tenant,
            actor: e.actor,
            action: e.action,
            subject: e.subject,
            outcome: e.outcome,
            detail: e.detail,
            ip: e.ip,
            cursor,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_cleaned_and_bounded() {
        let e = clean(Event {
            actor: format!("a\0b{}", "x".repeat(5000)),
            action: "token.client_credentials".into(),
            subject: Some("s\0".into()),
            detail: Some("é".repeat(2000)),
            ..Event::default()
        });
        assert!(e.actor.starts_with("a\u{FFFD}b") && e.actor.chars().count() == ACTOR_MAX + 1, "{}", e.actor.len());
        assert_eq!(e.action, "token.client_credentials");
        assert_eq!(e.subject.as_deref(), Some("s\u{FFFD}"));
        assert_eq!(e.detail.map(|d| d.chars().count()), Some(DETAIL_MAX + 1));
    }

    /// On PostgreSQL (`LATCHKEY_TEST_PG=1` under `pg_virtualenv`), which refuses a NUL byte.
    #[test]
    fn postgres_an_audit_event_the_database_refuses_does_not_take_its_batch_down() {
        let Some(t) = crate::store::testing::postgres::test_db() else { return };
        let db = Db::open_postgres(&t.settings).unwrap();
        // Events as the writer receives them, one of them with a NUL byte (which `AuditLog::record`
        // cleans; here it reaches the database raw, as any other refusal would).
        let event = |actor: &str| super::Event {
            at: 1,
            actor: actor.into(),
            action: "token.client_credentials".into(),
            outcome: "success".into(),
            ..Default::default()
        };
        let batch = vec![event("good-1"), event("bad\0"), event("good-2"), event("good-3")];
        let before = super::lost();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(super::write_batch(&db, batch));
        let stored = db
            .read_blocking(|tx| {
                crate::store::audit::query(tx, &crate::store::audit::Filter { limit: 100, ..Default::default() })
            })
            .unwrap();
        let actors: Vec<String> = stored.into_iter().map(|(_, e)| e.actor).collect();
        assert_eq!(actors, ["good-1", "good-2", "good-3"]);
        let refused = |l: [(&str, u64); 3]| l.iter().find(|(why, _)| *why == "refused").map(|(_, n)| *n).unwrap();
        assert!(refused(super::lost()) > refused(before), "the lost event is counted");
    }
}
