//! `webhooks`: a tenant's subscriptions to its audit events, and their deliveries, which are
//! rows of the `outbox` (kind `webhook`) delivered by the same loop as back-channel logouts.
//!
//! A subscription's rows form a queue in id order. Only its head (the first row neither delivered
//! nor failed) decides whether the queue is due, and a lease takes a run of rows from the head:
//! so rows are sent in order, one run at a time, by one node (the lease is taken under the
//! outbox job's lock). A delivered row stays a week, for `latchkey webhook deliveries`.

use std::sync::LazyLock;

use super::batch_insert::{BatchInsert, InsertRow};
use super::sql::{ConnExt, Row, ToValue, params};
use super::{Reader, StoreError, TenantId, WriteTx};
use crate::Timestamp;

/// The kind of a webhook row of the outbox.
pub const WEBHOOK: &str = "webhook";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookRow {
    pub id: i64,
    pub url: String,
    /// Globs of audit actions (`user.*`).
    pub events: Vec<String>,
    pub secret_sealed: Vec<u8>,
    pub created_at: Timestamp,
}

fn row(r: &Row<'_>) -> Result<WebhookRow, StoreError> {
    Ok(WebhookRow {
        id: r.get(0)?,
        url: r.get(1)?,
        events: r.get::<_, String>(2)?.split(',').filter(|e| !e.is_empty()).map(str::to_owned).collect(),
        secret_sealed: r.get(3)?,
        created_at: r.get(4)?,
    })
}

pub fn insert(tx: &WriteTx<'_>, tenant: TenantId, w: &WebhookRow) -> Result<i64, StoreError> {
    super::insert_returning_id(
        tx.conn(),
        "INSERT INTO webhooks (tenant_id, url, events, secret_sealed, created_at) VALUES (?1, ?2, ?3, ?4, ?5)
         RETURNING id",
        params![tenant, w.url, w.events.join(","), w.secret_sealed, w.created_at],
    )
}

/// A tenant's subscriptions, oldest first.
pub fn list(tx: &impl Reader, tenant: TenantId) -> Result<Vec<WebhookRow>, StoreError> {
    tx.conn().query_all(
        "SELECT id, url, events, secret_sealed, created_at FROM webhooks WHERE tenant_id = ?1 ORDER BY id",
        params![tenant],
        row,
    )
}

/// One subscription of a tenant.
pub fn get(tx: &impl Reader, tenant: TenantId, id: i64) -> Result<Option<WebhookRow>, StoreError> {
    tx.conn().query_opt(
        "SELECT id, url, events, secret_sealed, created_at FROM webhooks WHERE tenant_id = ?1 AND id = ?2",
        params![tenant, id],
        row,
    )
}

/// Deletes a subscription and, by cascade, its deliveries. Whether it existed.
pub fn delete(tx: &WriteTx<'_>, tenant: TenantId, id: i64) -> Result<bool, StoreError> {
    Ok(tx.conn().execute("DELETE FROM webhooks WHERE tenant_id = ?1 AND id = ?2", params![tenant, id])? == 1)
}

