//! `outbox` and `session_apps`: deliveries to other servers, decided in the transaction that
//! causes them and made after it commits, by one delivery loop (`domain::outbox`).
//!
//! A back-channel logout is written here by every statement that ends sessions (logout, a new
//! sign-in replacing one, recovery, a user disabled or deleted): the applications that received
//! an ID token in those sessions and have a back-channel logout URI get one row each.

use super::sql::{ConnExt, ToValue, params};

use super::users::UserId;
use super::{Reader, SigningAlg, StoreError, TenantId, Text, WriteTx};
use crate::Timestamp;

/// The kind of a back-channel logout row.
pub const BACKCHANNEL_LOGOUT: &str = "backchannel_logout";

/// Failed rows are kept this long after they fail, for `latchkey` and the metrics to show.
const KEEP_FAILED_SECS: i64 = 7 * 86_400;

/// Records that `client_id` received an ID token in `session`, so that it is told when the
/// session ends. Only apps with a back-channel logout URI are recorded.
pub fn remember_recipient(tx: &WriteTx<'_>, tenant: TenantId, session: i64, client_id: &str) -> Result<(), StoreError> {
    tx.conn().execute(
        "INSERT INTO session_apps (tenant_id, session_id, client_id) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
        params![tenant, session, client_id],
    )?;
    Ok(())
}

/// Sessions about to end.
#[derive(Debug, Clone, Copy)]
pub enum Ending {
    /// One session (a logout, a replaced session).
    Session(i64),
    /// Every live session of a user but `except` (recovery keeps the one it creates).
    User { user: UserId, except: Option<i64> },
}

/// Queues a logout token for every application told of the sessions `ending` (live ones only:
/// an expired session ended long ago). Call before the sessions are deleted. Returns the rows
/// queued.
pub fn queue_logouts(tx: &WriteTx<'_>, tenant: TenantId, ending: Ending, now: Timestamp) -> Result<usize, StoreError> {
    let insert = |filter: &str, params: &[&dyn ToValue]| {
        tx.conn().execute(
            &format!(
                "INSERT INTO outbox (tenant_id, kind, client_id, target, subject, session_id, created_at, next_at)
                 SELECT sa.tenant_id, '{BACKCHANNEL_LOGOUT}', a.client_id, a.backchannel_logout_uri, u.public_id, s.id, ?2, ?2
                 FROM session_apps sa
                 JOIN sessions s ON s.id = sa.session_id
                 JOIN users u ON u.id = s.user_id
                 JOIN applications a ON a.tenant_id = sa.tenant_id AND a.client_id = sa.client_id
                 WHERE sa.tenant_id = ?1 AND s.tenant_id = ?1 AND {filter} AND s.expires_at > ?2
                   AND a.backchannel_logout_uri IS NOT NULL
                 ORDER BY sa.session_id, sa.client_id"
            ),
            params,
        )
    };
    match ending {
        Ending::Session(s) => insert("s.id = ?3", params![tenant, now, s]),
        Ending::User { user, except: None } => insert("s.user_id = ?3", params![tenant, now, user]),
        Ending::User { user, except: Some(keep) } => {
            insert("s.user_id = ?3 AND s.id <> ?4", params![tenant, now, user, keep])
        }
    }
}

/// A row being delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub id: i64,
    pub tenant_id: TenantId,
    pub kind: String,
    pub client_id: String,
    pub target: String,
    pub subject: String,
    pub session_id: Option<i64>,
    pub created_at: Timestamp,
    /// This attempt's number, from 1.
    pub attempt: i64,
    /// The algorithm of the app's tokens (RS256 when the app is gone).
    pub signing_alg: SigningAlg,
}

/// When the next pending row is due, if any.
pub fn next_due(tx: &impl Reader) -> Result<Option<Timestamp>, StoreError> {
    tx.conn().query_one(
        "SELECT min(next_at) FROM outbox WHERE failed_at IS NULL AND webhook_id IS NULL",
        params![],
        |r| r.get(0),
    )
}

