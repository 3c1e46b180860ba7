//! `device_codes` table: pending device authorization requests (RFC 8628). Device codes and user
//! codes are stored as SHA-256 hashes only. A device code is consumed by one conditional
//! `UPDATE … WHERE status = 'approved'`, so the tokens are issued once whichever node is polled.

use super::sql::{Conn, ConnExt, Engine, Row, params};

use super::users::UserId;
use super::{DeviceStatus, Reader, StoreError, TenantId, WriteTx};
use crate::Timestamp;

/// A device code to store.
#[derive(Debug, Clone)]
pub struct NewDevice<'a> {
    pub device_hash: &'a [u8],
    pub user_code_hash: &'a [u8],
    pub client_id: &'a str,
    pub scope: &'a str,
    pub interval: i64,
    pub expires_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceRow {
    pub id: i64,
    pub client_id: String,
    pub scope: String,
    pub interval: i64,
    pub last_poll_at: Option<Timestamp>,
    pub status: DeviceStatus,
    pub user_id: Option<UserId>,
    pub session_id: Option<i64>,
    pub auth_time: Option<Timestamp>,
    pub amr: Option<String>,
    pub expires_at: Timestamp,
}

/// The sign-in that approved a device code.
#[derive(Debug, Clone)]
pub struct Approval<'a> {
    pub user_id: UserId,
    pub session_id: i64,
    pub auth_time: Timestamp,
    pub amr: &'a str,
}

const COLUMNS: &str =
    "id, client_id, scope, poll_interval, last_poll_at, status, user_id, session_id, auth_time, amr, expires_at";

fn from_row(r: &Row<'_>) -> Result<DeviceRow, StoreError> {
    Ok(DeviceRow {
        id: r.get(0)?,
        client_id: r.get(1)?,
        scope: r.get(2)?,
        interval: r.get(3)?,
        last_poll_at: r.get(4)?,
        status: r.get(5)?,
        user_id: r.get(6)?,
        session_id: r.get(7)?,
        auth_time: r.get(8)?,
        amr: r.get(9)?,
        expires_at: r.get(10)?,
    })
}

/// Stores a new pending device code. A user code already in use in this tenant is a unique
/// violation: the caller draws another.
pub fn insert(tx: &WriteTx<'_>, tenant: TenantId, d: &NewDevice<'_>, now: Timestamp) -> Result<(), StoreError> {
    tx.conn().execute(
        "INSERT INTO device_codes (tenant_id, device_hash, user_code_hash, client_id, scope, poll_interval, status,
           created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?8)",
        params![tenant, d.device_hash, d.user_code_hash, d.client_id, d.scope, d.interval, now, d.expires_at],
    )?;
    Ok(())
}

/// The pending, unexpired device code of a user code.
pub fn pending_by_user_code(
    tx: &impl Reader,
    tenant: TenantId,
    user_code_hash: &[u8],
    now: Timestamp,
) -> Result<Option<DeviceRow>, StoreError> {
    tx.conn().query_opt(
        &format!(
            "SELECT {COLUMNS} FROM device_codes
             WHERE tenant_id = ?1 AND user_code_hash = ?2 AND status = 'pending' AND expires_at > ?3"
        ),
        params![tenant, user_code_hash, now],
        from_row,
    )
}

/// Approves (`Some`) or denies (`None`) a pending, unexpired device code by its user code; false
/// when there is none (wrong, used or expired code). The user code is single use: only a pending
/// row changes.
pub fn decide(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    user_code_hash: &[u8],
    approval: Option<&Approval<'_>>,
    now: Timestamp,
) -> Result<bool, StoreError> {
    let n = match approval {
        Some(a) => tx.conn().execute(
            "UPDATE device_codes SET status = 'approved', user_id = ?4, session_id = ?5, auth_time = ?6, amr = ?7
             WHERE tenant_id = ?1 AND user_code_hash = ?2 AND status = 'pending' AND expires_at > ?3",
            params![tenant, user_code_hash, now, a.user_id, a.session_id, a.auth_time, a.amr],
        )?,
        None => tx.conn().execute(
            "UPDATE device_codes SET status = 'denied'
             WHERE tenant_id = ?1 AND user_code_hash = ?2 AND status = 'pending' AND expires_at > ?3",
            params![tenant, user_code_hash, now],
        )?,
    };
    Ok(n == 1)
}

/// The device code a client polls with, read for use: on PostgreSQL the row is locked until the
/// transaction ends (`FOR UPDATE`), so concurrent polls of one code on any node queue behind
/// each other, as under SQLite's single writer.
pub fn for_poll(tx: &WriteTx<'_>, tenant: TenantId, device_hash: &[u8]) -> Result<Option<DeviceRow>, StoreError> {
    let plain = format!("SELECT {COLUMNS} FROM device_codes WHERE tenant_id = ?1 AND device_hash = ?2");
    let sql = match tx.conn().engine() {
        Engine::Sqlite => plain,
        Engine::Postgres => format!("{plain} FOR UPDATE"),
    };
    row(tx.conn(), &sql, tenant, device_hash)
}

