//! `signing_keys` table. Private keys arrive and leave sealed; this module never sees plaintext.

use super::sql::{ConnExt, Row, params};

use super::{KeyState, Reader, SigningAlg, StoreError, TenantId, Text, WriteTx, cluster};
use crate::Timestamp;

#[derive(Clone)]
pub struct KeyRow {
    pub kid: String,
    pub state: KeyState,
    pub alg: SigningAlg,
    /// The RSA modulus's size; 256 for ES256 and EdDSA keys.
    pub bits: u32,
    pub sealed_private_key: Vec<u8>,
    pub created_at: Timestamp,
}

impl std::fmt::Debug for KeyRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyRow").field("kid", &self.kid).field("state", &self.state).finish_non_exhaustive()
    }
}

fn from_row(r: &Row<'_>) -> Result<KeyRow, StoreError> {
    Ok(KeyRow {
        kid: r.get(0)?,
        state: r.get::<_, Text<KeyState>>(1)?.0,
        bits: r.get(2)?,
        sealed_private_key: r.get(3)?,
        created_at: r.get(4)?,
        alg: r.get::<_, Text<SigningAlg>>(5)?.0,
    })
}

/// Inserts a key as the tenant's current one of its algorithm; the current key of that algorithm
/// becomes the previous one (stored as `retired`, see `StoredText for KeyState`), still published.
pub fn insert_current(tx: &WriteTx<'_>, tenant: TenantId, key: &KeyRow, now: Timestamp) -> Result<(), StoreError> {
    let alg = Text(key.alg);
    tx.conn().execute(
        "UPDATE signing_keys SET state = 'retired', retired_at = ?2
         WHERE tenant_id = ?1 AND state = 'current' AND alg = ?3",
        params![tenant, now, alg],
    )?;
    tx.conn().execute(
        "INSERT INTO signing_keys (tenant_id, kid, state, bits, private_key, created_at, alg)
         VALUES (?1, ?2, 'current', ?3, ?4, ?5, ?6)",
        params![tenant, key.kid, key.bits, key.sealed_private_key, key.created_at, alg],
    )?;
    cluster::changed(tx.conn(), tenant)
}

/// Inserts a key that is published (in the JWKS) but does not sign yet: the first half of a
/// rotation, so that every node serves the key before any node signs with it ([`promote`]).
pub fn insert_published(tx: &WriteTx<'_>, tenant: TenantId, key: &KeyRow) -> Result<(), StoreError> {
    tx.conn().execute(
        "INSERT INTO signing_keys (tenant_id, kid, state, bits, private_key, created_at, alg)
         VALUES (?1, ?2, 'retired', ?3, ?4, ?5, ?6)",
        params![tenant, key.kid, key.bits, key.sealed_private_key, key.created_at, Text(key.alg)],
    )?;
    cluster::changed(tx.conn(), tenant)
}

/// Makes a published key the current one of its algorithm; the current key of that algorithm
/// becomes the previous one. False when the key is gone (retired meanwhile).
pub fn promote(tx: &WriteTx<'_>, tenant: TenantId, kid: &str, now: Timestamp) -> Result<bool, StoreError> {
    // Checked before the current key steps down, so a tenant is never left without one.
    let published = tx.conn().query_opt(
        "SELECT alg FROM signing_keys WHERE tenant_id = ?1 AND kid = ?2 AND state = 'retired'",
        params![tenant, kid],
        |r| r.get::<_, Text<SigningAlg>>(0),
    )?;
    let Some(alg) = published else { return Ok(false) };
    tx.conn().execute(
        "UPDATE signing_keys SET state = 'retired', retired_at = ?2
         WHERE tenant_id = ?1 AND state = 'current' AND alg = ?3",
        params![tenant, now, alg],
    )?;
    tx.conn().execute(
        "UPDATE signing_keys SET state = 'current', retired_at = NULL WHERE tenant_id = ?1 AND kid = ?2",
        params![tenant, kid],
    )?;
    cluster::changed(tx.conn(), tenant)?;
    Ok(true)
}

