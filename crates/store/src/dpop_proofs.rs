//! `dpop_proofs`: each accepted DPoP proof (RFC 9449 §11.1), named by the SHA-256 of its key's
//! thumbprint and its `jti`, kept until its `iat` is too old for it to be accepted anyway, so that
//! a proof is accepted once, whichever node sees it.

use super::sql::params;
use super::{Reader, StoreError, TenantId, WriteTx};
use crate::Timestamp;

/// Records a proof; false when it was seen before (a replay).
pub fn first_use(tx: &WriteTx<'_>, tenant: TenantId, hash: &[u8], expires_at: Timestamp) -> Result<bool, StoreError> {
    let n = tx.conn().execute(
        "INSERT INTO dpop_proofs (tenant_id, proof_hash, expires_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (tenant_id, proof_hash) DO NOTHING",
        params![tenant, hash, expires_at],
    )?;
    Ok(n == 1)
}

/// Deletes the proofs that are refused for their age anyway.
pub fn sweep(tx: &WriteTx<'_>, now: Timestamp) -> Result<usize, StoreError> {
    tx.conn().execute("DELETE FROM dpop_proofs WHERE expires_at <= ?1", params![now])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{temp_db, tenant};

    #[test]
    fn a_proof_is_accepted_once_per_tenant() {
        let t = temp_db();
        t.write(|tx| {
            let (a, b) = (tenant(tx, "a"), tenant(tx, "b"));
            assert!(first_use(tx, a, b"p1", 100).unwrap());
            assert!(!first_use(tx, a, b"p1", 100).unwrap(), "a replay");
            assert!(first_use(tx, a, b"p2", 100).unwrap(), "another proof");
            assert!(first_use(tx, b, b"p1", 100).unwrap(), "another tenant's");
            assert_eq!(sweep(tx, 99).unwrap(), 0);
            assert_eq!(sweep(tx, 100).unwrap(), 3);
        });
    }
}
