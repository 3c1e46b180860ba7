//! OIDC state: pending authorization requests, authorization codes, refresh tokens, revoked
//! access tokens. Codes and refresh tokens are stored as SHA-256 hashes only.

use super::sql::{Conn, ConnExt, Engine, ToValue, params};

use super::types::UserId;
use super::{Reader, StoreError, TenantId, WriteTx};
use crate::Timestamp;

pub fn insert_request(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    id: &str,
    request: &str,
    now: Timestamp,
    expires_at: Timestamp,
) -> Result<(), StoreError> {
    tx.conn().execute(
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
    tx.conn().query_opt(
        "SELECT request, created_at FROM authorize_requests WHERE tenant_id = ?1 AND id = ?2 AND expires_at > ?3",
        params![tenant, id, now],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Replaces a pending request's JSON (the user chose another account: the session it saw no
/// longer counts). False when the request is gone.
pub fn update_request(tx: &WriteTx<'_>, tenant: TenantId, id: &str, request: &str) -> Result<bool, StoreError> {
    let n = tx.conn().execute(
        "UPDATE authorize_requests SET request = ?3 WHERE tenant_id = ?1 AND id = ?2",
        params![tenant, id, request],
    )?;
    Ok(n == 1)
}

/// Deletes a pending authorization request; `false` when it was gone already. The caller issues
/// a code only on `true`, so a request resumed twice at once (two tabs, two nodes of one
/// database) yields one code, whatever the transaction isolation.
pub fn delete_request(tx: &WriteTx<'_>, tenant: TenantId, id: &str) -> Result<bool, StoreError> {
    let n =
        tx.conn().execute("DELETE FROM authorize_requests WHERE tenant_id = ?1 AND id = ?2", params![tenant, id])?;
    Ok(n == 1)
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
    /// The refresh-token family its redemption started (codes redeemed by earlier releases: none).
    pub family: Option<String>,
    /// The claims the request asked for beyond its scopes (JSON; the domain reads it).
    pub claims: Option<String>,
}

pub fn insert_code(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    hash: &[u8],
    c: &CodeRow,
    now: Timestamp,
) -> Result<(), StoreError> {
    tx.conn().execute(
        "INSERT INTO authorization_codes (code_hash, tenant_id, client_id, user_id, session_id, redirect_uri, scope, nonce,
           code_challenge, auth_time, amr, created_at, expires_at, claims)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
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
            c.expires_at,
            c.claims
        ],
    )?;
    Ok(())
}

macro_rules! select_code {
    () => {
        "SELECT client_id, user_id, session_id, redirect_uri, scope, nonce, code_challenge, auth_time, amr, expires_at,
                used_at, access_jti, family, claims
         FROM authorization_codes WHERE tenant_id = ?1 AND code_hash = ?2"
    };
}

macro_rules! select_refresh {
    () => {
        "SELECT id, family, client_id, user_id, session_id, scope, auth_time, amr, expires_at, used_at, revoked_at,
                claims, offline,
                (SELECT s.expires_at FROM sessions s WHERE s.id = refresh_tokens.session_id), dpop_jkt
         FROM refresh_tokens WHERE tenant_id = ?1 AND token_hash = ?2"
    };
}

/// The row of a statement read for redemption: on PostgreSQL it is locked (`FOR UPDATE`) until
/// the transaction ends, so concurrent redemptions of one code or refresh token, on any node,
/// queue behind each other and each sees the previous one's outcome — the order SQLite's single
/// writer gives. Without it, a reuse that revokes the family and the rotation it races take
/// their row locks in different orders and PostgreSQL aborts one as a deadlock.
fn for_use<'s>(tx: &WriteTx<'_>, plain: &'s str, locked: &'s str) -> &'s str {
    match tx.conn().engine() {
        Engine::Sqlite => plain,
        Engine::Postgres => locked,
    }
}

pub fn code(tx: &impl Reader, tenant: TenantId, hash: &[u8]) -> Result<Option<CodeRow>, StoreError> {
    code_row(tx.conn(), select_code!(), tenant, hash)
}

/// [`code`] for redemption, the row locked on PostgreSQL (see `for_use`).
pub fn code_for_use(tx: &WriteTx<'_>, tenant: TenantId, hash: &[u8]) -> Result<Option<CodeRow>, StoreError> {
    code_row(tx.conn(), for_use(tx, select_code!(), concat!(select_code!(), " FOR UPDATE")), tenant, hash)
}

fn code_row(c: &dyn Conn, sql: &str, tenant: TenantId, hash: &[u8]) -> Result<Option<CodeRow>, StoreError> {
    c.query_opt(sql, params![tenant, hash], |r| {
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
            family: r.get(12)?,
            claims: r.get(13)?,
        })
    })
}

/// Marks a code used; false when it already was (a concurrent redemption won).
pub fn use_code(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    hash: &[u8],
    jti: &str,
    family: &str,
    now: Timestamp,
) -> Result<bool, StoreError> {
    let n = tx.conn().execute(
        "UPDATE authorization_codes SET used_at = ?3, access_jti = ?4, family = ?5
         WHERE tenant_id = ?1 AND code_hash = ?2 AND used_at IS NULL",
        params![tenant, hash, now, jti, family],
    )?;
    Ok(n == 1)
}

