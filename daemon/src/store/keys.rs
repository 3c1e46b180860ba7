//! `signing_keys` table. Private keys arrive and leave sealed; this module never sees plaintext.

use rusqlite::{Row, params};

use super::{KeyState, Reader, StoreError, TenantId, Text, WriteTx};
use crate::clock::Timestamp;

#[derive(Clone)]
pub struct KeyRow {
    pub kid: String,
    pub state: KeyState,
    pub bits: u32,
    pub sealed_private_key: Vec<u8>,
    pub created_at: Timestamp,
}

impl std::fmt::Debug for KeyRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyRow").field("kid", &self.kid).field("state", &self.state).finish_non_exhaustive()
    }
}

fn from_row(r: &Row<'_>) -> rusqlite::Result<KeyRow> {
    Ok(KeyRow {
        kid: r.get(0)?,
        state: r.get::<_, Text<KeyState>>(1)?.0,
        bits: r.get(2)?,
        sealed_private_key: r.get(3)?,
        created_at: r.get(4)?,
    })
}

/// Inserts a key as the tenant's current one; the previous current key becomes retired.
pub fn insert_current(tx: &WriteTx<'_>, tenant: TenantId, key: &KeyRow, now: Timestamp) -> Result<(), StoreError> {
    tx.conn_mut().execute(
        "UPDATE signing_keys SET state = 'retired', retired_at = ?2 WHERE tenant_id = ?1 AND state = 'current'",
        params![tenant, now],
    )?;
    tx.conn_mut().execute(
        "INSERT INTO signing_keys (tenant_id, kid, state, bits, private_key, created_at) VALUES (?1, ?2, 'current', ?3, ?4, ?5)",
        params![tenant, key.kid, key.bits, key.sealed_private_key, key.created_at],
    )?;
    Ok(())
}

/// The tenant's keys, current first, then newest first.
pub fn list(tx: &impl Reader, tenant: TenantId) -> Result<Vec<KeyRow>, StoreError> {
    let mut stmt = tx.conn().prepare(
        "SELECT kid, state, bits, private_key, created_at FROM signing_keys WHERE tenant_id = ?1
         ORDER BY state = 'current' DESC, created_at DESC, id DESC",
    )?;
    let rows = stmt.query_map([tenant], from_row)?.collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// Removes a retired key (and its private key) for good. Returns whether a row went.
pub fn delete_retired(tx: &WriteTx<'_>, tenant: TenantId, kid: &str) -> Result<bool, StoreError> {
    let n = tx.conn_mut().execute(
        "DELETE FROM signing_keys WHERE tenant_id = ?1 AND kid = ?2 AND state = 'retired'",
        params![tenant, kid],
    )?;
    Ok(n == 1)
}
