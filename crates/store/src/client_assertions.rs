//! `client_assertion_jtis`: the `jti` of each accepted client assertion (private_key_jwt), kept
//! until the assertion expires so that it is accepted once, whichever node sees it.

use super::sql::params;
use super::{Reader, StoreError, TenantId, WriteTx};
use crate::Timestamp;

/// Records a `jti`; false when it was seen before (a replay).
pub fn first_use(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    client_id: &str,
    jti: &str,
    expires_at: Timestamp,
) -> Result<bool, StoreError> {
    let n = tx.conn().execute(
        "INSERT INTO client_assertion_jtis (tenant_id, client_id, jti, expires_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (tenant_id, client_id, jti) DO NOTHING",
        params![tenant, client_id, jti, expires_at],
    )?;
    Ok(n == 1)
}

/// Deletes the `jti`s of expired assertions (which are refused for their `exp` anyway).
pub fn sweep(tx: &WriteTx<'_>, now: Timestamp) -> Result<usize, StoreError> {
    tx.conn().execute("DELETE FROM client_assertion_jtis WHERE expires_at <= ?1", params![now])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{temp_db, tenant};

    #[test]
    fn a_jti_is_accepted_once_per_client() {
        let t = temp_db();
        t.write(|tx| {
            let (a, b) = (tenant(tx, "a"), tenant(tx, "b"));
            assert!(first_use(tx, a, "c1", "j1", 100).unwrap());
            assert!(!first_use(tx, a, "c1", "j1", 100).unwrap(), "a replay");
            assert!(first_use(tx, a, "c2", "j1", 100).unwrap(), "another client's");
            assert!(first_use(tx, b, "c1", "j1", 100).unwrap(), "another tenant's");
            assert_eq!(sweep(tx, 99).unwrap(), 0);
            assert_eq!(sweep(tx, 100).unwrap(), 3);
        });
    }
}