/// PostgreSQL's redemption and rotation in one statement: `WITH used AS (<the update>)`, the
/// update an `UPDATE … RETURNING tenant_id` of the tenant `?1` and the row `?18`, then the refresh
/// token inserted only if the update changed a row. The insert's parameters, which the update may
/// use too: `?2` the family, `?11` now, `?13` the access token's id (see [`insert_refresh_if`]).
/// They are cast in the select list: bare, they would be typed as text.
///
/// The statement also answers with the refresh token `?3` when it is stored already: the same
/// statement run again after its first run committed and only the reply was lost (the pool runs
/// it again when its connection turns out closed). Nothing else stores that token, which is
/// random and made for this request, so it is this redemption's own, not a reuse to punish. The
/// two halves never both answer: the lookup reads the statement's snapshot, which does not see
/// the row the insert adds.
macro_rules! refresh_if {
    ($used:literal) => {
        concat!(
            "WITH used AS (",
            $used,
            "), made AS (
             INSERT INTO refresh_tokens (tenant_id, family, token_hash, client_id, user_id, session_id, code_hash,
                 scope, auth_time, amr, created_at, expires_at, access_jti, access_expires_at, claims, offline,
                 dpop_jkt)
             SELECT tenant_id, CAST(?2 AS TEXT), CAST(?3 AS BYTEA), CAST(?4 AS TEXT), CAST(?5 AS BIGINT),
                    CAST(?6 AS BIGINT), CAST(?7 AS BYTEA), CAST(?8 AS TEXT), CAST(?9 AS BIGINT), CAST(?10 AS TEXT),
                    CAST(?11 AS BIGINT), CAST(?12 AS BIGINT), CAST(?13 AS TEXT), CAST(?14 AS BIGINT),
                    CAST(?15 AS TEXT), CAST(?16 AS BOOLEAN), CAST(?17 AS TEXT)
             FROM used RETURNING id)
             SELECT id FROM made
             UNION ALL
             SELECT id FROM refresh_tokens
             WHERE tenant_id = ?1 AND token_hash = CAST(?3 AS BYTEA) AND family = CAST(?2 AS TEXT)"
        )
    };
}

/// Runs a [`refresh_if`] statement for the refresh token `r` and the updated row `key`; whether
/// `r` is stored (inserted now, or by this statement's earlier run). A data-modifying `WITH`
/// commits on its own through [`super::Db::write_one`].
fn insert_refresh_if(
    tx: &WriteTx<'_>,
    sql: &str,
    tenant: TenantId,
    key: &dyn ToValue,
    r: &NewRefresh<'_>,
    now: Timestamp,
) -> Result<bool, StoreError> {
    let mut params = refresh_values(&tenant, r, &now).to_vec();
    params.push(key);
    let id: Option<i64> = tx.conn().query_opt(sql, &params, |row| row.get(0))?;
    Ok(id.is_some())
}

/// Whether the refresh token `r` is stored: on SQLite, what [`refresh_if`]'s lookup answers on
/// PostgreSQL, asked only once the update found its row taken (the writer thread never runs a
/// write twice, so it answers false there; kept alike so both engines keep one contract).
fn stored_already(tx: &WriteTx<'_>, tenant: TenantId, r: &NewRefresh<'_>) -> Result<bool, StoreError> {
    let id: Option<i64> = tx.conn().query_opt(
        "SELECT id FROM refresh_tokens WHERE tenant_id = ?1 AND token_hash = ?2 AND family = ?3",
        params![tenant, r.hash, r.family],
        |row| row.get(0),
    )?;
    Ok(id.is_some())
}

/// Redeems a code: marks it used and stores the refresh token issued for it, both or neither;
/// false (and nothing changed) when the code was used already (a concurrent redemption won).
/// True, changing nothing, when this very redemption (`r`) is stored already: a retry of a
/// statement whose first run committed (see `refresh_if`), never a reuse.
/// On PostgreSQL one statement (a data-modifying `WITH`) that commits on its own through
/// [`super::Db::write_one`]: the insert runs only if the update took the code, and of two
/// concurrent redemptions the second's update waits for the first's commit and then finds the
/// code used. SQLite runs the two statements in the caller's transaction. `r.code_hash` must be
/// `hash`, and `r.family` and `r.access_jti` are recorded with the code, so that a replay of the
/// code can revoke them.
pub fn redeem_code(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    hash: &[u8],
    r: &NewRefresh<'_>,
    now: Timestamp,
) -> Result<bool, StoreError> {
    if tx.conn().engine() == Engine::Sqlite {
        if !use_code(tx, tenant, hash, r.access_jti, r.family, now)? {
            return stored_already(tx, tenant, r);
        }
        insert_refresh(tx, tenant, r, now)?;
        return Ok(true);
    }
    let sql = refresh_if!(
        "UPDATE authorization_codes SET used_at = ?11, access_jti = ?13, family = ?2
         WHERE tenant_id = ?1 AND code_hash = ?18 AND used_at IS NULL RETURNING tenant_id"
    );
    insert_refresh_if(tx, sql, tenant, &hash, r, now)
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
    /// As [`CodeRow::claims`], carried from the code to every refresh token of the grant.
    pub claims: Option<String>,
    /// Granted `offline_access`: the end of its session does not revoke it.
    pub offline: bool,
    /// When the browser session it was granted in ends; `None` once that session is gone.
    pub session_expires_at: Option<Timestamp>,
    /// The thumbprint of the DPoP key a public client's refresh token is bound to.
    pub dpop_jkt: Option<String>,
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
    pub claims: Option<&'a str>,
    pub offline: bool,
    /// The DPoP key it is bound to (RFC 9449 §5: public clients' refresh tokens).
    pub dpop_jkt: Option<&'a str>,
}

