//! The audit log: events are queued without waiting and written by one background task in
//! batches gathered over up to 50 ms (one durable commit per batch), so recording a sign-in or a
//! token grant adds no fsync to the request. Readers flush the queue first; shutdown flushes it
//! too.

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
                    let n = events.len();
                    let written = db
                        .write(move |tx| -> Result<(), StoreError> { crate::store::audit::insert_all(tx, &events) })
                        .await;
                    if let Err(e) = written {
                        tracing::error!(error = %e, events = n, "audit events could not be written");
                    }
                }
                for w in waiters {
                    let _ = w.send(());
                }
            }
        });
        (AuditLog { tx }, task)
    }

    /// Queues an event; never waits.
    pub fn record(&self, e: Event) {
        if let Err(err) = self.tx.try_send(Msg::Event(e)) {
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
