//! `audit`: an append-only trail of registrations, logins, credential changes, recoveries, token
//! grants and admin operations.

use std::sync::LazyLock;

use super::batch_insert::{BatchInsert, InsertRow};
use super::sql::{ConnExt, Engine, ToValue, params};

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

/// The events `f` chooses, oldest first (by id).
pub fn query(tx: &impl Reader, f: &Filter) -> Result<Vec<(i64, Event)>, StoreError> {
    let rows = select(tx, f, "id > ?3", "id", "CAST(0 AS BIGINT)", None)?;
    Ok(rows.into_iter().map(|(cursor, e)| (cursor.id, e)).collect())
}

/// Where a follow of the trail stands: just after the event with this cursor, in commit order.
///
/// On PostgreSQL ids are handed out when a transaction inserts, not when it commits: a
/// transaction that commits later may hold a smaller id than one already read, so a follow by
/// id could step over it for good. Each row also records the id of the transaction that wrote
/// it (`txid`, migration 0031), and a follow reads only rows of transactions older than every
/// transaction still running (`pg_snapshot_xmin`), in `(txid, id)` order: nothing can commit
/// behind such a cursor. On SQLite one writer commits in id order, and `txid` is always 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cursor {
    pub txid: i64,
    pub id: i64,
}

impl Cursor {
    /// The opaque text of the admin API's `cursor`: `TXID.ID`.
    pub fn text(&self) -> String {
        format!("{}.{}", self.txid, self.id)
    }

    /// `""` is the start of the trail; `None` for text no cursor makes.
    pub fn parse(text: &str) -> Option<Cursor> {
        if text.is_empty() {
            return Some(Cursor::default());
        }
        let (txid, id) = text.split_once('.')?;
        let (txid, id) = (txid.parse().ok()?, id.parse().ok()?);
        (txid >= 0 && id >= 0).then_some(Cursor { txid, id })
    }
}

/// The events `f` chooses (its `after_id` ignored) after `cursor`, in commit order: what
/// `latchkey audit --follow` prints. Each comes with its own cursor, for the next read.
pub fn follow(tx: &impl Reader, f: &Filter, cursor: Cursor) -> Result<Vec<(Cursor, Event)>, StoreError> {
    let f = Filter { after_id: cursor.id, ..f.clone() };
    if tx.conn().engine() == Engine::Sqlite {
        return select(tx, &f, "id > ?3", "id", "CAST(0 AS BIGINT)", None);
    }
    // The text casts carry the txid both ways: xid8 has no binary form the client knows.
    select(
        tx,
        &f,
        "(txid, id) > (CAST(CAST(CAST(?11 AS BIGINT) AS TEXT) AS xid8), ?3) AND txid < pg_snapshot_xmin(pg_current_snapshot())",
        "txid, id",
        "CAST(CAST(txid AS TEXT) AS BIGINT)",
        Some(cursor.txid),
    )
}