pub fn insert_refresh(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    r: &NewRefresh<'_>,
    now: Timestamp,
) -> Result<(), StoreError> {
    tx.conn().execute(
        "INSERT INTO refresh_tokens (tenant_id, family, token_hash, client_id, user_id, session_id, code_hash, scope,
             auth_time, amr, created_at, expires_at, access_jti, access_expires_at, claims, offline, dpop_jkt)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        &refresh_values(&tenant, r, &now),
    )?;
    Ok(())
}

/// A new refresh token's columns, in the order of [`insert_refresh`]'s and [`refresh_if`]'s.
fn refresh_values<'a>(tenant: &'a TenantId, r: &'a NewRefresh<'a>, now: &'a Timestamp) -> [&'a dyn ToValue; 17] {
    [
        tenant,
        &r.family,
        &r.hash,
        &r.client_id,
        &r.user_id,
        &r.session_id,
        &r.code_hash,
        &r.scope,
        &r.auth_time,
        &r.amr,
        now,
        &r.expires_at,
        &r.access_jti,
        &r.access_expires_at,
        &r.claims,
        &r.offline,
        &r.dpop_jkt,
    ]
}

pub fn refresh(tx: &impl Reader, tenant: TenantId, hash: &[u8]) -> Result<Option<RefreshRow>, StoreError> {
    refresh_row(tx.conn(), select_refresh!(), tenant, hash)
}

/// [`refresh`] for rotation, the row locked on PostgreSQL (see `for_use`).
pub fn refresh_for_use(tx: &WriteTx<'_>, tenant: TenantId, hash: &[u8]) -> Result<Option<RefreshRow>, StoreError> {
    refresh_row(tx.conn(), for_use(tx, select_refresh!(), concat!(select_refresh!(), " FOR UPDATE")), tenant, hash)
}

fn refresh_row(c: &dyn Conn, sql: &str, tenant: TenantId, hash: &[u8]) -> Result<Option<RefreshRow>, StoreError> {
    c.query_opt(sql, params![tenant, hash], |r| {
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
            claims: r.get(11)?,
            offline: r.get(12)?,
            session_expires_at: r.get(13)?,
            dpop_jkt: r.get(14)?,
        })
    })
}

/// Marks a refresh token rotated; false when it already was.
pub fn use_refresh(tx: &WriteTx<'_>, tenant: TenantId, id: i64, now: Timestamp) -> Result<bool, StoreError> {
    let n = tx.conn().execute(
        "UPDATE refresh_tokens SET used_at = ?3 WHERE tenant_id = ?1 AND id = ?2 AND used_at IS NULL AND revoked_at IS NULL",
        params![tenant, id, now],
    )?;
    Ok(n == 1)
}

/// Rotates the refresh token `id`: marks it used and stores its successor `r`, both or neither;
/// false (and nothing changed) when it was used or revoked already (a concurrent rotation or
/// revocation won). True, changing nothing, when this very rotation (`r`) is stored already, as
/// for [`redeem_code`]. On PostgreSQL one statement (a data-modifying `WITH`) that commits on its own
/// through [`super::Db::write_one`]: the insert runs only if the update took the token, and of
/// two concurrent rotations the second's update waits for the first's commit and then finds the
/// token used. SQLite runs the two statements in the caller's transaction. `r.family` must be the
/// rotated token's.
pub fn rotate_refresh(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    id: i64,
    r: &NewRefresh<'_>,
    now: Timestamp,
) -> Result<bool, StoreError> {
    if tx.conn().engine() == Engine::Sqlite {
        if !use_refresh(tx, tenant, id, now)? {
            return stored_already(tx, tenant, r);
        }
        insert_refresh(tx, tenant, r, now)?;
        return Ok(true);
    }
    let sql = refresh_if!(
        "UPDATE refresh_tokens SET used_at = ?11
         WHERE tenant_id = ?1 AND id = ?18 AND used_at IS NULL AND revoked_at IS NULL RETURNING tenant_id"
    );
    insert_refresh_if(tx, sql, tenant, &id, r, now)
}