/// The tenants without a current RS256 key: created without waiting for one, whose first key is
/// still to be made (`oidc::keygen` in the domain crate), oldest first.
pub fn keyless(tx: &impl Reader) -> Result<Vec<(TenantId, String)>, StoreError> {
    tx.conn().query_all(
        "SELECT t.id, t.slug FROM tenants t WHERE NOT EXISTS (
             SELECT 1 FROM signing_keys k WHERE k.tenant_id = t.id AND k.alg = 'RS256' AND k.state = 'current')
         ORDER BY t.id",
        params![],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// The newest published key of `alg` that does not sign: for a tenant with no current key of
/// `alg`, one whose promotion a stop or crash interrupted ([`promote`] finishes it).
pub fn newest_published(tx: &impl Reader, tenant: TenantId, alg: SigningAlg) -> Result<Option<String>, StoreError> {
    tx.conn().query_opt(
        "SELECT kid FROM signing_keys WHERE tenant_id = ?1 AND alg = ?2 AND state = 'retired'
         ORDER BY created_at DESC, id DESC LIMIT 1",
        params![tenant, Text(alg)],
        |r| r.get(0),
    )
}

/// One tenant holding a sealed key, if any: what the start opens to check the key-encryption key
/// (the first tenant may have none yet).
pub fn first_sealed(tx: &impl Reader) -> Result<Option<TenantId>, StoreError> {
    tx.conn().query_opt("SELECT tenant_id FROM signing_keys ORDER BY id LIMIT 1", params![], |r| r.get(0))
}

/// Whether the tenant has a current key of `alg`.
pub fn has_current(tx: &impl Reader, tenant: TenantId, alg: SigningAlg) -> Result<bool, StoreError> {
    let found = tx.conn().query_opt(
        "SELECT 1 FROM signing_keys WHERE tenant_id = ?1 AND alg = ?2 AND state = 'current'",
        params![tenant, Text(alg)],
        |_| Ok(()),
    )?;
    Ok(found.is_some())
}

/// The tenant's keys: the current RS256 key first (relying parties that take the JWKS's first
/// key keep working), then the other current keys, then the previous ones, newest first.
pub fn list(tx: &impl Reader, tenant: TenantId) -> Result<Vec<KeyRow>, StoreError> {
    let rows = tx.conn().query_all(
        "SELECT kid, state, bits, private_key, created_at, alg FROM signing_keys WHERE tenant_id = ?1
         ORDER BY state = 'current' DESC, alg = 'RS256' DESC, created_at DESC, id DESC",
        params![tenant],
        from_row,
    )?;
    Ok(rows)
}

/// Removes a previous (no longer signing) key and its private key for good. Returns whether a
/// row went; the current key is never removed.
pub fn delete_previous(tx: &WriteTx<'_>, tenant: TenantId, kid: &str) -> Result<bool, StoreError> {
    let n = tx.conn().execute(
        "DELETE FROM signing_keys WHERE tenant_id = ?1 AND kid = ?2 AND state = 'retired'",
        params![tenant, kid],
    )?;
    if n == 1 {
        cluster::changed(tx.conn(), tenant)?;
    }
    Ok(n == 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_corrupt, force, temp_db, tenant};

    fn key(kid: &str, created_at: Timestamp) -> KeyRow {
        KeyRow {
            kid: kid.into(),
            state: KeyState::Previous,
            alg: SigningAlg::RS256,
            bits: 2048,
            sealed_private_key: kid.as_bytes().to_vec(),
            created_at,
        }
    }

    fn states(tx: &impl Reader, tenant: TenantId) -> Vec<(String, KeyState)> {
        list(tx, tenant).unwrap().into_iter().map(|k| (k.kid, k.state)).collect()
    }

    #[test]
    fn a_new_key_is_current_and_retires_the_previous_one() {
        let t = temp_db();
        let a = t.write(|tx| {
            let a = tenant(tx, "a");
            insert_current(tx, a, &key("k1", 1), 1).unwrap();
            a
        });
        let first = t.read(|tx| list(tx, a).unwrap());
        assert_eq!(
            (first[0].kid.as_str(), first[0].state, first[0].bits, first[0].sealed_private_key.as_slice()),
            ("k1", KeyState::Current, 2048, b"k1".as_slice())
        );
        t.write(|tx| {
            insert_current(tx, a, &key("k2", 2), 2).unwrap();
            insert_current(tx, a, &key("k3", 3), 3).unwrap();
        });
        t.read(|tx| {
            assert_eq!(
                states(tx, a),
                [
                    ("k3".to_owned(), KeyState::Current),
                    ("k2".to_owned(), KeyState::Previous),
                    ("k1".to_owned(), KeyState::Previous)
                ]
            );
            let retired_at: Option<i64> = tx
                .conn()
                .query_one("SELECT retired_at FROM signing_keys WHERE kid = 'k1'", params![], |r| r.get(0))
                .unwrap();
            assert_eq!(retired_at, Some(2));
            let stored: String = tx
                .conn()
                .query_one("SELECT state FROM signing_keys WHERE kid = 'k3'", params![], |r| r.get(0))
                .unwrap();
            assert_eq!(stored, "current");
        });
    }

    #[test]
    fn keyless_tenants_are_found_and_an_interrupted_promotion_is_finished() {
        let t = temp_db();
        let (a, b, c) = t.write(|tx| {
            let (a, b, c) = (tenant(tx, "a"), tenant(tx, "b"), tenant(tx, "c"));
            insert_current(tx, a, &key("ka", 1), 1).unwrap();
            // b was stopped between the two steps of its first key; c has only an ES256 key.
            insert_published(tx, b, &key("kb", 2)).unwrap();
            insert_current(tx, c, &KeyRow { alg: SigningAlg::ES256, bits: 256, ..key("kc", 3) }, 3).unwrap();
            (a, b, c)
        });
        t.read(|tx| {
            assert_eq!(keyless(tx).unwrap(), [(b, "b".to_owned()), (c, "c".to_owned())]);
            assert_eq!(newest_published(tx, b, SigningAlg::RS256).unwrap().as_deref(), Some("kb"));
            assert_eq!(newest_published(tx, c, SigningAlg::RS256).unwrap(), None);
            assert_eq!(first_sealed(tx).unwrap(), Some(a));
        });
        t.write(|tx| assert!(promote(tx, b, "kb", 4).unwrap()));
        t.read(|tx| assert_eq!(keyless(tx).unwrap(), [(c, "c".to_owned())]));
    }

    #[test]
    fn each_algorithm_has_its_own_current_key() {
        let t = temp_db();
        let alg = |kid: &str, at: Timestamp, alg: SigningAlg| KeyRow { alg, bits: 256, ..key(kid, at) };
        let a = t.write(|tx| {
            let a = tenant(tx, "a");
            insert_current(tx, a, &key("r1", 1), 1).unwrap();
            assert!(!has_current(tx, a, SigningAlg::ES256).unwrap());
            insert_current(tx, a, &alg("e1", 2, SigningAlg::ES256), 2).unwrap();
            insert_current(tx, a, &alg("d1", 3, SigningAlg::EdDSA), 3).unwrap();
            // A second ES256 key retires the first ES256 key only.
            insert_published(tx, a, &alg("e2", 4, SigningAlg::ES256)).unwrap();
            assert!(promote(tx, a, "e2", 5).unwrap());
            a
        });
        t.read(|tx| {
            let keys = list(tx, a).unwrap();
            let seen: Vec<(&str, KeyState, SigningAlg)> =
                keys.iter().map(|k| (k.kid.as_str(), k.state, k.alg)).collect();
            assert_eq!(
                seen,
                [
                    ("r1", KeyState::Current, SigningAlg::RS256),
                    ("e2", KeyState::Current, SigningAlg::ES256),
                    ("d1", KeyState::Current, SigningAlg::EdDSA),
                    ("e1", KeyState::Previous, SigningAlg::ES256),
                ]
            );
            for a_ in SigningAlg::ALL {
                assert!(has_current(tx, a, a_).unwrap());
            }
        });
        // Two current keys of one algorithm cannot be stored.
        let two = t.db.write_blocking(|tx| {
            tx.conn().execute("UPDATE signing_keys SET state = 'current' WHERE kid = 'e1'", params![])
        });
        assert!(two.is_err());
    }

    #[test]
    fn only_previous_keys_are_deleted() {
        let t = temp_db();
        let a = t.write(|tx| {
            let a = tenant(tx, "a");
            insert_current(tx, a, &key("k1", 1), 1).unwrap();
            insert_current(tx, a, &key("k2", 2), 2).unwrap();
            a
        });
        t.write(|tx| {
            assert!(!delete_previous(tx, a, "k2").unwrap(), "the current key stays");
            assert!(delete_previous(tx, a, "k1").unwrap());
            assert!(!delete_previous(tx, a, "k1").unwrap());
            assert!(!delete_previous(tx, a, "missing").unwrap());
            assert_eq!(states(tx, a), [("k2".to_owned(), KeyState::Current)]);
        });
    }

    #[test]
    fn another_tenant_cannot_see_retire_or_delete_keys() {
        let t = temp_db();
        let (a, b) = t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            insert_current(tx, a, &key("old", 1), 1).unwrap();
            insert_current(tx, a, &key("cur", 2), 2).unwrap();
            (a, b)
        });
        t.write(|tx| {
            assert!(list(tx, b).unwrap().is_empty());
            assert!(!delete_previous(tx, b, "old").unwrap());
            // B's first key does not retire A's current one, and may reuse a kid.
            insert_current(tx, b, &key("cur", 3), 3).unwrap();
        });
        t.read(|tx| {
            assert_eq!(states(tx, a), [("cur".to_owned(), KeyState::Current), ("old".to_owned(), KeyState::Previous)]);
            assert_eq!(states(tx, b), [("cur".to_owned(), KeyState::Current)]);
        });
    }

    #[test]
    fn unknown_state_is_corrupt() {
        let t = temp_db();
        let a = t.write(|tx| {
            let a = tenant(tx, "a");
            insert_current(tx, a, &key("k1", 1), 1).unwrap();
            insert_current(tx, a, &key("k2", 2), 2).unwrap();
            force(tx, "UPDATE signing_keys SET state = 'revoked' WHERE kid = 'k1'");
            a
        });
        t.read(|tx| assert_corrupt(list(tx, a), "signing_keys.state"));
    }
}
