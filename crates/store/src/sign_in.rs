//! The write that ends a passkey sign-in: take the challenge, record the credential's use, open
//! the session; all of it or nothing.
//!
//! On PostgreSQL it is one statement (a data-modifying `WITH`), committed on its own: one round
//! trip where a transaction of three statements took five (`START TRANSACTION`, the three,
//! `COMMIT`). SQLite has no data-modifying `WITH`: there the three statements run in the
//! caller's transaction, which the writer thread commits with the others of its batch.

use std::sync::LazyLock;

use super::challenges::ChallengeRow;
use super::credentials::CredentialRow;
use super::sessions::NewSession;
use super::sql::{ConnExt, Engine, params, qualified};
use super::users::{self, UserRow};
use super::{ChallengeKind, Reader, StoreError, TenantId, WriteTx, challenges, credentials, sessions};
use crate::Timestamp;

/// What a finish reads before it verifies the assertion: its challenge (unexpired, of one of
/// `kinds`, not taken: [`challenges::consume`] takes it in the finish's write), and the credential
/// with its owner, in one statement. One round trip on PostgreSQL, and one snapshot for both on
/// either engine: a concurrent finish that took the challenge and moved the counter in one commit
/// shows as the challenge gone or not at all, so a replay fails on the challenge (its write finds
/// it gone), never on a counter that moved under it.
#[allow(clippy::type_complexity)]
pub fn lookup(
    tx: &impl Reader,
    tenant: TenantId,
    challenge: &str,
    (kind, other_kind): (ChallengeKind, ChallengeKind),
    credential_id: &[u8],
    now: Timestamp,
) -> Result<(Option<ChallengeRow>, Option<(CredentialRow, UserRow)>), StoreError> {
    // One row always: the challenge's columns and the credential's and owner's, NULL where absent
    // (a credential always has its owner). Flat joins, each a search by key: SQLite materialises
    // a parenthesised join first.
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {}, {}, {}
             FROM (SELECT 1 AS one) AS one
             LEFT JOIN challenges ch
                 ON ch.challenge = ?1 AND ch.tenant_id = ?2 AND ch.expires_at > ?3 AND ch.kind IN (?4, ?5)
             LEFT JOIN credentials c ON c.tenant_id = ?2 AND c.credential_id = ?6
             LEFT JOIN users u ON u.tenant_id = c.tenant_id AND u.id = c.user_id",
            qualified("ch", challenges::COLUMNS),
            qualified("c", credentials::COLUMNS),
            qualified("u", users::COLUMNS)
        )
    });
    const CREDENTIAL: usize = challenges::WIDTH;
    tx.conn().query_one(&SQL, params![challenge, tenant, now, kind, other_kind, credential_id], |r| {
        let challenge = if r.is_null(0)? { None } else { Some(challenges::from_row_at(r, 0)?) };
        // `credential_id`, the second of the credential's columns, is never NULL in a stored row.
        let credential = if r.is_null(CREDENTIAL + 1)? {
            None
        } else {
            Some((credentials::from_row_at(r, CREDENTIAL)?, users::from_row_at(r, CREDENTIAL + credentials::WIDTH)?))
        };
        Ok((challenge, credential))
    })
}

/// A username-first sign-in's start: stores `challenge` (its `user_id` and `kind` set here) for
/// the active user `email_norm` names, and returns that user's credential ids in the order they
/// were registered. Empty when there is no such user, or they are not active or have no passkey:
/// the challenge is then stored without a user, and the caller answers with a decoy.
///
/// On PostgreSQL one statement (a data-modifying `WITH`), committed on its own without waiting
/// for the WAL flush (see [`challenges::insert_unsynced`]): one round trip where a read and an insert took
/// two. On SQLite the same two statements in the caller's transaction (the daemon keeps its
/// read beside the writer there, and does not call this).
pub fn start(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    email_norm: &str,
    challenge: &ChallengeRow,
) -> Result<Vec<Vec<u8>>, StoreError> {
    if tx.conn().engine() == Engine::Sqlite {
        let found = users::by_email_with_credentials(tx, tenant, email_norm)?
            .filter(|(user, creds)| user.status == crate::UserStatus::Active && !creds.is_empty());
        let user_id = found.as_ref().map(|(user, _)| user.id);
        let row = ChallengeRow { kind: ChallengeKind::Authenticate, user_id, ..challenge.clone() };
        challenges::insert_unsynced(tx, tenant, &row)?;
        return Ok(found.map(|(_, creds)| creds.into_iter().map(|c| c.credential_id).collect()).unwrap_or_default());
    }
    const SQL: &str = concat!(
        "WITH creds AS (
             SELECT c.credential_id, c.user_id, c.created_at, c.id
             FROM users u JOIN credentials c ON c.tenant_id = u.tenant_id AND c.user_id = u.id
             WHERE u.tenant_id = ?1 AND u.email_norm = ?2 AND u.status = ?3
         ), stored AS (
             INSERT INTO challenges (challenge, tenant_id, kind, user_id, state, context, expires_at)
             SELECT CAST(?4 AS TEXT), CAST(?1 AS BIGINT), CAST(?5 AS TEXT), (SELECT user_id FROM creds LIMIT 1),
                    CAST(?6 AS TEXT), CAST(?7 AS TEXT), CAST(?8 AS BIGINT)
             FROM ",
        challenges::unsynced!(),
        "
         )
         SELECT credential_id FROM creds ORDER BY created_at, id"
    );
    let c = challenge;
    tx.conn().query_all(
        SQL,
        params![
            tenant,
            email_norm,
            crate::UserStatus::Active,
            c.challenge,
            ChallengeKind::Authenticate,
            c.state,
            c.context,
            c.expires_at
        ],
        |r| r.get(0),
    )
}