/// Which grants to revoke.
#[derive(Debug, Clone, Copy)]
pub enum Grants<'a> {
    /// One family: every rotation of one grant.
    Family(&'a str),
    /// The family issued from an authorization code, found by searching the tenant's refresh
    /// tokens: only for a code redeemed before its row recorded the family (migration 0009).
    Code(&'a [u8]),
    /// Every grant made within a browser session, but those granted `offline_access`, which
    /// outlive it.
    Session(i64),
    /// Every grant of a user.
    User(UserId),
}

/// The refresh token families a user holds with an application that are not revoked.
pub fn live_families(
    tx: &impl Reader,
    tenant: TenantId,
    user: UserId,
    client_id: &str,
) -> Result<Vec<String>, StoreError> {
    tx.conn().query_all(
        "SELECT DISTINCT family FROM refresh_tokens
         WHERE tenant_id = ?1 AND user_id = ?2 AND client_id = ?3 AND revoked_at IS NULL",
        params![tenant, user, client_id],
        |r| r.get(0),
    )
}

/// Revokes the refresh tokens of `grants` and every access token issued with them, in the
/// caller's transaction. Returns how many refresh tokens were revoked.
pub fn revoke_grants(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    grants: Grants<'_>,
    now: Timestamp,
) -> Result<usize, StoreError> {
    let (filter, param): (&str, &dyn ToValue) = match &grants {
        Grants::Family(f) => ("family = ?2", f),
        Grants::Code(c) => ("family IN (SELECT family FROM refresh_tokens WHERE tenant_id = ?1 AND code_hash = ?2)", c),
        Grants::Session(s) => ("session_id = ?2 AND NOT offline", s),
        Grants::User(u) => ("user_id = ?2", u),
    };
    let c = tx.conn();
    if c.engine() == Engine::Postgres {
        // Lock the grants' rows first (in id order, so two revocations never deadlock). A
        // rotation in flight holds its row: this waits for it to commit, and the statements
        // below, each with a snapshot of its own under READ COMMITTED, then see the token it
        // created. Without the wait, the UPDATE would re-check only the rows it had seen and
        // miss that new token, leaving the family a live refresh token.
        c.query(
            &format!("SELECT id FROM refresh_tokens WHERE tenant_id = ?1 AND {filter} ORDER BY id FOR UPDATE"),
            params![tenant, param],
            &mut |_| Ok(true),
        )?;
    }
    // Access tokens first (from every row of these grants, revoked or not), then the grants.
    c.execute(
        &format!(
            "INSERT INTO revoked_access_tokens (tenant_id, jti, expires_at)
             SELECT tenant_id, access_jti, access_expires_at FROM refresh_tokens
             WHERE tenant_id = ?1 AND {filter} AND access_jti IS NOT NULL AND access_expires_at > ?3
             ON CONFLICT DO NOTHING"
        ),
        params![tenant, param, now],
    )?;
    c.execute(
        &format!("UPDATE refresh_tokens SET revoked_at = ?3 WHERE tenant_id = ?1 AND {filter} AND revoked_at IS NULL"),
        params![tenant, param, now],
    )
}

pub fn revoke_access(tx: &WriteTx<'_>, tenant: TenantId, jti: &str, expires_at: Timestamp) -> Result<(), StoreError> {
    tx.conn().execute(
        "INSERT INTO revoked_access_tokens (tenant_id, jti, expires_at) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
        params![tenant, jti, expires_at],
    )?;
    Ok(())
}

pub fn access_revoked(tx: &impl Reader, tenant: TenantId, jti: &str) -> Result<bool, StoreError> {
    let n: i64 = tx.conn().query_one(
        "SELECT count(*) FROM revoked_access_tokens WHERE tenant_id = ?1 AND jti = ?2",
        params![tenant, jti],
        |r| r.get(0),
    )?;
    Ok(n > 0)
}

pub fn sweep(tx: &WriteTx<'_>, now: Timestamp) -> Result<usize, StoreError> {
    let c = tx.conn();
    let mut n = c.execute("DELETE FROM authorize_requests WHERE expires_at <= ?1", params![now])?;
    n += c.execute("DELETE FROM revoked_access_tokens WHERE expires_at <= ?1", params![now])?;
    // Used codes are kept a day to recognise replays; expired refresh tokens go.
    n += c.execute("DELETE FROM authorization_codes WHERE expires_at <= ?1", params![now - 86_400])?;
    n += c.execute("DELETE FROM refresh_tokens WHERE expires_at <= ?1", params![now])?;
    Ok(n)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::testing::{temp_db, tenant, user};

    fn code_row(user_id: UserId, session_id: Option<i64>, expires_at: Timestamp) -> CodeRow {
        CodeRow {
            client_id: "client".into(),
            user_id,
            session_id,
            redirect_uri: "https://app.example/cb".into(),
            scope: "openid email".into(),
            nonce: Some("n".into()),
            code_challenge: Some("pkce".into()),
            auth_time: 5,
            amr: r#"["hwk"]"#.into(),
            expires_at,
            used_at: None,
            access_jti: None,
            family: None,
            claims: Some(CLAIMS.into()),
        }
    }

    /// A claims request, as the domain stores it.
    const CLAIMS: &str = r#"{"id_token":["email"]}"#;

    fn new_refresh<'a>(hash: &'a [u8], family: &'a str, user_id: UserId) -> NewRefresh<'a> {
        NewRefresh {
            hash,
            family,
            client_id: "client",
            user_id,
            session_id: None,
            code_hash: None,
            scope: "openid offline_access",
            auth_time: 5,
            amr: r#"["hwk"]"#,
            expires_at: 1000,
            // One access token per family in these tests: its id is the family's name.
            access_jti: family,
            access_expires_at: 2000,
            claims: Some(CLAIMS),
            offline: false,
            dpop_jkt: None,
        }
    }

    /// Two tenants, with a user in the first.
    fn setup(t: &crate::testing::TempDb) -> (TenantId, TenantId, UserId) {
        t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            (a, b, user(tx, a, "ada@example.com"))
        })
    }

    fn revoked_at(tx: &impl Reader, tenant: TenantId, hash: &[u8]) -> Option<Timestamp> {
        refresh(tx, tenant, hash).unwrap().unwrap().revoked_at
    }

    /// What a redemption may change: every code (tenant, hash, used_at, access_jti, family) and
    /// every refresh token (tenant, hash, family, client, user, session, code, scope, auth_time,
    /// amr, created_at, expires_at, access_jti, access_expires_at, used_at, revoked_at).
    type Redeemed = (Vec<(i64, Vec<u8>, Option<i64>, Option<String>, Option<String>)>, Vec<Vec<String>>);

    fn redeemed(db: &crate::Db) -> Redeemed {
        db.read_blocking(|tx| {
            let c = tx.conn();
            let codes = c.query_all(
                "SELECT tenant_id, code_hash, used_at, access_jti, family FROM authorization_codes ORDER BY tenant_id, code_hash",
                params![],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )?;
            let refresh = c.query_all(
                "SELECT tenant_id, token_hash, family, client_id, user_id, session_id, code_hash, scope, auth_time, amr,
                        created_at, expires_at, access_jti, access_expires_at, used_at, revoked_at
                 FROM refresh_tokens ORDER BY id",
                params![],
                |r| {
                    (0..16)
                        .map(|i| {
                            Ok(match i {
                                0 | 4 | 8 | 10 | 11 | 13 => format!("{:?}", r.get::<_, i64>(i)?),
                                5 | 14 | 15 => format!("{:?}", r.get::<_, Option<i64>>(i)?),
                                1 => format!("{:?}", r.get::<_, Vec<u8>>(i)?),
                                6 => format!("{:?}", r.get::<_, Option<Vec<u8>>>(i)?),
                                _ => format!("{:?}", r.get::<_, String>(i)?),
                            })
                        })
                        .collect()
                },
            )?;
            Ok::<_, StoreError>((codes, refresh))
        })
        .unwrap()
    }

    /// The columns [`redeemed`] reads of a refresh token stored by a redemption or rotation at 50
    /// from [`new_refresh`]`(token, family, user)` with session 7 and `code`, neither used nor
    /// revoked.
    fn stored(t: TenantId, token: &[u8], family: &str, user: UserId, code: Option<&[u8]>) -> Vec<String> {
        vec![
            format!("{:?}", t.0),
            format!("{:?}", token.to_vec()),
            format!("{family:?}"),
            format!("{:?}", "client"),
            format!("{:?}", user.0),
            format!("{:?}", Some(7)),
            format!("{:?}", code.map(<[u8]>::to_vec)),
            format!("{:?}", "openid offline_access"),
            format!("{:?}", 5),
            format!("{:?}", r#"["hwk"]"#),
            format!("{:?}", 50),
            format!("{:?}", 1000),
            format!("{family:?}"),
            format!("{:?}", 2000),
            format!("{:?}", None::<i64>),
            format!("{:?}", None::<i64>),
        ]
    }

    /// [`redeem_code`] on `db` (either engine), through [`crate::Db::write_one`] as the
    /// PostgreSQL exchange calls it.
    pub(crate) fn redeem_scenario(db: &crate::Db) {
        let (a, u) = db
            .write_blocking(|tx| {
                let a = tenant(tx, "a");
                let b = tenant(tx, "b");
                let u = user(tx, a, "ada@example.com");
                let other = user(tx, b, "bob@example.com");
                insert_code(tx, a, b"c1", &code_row(u, Some(7), 100), 1)?;
                insert_code(tx, a, b"c2", &code_row(u, None, 100), 1)?;
                insert_code(tx, b, b"b's", &code_row(other, None, 100), 1)?;
                Ok::<_, StoreError>((a, u))
            })
            .unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let redeem = |code: &'static [u8], token: &'static [u8], family: &'static str| {
            rt.block_on(db.write_one(move |tx| {
                let r = NewRefresh { session_id: Some(7), code_hash: Some(code), ..new_refresh(token, family, u) };
                redeem_code(tx, a, code, &r, 50)
            }))
            .unwrap()
        };
        let before = redeemed(db);
        assert!(before.1.is_empty());

        assert!(redeem(b"c1", b"t1", "fam1"));
        let claims = db
            .read_blocking(|tx| {
                Ok::<_, StoreError>((code(tx, a, b"c1")?.unwrap().claims, refresh(tx, a, b"t1")?.unwrap().claims))
            })
            .unwrap();
        assert_eq!(claims, (Some(CLAIMS.into()), Some(CLAIMS.into())), "kept with the code and the refresh token");
        let after = redeemed(db);
        let c1 = after.0.iter().find(|c| c.1 == b"c1").unwrap();
        assert_eq!((c1.2, c1.3.as_deref(), c1.4.as_deref()), (Some(50), Some("fam1"), Some("fam1")));
        let changed: Vec<_> = after.0.iter().filter(|c| c.1 != b"c1").collect();
        assert_eq!(changed, before.0.iter().filter(|c| c.1 != b"c1").collect::<Vec<_>>(), "the other codes");
        let row = stored(a, b"t1", "fam1", u, Some(b"c1"));
        assert_eq!(after.1, vec![row]);
        // The same redemption again (its first run committed, the reply was lost): its own
        // refresh token is found, nothing changes, and it is not taken for a reuse.
        assert!(redeem(b"c1", b"t1", "fam1"), "a retry of the same statement");
        assert_eq!(redeemed(db), after);

        // Used, another tenant's, never issued: nothing changes.
        for code in [&b"c1"[..], b"b's", b"never"] {
            let code: &'static [u8] = code;
            assert!(!redeem(code, b"t2", "fam2"), "{code:?}");
            assert_eq!(redeemed(db), after, "{code:?}");
        }

        assert!(redeem(b"c2", b"t3", "fam3"));
        let last = redeemed(db);
        assert_eq!(last.1.len(), 2);
        assert_eq!(last.1[1][1], format!("{:?}", b"t3".to_vec()));
    }

    /// [`rotate_refresh`] on `db` (either engine), through [`crate::Db::write_one`] as the
    /// PostgreSQL rotation calls it.
    pub(crate) fn rotate_scenario(db: &crate::Db) {
        let (a, b, u, ids) = db
            .write_blocking(|tx| {
                let a = tenant(tx, "a");
                let b = tenant(tx, "b");
                let u = user(tx, a, "ada@example.com");
                let other = user(tx, b, "bob@example.com");
                insert_refresh(tx, a, &NewRefresh { session_id: Some(7), ..new_refresh(b"r1", "fam1", u) }, 1)?;
                insert_refresh(tx, a, &new_refresh(b"revoked", "fam2", u), 1)?;
                revoke_grants(tx, a, Grants::Family("fam2"), 2)?;
                insert_refresh(tx, a, &new_refresh(b"r3", "fam3", u), 1)?;
                insert_refresh(tx, b, &new_refresh(b"b's", "famb", other), 1)?;
                let id = |t, hash| refresh(tx, t, hash).map(|r| r.map(|r| r.id).unwrap_or_default());
                let ids = [id(a, b"r1")?, id(a, b"revoked")?, id(a, b"r3")?, id(b, b"b's")?];
                Ok::<_, StoreError>((a, b, u, ids))
            })
            .unwrap();
        let [r1, revoked, r3, bs] = ids;
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let rotate = |t: TenantId, id: i64, token: &'static [u8], family: &'static str| {
            rt.block_on(db.write_one(move |tx| {
                let r = NewRefresh { session_id: Some(7), ..new_refresh(token, family, u) };
                rotate_refresh(tx, t, id, &r, 50)
            }))
            .unwrap()
        };
        let before = redeemed(db);

        assert!(rotate(a, r1, b"t1", "fam1"));
        let after = redeemed(db);
        assert_eq!(after.1.len(), before.1.len() + 1);
        // The rotated token is marked used at `now`; nothing else of it or of the others changes.
        let mut expected = before.1.clone();
        expected[0][14] = format!("{:?}", Some(50));
        assert_eq!(after.1[..before.1.len()], expected[..]);
        let successor = stored(a, b"t1", "fam1", u, None);
        assert_eq!(after.1.last(), Some(&successor));
        // The same rotation again (a retry after a lost reply): its own successor is found.
        assert!(rotate(a, r1, b"t1", "fam1"), "a retry of the same statement");
        assert_eq!(redeemed(db), after);
        // Not from another tenant.
        assert!(!rotate(b, r1, b"t1", "fam1"));
        assert_eq!(redeemed(db), after);

        // Used, revoked, another tenant's (either way round), never issued: nothing changes.
        for (t, id) in [(a, r1), (a, revoked), (a, bs), (b, r3), (a, 9_999)] {
            assert!(!rotate(t, id, b"t2", "fam2"), "{t:?} {id}");
            assert_eq!(redeemed(db), after, "{t:?} {id}");
        }

        assert!(rotate(a, r3, b"t3", "fam3"));
        let last = redeemed(db);
        assert_eq!(last.1.len(), after.1.len() + 1);
        assert_eq!(last.1.last().map(|r| r[1].clone()), Some(format!("{:?}", b"t3".to_vec())));
    }

    #[test]
    fn a_rotation_marks_the_token_used_and_stores_its_successor_or_changes_nothing() {
        rotate_scenario(&temp_db().db);
    }

    #[test]
    fn a_redemption_marks_the_code_used_and_stores_its_refresh_token_or_changes_nothing() {
        redeem_scenario(&temp_db().db);
    }

    #[test]
    fn authorize_requests_until_expiry_or_deletion() {
        let t = temp_db();
        let (a, b, _) = setup(&t);
        t.write(|tx| {
            insert_request(tx, a, "r1", r#"{"client_id":"c"}"#, 10, 100).unwrap();
            assert_eq!(request(tx, a, "r1", 99).unwrap(), Some((r#"{"client_id":"c"}"#.to_owned(), 10)));
            assert_eq!(request(tx, a, "r1", 100).unwrap(), None);
            assert_eq!(request(tx, a, "other", 50).unwrap(), None);
            // Another tenant neither reads nor deletes it.
            assert_eq!(request(tx, b, "r1", 50).unwrap(), None);
            assert!(!delete_request(tx, b, "r1").unwrap(), "another tenant's request is not deleted");
            assert!(request(tx, a, "r1", 50).unwrap().is_some());
            assert!(delete_request(tx, a, "r1").unwrap());
            assert!(!delete_request(tx, a, "r1").unwrap(), "a request is deleted once");
            assert_eq!(request(tx, a, "r1", 50).unwrap(), None);
        });
    }

    #[test]
    fn a_code_is_used_once() {
        let t = temp_db();
        let (a, _, ada) = setup(&t);
        t.write(|tx| insert_code(tx, a, b"code", &code_row(ada, Some(7), 100), 10).unwrap());
        let c = t.read(|tx| code(tx, a, b"code").unwrap().unwrap());
        assert_eq!(format!("{c:?}"), format!("{:?}", code_row(ada, Some(7), 100)));
        t.write(|tx| {
            assert!(use_code(tx, a, b"code", "jti-1", "fam-1", 20).unwrap());
            assert!(!use_code(tx, a, b"code", "jti-2", "fam-2", 21).unwrap());
            assert!(!use_code(tx, a, b"missing", "jti-3", "fam-3", 21).unwrap());
        });
        // The used code stays readable, to recognise a replay and revoke what it issued.
        let c = t.read(|tx| code(tx, a, b"code").unwrap().unwrap());
        assert_eq!((c.used_at, c.access_jti.as_deref(), c.family.as_deref()), (Some(20), Some("jti-1"), Some("fam-1")));
    }

    #[test]
    fn another_tenant_cannot_read_or_use_a_code() {
        let t = temp_db();
        let (a, b, ada) = setup(&t);
        t.write(|tx| {
            insert_code(tx, a, b"code", &code_row(ada, None, 100), 10).unwrap();
            assert!(code(tx, b, b"code").unwrap().is_none());
            assert!(!use_code(tx, b, b"code", "jti", "fam", 20).unwrap());
            let c = code(tx, a, b"code").unwrap().unwrap();
            assert_eq!((c.used_at, c.access_jti), (None, None));
            assert!(use_code(tx, a, b"code", "jti", "fam", 20).unwrap());
        });
    }

    #[test]
    fn a_refresh_token_rotates_once() {
        let t = temp_db();
        let (a, _, ada) = setup(&t);
        t.write(|tx| insert_refresh(tx, a, &new_refresh(b"r1", "fam", ada), 10).unwrap());
        let r = t.read(|tx| refresh(tx, a, b"r1").unwrap().unwrap());
        assert_eq!(
            (r.family.as_str(), r.client_id.as_str(), r.user_id, r.session_id, r.scope.as_str()),
            ("fam", "client", ada, None, "openid offline_access")
        );
        assert_eq!(
            (r.auth_time, r.amr.as_str(), r.expires_at, r.used_at, r.revoked_at),
            (5, r#"["hwk"]"#, 1000, None, None)
        );
        t.write(|tx| {
            assert!(use_refresh(tx, a, r.id, 20).unwrap());
            assert!(!use_refresh(tx, a, r.id, 21).unwrap());
            assert_eq!(refresh(tx, a, b"r1").unwrap().unwrap().used_at, Some(20));
            // A revoked token cannot be rotated either.
            insert_refresh(tx, a, &new_refresh(b"r2", "fam2", ada), 10).unwrap();
            let r2 = refresh(tx, a, b"r2").unwrap().unwrap();
            revoke_grants(tx, a, Grants::Family("fam2"), 22).unwrap();
            assert!(!use_refresh(tx, a, r2.id, 23).unwrap());
        });
    }

    #[test]
    fn revocation_by_family_code_and_session() {
        let t = temp_db();
        let (a, _, ada) = setup(&t);
        t.write(|tx| {
            insert_refresh(tx, a, &new_refresh(b"f1", "fam", ada), 1).unwrap();
            insert_refresh(tx, a, &new_refresh(b"f2", "fam", ada), 1).unwrap();
            insert_refresh(tx, a, &new_refresh(b"g1", "other", ada), 1).unwrap();
            assert_eq!(revoke_grants(tx, a, Grants::Family("fam"), 10).unwrap(), 2);
            assert_eq!(revoke_grants(tx, a, Grants::Family("fam"), 11).unwrap(), 0, "already revoked");
            assert_eq!((revoked_at(tx, a, b"f1"), revoked_at(tx, a, b"f2")), (Some(10), Some(10)));
            assert_eq!(revoked_at(tx, a, b"g1"), None);
            assert!(access_revoked(tx, a, "fam").unwrap(), "the family's access tokens are revoked too");
            assert!(!access_revoked(tx, a, "other").unwrap());

            // Revoking by code takes the whole family the code started.
            let from_code = NewRefresh { code_hash: Some(b"code"), ..new_refresh(b"c1", "cfam", ada) };
            insert_refresh(tx, a, &from_code, 1).unwrap();
            insert_refresh(tx, a, &new_refresh(b"c2", "cfam", ada), 2).unwrap();
            assert_eq!(revoke_grants(tx, a, Grants::Code(b"code"), 12).unwrap(), 2);
            assert_eq!((revoked_at(tx, a, b"c1"), revoked_at(tx, a, b"c2")), (Some(12), Some(12)));
            assert_eq!(revoke_grants(tx, a, Grants::Code(b"no-such-code"), 12).unwrap(), 0);

            let in_session = NewRefresh { session_id: Some(77), ..new_refresh(b"s1", "sfam", ada) };
            insert_refresh(tx, a, &in_session, 1).unwrap();
            // An offline_access grant of the same session outlives it.
            let offline = NewRefresh { session_id: Some(77), offline: true, ..new_refresh(b"o1", "ofam", ada) };
            insert_refresh(tx, a, &offline, 1).unwrap();
            assert_eq!(revoke_grants(tx, a, Grants::Session(77), 13).unwrap(), 1);
            assert_eq!(revoked_at(tx, a, b"o1"), None, "offline");
            assert!(refresh(tx, a, b"o1").unwrap().unwrap().offline);
            assert_eq!(revoked_at(tx, a, b"s1"), Some(13));
            assert_eq!(revoked_at(tx, a, b"g1"), None);

            // Every grant of a user: the rest of this user's families, the offline one too.
            assert_eq!(revoke_grants(tx, a, Grants::User(ada), 14).unwrap(), 2);
            assert_eq!((revoked_at(tx, a, b"g1"), revoked_at(tx, a, b"o1")), (Some(14), Some(14)));
            assert!(access_revoked(tx, a, "other").unwrap());
        });
    }

    #[test]
    fn another_tenant_cannot_read_rotate_or_revoke_a_refresh_token() {
        let t = temp_db();
        let (a, b, ada) = setup(&t);
        t.write(|tx| {
            let r = NewRefresh { session_id: Some(5), code_hash: Some(b"code"), ..new_refresh(b"r", "fam", ada) };
            insert_refresh(tx, a, &r, 1).unwrap();
        });
        let id = t.read(|tx| refresh(tx, a, b"r").unwrap().unwrap().id);
        t.write(|tx| {
            assert!(refresh(tx, b, b"r").unwrap().is_none());
            assert!(!use_refresh(tx, b, id, 10).unwrap());
            assert_eq!(revoke_grants(tx, b, Grants::Family("fam"), 10).unwrap(), 0);
            assert_eq!(revoke_grants(tx, b, Grants::Code(b"code"), 10).unwrap(), 0);
            assert_eq!(revoke_grants(tx, b, Grants::Session(5), 10).unwrap(), 0);
            assert_eq!(revoke_grants(tx, b, Grants::User(ada), 10).unwrap(), 0);
            assert!(!access_revoked(tx, a, "fam").unwrap(), "tenant A's access token is untouched");
        });
        let r = t.read(|tx| refresh(tx, a, b"r").unwrap().unwrap());
        assert_eq!((r.id, r.used_at, r.revoked_at), (id, None, None));
    }

    #[test]
    fn revoked_access_tokens_per_tenant() {
        let t = temp_db();
        let (a, b, _) = setup(&t);
        t.write(|tx| {
            assert!(!access_revoked(tx, a, "jti").unwrap());
            revoke_access(tx, a, "jti", 100).unwrap();
            revoke_access(tx, a, "jti", 200).unwrap();
            assert!(access_revoked(tx, a, "jti").unwrap());
            assert!(!access_revoked(tx, b, "jti").unwrap());
            assert!(!access_revoked(tx, a, "other").unwrap());
            let expires: i64 =
                tx.conn().query_one("SELECT expires_at FROM revoked_access_tokens", params![], |r| r.get(0)).unwrap();
            assert_eq!(expires, 100, "the first revocation stands");
        });
    }

    #[test]
    fn sweep_removes_what_has_expired() {
        let t = temp_db();
        let (a, _, ada) = setup(&t);
        let now = 100_000;
        t.write(|tx| {
            insert_request(tx, a, "old", "{}", 1, now).unwrap();
            insert_request(tx, a, "new", "{}", 1, now + 1).unwrap();
            revoke_access(tx, a, "old", now).unwrap();
            revoke_access(tx, a, "new", now + 1).unwrap();
            // Codes are kept a day past expiry.
            insert_code(tx, a, b"ancient", &code_row(ada, None, now - 86_400), 1).unwrap();
            insert_code(tx, a, b"recent", &code_row(ada, None, now - 86_399), 1).unwrap();
            insert_refresh(tx, a, &NewRefresh { expires_at: now, ..new_refresh(b"old", "f", ada) }, 1).unwrap();
            insert_refresh(tx, a, &NewRefresh { expires_at: now + 1, ..new_refresh(b"new", "f", ada) }, 1).unwrap();
            assert_eq!(sweep(tx, now).unwrap(), 4);
            assert_eq!(sweep(tx, now).unwrap(), 0);
            assert!(request(tx, a, "new", now).unwrap().is_some());
            assert!(access_revoked(tx, a, "new").unwrap());
            assert!(!access_revoked(tx, a, "old").unwrap());
            assert!(code(tx, a, b"ancient").unwrap().is_none());
            assert!(code(tx, a, b"recent").unwrap().is_some());
            assert!(refresh(tx, a, b"old").unwrap().is_none());
            assert!(refresh(tx, a, b"new").unwrap().is_some());
        });
    }
}