/// The events `f` chooses past `position` (an expression of `?3`, the id, and of `?11`, the txid,
/// when `after_txid` is given), in `order`, each with its cursor (`txid`: an expression of the
/// row's transaction id).
fn select(
    tx: &impl Reader,
    f: &Filter,
    position: &str,
    order: &str,
    txid: &str,
    after_txid: Option<i64>,
) -> Result<Vec<(Cursor, Event)>, StoreError> {
    // Two texts rather than `(?1 IS NULL OR tenant = ?1)`, which would keep SQLite from using the
    // (tenant, at) index for one tenant's trail. NULL tests name their parameter's type, and case
    // is folded with lower() rather than SQLite's NOCASE: the same text is then valid SQL for
    // PostgreSQL too (docs/dev/postgres-plan.md).
    let by_tenant = if f.tenant.is_some() { "tenant = ?1" } else { "CAST(?1 AS TEXT) IS NULL" };
    let sql = format!(
        "SELECT id, at, tenant, actor, action, outcome, ip, subject, detail, {txid} FROM audit
         WHERE {by_tenant} AND at >= ?2 AND {position} AND (CAST(?4 AS TEXT) IS NULL OR lower(subject) = lower(?4))
           AND (CAST(?6 AS BIGINT) IS NULL OR at <= ?6)
           AND (CAST(?7 AS TEXT) IS NULL OR actor = ?7)
           AND (CAST(?8 AS TEXT) IS NULL OR action LIKE ?8 ESCAPE '\\')
           AND (CAST(?9 AS TEXT) IS NULL OR actor = ?9 OR subject = ?9)
           AND (CAST(?10 AS TEXT) IS NULL OR outcome = ?10 OR outcome LIKE CAST(?10 AS TEXT) || ':%')
         ORDER BY {order} LIMIT ?5"
    );
    let (tenant, subject) = (f.tenant.as_deref(), f.subject.as_deref());
    let (actor, action, app, outcome) =
        (f.actor.as_deref(), f.action.as_deref(), f.app.as_deref(), f.outcome.as_deref());
    let (since, after_id, limit, until) = (f.since, f.after_id, f.limit, f.until);
    let mut values = params![tenant, since, after_id, subject, limit, until, actor, action, app, outcome].to_vec();
    if let Some(txid) = &after_txid {
        values.push(txid);
    }
    let rows = tx.conn().query_all(&sql, &values, |r| {
        Ok((
            Cursor { id: r.get(0)?, txid: r.get(9)? },
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
    fn a_follow_goes_on_from_the_cursor_of_the_last_event_it_read() {
        let t = temp_db();
        let events =
            [event(10, Some("a"), None, "a1"), event(20, Some("b"), None, "b1"), event(30, Some("a"), None, "a2")];
        t.write(|tx| insert_all(tx, &events).unwrap());
        let a = Filter { tenant: Some("a".into()), limit: 1, ..Filter::default() };
        t.read(|tx| {
            let first = follow(tx, &a, Cursor::parse("").unwrap()).unwrap();
            assert_eq!(first.iter().map(|(_, e)| e.action.as_str()).collect::<Vec<_>>(), ["a1"]);
            assert_eq!(first[0].0.text(), format!("0.{}", first[0].0.id), "SQLite: by id alone");
            let next = follow(tx, &a, Cursor::parse(&first[0].0.text()).unwrap()).unwrap();
            assert_eq!(next.iter().map(|(_, e)| e.action.as_str()).collect::<Vec<_>>(), ["a2"]);
            assert!(follow(tx, &a, next[0].0).unwrap().is_empty());
        });
        for bad in ["x", "1", "1.", ".1", "-1.2", "1.2.3", "1.x"] {
            assert_eq!(Cursor::parse(bad), None, "{bad:?}");
        }
    }

    /// Events committed out of id order (PostgreSQL: `pg::tests`) are followed in commit order:
    /// one written in a transaction still open when a later one commits is shown, not stepped
    /// over. `hold(db)` writes an event in a transaction it leaves open until the returned
    /// closure runs; on SQLite it commits at once.
    pub(crate) fn follow_misses_no_event_committed_late(db: &Db, hold: impl FnOnce(&Db) -> Box<dyn FnOnce()>) {
        let filter = Filter { limit: 100, ..Filter::default() };
        let names = |rows: &[(Cursor, Event)]| rows.iter().map(|(_, e)| e.action.clone()).collect::<Vec<_>>();
        // A follow shows nothing past a transaction running anywhere on the server, the other
        // tests' included: read until `n` events are there (or 10 s have passed).
        let settled = |at: Cursor, n: usize| {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            loop {
                let rows = db.read_blocking(|tx| follow(tx, &filter, at)).unwrap();
                if rows.len() >= n || std::time::Instant::now() >= deadline {
                    return rows;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        };
        db.write_blocking(|tx| insert_all(tx, &[event(10, Some("a"), None, "first")])).unwrap();
        let shown = settled(Cursor::default(), 1);
        assert_eq!(names(&shown), ["first"]);
        let at = shown[0].0;
        let commit = hold(db);
        db.write_blocking(|tx| insert_all(tx, &[event(30, Some("a"), None, "later")])).unwrap();
        let by_id = db.read_blocking(|tx| query(tx, &Filter { after_id: at.id, ..filter.clone() })).unwrap();
        let meanwhile = db.read_blocking(|tx| follow(tx, &filter, at)).unwrap();
        commit();
        let after = settled(at, 2);
        if db.sqlite_path().is_some() {
            assert_eq!(names(&after), ["held", "later"]);
            return;
        }
        // By id, "later" is past "held", which was not committed yet: a follow by id that read
        // this would never show "held".
        assert_eq!(by_id.iter().map(|(_, e)| e.action.as_str()).collect::<Vec<_>>(), ["later"]);
        assert_eq!(names(&meanwhile), Vec::<String>::new(), "nothing past a transaction still running");
        assert_eq!(names(&after), ["held", "later"], "both, in commit order");
        let last = after[1].0;
        assert!(db.read_blocking(|tx| follow(tx, &filter, last)).unwrap().is_empty());

        // A page that ends inside one transaction's events (one txid) goes on from there.
        let batch =
            [event(40, Some("a"), None, "b1"), event(41, Some("a"), None, "b2"), event(42, Some("a"), None, "b3")];
        db.write_blocking(|tx| insert_all(tx, &batch)).unwrap();
        let one = Filter { limit: 1, ..filter.clone() };
        let (mut at, mut pages) = (last, vec![]);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while pages.len() < 3 && std::time::Instant::now() < deadline {
            let page = db.read_blocking(|tx| follow(tx, &one, at)).unwrap();
            if let Some((cursor, e)) = page.into_iter().next() {
                assert!(cursor.txid >= at.txid, "never backwards");
                at = cursor;
                pages.push(e.action);
            } else {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        assert_eq!(pages, ["b1", "b2", "b3"], "one page each, in order");
    }

    #[test]
    fn follow_on_sqlite_is_by_id() {
        follow_misses_no_event_committed_late(&temp_db().db, |db| {
            db.write_blocking(|tx| insert_all(tx, &[event(20, Some("a"), None, "held")])).unwrap();
            Box::new(|| {})
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