/// Takes up to `limit` rows due at `now`, oldest first, for `lease_secs`: they are not due again
/// before then, so a node that stops mid-delivery leaves them to be retried, never lost.
pub fn lease(tx: &WriteTx<'_>, now: Timestamp, lease_secs: i64, limit: i64) -> Result<Vec<Delivery>, StoreError> {
    let mut rows = tx.conn().query_all(
        "UPDATE outbox SET next_at = ?2, attempts = attempts + 1
         WHERE id IN (SELECT id FROM outbox WHERE failed_at IS NULL AND webhook_id IS NULL AND next_at <= ?1
                      ORDER BY id LIMIT ?3)
         RETURNING id, tenant_id, kind, client_id, target, subject, session_id, created_at, attempts,
                   (SELECT a.signing_alg FROM applications a
                    WHERE a.tenant_id = outbox.tenant_id AND a.client_id = outbox.client_id)",
        params![now, now + lease_secs, limit],
        |r| {
            Ok(Delivery {
                id: r.get(0)?,
                tenant_id: r.get(1)?,
                kind: r.get(2)?,
                client_id: r.get(3)?,
                target: r.get(4)?,
                subject: r.get(5)?,
                session_id: r.get(6)?,
                created_at: r.get(7)?,
                attempt: r.get(8)?,
                signing_alg: r.get::<_, Option<Text<SigningAlg>>>(9)?.map_or(SigningAlg::RS256, |t| t.0),
            })
        },
    )?;
    // RETURNING promises no order.
    rows.sort_by_key(|d| d.id);
    Ok(rows)
}

/// A delivered row leaves.
pub fn delivered(tx: &WriteTx<'_>, id: i64) -> Result<(), StoreError> {
    tx.conn().execute("DELETE FROM outbox WHERE id = ?1", params![id])?;
    Ok(())
}

/// A failed attempt: due again at `next_at`.
pub fn retry(tx: &WriteTx<'_>, id: i64, next_at: Timestamp, error: &str) -> Result<(), StoreError> {
    tx.conn().execute("UPDATE outbox SET next_at = ?2, last_error = ?3 WHERE id = ?1", params![id, next_at, error])?;
    Ok(())
}

/// The last attempt failed: the row is kept, failed, for a week.
pub fn give_up(tx: &WriteTx<'_>, id: i64, now: Timestamp, error: &str) -> Result<(), StoreError> {
    tx.conn().execute("UPDATE outbox SET failed_at = ?2, last_error = ?3 WHERE id = ?1", params![id, now, error])?;
    Ok(())
}

