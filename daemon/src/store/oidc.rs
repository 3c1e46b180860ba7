//! OIDC state: pending authorization requests, authorization codes, refresh tokens, revoked
//! access tokens. Codes and refresh tokens are stored as SHA-256 hashes only.

use rusqlite::{OptionalExtension, params};

use super::users::UserId;
use super::{Reader, StoreError, TenantId, WriteTx};
use crate::clock::Timestamp;

pub fn insert_request(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    id: &str,
    request: &str,
    now: Timestamp,
    expires_at: Timestamp,
) -> Result<(), StoreError> {
    tx.conn_mut().execute(
        "INSERT INTO authorize_requests (id, tenant_id, request, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![id, tenant, request, now, expires_at],
    )?;
    Ok(())
}

/// A pending request: its JSON and when it was made.
pub fn request(
    tx: &impl Reader,
    tenant: TenantId,
    id: &str,
    now: Timestamp,
) -> Result<Option<(String, Timestamp)>, StoreError> {
    Ok(tx
        .conn()
        .query_row(
            "SELECT request, created_at FROM authorize_requests WHERE tenant_id = ?1 AND id = ?2 AND expires_at > ?3",
            params![tenant, id, now],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
}

pub fn delete_request(tx: &WriteTx<'_>, tenant: TenantId, id: &str) -> Result<(), StoreError> {
    tx.conn_mut().execute("DELETE FROM authorize_requests WHERE tenant_id = ?1 AND id = ?2", params![tenant, id])?;
    Ok(())
}

#[derive(Debug, Clone)]
pub struct CodeRow {
    pub client_id: String,
    pub user_id: UserId,
    pub session_id: Option<i64>,
    pub redirect_uri: String,
    pub scope: String,
    pub nonce: Option<String>,
    pub code_challenge: Option<String>,
    pub auth_time: Timestamp,
    pub amr: String,
    pub expires_at: Timestamp,
    pub used_at: Option<Timestamp>,
    pub access_jti: Option<String>,
}

pub fn insert_code(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    hash: &[u8],
    c: &CodeRow,
    now: Timestamp,
) -> Result<(), StoreError> {
    tx.conn_mut().execute(
        "INSERT INTO authorization_codes (code_hash, tenant_id, client_id, user_id, session_id, redirect_uri, scope, nonce,
           code_challenge, auth_time, amr, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        params![
            hash,
            tenant,
            c.client_id,
            c.user_id,
            c.session_id,
            c.redirect_uri,
            c.scope,
            c.nonce,
            c.code_challenge,
            c.auth_time,
            c.amr,
            now,
            c.expires_at
        ],
    )?;
    Ok(())
}

pub fn code(tx: &impl Reader, tenant: TenantId, hash: &[u8]) -> Result<Option<CodeRow>, StoreError> {
    Ok(tx
        .conn()
        .query_row(
            "SELECT client_id, user_id, session_id, redirect_uri, scope, nonce, code_challenge, auth_time, amr, expires_at,
                    used_at, access_jti
             FROM authorization_codes WHERE tenant_id = ?1 AND code_hash = ?2",
            params![tenant, hash],
            |r| {
                Ok(CodeRow {
                    client_id: r.get(0)?,
                    user_id: r.get(1)?,
                    session_id: r.get(2)?,
                    redirect_uri: r.get(3)?,
                    scope: r.get(4)?,
                    nonce: r.get(5)?,
                    code_challenge: r.get(6)?,
                    auth_time: r.get(7)?,
                    amr: r.get(8)?,
                    expires_at: r.get(9)?,
                    used_at: r.get(10)?,
                    access_jti: r.get(11)?,
                })
            },
        )
        .optional()?)
}

/// Marks a code used; false when it already was (a concurrent redemption won).
pub fn use_code(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    hash: &[u8],
    jti: &str,
    now: Timestamp,
) -> Result<bool, StoreError> {
    let n = tx.conn_mut().execute(
        "UPDATE authorization_codes SET used_at = ?3, access_jti = ?4 WHERE tenant_id = ?1 AND code_hash = ?2 AND used_at IS NULL",
        params![tenant, hash, now, jti],
    )?;
    Ok(n == 1)
}

#[derive(Debug, Clone)]
pub struct RefreshRow {
    pub id: i64,
    pub family: String,
    pub client_id: String,
    pub user_id: UserId,
    pub session_id: Option<i64>,
    pub scope: String,
    pub auth_time: Timestamp,
    pub amr: String,
    pub expires_at: Timestamp,
    pub used_at: Option<Timestamp>,
    pub revoked_at: Option<Timestamp>,
}

pub struct NewRefresh<'a> {
    pub hash: &'a [u8],
    pub family: &'a str,
    pub client_id: &'a str,
    pub user_id: UserId,
    pub session_id: Option<i64>,
    pub code_hash: Option<&'a [u8]>,
    pub scope: &'a str,
    pub auth_time: Timestamp,
    pub amr: &'a str,
    pub expires_at: Timestamp,
    /// The access token issued with this refresh token, and when it expires.
    pub access_jti: &'a str,
    pub access_expires_at: Timestamp,
}

pub fn insert_refresh(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    r: &NewRefresh<'_>,
    now: Timestamp,
) -> Result<(), StoreError> {
    tx.conn_mut().execute(
        "INSERT INTO refresh_tokens (tenant_id, token_hash, family, client_id, user_id, session_id, code_hash, scope, auth_time,
           amr, created_at, expires_at, access_jti, access_expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        params![
            tenant,
            r.hash,
            r.family,
            r.client_id,
            r.user_id,
            r.session_id,
            r.code_hash,
            r.scope,
            r.auth_time,
            r.amr,
            now,
            r.expires_at,
            r.access_jti,
            r.access_expires_at
        ],
    )?;
    Ok(())
}

pub fn refresh(tx: &impl Reader, tenant: TenantId, hash: &[u8]) -> Result<Option<RefreshRow>, StoreError> {
    Ok(tx
        .conn()
        .query_row(
            "SELECT id, family, client_id, user_id, session_id, scope, auth_time, amr, expires_at, used_at, revoked_at
             FROM refresh_tokens WHERE tenant_id = ?1 AND token_hash = ?2",
            params![tenant, hash],
            |r| {
                Ok(RefreshRow {
                    id: r.get(0)?,
                    family: r.get(1)?,
                    client_id: r.get(2)?,
                    user_id: r.get(3)?,
                    session_id: r.get(4)?,
                    scope: r.get(5)?,
                    auth_time: r.get(6)?,
                    amr: r.get(7)?,
                    expires_at: r.get(8)?,
                    used_at: r.get(9)?,
                    revoked_at: r.get(10)?,
                })
            },
        )
        .optional()?)
}

/// Marks a refresh token rotated; false when it already was.
pub fn use_refresh(tx: &WriteTx<'_>, tenant: TenantId, id: i64, now: Timestamp) -> Result<bool, StoreError> {
    let n = tx.conn_mut().execute(
        "UPDATE refresh_tokens SET used_at = ?3 WHERE tenant_id = ?1 AND id = ?2 AND used_at IS NULL AND revoked_at IS NULL",
        params![tenant, id, now],
    )?;
    Ok(n == 1)
}

/// Which grants to revoke.
#[derive(Debug, Clone, Copy)]
pub enum Grants<'a> {
    /// One family: every rotation of one grant.
    Family(&'a str),
    /// The family issued from an authorization code.
    Code(&'a [u8]),
    /// Every grant made within a browser session.
    Session(i64),
    /// Every grant of a user.
    User(UserId),
}

/// Revokes the refresh tokens of `grants` and every access token issued with them, in the
/// caller's transaction. Returns how many refresh tokens were revoked.
pub fn revoke_grants(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    grants: Grants<'_>,
    now: Timestamp,
) -> Result<usize, StoreError> {
    let (filter, param): (&str, &dyn rusqlite::ToSql) = match &grants {
        Grants::Family(f) => ("family = ?2", f),
        Grants::Code(c) => ("family IN (SELECT family FROM refresh_tokens WHERE tenant_id = ?1 AND code_hash = ?2)", c),
        Grants::Session(s) => ("session_id = ?2", s),
        Grants::User(u) => ("user_id = ?2", u),
    };
    let c = tx.conn_mut();
    // Access tokens first (from every row of these grants, revoked or not), then the grants.
    c.execute(
        &format!(
            "INSERT OR IGNORE INTO revoked_access_tokens (tenant_id, jti, expires_at)
             SELECT tenant_id, access_jti, access_expires_at FROM refresh_tokens
             WHERE tenant_id = ?1 AND {filter} AND access_jti IS NOT NULL AND access_expires_at > ?3"
        ),
        params![tenant, param, now],
    )?;
    Ok(c.execute(
        &format!("UPDATE refresh_tokens SET revoked_at = ?3 WHERE tenant_id = ?1 AND {filter} AND revoked_at IS NULL"),
        params![tenant, param, now],
    )?)
}

pub fn revoke_access(tx: &WriteTx<'_>, tenant: TenantId, jti: &str, expires_at: Timestamp) -> Result<(), StoreError> {
    tx.conn_mut().execute(
        "INSERT OR IGNORE INTO revoked_access_tokens (tenant_id, jti, expires_at) VALUES (?1, ?2, ?3)",
        params![tenant, jti, expires_at],
    )?;
    Ok(())
}

pub fn access_revoked(tx: &impl Reader, tenant: TenantId, jti: &str) -> Result<bool, StoreError> {
    let n: i64 = tx.conn().query_row(
        "SELECT count(*) FROM revoked_access_tokens WHERE tenant_id = ?1 AND jti = ?2",
        params![tenant, jti],
        |r| r.get(0),
    )?;
    Ok(n > 0)
}

pub fn sweep(tx: &WriteTx<'_>, now: Timestamp) -> Result<usize, StoreError> {
    let c = tx.conn_mut();
    let mut n = c.execute("DELETE FROM authorize_requests WHERE expires_at <= ?1", [now])?;
    n += c.execute("DELETE FROM revoked_access_tokens WHERE expires_at <= ?1", [now])?;
    // Used codes are kept a day to recognise replays; expired refresh tokens go.
    n += c.execute("DELETE FROM authorization_codes WHERE expires_at <= ?1", [now - 86_400])?;
    n += c.execute("DELETE FROM refresh_tokens WHERE expires_at <= ?1", [now])?;
    Ok(n)
}
