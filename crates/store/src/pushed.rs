//! `pushed_requests`: authorization requests an application pushed (RFC 9126), each taken once
//! by `/authorize` or swept when it expires.

use super::sql::{ConnExt, params};
use super::{Reader, StoreError, TenantId, WriteTx};
use crate::Timestamp;

/// Stores a pushed request under `id` (the hash of its request_uri).
pub fn insert(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    id: &str,
    client_id: &str,
    params: &str,
    expires_at: Timestamp,
) -> Result<(), StoreError> {
    tx.conn().execute(
        "INSERT INTO pushed_requests (id, tenant_id, client_id, params, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![id, tenant, client_id, params, expires_at],
    )?;
    Ok(())
}

/// Takes a pushed request of `client_id`: deletes it and returns its parameters, if it exists in
/// this tenant, for that client, and has not expired. Once only, whichever node or request asks
/// first; another client's attempt leaves it.
pub fn take(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    id: &str,
    client_id: &str,
    now: Timestamp,
) -> Result<Option<String>, StoreError> {
    let row = tx.conn().query_opt(
        "DELETE FROM pushed_requests WHERE tenant_id = ?1 AND id = ?2 AND client_id = ?3 RETURNING params, expires_at",
        params![tenant, id, client_id],
        |r| Ok((r.get::<_, String>(0)?, r.get::<_, Timestamp>(1)?)),
    )?;
    Ok(row.filter(|(_, expires_at)| *expires_at > now).map(|(p, _)| p))
}

/// Deletes expired pushed requests.
pub fn sweep(tx: &WriteTx<'_>, now: Timestamp) -> Result<usize, StoreError> {
    tx.conn().execute("DELETE FROM pushed_requests WHERE expires_at <= ?1", params![now])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{temp_db, tenant};

    #[test]
    fn a_pushed_request_is_taken_once_in_its_tenant_until_it_expires() {
        let t = temp_db();
        let (a, b) = t.write(|tx| {
            let (a, b) = (tenant(tx, "a"), tenant(tx, "b"));
            insert(tx, a, "h1", "c1", "[]", 70).unwrap();
            insert(tx, a, "h2", "c1", "[]", 70).unwrap();
            insert(tx, a, "h3", "c1", "[]", 70).unwrap();
            (a, b)
        });
        t.write(|tx| {
            assert_eq!(take(tx, b, "h1", "c1", 10).unwrap(), None, "another tenant's");
            assert_eq!(take(tx, a, "h1", "c2", 10).unwrap(), None, "another client's");
            assert_eq!(take(tx, a, "h1", "c1", 10).unwrap(), Some("[]".into()));
            assert_eq!(take(tx, a, "h1", "c1", 10).unwrap(), None, "once");
            assert_eq!(take(tx, a, "h2", "c1", 70).unwrap(), None, "expired (and gone)");
            assert_eq!(sweep(tx, 69).unwrap(), 0);
            assert_eq!(sweep(tx, 70).unwrap(), 1);
        });
    }
}