/// Rows pending and failed, for the metrics (delivered webhook rows, kept for their listing, are
/// neither). Each count reads a partial index only, however many delivered rows are kept.
pub fn counts(tx: &impl Reader) -> Result<(i64, i64), StoreError> {
    tx.conn().query_one(
        "SELECT (SELECT count(*) FROM outbox WHERE failed_at IS NULL AND webhook_id IS NULL)
              + (SELECT count(*) FROM outbox
                 WHERE webhook_id IS NOT NULL AND failed_at IS NULL AND delivered_at IS NULL),
                (SELECT count(*) FROM outbox WHERE failed_at IS NOT NULL)",
        params![],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Removes failed rows, and delivered webhook rows, past their week.
pub fn sweep(tx: &WriteTx<'_>, now: Timestamp) -> Result<usize, StoreError> {
    let cut = now - KEEP_FAILED_SECS;
    let failed =
        tx.conn().execute("DELETE FROM outbox WHERE failed_at IS NOT NULL AND failed_at <= ?1", params![cut])?;
    let delivered =
        tx.conn().execute("DELETE FROM outbox WHERE delivered_at IS NOT NULL AND delivered_at <= ?1", params![cut])?;
    Ok(failed + delivered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sessions::{NewSession, insert};
    use crate::testing::{app_row, temp_db, tenant, user};

    fn session(tx: &WriteTx<'_>, t: TenantId, u: UserId, hash: &[u8], expires_at: Timestamp) -> i64 {
        let s = NewSession { user_id: u, token_hash: hash, auth_time: 1, amr: "[]", created_at: 1, expires_at };
        insert(tx, t, &s).unwrap()
    }

    fn rows(tx: &impl Reader) -> Vec<(String, Option<i64>, String)> {
        tx.conn()
            .query_all("SELECT client_id, session_id, target FROM outbox ORDER BY id", params![], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .unwrap()
    }

    #[test]
    fn ending_sessions_queues_one_row_per_told_app_of_this_tenant() {
        let t = temp_db();
        let (a, b, ada, s1, s2, s3) = t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            let ada = user(tx, a, "ada@example.com");
            let mut told = app_row("told");
            told.backchannel_logout_uri = Some("https://told.example/bcl".into());
            crate::apps::insert(tx, a, &told).unwrap();
            crate::apps::insert(tx, a, &app_row("silent")).unwrap();
            crate::apps::insert(tx, b, &told).unwrap();
            let s1 = session(tx, a, ada, b"1", 100);
            let s2 = session(tx, a, ada, b"2", 100);
            let s3 = session(tx, a, ada, b"3", 100);
            for s in [s1, s2, s3] {
                remember_recipient(tx, a, s, "told").unwrap();
                remember_recipient(tx, a, s, "told").unwrap();
                remember_recipient(tx, a, s, "silent").unwrap();
            }
            (a, b, ada, s1, s2, s3)
        });
        t.write(|tx| {
            // Another tenant's id for the same session ends nothing.
            assert_eq!(queue_logouts(tx, b, Ending::Session(s1), 10).unwrap(), 0);
            assert_eq!(queue_logouts(tx, a, Ending::Session(s1), 10).unwrap(), 1);
            // Expired sessions are not told.
            assert_eq!(queue_logouts(tx, a, Ending::Session(s2), 100).unwrap(), 0);
            assert_eq!(queue_logouts(tx, a, Ending::User { user: ada, except: Some(s3) }, 10).unwrap(), 2);
        });
        t.read(|tx| {
            let want = |s| ("told".to_owned(), Some(s), "https://told.example/bcl".to_owned());
            assert_eq!(rows(tx), vec![want(s1), want(s1), want(s2)]);
        });
    }

    #[test]
    fn leased_rows_are_not_due_until_retried_and_failed_rows_stay_a_week() {
        let t = temp_db();
        t.write(|tx| {
            let a = tenant(tx, "a");
            let ada = user(tx, a, "ada@example.com");
            let mut told = app_row("told");
            told.backchannel_logout_uri = Some("https://told.example/bcl".into());
            crate::apps::insert(tx, a, &told).unwrap();
            for hash in [b"1", b"2", b"3"] {
                let s = session(tx, a, ada, hash, 1000);
                remember_recipient(tx, a, s, "told").unwrap();
                queue_logouts(tx, a, Ending::Session(s), 10).unwrap();
            }
        });
        assert_eq!(t.read(|tx| next_due(tx).unwrap()), Some(10));
        let leased = t.write(|tx| lease(tx, 10, 60, 2).unwrap());
        assert_eq!(leased.len(), 2);
        assert!(leased[0].id < leased[1].id && leased.iter().all(|d| d.attempt == 1 && d.kind == BACKCHANNEL_LOGOUT));
        let rest = t.write(|tx| lease(tx, 10, 60, 5).unwrap());
        assert_eq!(rest.len(), 1);
        assert!(t.write(|tx| lease(tx, 69, 60, 5).unwrap()).is_empty());
        t.write(|tx| {
            delivered(tx, leased[0].id).unwrap();
            retry(tx, leased[1].id, 20, "HTTP 503").unwrap();
            give_up(tx, rest[0].id, 30, "connection refused").unwrap();
        });
        assert_eq!(t.read(|tx| counts(tx).unwrap()), (1, 1));
        let again = t.write(|tx| lease(tx, 20, 60, 5).unwrap());
        assert_eq!((again.len(), again[0].attempt), (1, 2));
        t.write(|tx| {
            assert_eq!(sweep(tx, 30 + KEEP_FAILED_SECS - 1).unwrap(), 0);
            assert_eq!(sweep(tx, 30 + KEEP_FAILED_SECS).unwrap(), 1);
        });
    }
}