fn row(c: &dyn Conn, sql: &str, tenant: TenantId, hash: &[u8]) -> Result<Option<DeviceRow>, StoreError> {
    c.query_opt(sql, params![tenant, hash], from_row)
}

/// Records a poll at `now` and the interval the client must keep from now on.
pub fn record_poll(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    id: i64,
    now: Timestamp,
    interval: i64,
) -> Result<(), StoreError> {
    tx.conn().execute(
        "UPDATE device_codes SET last_poll_at = ?3, poll_interval = ?4 WHERE tenant_id = ?1 AND id = ?2",
        params![tenant, id, now, interval],
    )?;
    Ok(())
}

/// Consumes an approved device code; false when it is not (or no longer) approved: a concurrent
/// redemption won.
pub fn redeem(tx: &WriteTx<'_>, tenant: TenantId, id: i64, now: Timestamp) -> Result<bool, StoreError> {
    let n = tx.conn().execute(
        "UPDATE device_codes SET status = 'redeemed', last_poll_at = ?3
         WHERE tenant_id = ?1 AND id = ?2 AND status = 'approved'",
        params![tenant, id, now],
    )?;
    Ok(n == 1)
}

/// Device codes an hour past their expiry: until then a late poll is told `expired_token`.
pub fn sweep(tx: &WriteTx<'_>, now: Timestamp) -> Result<usize, StoreError> {
    tx.conn().execute("DELETE FROM device_codes WHERE expires_at <= ?1", params![now - 3600])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{temp_db, tenant, user};

    fn new<'a>(device: &'a [u8], user_code: &'a [u8], expires_at: Timestamp) -> NewDevice<'a> {
        NewDevice {
            device_hash: device,
            user_code_hash: user_code,
            client_id: "cli",
            scope: "openid offline_access",
            interval: 5,
            expires_at,
        }
    }

    #[test]
    fn approve_once_then_redeem_once() {
        let t = temp_db();
        t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            let ada = user(tx, a, "ada@example.com");
            insert(tx, a, &new(b"dev", b"uc", 100), 10).unwrap();
            assert!(insert(tx, a, &new(b"dev2", b"uc", 100), 10).unwrap_err().is_unique_violation());
            // The same user code is free in another tenant, and invisible there.
            insert(tx, b, &new(b"dev", b"uc", 100), 10).unwrap();
            assert_eq!(pending_by_user_code(tx, a, b"uc", 99).unwrap().map(|r| r.status), Some(DeviceStatus::Pending));
            assert!(pending_by_user_code(tx, a, b"uc", 100).unwrap().is_none(), "expired");
            let approval = Approval { user_id: ada, session_id: 7, auth_time: 9, amr: r#"["hwk"]"# };
            assert!(!decide(tx, a, b"uc", Some(&approval), 100).unwrap(), "expired codes are not approved");
            assert!(decide(tx, a, b"uc", Some(&approval), 20).unwrap());
            assert!(!decide(tx, a, b"uc", None, 21).unwrap(), "a user code is used once");
            assert!(pending_by_user_code(tx, a, b"uc", 21).unwrap().is_none());
            let row = for_poll(tx, a, b"dev").unwrap().unwrap();
            assert_eq!(
                (row.status, row.user_id, row.session_id, row.auth_time, row.amr.as_deref()),
                (DeviceStatus::Approved, Some(ada), Some(7), Some(9), Some(r#"["hwk"]"#))
            );
            record_poll(tx, a, row.id, 30, 10).unwrap();
            let polled = for_poll(tx, a, b"dev").unwrap().unwrap();
            assert_eq!((polled.last_poll_at, polled.interval), (Some(30), 10));
            assert!(!redeem(tx, b, row.id, 31).unwrap(), "another tenant cannot redeem it");
            assert!(redeem(tx, a, row.id, 31).unwrap());
            assert!(!redeem(tx, a, row.id, 32).unwrap(), "redeemed once");
            assert_eq!(for_poll(tx, a, b"dev").unwrap().unwrap().status, DeviceStatus::Redeemed);
            assert_eq!(for_poll(tx, b, b"dev").unwrap().unwrap().status, DeviceStatus::Pending);
        });
    }

    #[test]
    fn denial_and_sweep() {
        let t = temp_db();
        t.write(|tx| {
            let a = tenant(tx, "a");
            insert(tx, a, &new(b"d1", b"u1", 1000), 10).unwrap();
            insert(tx, a, &new(b"d2", b"u2", 5000), 10).unwrap();
            assert!(decide(tx, a, b"u1", None, 20).unwrap());
            let row = for_poll(tx, a, b"d1").unwrap().unwrap();
            assert_eq!((row.status, row.user_id), (DeviceStatus::Denied, None));
            assert!(!redeem(tx, a, row.id, 21).unwrap(), "a denied code is not redeemed");
            assert_eq!(sweep(tx, 1000 + 3599).unwrap(), 0, "kept an hour past expiry");
            assert_eq!(sweep(tx, 1000 + 3600).unwrap(), 1);
            assert!(for_poll(tx, a, b"d1").unwrap().is_none());
            assert!(for_poll(tx, a, b"d2").unwrap().is_some());
        });
    }
}
