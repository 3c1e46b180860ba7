//! `challenges` table: WebAuthn ceremony state between a start call and its finish call.

use std::sync::LazyLock;

use super::sql::{ConnExt, Engine, Row, params};

use super::users::UserId;
use super::{ChallengeKind, Reader, StoreError, TenantId, WriteTx};
use crate::Timestamp;

#[derive(Debug, Clone)]
pub struct ChallengeRow {
    pub challenge: String,
    pub kind: ChallengeKind,
    pub user_id: Option<UserId>,
    pub state: String,
    pub context: String,
    pub expires_at: Timestamp,
}

/// A challenge's columns, in the order [`from_row_at`] reads them.
pub(super) const COLUMNS: &str = "challenge, kind, user_id, state, context, expires_at";
/// How many columns [`COLUMNS`] names: a joined row's next table starts there.
pub(super) const WIDTH: usize = 6;

/// The challenge whose [`COLUMNS`] begin at column `at`.
pub(super) fn from_row_at(r: &Row<'_>, at: usize) -> Result<ChallengeRow, StoreError> {
    Ok(ChallengeRow {
        challenge: r.get(at)?,
        kind: r.get(at + 1)?,
        user_id: r.get(at + 2)?,
        state: r.get(at + 3)?,
        context: r.get(at + 4)?,
        expires_at: r.get(at + 5)?,
    })
}

/// The `FROM` of an unsynced insert's `SELECT` on PostgreSQL: `set_config(…, true)` is `SET LOCAL`,
/// in the same statement, so `synchronous_commit` is off until that statement's transaction
/// commits, and only for it.
macro_rules! unsynced {
    () => {
        "(SELECT set_config('synchronous_commit', 'off', true)) AS unsynced"
    };
}
pub(crate) use unsynced;

/// Stores a new challenge, in a write whose loss in a crash costs a retry (`Db::write_unsynced`,
/// `Db::write_one_unsynced`): on PostgreSQL the statement turns `synchronous_commit` off for its
/// transaction, so the commit does not wait for the WAL flush (SQLite's writer does not wait for
/// the fsync of such a write either). A challenge lost in a crash means the user starts again,
/// and the finish that consumes it commits with a flush. One WAL flush per sign-in instead of two.
/// Never call it in a durable write (`Db::write`): its whole transaction would commit unsynced.
pub fn insert_unsynced(tx: &WriteTx<'_>, tenant: TenantId, c: &ChallengeRow) -> Result<(), StoreError> {
    let sql = match tx.conn().engine() {
        Engine::Sqlite => {
            "INSERT INTO challenges (challenge, tenant_id, kind, user_id, state, context, expires_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
        }
        // The casts type the parameters, which a SELECT list does not.
        Engine::Postgres => concat!(
            "INSERT INTO challenges (challenge, tenant_id, kind, user_id, state, context, expires_at)
             SELECT CAST(?1 AS TEXT), CAST(?2 AS BIGINT), CAST(?3 AS TEXT), CAST(?4 AS BIGINT), CAST(?5 AS TEXT),
                    CAST(?6 AS TEXT), CAST(?7 AS BIGINT)
             FROM ",
            unsynced!()
        ),
    };
    tx.conn().execute(sql, params![c.challenge, tenant, c.kind, c.user_id, c.state, c.context, c.expires_at])?;
    Ok(())
}

/// Takes the challenge out (single use): returns it only when it belongs to `tenant`, is of kind
/// `kind` or `other_kind`, and has not expired. Anything else leaves the row in place.
pub fn take(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    challenge: &str,
    (kind, other_kind): (ChallengeKind, ChallengeKind),
    now: Timestamp,
) -> Result<Option<ChallengeRow>, StoreError> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "DELETE FROM challenges WHERE challenge = ?1 AND tenant_id = ?2 AND expires_at > ?3
                   AND kind IN (?4, ?5)
                 RETURNING {COLUMNS}"
        )
    });
    tx.conn().query_opt(&SQL, params![challenge, tenant, now, kind, other_kind], |r| from_row_at(r, 0))
}

/// Deletes the challenge if it is still there and unexpired; `false` when another request took it
/// first (or it expired meanwhile): exactly one of two concurrent finishes gets `true`.
pub fn consume(tx: &WriteTx<'_>, tenant: TenantId, challenge: &str, now: Timestamp) -> Result<bool, StoreError> {
    let n = tx.conn().execute(
        "DELETE FROM challenges WHERE challenge = ?1 AND tenant_id = ?2 AND expires_at > ?3",
        params![challenge, tenant, now],
    )?;
    Ok(n == 1)
}

/// Removes expired challenges; returns how many.
pub fn sweep(tx: &WriteTx<'_>, now: Timestamp) -> Result<usize, StoreError> {
    tx.conn().execute("DELETE FROM challenges WHERE expires_at <= ?1", params![now])
}

