//! Browser sessions: the `latchkey_session` cookie. Its value is a random 256-bit token; only its
//! SHA-256 is stored.

use crate::clock::Timestamp;
use crate::error::Error;
use crate::ordered::{token, token_key};
use crate::registry::TenantRuntime;
use crate::store::sessions::{NewSession, SessionRow};
use crate::store::users::{UserId, UserRow};
use crate::store::{self, Db, Reader, TenantId, WriteTx};

pub const COOKIE_NAME: &str = "latchkey_session";

/// A session just created: the cookie value to send once, and when it ends.
#[derive(Debug, Clone)]
pub struct Issued {
    pub id: i64,
    pub token: String,
    pub expires_at: Timestamp,
}

/// A session about to be stored: the cookie value to send once, the hash stored in its place, and
/// its times. Made before the write that stores it, so that a write which may run twice (see
/// [`store::Db::write_one`]) stores the same session both times.
#[derive(Clone)]
pub struct Pending {
    token: String,
    key: Vec<u8>,
    amr: String,
    user_id: UserId,
    created_at: Timestamp,
    expires_at: Timestamp,
}

impl Pending {
    pub fn new(user: UserId, amr: &[&str], now: Timestamp, ttl_seconds: i64) -> Result<Pending, Error> {
        let (token, key) = token()?;
        let amr = serde_json::to_string(amr).map_err(Error::internal)?;
        Ok(Pending { token, key, amr, user_id: user, created_at: now, expires_at: now + ttl_seconds })
    }

    /// The row to insert.
    pub fn row(&self) -> NewSession<'_> {
        NewSession {
            user_id: self.user_id,
            token_hash: &self.key,
            auth_time: self.created_at,
            amr: &self.amr,
            created_at: self.created_at,
            expires_at: self.expires_at,
        }
    }

    /// The session once stored as row `id`.
    pub fn issued(self, id: i64) -> Issued {
        Issued { id, token: self.token, expires_at: self.expires_at }
    }
}

/// Creates a session for `user` in the caller's transaction.
pub fn create(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    user: UserId,
    amr: &[&str],
    now: Timestamp,
    ttl_seconds: i64,
) -> Result<Issued, Error> {
    let pending = Pending::new(user, amr, now, ttl_seconds)?;
    let id = store::sessions::insert(tx, tenant, &pending.row())?;
    Ok(pending.issued(id))
}

/// The name the tenant's cookie `name` goes by. Where the tenant sits at the root of an https
/// host, `__Host-name`: a browser then keeps it only as set by that very host, `Secure`, with
/// `Path=/` and no `Domain`, so a sibling subdomain cannot plant one (RFC 6265bis §4.1.3.2).
/// Elsewhere (a path under the public URL, plain http on localhost) the prefix is impossible.
pub fn cookie_name(tenant: &TenantRuntime, name: &str) -> String {
    if tenant.base.scheme() == "https" && tenant.path_prefix.is_empty() {
        format!("__Host-{name}")
    } else {
        name.to_owned()
    }
}

/// A `Set-Cookie` value of the tenant: HttpOnly, SameSite=Lax, scoped to the tenant's path,
/// Secure on https; `max_age` 0 removes the cookie.
pub fn tenant_cookie(tenant: &TenantRuntime, name: &str, value: &str, max_age: i64) -> String {
    let path = if tenant.path_prefix.is_empty() { "/" } else { tenant.path_prefix.as_str() };
    let secure = if tenant.base.scheme() == "https" { "; Secure" } else { "" };
    let name = cookie_name(tenant, name);
    format!("{name}={value}; Path={path}; Max-Age={}; HttpOnly; SameSite=Lax{secure}", max_age.max(0))
}

/// The `Set-Cookie` value for a new session.
pub fn set_cookie(tenant: &TenantRuntime, issued: &Issued, now: Timestamp) -> String {
    tenant_cookie(tenant, COOKIE_NAME, &issued.token, issued.expires_at - now)
}

/// A cookie that removes the session cookie.
pub fn clear_cookie(tenant: &TenantRuntime) -> String {
    tenant_cookie(tenant, COOKIE_NAME, "", 0)
}

/// Ends the session of `token` as a logout does, in the caller's transaction: the applications
/// told of it get a logout token (back-channel logout), the grants made in it are revoked (its
/// refresh families, and so the access tokens issued from them), then the session is deleted. True when there was a live session to end.
pub fn end(tx: &WriteTx<'_>, tenant: TenantId, token: &str, now: Timestamp) -> Result<bool, Error> {
    let hash = token_key(token);
    let live = store::sessions::valid(tx, tenant, &hash, now)?;
    if let Some(s) = &live {
        store::outbox::queue_logouts(tx, tenant, store::outbox::Ending::Session(s.id), now)?;
        store::oidc::revoke_grants(tx, tenant, store::oidc::Grants::Session(s.id), now)?;
    }
    store::sessions::delete(tx, tenant, &hash)?;
    Ok(live.is_some())
}

/// How a passkey sign-in is recorded (`amr`, RFC 8176): `hwk` for a device-bound credential,
/// whose key never leaves its authenticator, `swk` for a synced (backup-eligible) passkey; `user`
/// for the user verification every ceremony requires. The ID token's `acr` follows from it.
pub fn passkey_amr(backup_eligible: bool) -> &'static [&'static str] {
    if backup_eligible { &["swk", "user"] } else { &["hwk", "user"] }
}

/// The live session and its (active) user for a token, within a transaction.
pub fn lookup(
    tx: &impl Reader,
    tenant: TenantId,
    token: &str,
    now: Timestamp,
) -> Result<Option<(SessionRow, UserRow)>, Error> {
    let Some(session) = store::sessions::valid(tx, tenant, &token_key(token), now)? else {
        return Ok(None);
    };
    let Some(user) = store::users::by_id(tx, tenant, session.user_id)? else {
        return Ok(None);
    };
    Ok(Some((session, user)))
}

/// The live session of a cookie's `token` and its active user, if any.
pub async fn find(
    db: &Db,
    tenant: TenantId,
    token: String,
    now: Timestamp,
) -> Result<Option<(SessionRow, UserRow)>, Error> {
    db.read(move |tx| lookup(tx, tenant, &token, now)).await
}

/// Ends the session of `token` as [`end`] does, in a transaction of its own.
pub async fn end_alone(db: &Db, tenant: TenantId, token: String, now: Timestamp) -> Result<bool, Error> {
    db.write(move |tx| end(tx, tenant, &token, now)).await
}
