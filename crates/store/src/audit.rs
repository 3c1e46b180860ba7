//! `audit`: an append-only trail of registrations, logins, credential changes, recoveries, token
//! grants and admin operations.

use std::sync::LazyLock;

use super::batch_insert::{BatchInsert, InsertRow};
use super::sql::{ConnExt, ToValue, params};

use super::{Reader, StoreError, WriteTx};
use crate::Timestamp;

#[derive(Debug, Clone, Default)]
pub struct Event {
    pub at: Timestamp,
    pub tenant: Option<String>,
    pub actor: String,
    pub action: String,
    pub outcome: String,
    pub ip: Option<String>,
    pub subject: Option<String>,
    pub detail: Option<String>,
}

/// Rows per INSERT, largest first (see [`BatchInsert`]); 64 rows of 8 parameters stay far below
/// SQLite's limit of 32,766.
const CHUNKS: [usize; 7] = [64, 32, 16, 8, 4, 2, 1];

static INSERT: LazyLock<BatchInsert> = LazyLock::new(|| {
    BatchInsert::new(
        "INSERT INTO audit (at, tenant, actor, action, outcome, ip, subject, detail)",
        "($1, $2, $3, $4, $5, $6, $7, $8)",
        8,
        &CHUNKS,
    )
});

impl InsertRow for Event {
    fn params<'a>(&'a self, out: &mut Vec<&'a dyn ToValue>) {
        out.extend([
            &self.at as &dyn ToValue,
            &self.tenant,
            &self.actor,
            &self.action,
            &self.outcome,
            &self.ip,
            &self.subject,
            &self.detail,
        ]);
    }
}

/// Appends `events` in their order (their ids ascend in it), in few statements: on PostgreSQL
/// each is a round trip, and one per event made a busy node's trail cost as many round trips as
/// its requests.
pub fn insert_all(tx: &WriteTx<'_>, events: &[Event]) -> Result<(), StoreError> {
    INSERT.run(tx.conn(), events)
}

/// Which events [`query`] reads; `None` leaves a field out of the choice.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// One tenant's (`None`: every tenant's and the daemon-wide ones).
    pub tenant: Option<String>,
    pub since: Timestamp,
    pub until: Option<Timestamp>,
    /// About this subject, compared case-insensitively (as e-mails are).
    pub subject: Option<String>,
    pub actor: Option<String>,
    /// A `LIKE` pattern with `\` as its escape ([`like_pattern`] makes one from a glob).
    pub action: Option<String>,
    /// By or about this application: its Client ID as the actor or the subject.
    pub app: Option<String>,
    /// `success`, `failure` (any failure) or `failure: CODE`.
    pub outcome: Option<String>,
    /// After this row (what `latchkey audit --follow` has seen).
    pub after_id: i64,
    pub limit: u32,
}