/// Pending rows per subscription of a tenant (for `latchkey webhook list`).
pub fn pending_counts(tx: &impl Reader, tenant: TenantId) -> Result<Vec<(i64, i64)>, StoreError> {
    tx.conn().query_all(
        "SELECT webhook_id, count(*) FROM outbox
         WHERE tenant_id = ?1 AND webhook_id IS NOT NULL AND failed_at IS NULL AND delivered_at IS NULL
         GROUP BY webhook_id",
        params![tenant],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Every subscription of every tenant, with its tenant's slug: what the audit writer matches
/// each batch of events against.
pub fn all(tx: &impl Reader) -> Result<Vec<(String, TenantId, WebhookRow)>, StoreError> {
    tx.conn().query_all(
        "SELECT w.id, w.url, w.events, w.secret_sealed, w.created_at, t.slug, w.tenant_id
         FROM webhooks w JOIN tenants t ON t.id = w.tenant_id ORDER BY w.id",
        params![],
        |r| Ok((r.get(5)?, r.get(6)?, row(r)?)),
    )
}

/// Whether an audit action matches one of a subscription's globs (`*` matches any run of
/// characters: `user.*` every user event, `*` all). It runs in the audit writer's transaction,
/// so it never backtracks more than once per character: the classic greedy matcher, which
/// remembers only the last `*` (for `*`-only globs a later `*` subsumes an earlier one), costs
/// at most glob length × action length steps, whatever the glob.
pub fn matches(events: &[String], action: &str) -> bool {
    events.iter().any(|e| glob(e.as_bytes(), action.as_bytes()))
}

fn glob(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    // After the last `*` seen: where the glob resumes, and where in `s` that `*` stops for now.
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some(b'*') => {
                pi += 1;
                star = Some((pi, si));
            }
            Some(&c) if c == s[si] => {
                pi += 1;
                si += 1;
            }
            _ => match star {
                // The `*` takes one more character, and the glob resumes after it.
                Some((resume, taken)) => {
                    star = Some((resume, taken + 1));
                    pi = resume;
                    si = taken + 1;
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// A delivery to queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDelivery {
    pub tenant_id: TenantId,
    pub webhook_id: i64,
    pub url: String,
    pub event: String,
    /// The user or object the event is about, if any (shown by `deliveries`).
    pub subject: String,
    pub payload: String,
    /// When the event was queued: the first attempt is due then.
    pub created_at: Timestamp,
}

impl InsertRow for NewDelivery {
    fn params<'a>(&'a self, out: &mut Vec<&'a dyn ToValue>) {
        out.extend([
            &self.tenant_id as &dyn ToValue,
            &self.url,
            &self.subject,
            &self.created_at,
            &self.webhook_id,
            &self.event,
            &self.payload,
        ]);
    }
}

/// Rows per INSERT, largest first (see [`BatchInsert`]).
const CHUNKS: [usize; 5] = [32, 8, 4, 2, 1];

static INSERT: LazyLock<BatchInsert> = LazyLock::new(|| {
    BatchInsert::new(
        "INSERT INTO outbox (tenant_id, kind, client_id, target, subject, created_at, next_at, webhook_id, event, \
         payload)",
        &format!("($1, '{WEBHOOK}', '', $2, $3, $4, $4, $5, $6, $7)"),
        7,
        &CHUNKS,
    )
});

/// Queues deliveries in their order (their ids ascend in it).
pub fn queue(tx: &WriteTx<'_>, rows: &[NewDelivery]) -> Result<(), StoreError> {
    INSERT.run(tx.conn(), rows)
}

/// A delivery being sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leased {
    pub id: i64,
    pub tenant_id: TenantId,
    pub url: String,
    pub payload: String,
    pub created_at: Timestamp,
    /// This attempt's number, from 1.
    pub attempt: i64,
    /// Until when the row is leased: it must be recorded before, and it is recorded only if it
    /// still carries this lease.
    pub lease_until: Timestamp,
}

const PENDING: &str = "failed_at IS NULL AND delivered_at IS NULL";

/// The subscriptions whose queue's head is due at `now`: exactly those [`lease`] takes rows from.
pub fn due(tx: &impl Reader, now: Timestamp) -> Result<Vec<i64>, StoreError> {
    tx.conn().query_all(
        &format!(
            "SELECT o.webhook_id FROM outbox o
             WHERE o.id IN (SELECT (SELECT min(h.id) FROM outbox h WHERE h.webhook_id = w.id AND h.{PENDING})
                            FROM webhooks w)
               AND o.next_at <= ?1"
        ),
        params![now],
        |r| r.get(0),
    )
}

/// Takes the leading run of `webhook`'s queue that is due at `now`, at most `limit` rows, for
/// `lease_secs`. It stops at the first row not due: a head waiting for its retry holds back the
/// whole queue (in order), and a run being sent (leased until later) is neither taken again nor
/// joined. A redelivered row goes ahead of its queue, so it is sent at once, even while the rows
/// behind it wait for a retry (on PostgreSQL another node may send it beside a run: redelivery
/// is out of order by nature). A node that stops mid-run leaves its rows leased; they are due
/// again after the lease, and the run is sent again from its first row not recorded.
pub fn lease(
    tx: &WriteTx<'_>,
    webhook: i64,
    now: Timestamp,
    lease_secs: i64,
    limit: i64,
) -> Result<Vec<Leased>, StoreError> {
    let head: Vec<(i64, Timestamp)> = tx.conn().query_all(
        &format!("SELECT id, next_at FROM outbox WHERE webhook_id = ?1 AND {PENDING} ORDER BY id LIMIT ?2"),
        params![webhook, limit],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let ids: Vec<i64> = head.into_iter().take_while(|(_, next_at)| *next_at <= now).map(|(id, _)| id).collect();
    if ids.is_empty() {
        return Ok(vec![]);
    }
    let sql = format!(
        "UPDATE outbox SET next_at = ?1, attempts = attempts + 1 WHERE id IN ({})
         RETURNING id, tenant_id, target, payload, created_at, attempts",
        id_list(&ids, 2)
    );
    let until = now + lease_secs;
    let mut p: Vec<&dyn ToValue> = vec![&until];
    p.extend(ids.iter().map(|i| i as &dyn ToValue));
    let mut rows = tx.conn().query_all(&sql, &p, |r| {
        Ok(Leased {
            id: r.get(0)?,
            tenant_id: r.get(1)?,
            url: r.get(2)?,
            payload: r.get::<_, Option<String>>(3)?.unwrap_or_default(),
            created_at: r.get(4)?,
            attempt: r.get(5)?,
            lease_until: until,
        })
    })?;
    // RETURNING promises no order.
    rows.sort_by_key(|d| d.id);
    Ok(rows)
}

/// What became of a leased run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunOutcome {
    /// Delivered, with the answer's status line.
    pub delivered: Vec<(i64, String)>,
    /// The row that stopped the run, if one did: due again at `Some(next_at)`, or failed for good.
    pub stopped: Option<(i64, Option<Timestamp>, String)>,
    /// Leased but not tried (behind the row that stopped the run, or past the lease's end):
    /// given back untouched.
    pub untried: Vec<i64>,
    /// The run's lease: a row is recorded only if it still carries it (one whose lease ran out
    /// may be another node's now).
    pub lease_until: Timestamp,
}

fn id_list(ids: &[i64], from: usize) -> String {
    (0..ids.len()).map(|i| format!("?{}", from + i)).collect::<Vec<_>>().join(", ")
}

/// Records a run's outcome in one write; rows whose lease ran out are left to whoever has them.
pub fn record(tx: &WriteTx<'_>, run: &RunOutcome, now: Timestamp) -> Result<(), StoreError> {
    let c = tx.conn();
    let lease = &run.lease_until;
    // One statement per answer text (all "HTTP 200" in the common case).
    let mut by_answer: Vec<(&str, Vec<i64>)> = vec![];
    for (id, answer) in &run.delivered {
        match by_answer.iter_mut().find(|(a, _)| a == answer) {
            Some((_, ids)) => ids.push(*id),
            None => by_answer.push((answer, vec![*id])),
        }
    }
    for (answer, ids) in by_answer {
        let sql = format!(
            "UPDATE outbox SET delivered_at = ?1, next_at = ?1, last_error = ?2 WHERE next_at = ?3 AND id IN ({})",
            id_list(&ids, 4)
        );
        let mut p: Vec<&dyn ToValue> = vec![&now, &answer, lease];
        p.extend(ids.iter().map(|i| i as &dyn ToValue));
        c.execute(&sql, &p)?;
    }
    match &run.stopped {
        Some((id, Some(next_at), error)) => {
            c.execute(
                "UPDATE outbox SET next_at = ?2, last_error = ?3 WHERE id = ?1 AND next_at = ?4",
                params![id, next_at, error, lease],
            )?;
        }
        Some((id, None, error)) => {
            c.execute(
                "UPDATE outbox SET failed_at = ?2, last_error = ?3 WHERE id = ?1 AND next_at = ?4",
                params![id, now, error, lease],
            )?;
        }
        None => {}
    }
    if !run.untried.is_empty() {
        let sql = format!(
            "UPDATE outbox SET attempts = attempts - 1, next_at = ?1 WHERE next_at = ?2 AND id IN ({})",
            id_list(&run.untried, 3)
        );
        let mut p: Vec<&dyn ToValue> = vec![&now, lease];
        p.extend(run.untried.iter().map(|i| i as &dyn ToValue));
        c.execute(&sql, &p)?;
    }
    Ok(())
}

/// A delivery as `latchkey webhook deliveries` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryRow {
    pub id: i64,
    pub webhook_id: i64,
    pub event: String,
    pub subject: String,
    pub created_at: Timestamp,
    pub attempts: i64,
    pub next_at: Timestamp,
    pub delivered_at: Option<Timestamp>,
    pub failed_at: Option<Timestamp>,
    pub last_error: Option<String>,
}

/// A tenant's deliveries, newest first: of one subscription, failed ones only, at most `limit`.
pub fn deliveries(
    tx: &impl Reader,
    tenant: TenantId,
    webhook: Option<i64>,
    failed_only: bool,
    limit: i64,
) -> Result<Vec<DeliveryRow>, StoreError> {
    let mut sql = format!("SELECT {DELIVERY_COLUMNS} FROM outbox WHERE tenant_id = ?1 AND webhook_id IS NOT NULL");
    let mut p: Vec<&dyn ToValue> = vec![&tenant, &limit];
    if let Some(w) = &webhook {
        sql.push_str(" AND webhook_id = ?3");
        p.push(w);
    }
    if failed_only {
        sql.push_str(" AND failed_at IS NOT NULL");
    }
    sql.push_str(" ORDER BY id DESC LIMIT ?2");
    tx.conn().query_all(&sql, &p, delivery_row)
}

const DELIVERY_COLUMNS: &str =
    "id, webhook_id, event, subject, created_at, attempts, next_at, delivered_at, failed_at, last_error";

fn delivery_row(r: &Row<'_>) -> Result<DeliveryRow, StoreError> {
    Ok(DeliveryRow {
        id: r.get(0)?,
        webhook_id: r.get(1)?,
        event: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
        subject: r.get(3)?,
        created_at: r.get(4)?,
        attempts: r.get(5)?,
        next_at: r.get(6)?,
        delivered_at: r.get(7)?,
        failed_at: r.get(8)?,
        last_error: r.get(9)?,
    })
}

/// One of a tenant's deliveries.
pub fn delivery(tx: &impl Reader, tenant: TenantId, id: i64) -> Result<Option<DeliveryRow>, StoreError> {
    tx.conn().query_opt(
        &format!("SELECT {DELIVERY_COLUMNS} FROM outbox WHERE tenant_id = ?1 AND id = ?2 AND webhook_id IS NOT NULL"),
        params![tenant, id],
        delivery_row,
    )
}

/// What `redeliver` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redeliver {
    /// Queued again, due now.
    Queued,
    /// Still waiting for its attempts: nothing to do.
    Pending,
    NotFound,
}