/// The verified assertion: its challenge and what it says about the credential.
pub struct CredentialUse<'a> {
    pub challenge: &'a str,
    pub credential_id: &'a [u8],
    pub sign_count: u32,
    pub backup_eligible: bool,
    pub backed_up: bool,
}

/// Takes the challenge, records the use and inserts the session; the new session's id, or `None`
/// (and nothing changed) when the challenge was used, expired or never issued. The counter update
/// keeps [`credentials::record_use`]'s rules: a lower counter than the one stored leaves it.
pub fn finish(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    used: &CredentialUse<'_>,
    session: &NewSession<'_>,
    now: Timestamp,
) -> Result<Option<i64>, StoreError> {
    let CredentialUse { challenge, credential_id, sign_count, backup_eligible, backed_up } = *used;
    if tx.conn().engine() == Engine::Sqlite {
        if !challenges::consume(tx, tenant, challenge, now)? {
            return Ok(None);
        }
        credentials::record_use(tx, tenant, credential_id, sign_count, backup_eligible, backed_up, now)?;
        return sessions::insert(tx, tenant, session).map(Some);
    }
    // The update and the insert run only if the delete took the challenge (`taken` is empty
    // otherwise). Of two concurrent finishes, the second's delete waits for the first's commit
    // and then finds the row gone. The parameters in the insert's select list are cast: a bare
    // parameter there would be typed as text.
    tx.conn().query_opt(
        "WITH taken AS (
             DELETE FROM challenges WHERE challenge = ?1 AND tenant_id = ?2 AND expires_at > ?3
             RETURNING tenant_id
         ), used AS (
             UPDATE credentials SET sign_count = ?5, backup_eligible = (backup_eligible OR ?6), backed_up = ?7,
                 last_used_at = ?3
             WHERE tenant_id = ?2 AND credential_id = ?4 AND sign_count <= ?5 AND EXISTS (SELECT 1 FROM taken)
         )
         INSERT INTO sessions (tenant_id, user_id, token_hash, auth_time, amr, created_at, expires_at)
         SELECT tenant_id, CAST(?8 AS BIGINT), CAST(?9 AS BYTEA), CAST(?10 AS BIGINT), CAST(?11 AS TEXT),
                CAST(?12 AS BIGINT), CAST(?13 AS BIGINT)
         FROM taken RETURNING id",
        params![
            challenge,
            tenant,
            now,
            credential_id,
            sign_count,
            backup_eligible,
            backed_up,
            session.user_id,
            session.token_hash,
            session.auth_time,
            session.amr,
            session.created_at,
            session.expires_at,
        ],
        |r| r.get(0),
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::challenges::ChallengeRow;
    use crate::testing::{credential_row, temp_db, tenant, user};
    use crate::users::UserId;
    use crate::{ChallengeKind, Db};

    fn challenge(challenge: &str, user: UserId, expires_at: Timestamp) -> ChallengeRow {
        ChallengeRow {
            challenge: challenge.into(),
            kind: ChallengeKind::Authenticate,
            user_id: Some(user),
            state: "{}".into(),
            context: "{}".into(),
            expires_at,
        }
    }

    /// What a finish may change: the challenges left, the credential's counter, flags and last
    /// use, and the sessions (user, hash, auth_time, amr, created_at, expires_at).
    type Seen = (Vec<String>, (i64, bool, bool, Option<i64>), Vec<(i64, Vec<u8>, i64, String, i64, i64)>);

    fn seen(db: &Db) -> Seen {
        db.read_blocking(|tx| {
            let c = tx.conn();
            let challenges =
                c.query_all("SELECT challenge FROM challenges ORDER BY challenge", params![], |r| r.get(0))?;
            let credential = c.query_one(
                "SELECT sign_count, backup_eligible, backed_up, last_used_at FROM credentials",
                params![],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )?;
            let sessions = c.query_all(
                "SELECT user_id, token_hash, auth_time, amr, created_at, expires_at FROM sessions ORDER BY id",
                params![],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
            )?;
            Ok::<_, StoreError>((challenges, credential, sessions))
        })
        .unwrap()
    }

    /// The finish on `db` (either engine), through [`Db::write_one`] as the sign-in calls it.
    pub(crate) fn scenario(db: &Db) {
        let (a, u) = db
            .write_blocking(|tx| {
                let a = tenant(tx, "a");
                let b = tenant(tx, "b");
                let u = user(tx, a, "u@example.com");
                let other = user(tx, b, "o@example.com");
                credentials::insert(tx, a, &credential_row(u, b"cred"))?;
                challenges::insert_unsynced(tx, a, &challenge("c1", u, 100))?;
                challenges::insert_unsynced(tx, a, &challenge("c2", u, 100))?;
                challenges::insert_unsynced(tx, a, &challenge("expired", u, 50))?;
                challenges::insert_unsynced(tx, b, &challenge("b's", other, 100))?;
                Ok::<_, StoreError>((a, u))
            })
            .unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let finish = |challenge: &'static str, sign_count: u32, hash: &'static [u8]| {
            rt.block_on(db.write_one(move |tx| {
                let used = CredentialUse {
                    challenge,
                    credential_id: b"cred",
                    sign_count,
                    backup_eligible: true,
                    backed_up: true,
                };
                let session = NewSession {
                    user_id: u,
                    token_hash: hash,
                    auth_time: 50,
                    amr: r#"["hwk","user"]"#,
                    created_at: 50,
                    expires_at: 150,
                };
                finish(tx, a, &used, &session, 50)
            }))
            .unwrap()
        };
        let before = seen(db);
        assert_eq!(before.1, (0, true, false, None));

        // Taken, recorded, opened.
        assert!(finish("c1", 7, b"h1").is_some());
        let session = (u.0, b"h1".to_vec(), 50, r#"["hwk","user"]"#.to_owned(), 50, 150);
        let after = seen(db);
        assert_eq!(
            after,
            (vec!["b's".into(), "c2".into(), "expired".into()], (7, true, true, Some(50)), vec![session.clone()])
        );

        // Used, expired, another tenant's: nothing changes.
        for used in ["c1", "expired", "b's", "never"] {
            assert_eq!(finish(used, 9, b"h2"), None, "{used}");
            assert_eq!(seen(db), after, "{used}");
        }

        // A lower counter opens the session but leaves the stored counter.
        assert!(finish("c2", 3, b"h3").is_some());
        let last = seen(db);
        assert_eq!(last.0, ["b's", "expired"]);
        assert_eq!(last.1, (7, true, true, Some(50)));
        assert_eq!(last.2.len(), 2);
        assert_eq!(last.2[1].1, b"h3");
    }

    /// [`start`] on `db` (either engine), as the sign-in calls it ([`Db::write_one_unsynced`]):
    /// the active user's credential ids in order and the challenge stored for them; for anyone
    /// else no ids and the challenge stored without a user.
    pub(crate) fn start_scenario(db: &Db) {
        let (a, u, disabled) = db
            .write_blocking(|tx| {
                let a = tenant(tx, "a");
                let b = tenant(tx, "b");
                let u = user(tx, a, "u@example.com");
                let bare = user(tx, a, "bare@example.com");
                let disabled = user(tx, a, "off@example.com");
                let other = user(tx, b, "u@example.com");
                credentials::insert(tx, a, &credential_row(u, b"first"))?;
                credentials::insert(tx, a, &credential_row(u, b"second"))?;
                credentials::insert(tx, a, &credential_row(disabled, b"off"))?;
                credentials::insert(tx, b, &credential_row(other, b"theirs"))?;
                users::set_status(tx, a, disabled, crate::UserStatus::Disabled)?;
                let _ = bare;
                Ok::<_, StoreError>((a, u, disabled))
            })
            .unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let start_for = |email: &'static str, name: &'static str| {
            let row = ChallengeRow { kind: ChallengeKind::Discoverable, user_id: None, ..challenge(name, u, 100) };
            rt.block_on(db.write_one_unsynced(move |tx| start(tx, a, email, &row))).unwrap()
        };
        let stored = |name: &'static str| {
            db.read_blocking(move |tx| {
                tx.conn().query_one("SELECT kind, user_id FROM challenges WHERE challenge = ?1", params![name], |r| {
                    Ok((r.get::<_, ChallengeKind>(0)?, r.get::<_, Option<UserId>>(1)?))
                })
            })
            .unwrap()
        };
        assert_eq!(start_for("u@example.com", "c1"), [b"first".to_vec(), b"second".to_vec()]);
        assert_eq!(stored("c1"), (ChallengeKind::Authenticate, Some(u)));
        for (email, name) in [("bare@example.com", "c2"), ("off@example.com", "c3"), ("nobody@example.com", "c4")] {
            assert!(start_for(email, name).is_empty(), "{email}");
            assert_eq!(stored(name), (ChallengeKind::Authenticate, None), "{email}");
        }
        let _ = disabled;
    }

    #[test]
    fn a_start_stores_the_challenge_for_an_active_user_with_passkeys_only() {
        start_scenario(&temp_db().db);
    }

    /// [`lookup`] on `db` (either engine): each half found or not on its own conditions.
    pub(crate) fn lookup_scenario(db: &Db) {
        let (a, b, u, other) = db
            .write_blocking(|tx| {
                let a = tenant(tx, "a");
                let b = tenant(tx, "b");
                let u = user(tx, a, "u@example.com");
                let other = user(tx, b, "o@example.com");
                credentials::insert(tx, a, &credential_row(u, b"cred"))?;
                credentials::insert(tx, b, &credential_row(other, b"theirs"))?;
                challenges::insert_unsynced(tx, a, &challenge("c1", u, 100))?;
                challenges::insert_unsynced(tx, a, &challenge("expired", u, 50))?;
                challenges::insert_unsynced(
                    tx,
                    a,
                    &ChallengeRow { kind: ChallengeKind::Register, ..challenge("reg", u, 100) },
                )?;
                challenges::insert_unsynced(tx, b, &challenge("b's", other, 100))?;
                Ok::<_, StoreError>((a, b, u, other))
            })
            .unwrap();
        let kinds = (ChallengeKind::Authenticate, ChallengeKind::Discoverable);
        let look = |t: TenantId, c: &'static str, id: &'static [u8]| {
            let (challenge, credential) = db.read_blocking(move |tx| lookup(tx, t, c, kinds, id, 50)).unwrap();
            let challenge = challenge.map(|c| (c.challenge, c.kind, c.user_id, c.expires_at));
            (challenge, credential.map(|(c, owner)| (c.credential_id, c.user_id, owner.id, owner.email)))
        };
        let c1 = Some(("c1".to_owned(), ChallengeKind::Authenticate, Some(u), 100));
        let cred = Some((b"cred".to_vec(), u, u, "u@example.com".to_owned()));

        assert_eq!(look(a, "c1", b"cred"), (c1.clone(), cred.clone()));
        assert_eq!(look(a, "c1", b"none"), (c1.clone(), None));
        // Another tenant's credential is not found; nor is another tenant's challenge.
        assert_eq!(look(a, "c1", b"theirs"), (c1, None));
        // Expired (at `now`, 50), of another kind, another tenant's, never issued: no challenge.
        for missing in ["expired", "reg", "b's", "never"] {
            assert_eq!(look(a, missing, b"cred"), (None, cred.clone()), "{missing}");
        }
        let theirs = Some((b"theirs".to_vec(), other, other, "o@example.com".to_owned()));
        let bs = Some(("b's".to_owned(), ChallengeKind::Authenticate, Some(other), 100));
        assert_eq!(look(b, "b's", b"theirs"), (bs.clone(), theirs));
        assert_eq!(look(b, "b's", b"cred"), (bs, None));
        assert_eq!(look(b, "never", b"none"), (None, None));
    }

    #[test]
    fn a_finish_reads_its_challenge_and_its_credential_with_the_owner_each_on_its_own_conditions() {
        lookup_scenario(&temp_db().db);
    }

    #[test]
    fn a_finish_takes_the_challenge_records_the_use_and_opens_the_session_or_changes_nothing() {
        scenario(&temp_db().db);
    }
}
