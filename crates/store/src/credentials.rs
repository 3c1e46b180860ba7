//! `credentials` table: a user's registered passkeys and security keys.

use super::sql::{ConnExt, Row, params};
use super::types::UserId;
use super::{CredentialKind, Reader, StoreError, TenantId, WriteTx};
use crate::Timestamp;

#[derive(Debug, Clone)]
pub struct CredentialRow {
    pub user_id: UserId,
    pub credential_id: Vec<u8>,
    /// webauthn-rs `Passkey`, JSON.
    pub passkey: String,
    pub kind: CredentialKind,
    pub aaguid: Option<Vec<u8>>,
    pub device: String,
    pub name: String,
    pub backup_eligible: bool,
    pub backed_up: bool,
    pub sign_count: u32,
    pub created_at: Timestamp,
    pub last_used_at: Option<Timestamp>,
}

pub(super) const COLUMNS: &str = "user_id, credential_id, passkey, kind, aaguid, device, name, backup_eligible, \
                                  backed_up, sign_count, created_at, last_used_at";
/// How many columns [`COLUMNS`] names: a joined row's next table starts there.
pub(super) const WIDTH: usize = 12;

fn from_row(r: &Row<'_>) -> Result<CredentialRow, StoreError> {
    from_row_at(r, 0)
}

/// A credential from [`COLUMNS`] starting at column `at` (a joined row).
pub(super) fn from_row_at(r: &Row<'_>, at: usize) -> Result<CredentialRow, StoreError> {
    Ok(CredentialRow {
        user_id: r.get(at)?,
        credential_id: r.get(at + 1)?,
        passkey: r.get(at + 2)?,
        kind: r.get(at + 3)?,
        aaguid: r.get(at + 4)?,
        device: r.get(at + 5)?,
        name: r.get(at + 6)?,
        backup_eligible: r.get(at + 7)?,
        backed_up: r.get(at + 8)?,
        sign_count: r.get(at + 9)?,
        created_at: r.get(at + 10)?,
        last_used_at: r.get(at + 11)?,
    })
}

pub fn insert(tx: &WriteTx<'_>, tenant: TenantId, c: &CredentialRow) -> Result<(), StoreError> {
    tx.conn().execute(&format!(
            "INSERT INTO credentials (tenant_id, {COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
        ),
        params![
            tenant,
            c.user_id,
            c.credential_id,
            c.passkey,
            c.kind,
            c.aaguid,
            c.device,
            c.name,
            c.backup_eligible,
            c.backed_up,
            c.sign_count,
            c.created_at,
            c.last_used_at
        ],
    )?;
    Ok(())
}

/// A user's credentials, oldest first.
pub fn for_user(tx: &impl Reader, tenant: TenantId, user: UserId) -> Result<Vec<CredentialRow>, StoreError> {
    let sql =
        format!("SELECT {COLUMNS} FROM credentials WHERE tenant_id = ?1 AND user_id = ?2 ORDER BY created_at, id");
    let rows = tx.conn().query_all(&sql, params![tenant, user], from_row)?;
    Ok(rows)
}

pub fn by_credential_id(tx: &impl Reader, tenant: TenantId, id: &[u8]) -> Result<Option<CredentialRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM credentials WHERE tenant_id = ?1 AND credential_id = ?2");
    tx.conn().query_opt(&sql, params![tenant, id], from_row)
}

/// Records a verified sign-in: the counter and backup flags it reported (these columns, not the
/// `passkey` JSON, are what the next sign-in checks against) and when.
pub fn record_use(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    id: &[u8],
    sign_count: u32,
    backup_eligible: bool,
    backed_up: bool,
    now: Timestamp,
) -> Result<(), StoreError> {
    // Sign-ins with one credential may verify in parallel: the one with the lower counter must
    // not overwrite a higher one stored meanwhile (counters only go up; zero means "no counter").
    // Backup eligibility may only be gained.
    tx.conn().execute(
        "UPDATE credentials SET sign_count = ?3, backup_eligible = (backup_eligible OR ?4), backed_up = ?5,
             last_used_at = ?6
         WHERE tenant_id = ?1 AND credential_id = ?2 AND sign_count <= ?3",
        params![tenant, id, sign_count, backup_eligible, backed_up, now],
    )?;
    Ok(())
}

