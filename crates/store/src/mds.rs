//! `mds_blob` and `mds_entries`: the FIDO Metadata Service BLOB an operator imported (`latchkey
//! mds import`), one for the whole daemon, and what its entries say per AAGUID.

use super::sql::{ConnExt, params};
use super::{Reader, StoreError, WriteTx};
use crate::Timestamp;

/// The BLOB in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobRow {
    pub serial: i64,
    pub next_update: String,
    pub sha256: String,
    pub imported_at: Timestamp,
}

/// What one entry says of an authenticator model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryRow {
    /// Lower case, with hyphens.
    pub aaguid: String,
    pub description: String,
    /// The status report in force (`FIDO_CERTIFIED_L1`, `REVOKED`, …).
    pub status: String,
    /// Its attestation roots, DER.
    pub roots: Vec<Vec<u8>>,
}

fn encode(roots: &[Vec<u8>]) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    roots.iter().map(|r| b64.encode(r)).collect::<Vec<_>>().join(",")
}

fn decode(text: &str) -> Result<Vec<Vec<u8>>, StoreError> {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    text.split(',')
        .filter(|r| !r.is_empty())
        .map(|r| b64.decode(r).map_err(|_| StoreError::Corrupt("mds_entries.roots: not base64".into())))
        .collect()
}

/// Replaces the metadata whole: the old entries go, the new ones come, in the caller's
/// transaction (a registration sees one BLOB or the other, never a mix).
pub fn replace(tx: &WriteTx<'_>, blob: &BlobRow, entries: &[EntryRow]) -> Result<(), StoreError> {
    let c = tx.conn();
    c.execute("DELETE FROM mds_entries", params![])?;
    c.execute("DELETE FROM mds_blob", params![])?;
    c.execute(
        "INSERT INTO mds_blob (id, serial, next_update, sha256, imported_at) VALUES (1, ?1, ?2, ?3, ?4)",
        params![blob.serial, blob.next_update, blob.sha256, blob.imported_at],
    )?;
    for e in entries {
        // A BLOB lists each AAGUID once; should one repeat, the later entry counts.
        c.execute(
            "INSERT INTO mds_entries (aaguid, description, status, roots) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (aaguid) DO UPDATE SET description = excluded.description, status = excluded.status,
             roots = excluded.roots",
            params![e.aaguid, e.description, e.status, encode(&e.roots)],
        )?;
    }
    Ok(())
}

/// The BLOB in force, if one was imported.
pub fn blob(tx: &impl Reader) -> Result<Option<BlobRow>, StoreError> {
    tx.conn().query_opt("SELECT serial, next_update, sha256, imported_at FROM mds_blob WHERE id = 1", params![], |r| {
        Ok(BlobRow { serial: r.get(0)?, next_update: r.get(1)?, sha256: r.get(2)?, imported_at: r.get(3)? })
    })
}

/// The entry of an AAGUID (lower case), if the metadata lists it.
pub fn entry(tx: &impl Reader, aaguid: &str) -> Result<Option<EntryRow>, StoreError> {
    let row: Option<(String, String, String, String)> = tx.conn().query_opt(
        "SELECT aaguid, description, status, roots FROM mds_entries WHERE aaguid = ?1",
        params![aaguid],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
    row.map(|(aaguid, description, status, roots)| Ok(EntryRow { aaguid, description, status, roots: decode(&roots)? }))
        .transpose()
}

/// Every entry's AAGUID and status (for counts and listings).
pub fn statuses(tx: &impl Reader) -> Result<Vec<(String, String)>, StoreError> {
    tx.conn()
        .query_all("SELECT aaguid, status FROM mds_entries ORDER BY aaguid", params![], |r| Ok((r.get(0)?, r.get(1)?)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::temp_db;

    #[test]
    fn a_blob_replaces_the_last_whole() {
        let t = temp_db();
        {
            let blob =
                |serial| BlobRow { serial, next_update: "2026-12-01".into(), sha256: "ab".into(), imported_at: 5 };
            let entry = |a: &str, status: &str| EntryRow {
                aaguid: a.into(),
                description: format!("key {a}"),
                status: status.into(),
                roots: vec![vec![1, 2, 3], vec![4]],
            };
            t.write(|tx| replace(tx, &blob(1), &[entry("a", "FIDO_CERTIFIED"), entry("b", "REVOKED")]).unwrap());
            t.read(|tx| {
                assert_eq!(blob_of(tx), Some(1));
                assert_eq!(entry_of(tx, "a").map(|e| e.roots), Some(vec![vec![1, 2, 3], vec![4]]));
                assert_eq!(statuses(tx).unwrap().len(), 2);
            });
            t.write(|tx| replace(tx, &blob(2), &[entry("c", "FIDO_CERTIFIED_L2")]).unwrap());
            t.read(|tx| {
                assert_eq!(blob_of(tx), Some(2));
                assert_eq!(entry_of(tx, "a"), None);
                assert_eq!(entry_of(tx, "c").map(|e| e.status), Some("FIDO_CERTIFIED_L2".into()));
            });
        }
    }

    fn blob_of(tx: &impl Reader) -> Option<i64> {
        blob(tx).unwrap().map(|b| b.serial)
    }

    fn entry_of(tx: &impl Reader, a: &str) -> Option<EntryRow> {
        entry(tx, a).unwrap()
    }
}
