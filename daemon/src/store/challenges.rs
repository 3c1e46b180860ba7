//! `challenges` table: WebAuthn ceremony state between a start call and its finish call.

use rusqlite::{OptionalExtension, params};

use super::users::UserId;
use super::{ChallengeKind, Reader, StoreError, TenantId, WriteTx};
use crate::clock::Timestamp;

#[derive(Debug, Clone)]
pub struct ChallengeRow {
    pub challenge: String,
    pub kind: ChallengeKind,
    pub user_id: Option<UserId>,
    pub state: String,
    pub context: String,
    pub expires_at: Timestamp,
}

pub fn insert(tx: &WriteTx<'_>, tenant: TenantId, c: &ChallengeRow) -> Result<(), StoreError> {
    tx.conn_mut().execute(
        "INSERT INTO challenges (challenge, tenant_id, kind, user_id, state, context, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![c.challenge, tenant, c.kind, c.user_id, c.state, c.context, c.expires_at],
    )?;
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
    let row = tx
        .conn_mut()
        .query_row(
            "DELETE FROM challenges WHERE challenge = ?1 AND tenant_id = ?2 AND expires_at > ?3
               AND kind IN (?4, ?5)
             RETURNING challenge, kind, user_id, state, context, expires_at",
            params![challenge, tenant, now, kind, other_kind],
            |r| {
                Ok(ChallengeRow {
                    challenge: r.get(0)?,
                    kind: r.get(1)?,
                    user_id: r.get(2)?,
                    state: r.get(3)?,
                    context: r.get(4)?,
                    expires_at: r.get(5)?,
                })
            },
        )
        .optional()?;
    Ok(row)
}

/// Removes expired challenges; returns how many.
pub fn sweep(tx: &WriteTx<'_>, now: Timestamp) -> Result<usize, StoreError> {
    Ok(tx.conn_mut().execute("DELETE FROM challenges WHERE expires_at <= ?1", [now])?)
}

pub fn count(tx: &impl Reader) -> Result<i64, StoreError> {
    Ok(tx.conn().query_row("SELECT count(*) FROM challenges", [], |r| r.get(0))?)
}