pub fn rename(tx: &WriteTx<'_>, tenant: TenantId, user: UserId, id: &[u8], name: &str) -> Result<bool, StoreError> {
    let n = tx.conn().execute(
        "UPDATE credentials SET name = ?4 WHERE tenant_id = ?1 AND user_id = ?2 AND credential_id = ?3",
        params![tenant, user, id, name],
    )?;
    Ok(n == 1)
}

pub fn delete(tx: &WriteTx<'_>, tenant: TenantId, user: UserId, id: &[u8]) -> Result<bool, StoreError> {
    let n = tx.conn().execute(
        "DELETE FROM credentials WHERE tenant_id = ?1 AND user_id = ?2 AND credential_id = ?3",
        params![tenant, user, id],
    )?;
    Ok(n == 1)
}

pub fn count_for_user(tx: &impl Reader, tenant: TenantId, user: UserId) -> Result<u64, StoreError> {
    let n: i64 = tx.conn().query_one(
        "SELECT count(*) FROM credentials WHERE tenant_id = ?1 AND user_id = ?2",
        params![tenant, user],
        |r| r.get(0),
    )?;
    Ok(n.max(0) as u64)
}

/// Number of credentials per user in a tenant, in one query.
pub fn counts_by_user(
    tx: &impl Reader,
    tenant: TenantId,
) -> Result<std::collections::HashMap<UserId, u64>, StoreError> {
    let mut counts = std::collections::HashMap::new();
    tx.conn().query(
        "SELECT user_id, count(*) FROM credentials WHERE tenant_id = ?1 GROUP BY user_id",
        params![tenant],
        &mut |r| {
            counts.insert(r.get::<_, UserId>(0)?, r.get::<_, i64>(1)?.max(0) as u64);
            Ok(true)
        },
    )?;
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_corrupt, credential_row, force, temp_db, tenant, user};

    #[test]
    fn insert_and_read_back() {
        let t = temp_db();
        let mut cred = credential_row(UserId(0), b"id-1");
        let (a, ada) = t.write(|tx| {
            let a = tenant(tx, "a");
            let ada = user(tx, a, "ada@example.com");
            cred.user_id = ada;
            cred.kind = CredentialKind::Roaming;
            cred.aaguid = Some(vec![7; 16]);
            cred.sign_count = 3;
            cred.last_used_at = Some(9);
            insert(tx, a, &cred).unwrap();
            (a, ada)
        });
        let got = t.read(|tx| by_credential_id(tx, a, b"id-1").unwrap().unwrap());
        assert_eq!(format!("{got:?}"), format!("{cred:?}"));
        assert_eq!(t.read(|tx| for_user(tx, a, ada).unwrap()).len(), 1);
        assert!(t.read(|tx| by_credential_id(tx, a, b"id-2").unwrap()).is_none());
        let stored: String =
            t.read(|tx| tx.conn().query_one("SELECT kind FROM credentials", params![], |r| r.get(0)).unwrap());
        assert_eq!(stored, "roaming");
    }

    #[test]
    fn per_user_lists_and_counts() {
        let t = temp_db();
        let (a, ada, bob, carol) = t.write(|tx| {
            let a = tenant(tx, "a");
            let ada = user(tx, a, "ada@example.com");
            let bob = user(tx, a, "bob@example.com");
            let carol = user(tx, a, "carol@example.com");
            insert(tx, a, &CredentialRow { created_at: 5, ..credential_row(ada, b"late") }).unwrap();
            insert(tx, a, &CredentialRow { created_at: 2, ..credential_row(ada, b"early") }).unwrap();
            insert(tx, a, &CredentialRow { created_at: 5, ..credential_row(ada, b"later-id") }).unwrap();
            insert(tx, a, &credential_row(bob, b"bob")).unwrap();
            (a, ada, bob, carol)
        });
        t.read(|tx| {
            let ids: Vec<Vec<u8>> = for_user(tx, a, ada).unwrap().into_iter().map(|c| c.credential_id).collect();
            assert_eq!(ids, [b"early".to_vec(), b"late".to_vec(), b"later-id".to_vec()]);
            assert_eq!(count_for_user(tx, a, ada).unwrap(), 3);
            assert_eq!(count_for_user(tx, a, bob).unwrap(), 1);
            assert_eq!(count_for_user(tx, a, carol).unwrap(), 0);
            assert!(for_user(tx, a, carol).unwrap().is_empty());
            let counts = counts_by_user(tx, a).unwrap();
            assert_eq!(counts, [(ada, 3), (bob, 1)].into_iter().collect());
        });
    }

    #[test]
    fn record_use_rename_and_delete() {
        let t = temp_db();
        let (a, ada, bob) = t.write(|tx| {
            let a = tenant(tx, "a");
            let ada = user(tx, a, "ada@example.com");
            let bob = user(tx, a, "bob@example.com");
            insert(tx, a, &credential_row(ada, b"c")).unwrap();
            insert(tx, a, &credential_row(ada, b"d")).unwrap();
            (a, ada, bob)
        });
        t.write(|tx| record_use(tx, a, b"c", 8, true, true, 30).unwrap());
        let c = t.read(|tx| by_credential_id(tx, a, b"c").unwrap().unwrap());
        assert_eq!((c.sign_count, c.backup_eligible, c.backed_up, c.last_used_at), (8, true, true, Some(30)));
        // A lower counter (a slower sign-in verified in parallel) changes nothing; eligibility stays.
        t.write(|tx| record_use(tx, a, b"c", 7, false, false, 31).unwrap());
        let c = t.read(|tx| by_credential_id(tx, a, b"c").unwrap().unwrap());
        assert_eq!((c.sign_count, c.backup_eligible, c.backed_up, c.last_used_at), (8, true, true, Some(30)));
        let d = t.read(|tx| by_credential_id(tx, a, b"d").unwrap().unwrap());
        assert_eq!((d.passkey.as_str(), d.sign_count, d.last_used_at), ("{}", 0, None));
        t.write(|tx| {
            // Only the owner renames or deletes.
            assert!(!rename(tx, a, bob, b"c", "Stolen").unwrap());
            assert!(!delete(tx, a, bob, b"c").unwrap());
            assert!(rename(tx, a, ada, b"c", "Phone").unwrap());
            assert!(!rename(tx, a, ada, b"missing", "Phone").unwrap());
            assert_eq!(by_credential_id(tx, a, b"c").unwrap().unwrap().name, "Phone");
            assert!(delete(tx, a, ada, b"c").unwrap());
            assert!(!delete(tx, a, ada, b"c").unwrap());
            assert!(by_credential_id(tx, a, b"c").unwrap().is_none());
            assert_eq!(count_for_user(tx, a, ada).unwrap(), 1);
        });
    }

    #[test]
    fn another_tenant_cannot_read_change_or_delete_a_credential() {
        let t = temp_db();
        let (a, b, ada) = t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            let ada = user(tx, a, "ada@example.com");
            insert(tx, a, &credential_row(ada, b"c")).unwrap();
            (a, b, ada)
        });
        let before = t.read(|tx| format!("{:?}", by_credential_id(tx, a, b"c").unwrap()));
        t.write(|tx| {
            assert!(by_credential_id(tx, b, b"c").unwrap().is_none());
            assert!(for_user(tx, b, ada).unwrap().is_empty());
            assert_eq!(count_for_user(tx, b, ada).unwrap(), 0);
            assert!(counts_by_user(tx, b).unwrap().is_empty());
            record_use(tx, b, b"c", 99, true, true, 99).unwrap();
            assert!(!rename(tx, b, ada, b"c", "Evil").unwrap());
            assert!(!delete(tx, b, ada, b"c").unwrap());
        });
        assert_eq!(t.read(|tx| format!("{:?}", by_credential_id(tx, a, b"c").unwrap())), before);
        // A credential id is unique within a tenant only.
        t.write(|tx| {
            assert!(insert(tx, a, &credential_row(ada, b"c")).unwrap_err().is_unique_violation());
            let eve = user(tx, b, "eve@example.com");
            insert(tx, b, &credential_row(eve, b"c")).unwrap();
            assert_eq!(by_credential_id(tx, b, b"c").unwrap().unwrap().user_id, eve);
            assert_eq!(by_credential_id(tx, a, b"c").unwrap().unwrap().user_id, ada);
        });
    }

    #[test]
    fn unknown_kind_is_corrupt() {
        let t = temp_db();
        let (a, ada) = t.write(|tx| {
            let a = tenant(tx, "a");
            let ada = user(tx, a, "ada@example.com");
            insert(tx, a, &credential_row(ada, b"c")).unwrap();
            force(tx, "UPDATE credentials SET kind = 'hybrid'");
            (a, ada)
        });
        t.read(|tx| {
            assert_corrupt(by_credential_id(tx, a, b"c"), "credentials.kind");
            assert_corrupt(for_user(tx, a, ada), "credentials.kind");
        });
    }
}