/// Sends a delivered or failed row again, with its `webhook-id` (a receiver that keeps the ids it
/// has seen can tell), as a new attempt of 24 hours.
pub fn redeliver(tx: &WriteTx<'_>, tenant: TenantId, id: i64, now: Timestamp) -> Result<Redeliver, StoreError> {
    let n = tx.conn().execute(
        "UPDATE outbox SET failed_at = NULL, delivered_at = NULL, attempts = 0, created_at = ?3, next_at = ?3,
                last_error = NULL
         WHERE tenant_id = ?1 AND id = ?2 AND webhook_id IS NOT NULL
           AND (failed_at IS NOT NULL OR delivered_at IS NOT NULL)",
        params![tenant, id, now],
    )?;
    if n == 1 {
        return Ok(Redeliver::Queued);
    }
    let exists: Option<i64> = tx.conn().query_opt(
        "SELECT id FROM outbox WHERE tenant_id = ?1 AND id = ?2 AND webhook_id IS NOT NULL",
        params![tenant, id],
        |r| r.get(0),
    )?;
    Ok(if exists.is_some() { Redeliver::Pending } else { Redeliver::NotFound })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{temp_db, tenant};

    fn hook(tx: &WriteTx<'_>, t: TenantId, url: &str) -> i64 {
        let w =
            WebhookRow { id: 0, url: url.into(), events: vec!["user.*".into()], secret_sealed: vec![1], created_at: 1 };
        insert(tx, t, &w).unwrap()
    }

    fn new(t: TenantId, w: i64, n: usize) -> NewDelivery {
        NewDelivery {
            tenant_id: t,
            webhook_id: w,
            url: "https://h.test/in".into(),
            event: "user.invite".into(),
            subject: format!("u{n}@a.test"),
            payload: format!("{{\"n\":{n}}}"),
            created_at: 10,
        }
    }

    #[test]
    fn subscriptions_round_trip_per_tenant() {
        let t = temp_db();
        t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            let w = WebhookRow {
                id: 0,
                url: "https://hooks.a.test/in".into(),
                events: vec!["user.*".into(), "role.assign".into()],
                secret_sealed: vec![1, 2],
                created_at: 7,
            };
            let id = insert(tx, a, &w).unwrap();
            assert_eq!(list(tx, a).unwrap(), vec![WebhookRow { id, ..w.clone() }]);
            assert_eq!(get(tx, a, id).unwrap(), Some(WebhookRow { id, ..w }));
            assert!(list(tx, b).unwrap().is_empty());
            assert_eq!(get(tx, b, id).unwrap(), None, "another tenant's");
            assert_eq!(all(tx).unwrap().len(), 1);
            assert!(!delete(tx, b, id).unwrap(), "another tenant's");
            assert!(delete(tx, a, id).unwrap());
            assert!(list(tx, a).unwrap().is_empty());
        });
    }

    #[test]
    fn globs() {
        let e = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(matches(&e(&["user.*"]), "user.invite"));
        assert!(!matches(&e(&["user.*"]), "role.assign"));
        assert!(matches(&e(&["*"]), "anything"));
        assert!(matches(&e(&["role.assign", "*.delete"]), "app.delete"));
        assert!(!matches(&e(&[]), "user.invite"));
        assert!(matches(&e(&["**a*"]), "bab"));
        assert!(matches(&e(&["u*r.*e"]), "user.invite"));
        assert!(!matches(&e(&["u*r.*e"]), "user.inviter"));
        assert!(matches(&e(&["user.invite"]), "user.invite"));
        assert!(!matches(&e(&["user.invit"]), "user.invite"));
        assert!(!matches(&e(&["user.invitee"]), "user.invite"));
    }

    #[test]
    fn a_pathological_glob_costs_no_more_than_its_length_times_the_action() {
        // A backtracking matcher takes exponential time on this (about 2^40 steps); this one
        // takes at most 81 × 200.
        let glob = vec!["a*".repeat(40) + "b"];
        let action = "a".repeat(200);
        let started = std::time::Instant::now();
        assert!(!matches(&glob, &action));
        assert!(matches(&glob, &(action + "b")));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn a_redelivered_row_goes_ahead_of_a_head_waiting_for_its_retry() {
        let t = temp_db();
        let (a, w) = t.write(|tx| {
            let a = tenant(tx, "a");
            (a, hook(tx, a, "https://one.test"))
        });
        t.write(|tx| queue(tx, &(0..3).map(|n| new(a, w, n)).collect::<Vec<_>>()).unwrap());
        let run = t.write(|tx| lease(tx, w, 10, 60, 32).unwrap());
        let outcome = RunOutcome {
            delivered: vec![(run[0].id, "HTTP 200".into())],
            stopped: Some((run[1].id, Some(100), "HTTP 503".into())),
            untried: vec![run[2].id],
            lease_until: 70,
        };
        t.write(|tx| record(tx, &outcome, 11).unwrap());
        assert!(t.read(|tx| due(tx, 20).unwrap()).is_empty(), "the head waits for its retry");
        t.write(|tx| assert_eq!(redeliver(tx, a, run[0].id, 20).unwrap(), Redeliver::Queued));
        // due() and lease() agree: the redelivered row alone, at once.
        assert_eq!(t.read(|tx| due(tx, 20).unwrap()), vec![w]);
        let alone = t.write(|tx| lease(tx, w, 20, 60, 32).unwrap());
        assert_eq!(alone.iter().map(|d| d.id).collect::<Vec<_>>(), vec![run[0].id]);
        assert!(t.read(|tx| due(tx, 21).unwrap()).is_empty());
        assert!(t.write(|tx| lease(tx, w, 21, 60, 32).unwrap()).is_empty());
        let sent =
            RunOutcome { delivered: vec![(run[0].id, "HTTP 200".into())], lease_until: 80, ..Default::default() };
        t.write(|tx| record(tx, &sent, 22).unwrap());
        let again = t.write(|tx| lease(tx, w, 100, 60, 32).unwrap());
        assert_eq!(again.iter().map(|d| d.id).collect::<Vec<_>>(), vec![run[1].id, run[2].id]);
    }

    #[test]
    fn a_run_whose_lease_ran_out_is_not_recorded_over_the_next_one() {
        let t = temp_db();
        let (a, w) = t.write(|tx| {
            let a = tenant(tx, "a");
            (a, hook(tx, a, "https://one.test"))
        });
        t.write(|tx| queue(tx, &(0..2).map(|n| new(a, w, n)).collect::<Vec<_>>()).unwrap());
        let first = t.write(|tx| lease(tx, w, 10, 60, 32).unwrap());
        assert_eq!(first[0].lease_until, 70);
        // The first node is too slow: its lease runs out and another takes the run.
        let second = t.write(|tx| lease(tx, w, 70, 60, 32).unwrap());
        assert_eq!(second.len(), 2);
        let late = RunOutcome {
            delivered: vec![(first[0].id, "HTTP 200".into())],
            stopped: Some((first[1].id, None, "HTTP 400".into())),
            untried: vec![],
            lease_until: 70,
        };
        t.write(|tx| record(tx, &late, 75).unwrap());
        let list = t.read(|tx| deliveries(tx, a, Some(w), false, 10).unwrap());
        assert!(list.iter().all(|d| d.delivered_at.is_none() && d.failed_at.is_none() && d.next_at == 130), "{list:?}");
        let on_time = RunOutcome {
            delivered: second.iter().map(|d| (d.id, "HTTP 200".to_owned())).collect(),
            lease_until: 130,
            ..Default::default()
        };
        t.write(|tx| record(tx, &on_time, 76).unwrap());
        let list = t.read(|tx| deliveries(tx, a, Some(w), false, 10).unwrap());
        assert!(list.iter().all(|d| d.delivered_at == Some(76)), "{list:?}");
        assert_eq!(t.read(|tx| delivery(tx, a, second[0].id).unwrap()).map(|d| d.attempts), Some(2));
    }

    #[test]
    fn delivered_rows_are_kept_a_week_and_counted_as_neither_pending_nor_failed() {
        let t = temp_db();
        let (a, w) = t.write(|tx| {
            let a = tenant(tx, "a");
            (a, hook(tx, a, "https://one.test"))
        });
        t.write(|tx| queue(tx, &(0..4).map(|n| new(a, w, n)).collect::<Vec<_>>()).unwrap());
        let run = t.write(|tx| lease(tx, w, 10, 60, 3).unwrap());
        let outcome = RunOutcome {
            delivered: run[..2].iter().map(|d| (d.id, "HTTP 204".to_owned())).collect(),
            stopped: Some((run[2].id, None, "HTTP 500".into())),
            untried: vec![],
            lease_until: 70,
        };
        t.write(|tx| record(tx, &outcome, 11).unwrap());
        assert_eq!(t.read(|tx| crate::outbox::counts(tx).unwrap()), (1, 1));
        let week = 7 * 86_400;
        t.write(|tx| {
            assert_eq!(crate::outbox::sweep(tx, 11 + week - 1).unwrap(), 0);
            assert_eq!(crate::outbox::sweep(tx, 11 + week).unwrap(), 3, "two delivered, one failed");
        });
        assert_eq!(t.read(|tx| deliveries(tx, a, None, false, 10).unwrap()).len(), 1);
    }

    #[test]
    fn a_queue_is_sent_in_order_one_run_at_a_time() {
        let t = temp_db();
        let (a, w1, w2) = t.write(|tx| {
            let a = tenant(tx, "a");
            (a, hook(tx, a, "https://one.test"), hook(tx, a, "https://two.test"))
        });
        // 45 rows for the first (every chunk size used), 1 for the second, interleaved.
        t.write(|tx| {
            let rows: Vec<NewDelivery> = (0..45).map(|n| new(a, w1, n)).collect();
            queue(tx, &rows).unwrap();
            queue(tx, &[new(a, w2, 99)]).unwrap();
        });
        assert_eq!(t.read(|tx| due(tx, 9).unwrap()), Vec::<i64>::new());
        let mut due_now = t.read(|tx| due(tx, 10).unwrap());
        due_now.sort();
        assert_eq!(due_now, vec![w1, w2]);
        let run = t.write(|tx| lease(tx, w1, 10, 60, 32).unwrap());
        assert_eq!(run.len(), 32);
        assert_eq!(run[0].payload, "{\"n\":0}");
        assert_eq!(run[31].payload, "{\"n\":31}");
        assert!(run.iter().all(|d| d.attempt == 1 && d.url == "https://h.test/in"));
        // Leased: neither due nor leased again.
        assert_eq!(t.read(|tx| due(tx, 11).unwrap()), vec![w2]);
        assert!(t.write(|tx| lease(tx, w1, 11, 60, 32).unwrap()).is_empty());
        // The first 10 delivered, the 11th refused, the rest untried.
        let outcome = RunOutcome {
            delivered: run[..10].iter().map(|d| (d.id, "HTTP 200".to_owned())).collect(),
            stopped: Some((run[10].id, Some(20), "HTTP 503".into())),
            untried: run[11..].iter().map(|d| d.id).collect(),
            lease_until: 70,
        };
        t.write(|tx| record(tx, &outcome, 12).unwrap());
        assert_eq!(t.read(|tx| due(tx, 19).unwrap()), vec![w2], "the head waits for its retry");
        let again = t.write(|tx| lease(tx, w1, 20, 60, 32).unwrap());
        assert_eq!(again[0].id, run[10].id);
        assert_eq!((again[0].attempt, again[1].attempt), (2, 1), "untried rows were given back");
        assert_eq!(again.len(), 32);
        // Given up: the next row leads.
        let outcome = RunOutcome {
            delivered: vec![],
            stopped: Some((again[0].id, None, "HTTP 503".into())),
            untried: again[1..].iter().map(|d| d.id).collect(),
            lease_until: 80,
        };
        t.write(|tx| record(tx, &outcome, 21).unwrap());
        let list = t.read(|tx| deliveries(tx, a, Some(w1), false, 100).unwrap());
        assert_eq!(list.len(), 45);
        assert_eq!(list.iter().filter(|d| d.delivered_at.is_some()).count(), 10);
        let failed = t.read(|tx| deliveries(tx, a, None, true, 100).unwrap());
        assert_eq!(failed.iter().map(|d| d.id).collect::<Vec<_>>(), vec![run[10].id]);
        assert_eq!(failed[0].last_error.as_deref(), Some("HTTP 503"));
        assert_eq!(t.read(|tx| pending_counts(tx, a).unwrap()), vec![(w1, 34), (w2, 1)]);
        // Redelivered: the failed row leads its queue again, for a fresh day.
        t.write(|tx| {
            assert_eq!(redeliver(tx, a, run[10].id, 30).unwrap(), Redeliver::Queued);
            assert_eq!(redeliver(tx, a, run[11].id, 30).unwrap(), Redeliver::Pending);
            assert_eq!(redeliver(tx, a, 999_999, 30).unwrap(), Redeliver::NotFound);
            let b = tenant(tx, "b");
            assert_eq!(redeliver(tx, b, run[0].id, 30).unwrap(), Redeliver::NotFound, "another tenant's");
        });
        let third = t.write(|tx| lease(tx, w1, 30, 60, 2).unwrap());
        assert_eq!((third[0].id, third[0].attempt, third[0].created_at), (run[10].id, 1, 30));
        // A row redelivered while a run is out goes alone: the run is neither taken again nor
        // joined.
        t.write(|tx| {
            assert_eq!(redeliver(tx, a, run[0].id, 32).unwrap(), Redeliver::Queued);
            let mut due_now = due(tx, 32).unwrap();
            due_now.sort();
            assert_eq!(due_now, vec![w1, w2]);
            let alone = lease(tx, w1, 32, 60, 32).unwrap();
            assert_eq!(alone.iter().map(|d| d.id).collect::<Vec<_>>(), vec![run[0].id]);
            let done = RunOutcome {
                delivered: third.iter().map(|d| (d.id, "HTTP 200".to_owned())).collect(),
                lease_until: 90,
                ..Default::default()
            };
            record(tx, &done, 33).unwrap();
            assert!(lease(tx, w1, 33, 60, 2).unwrap().is_empty(), "behind the redelivered row, still out");
            let sent =
                RunOutcome { delivered: vec![(run[0].id, "HTTP 200".into())], lease_until: 92, ..Default::default() };
            record(tx, &sent, 34).unwrap();
            let next = lease(tx, w1, 34, 60, 2).unwrap();
            assert_eq!(next.iter().map(|d| d.id).collect::<Vec<_>>(), vec![run[12].id, run[13].id]);
        });
        // Removing the subscription removes its rows.
        t.write(|tx| assert!(delete(tx, a, w1).unwrap()));
        assert!(t.read(|tx| deliveries(tx, a, Some(w1), false, 100).unwrap()).is_empty());
    }
}