/// A glob (`*` any text, `?` one character) as a `LIKE` pattern escaped with `\`.
pub fn like_pattern(glob: &str) -> String {
    let mut out = String::with_capacity(glob.len());
    for c in glob.chars() {
        match c {
            '*' => out.push('%'),
            '?' => out.push('_'),
            '%' | '_' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// The events `f` chooses, oldest first.
pub fn query(tx: &impl Reader, f: &Filter) -> Result<Vec<(i64, Event)>, StoreError> {
    // Two texts rather than `(?1 IS NULL OR tenant = ?1)`, which would keep SQLite from using the
    // (tenant, at) index for one tenant's trail. NULL tests name their parameter's type, and case
    // is folded with lower() rather than SQLite's NOCASE: the same text is then valid SQL for
    // PostgreSQL too (docs/dev/postgres-plan.md).
    let by_tenant = if f.tenant.is_some() { "tenant = ?1" } else { "CAST(?1 AS TEXT) IS NULL" };
    let sql = format!(
        "SELECT id, at, tenant, actor, action, outcome, ip, subject, detail FROM audit
         WHERE {by_tenant} AND at >= ?2 AND id > ?3 AND (CAST(?4 AS TEXT) IS NULL OR lower(subject) = lower(?4))
           AND (CAST(?6 AS BIGINT) IS NULL OR at <= ?6)
           AND (CAST(?7 AS TEXT) IS NULL OR actor = ?7)
           AND (CAST(?8 AS TEXT) IS NULL OR action LIKE ?8 ESCAPE '\\')
           AND (CAST(?9 AS TEXT) IS NULL OR actor = ?9 OR subject = ?9)
           AND (CAST(?10 AS TEXT) IS NULL OR outcome = ?10 OR outcome LIKE CAST(?10 AS TEXT) || ':%')
         ORDER BY id LIMIT ?5"
    );
    let (tenant, subject) = (f.tenant.as_deref(), f.subject.as_deref());
    let (actor, action, app, outcome) =
        (f.actor.as_deref(), f.action.as_deref(), f.app.as_deref(), f.outcome.as_deref());
    let (since, after_id, limit, until) = (f.since, f.after_id, f.limit, f.until);
    let values = params![tenant, since, after_id, subject, limit, until, actor, action, app, outcome];
    let rows = tx.conn().query_all(&sql, values, |r| {
        Ok((
            r.get(0)?,
            Event {
                at: r.get(1)?,
                tenant: r.get(2)?,
                actor: r.get(3)?,
                action: r.get(4)?,
                outcome: r.get(5)?,
                ip: r.get(6)?,
                subject: r.get(7)?,
                detail: r.get(8)?,
            },
        ))
    })?;
    Ok(rows)
}

pub fn sweep(tx: &WriteTx<'_>, before: Timestamp) -> Result<usize, StoreError> {
    tx.conn().execute("DELETE FROM audit WHERE at < ?1", params![before])
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::Db;
    use crate::testing::temp_db;

    fn event(at: Timestamp, tenant: Option<&str>, subject: Option<&str>, action: &str) -> Event {
        Event {
            at,
            tenant: tenant.map(str::to_owned),
            actor: "admin".into(),
            action: action.into(),
            outcome: "success".into(),
            ip: Some("127.0.0.1".into()),
            subject: subject.map(str::to_owned),
            detail: None,
        }
    }

    /// [`query`] by tenant, time, subject and position only.
    fn qf(
        tx: &impl Reader,
        tenant: Option<&str>,
        since: Timestamp,
        subject: Option<&str>,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<(i64, Event)>, StoreError> {
        let f = Filter {
            tenant: tenant.map(str::to_owned),
            since,
            subject: subject.map(str::to_owned),
            after_id,
            limit,
            ..Filter::default()
        };
        query(tx, &f)
    }

    #[test]
    fn query_filters_by_end_actor_action_app_and_outcome() {
        let t = temp_db();
        let ev = |at, actor: &str, action: &str, subject: Option<&str>, outcome: &str| Event {
            actor: actor.into(),
            outcome: outcome.into(),
            ..event(at, Some("a"), subject, action)
        };
        let events = [
            ev(10, "uid:0", "user.invite", Some("ada"), "success"),
            ev(20, "portal", "token.authorization_code", Some("ada"), "success"),
            ev(30, "uid:0", "app.update", Some("portal"), "failure: invalid_redirect_uri"),
            ev(40, "uid:0", "user_x", None, "success"),
        ];
        t.write(|tx| insert_all(tx, &events).unwrap());
        let pick = |f: Filter| t.read(|tx| actions(query(tx, &Filter { limit: 100, ..f }).unwrap()));
        assert_eq!(pick(Filter { until: Some(20), ..Filter::default() }), ["user.invite", "token.authorization_code"]);
        assert_eq!(pick(Filter { actor: Some("portal".into()), ..Filter::default() }), ["token.authorization_code"]);
        assert_eq!(pick(Filter { action: Some(like_pattern("user.*")), ..Filter::default() }), ["user.invite"]);
        assert_eq!(
            pick(Filter { action: Some(like_pattern("user_*")), ..Filter::default() }),
            ["user_x"],
            "_ is literal"
        );
        assert_eq!(
            pick(Filter { app: Some("portal".into()), ..Filter::default() }),
            ["token.authorization_code", "app.update"],
            "by the app, or about it"
        );
        assert_eq!(pick(Filter { outcome: Some("failure".into()), ..Filter::default() }), ["app.update"]);
        assert_eq!(
            pick(Filter { outcome: Some("failure: invalid_redirect_uri".into()), ..Filter::default() }),
            ["app.update"]
        );
        assert_eq!(pick(Filter { outcome: Some("fail".into()), ..Filter::default() }), Vec::<String>::new());
    }

    fn actions(rows: Vec<(i64, Event)>) -> Vec<String> {
        rows.into_iter().map(|(_, e)| e.action).collect()
    }

    #[test]
    fn query_filters_by_tenant_time_subject_and_position() {
        let t = temp_db();
        let events = [
            event(10, Some("a"), Some("ada"), "a1"),
            event(20, Some("a"), Some("bob"), "a2"),
            event(30, Some("a"), Some("ada"), "a3"),
            event(15, Some("b"), Some("ada"), "b1"),
            event(15, None, None, "daemon"),
        ];
        t.write(|tx| insert_all(tx, &events).unwrap());
        t.read(|tx| {
            let all = qf(tx, Some("a"), 0, None, 0, 100).unwrap();
            let first = &all[0].1;
            assert_eq!(
                (first.at, first.tenant.as_deref(), first.actor.as_str(), first.outcome.as_str(), first.ip.as_deref()),
                (10, Some("a"), "admin", "success", Some("127.0.0.1"))
            );
            assert_eq!(actions(all.clone()), ["a1", "a2", "a3"]);
            assert_eq!(actions(qf(tx, Some("a"), 20, None, 0, 100).unwrap()), ["a2", "a3"]);
            assert_eq!(actions(qf(tx, Some("a"), 0, Some("ada"), 0, 100).unwrap()), ["a1", "a3"]);
            assert_eq!(actions(qf(tx, Some("a"), 0, None, all[0].0, 100).unwrap()), ["a2", "a3"]);
            assert_eq!(actions(qf(tx, Some("a"), 0, None, 0, 2).unwrap()), ["a1", "a2"]);
            // Tenants see only their own trail.
            assert_eq!(actions(qf(tx, Some("b"), 0, None, 0, 100).unwrap()), ["b1"]);
            assert!(qf(tx, Some("c"), 0, None, 0, 100).unwrap().is_empty());
            // Without a tenant: everything, daemon-wide events included; subjects ignore case.
            assert_eq!(actions(qf(tx, None, 0, None, 0, 100).unwrap()), ["a1", "a2", "a3", "b1", "daemon"]);
            assert_eq!(actions(qf(tx, None, 0, Some("ADA"), 0, 100).unwrap()), ["a1", "a3", "b1"]);
        });
    }

    #[test]
    fn sweep_removes_events_before_the_cut() {
        let t = temp_db();
        t.write(|tx| {
            let events = [event(10, Some("a"), None, "old"), event(20, Some("b"), None, "edge")];
            insert_all(tx, &events).unwrap();
            insert_all(tx, &[event(30, Some("a"), None, "new")]).unwrap();
            assert_eq!(sweep(tx, 20).unwrap(), 1);
            assert_eq!(sweep(tx, 20).unwrap(), 0);
            assert_eq!(actions(qf(tx, Some("a"), 0, None, 0, 100).unwrap()), ["new"]);
            assert_eq!(actions(qf(tx, Some("b"), 0, None, 0, 100).unwrap()), ["edge"]);
        });
    }

    /// A batch of every size up to 200 (each of [`CHUNKS`] used, alone and combined) comes back
    /// whole, in order, on `db` (either engine).
    pub(crate) fn batches_round_trip(db: &Db) {
        let mut expected = vec![];
        for n in [0, 1, 3, 64, 127, 200] {
            let events: Vec<Event> = (0..n)
                .map(|i| Event {
                    at: i as i64,
                    tenant: (i % 2 == 0).then(|| format!("t{i}")),
                    actor: format!("actor {i}"),
                    action: format!("{n}/{i}"),
                    outcome: "success".into(),
                    ip: (i % 3 == 0).then(|| "::1".into()),
                    subject: (i % 5 == 0).then(|| format!("s{i}")),
                    detail: (i % 7 == 0).then(|| format!("d{i}")),
                })
                .collect();
            db.write_blocking(|tx| insert_all(tx, &events)).unwrap();
            expected.extend(events);
        }
        let stored = db.read_blocking(|tx| qf(tx, None, 0, None, 0, 1000)).unwrap();
        let ids: Vec<i64> = stored.iter().map(|(id, _)| *id).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids ascend in the order given");
        let stored: Vec<String> = stored.into_iter().map(|(_, e)| format!("{e:?}")).collect();
        assert_eq!(stored, expected.iter().map(|e| format!("{e:?}")).collect::<Vec<_>>());
    }

    #[test]
    fn batches_of_any_size_are_stored_whole_and_in_order() {
        batches_round_trip(&temp_db().db);
    }
}