pub fn count(tx: &impl Reader) -> Result<i64, StoreError> {
    tx.conn().query_one("SELECT count(*) FROM challenges", params![], |r| r.get(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_corrupt, force, temp_db, tenant, user};

    use ChallengeKind::{Authenticate, Discoverable, Register};

    fn row(challenge: &str, kind: ChallengeKind, user_id: Option<UserId>, expires_at: Timestamp) -> ChallengeRow {
        ChallengeRow {
            challenge: challenge.into(),
            kind,
            user_id,
            state: format!("state of {challenge}"),
            context: "{}".into(),
            expires_at,
        }
    }

    #[test]
    fn take_returns_the_challenge_once() {
        let t = temp_db();
        let (a, ada) = t.write(|tx| {
            let a = tenant(tx, "a");
            let ada = user(tx, a, "ada@example.com");
            insert_unsynced(tx, a, &row("c1", Register, Some(ada), 100)).unwrap();
            (a, ada)
        });
        let got = t.write(|tx| take(tx, a, "c1", (Register, Register), 10).unwrap().unwrap());
        assert_eq!(
            (got.challenge.as_str(), got.kind, got.user_id, got.state.as_str(), got.context.as_str(), got.expires_at),
            ("c1", Register, Some(ada), "state of c1", "{}", 100)
        );
        assert!(t.write(|tx| take(tx, a, "c1", (Register, Register), 10).unwrap()).is_none());
        assert_eq!(t.read(|tx| count(tx).unwrap()), 0);
        let stored: Vec<String> = t.write(|tx| {
            insert_unsynced(tx, a, &row("c2", Discoverable, None, 100)).unwrap();
            tx.conn().query_all("SELECT kind FROM challenges", params![], |r| r.get(0)).unwrap()
        });
        assert_eq!(stored, ["discoverable"]);
    }

    #[test]
    fn take_of_another_kind_leaves_the_challenge() {
        let t = temp_db();
        let a = t.write(|tx| {
            let a = tenant(tx, "a");
            insert_unsynced(tx, a, &row("reg", Register, None, 100)).unwrap();
            insert_unsynced(tx, a, &row("auth", Authenticate, None, 100)).unwrap();
            insert_unsynced(tx, a, &row("disc", Discoverable, None, 100)).unwrap();
            a
        });
        t.write(|tx| {
            assert!(take(tx, a, "reg", (Authenticate, Discoverable), 10).unwrap().is_none());
            assert!(take(tx, a, "auth", (Register, Register), 10).unwrap().is_none());
            assert_eq!(count(tx).unwrap(), 3);
            assert_eq!(take(tx, a, "auth", (Authenticate, Discoverable), 10).unwrap().unwrap().kind, Authenticate);
            assert_eq!(take(tx, a, "disc", (Authenticate, Discoverable), 10).unwrap().unwrap().kind, Discoverable);
            assert_eq!(take(tx, a, "reg", (Register, Register), 10).unwrap().unwrap().kind, Register);
            assert!(take(tx, a, "missing", (Register, Register), 10).unwrap().is_none());
        });
    }

    #[test]
    fn expired_challenges_cannot_be_taken_and_are_swept() {
        let t = temp_db();
        let a = t.write(|tx| {
            let a = tenant(tx, "a");
            insert_unsynced(tx, a, &row("old", Register, None, 100)).unwrap();
            insert_unsynced(tx, a, &row("new", Register, None, 200)).unwrap();
            a
        });
        t.write(|tx| {
            // Expiry is exclusive: at `expires_at` the challenge is gone.
            assert!(take(tx, a, "old", (Register, Register), 100).unwrap().is_none());
            assert_eq!(count(tx).unwrap(), 2, "a refused take leaves the row");
            assert_eq!(sweep(tx, 100).unwrap(), 1);
            assert_eq!(sweep(tx, 100).unwrap(), 0);
            assert_eq!(count(tx).unwrap(), 1);
            assert!(take(tx, a, "new", (Register, Register), 199).unwrap().is_some());
        });
    }

    #[test]
    fn another_tenant_cannot_take_a_challenge() {
        let t = temp_db();
        let (a, b) = t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            insert_unsynced(tx, a, &row("c", Register, None, 100)).unwrap();
            (a, b)
        });
        assert!(t.write(|tx| take(tx, b, "c", (Register, Register), 10).unwrap()).is_none());
        assert_eq!(t.read(|tx| count(tx).unwrap()), 1);
        let got = t.write(|tx| take(tx, a, "c", (Register, Register), 10).unwrap().unwrap());
        assert_eq!(got.state, "state of c");
        // The challenge is the primary key: another tenant cannot plant the same one.
        t.write(|tx| insert_unsynced(tx, a, &row("same", Register, None, 100)).unwrap());
        assert!(t.db.write_blocking(|tx| insert_unsynced(tx, b, &row("same", Authenticate, None, 500))).is_err());
        let kept = t.write(|tx| take(tx, a, "same", (Register, Register), 10).unwrap().unwrap());
        assert_eq!((kept.kind, kept.expires_at), (Register, 100));
    }

    #[test]
    fn unknown_kind_is_corrupt() {
        let t = temp_db();
        let a = t.write(|tx| {
            let a = tenant(tx, "a");
            insert_unsynced(tx, a, &row("c", Register, None, 100)).unwrap();
            force(tx, "UPDATE challenges SET kind = 'login'");
            a
        });
        // Only a row of an asked kind is taken, so ask for the stored text itself.
        t.write(|tx| {
            let r = tx.conn().query_one("SELECT kind FROM challenges", params![], |r| r.get::<_, ChallengeKind>(0));
            assert_corrupt(r, "challenges.kind");
            assert!(take(tx, a, "c", (Register, Register), 10).unwrap().is_none());
        });
    }
}
