//! `users` table.

use std::sync::LazyLock;

use super::credentials::{self, CredentialRow};
use super::sql::{ConnExt, Row, params, qualified};
use super::{Reader, StoreError, TenantId, UserStatus, WriteTx};
use crate::Timestamp;

pub use super::types::UserId;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRow {
    pub id: UserId,
    pub public_id: String,
    pub user_handle: Vec<u8>,
    pub email: String,
    pub name: String,
    pub picture: Option<String>,
    pub status: UserStatus,
    pub created_at: Timestamp,
    pub email_verified: bool,
}

pub struct NewUser<'a> {
    pub public_id: &'a str,
    pub user_handle: &'a [u8],
    pub email: &'a str,
    pub name: &'a str,
    pub status: UserStatus,
    pub created_at: Timestamp,
}

pub(super) const COLUMNS: &str = "id, public_id, user_handle, email, name, picture, status, created_at, email_verified";
/// How many columns [`COLUMNS`] names: a joined row's next table starts there.
pub(super) const WIDTH: usize = 9;

fn from_row(r: &Row<'_>) -> Result<UserRow, StoreError> {
    from_row_at(r, 0)
}

/// A user from [`COLUMNS`] starting at column `at` (a joined row).
pub(super) fn from_row_at(r: &Row<'_>, at: usize) -> Result<UserRow, StoreError> {
    Ok(UserRow {
        id: r.get(at)?,
        public_id: r.get(at + 1)?,
        user_handle: r.get(at + 2)?,
        email: r.get(at + 3)?,
        name: r.get(at + 4)?,
        picture: r.get(at + 5)?,
        status: r.get(at + 6)?,
        created_at: r.get(at + 7)?,
        email_verified: r.get(at + 8)?,
    })
}

/// E-mail addresses compare case-insensitively (SPEC §5).
pub fn normalise_email(email: &str) -> String {
    email.trim().to_lowercase()
}

pub fn insert(tx: &WriteTx<'_>, tenant: TenantId, u: &NewUser<'_>) -> Result<UserId, StoreError> {
    Ok(UserId(super::insert_returning_id(
        tx.conn(),
        "INSERT INTO users (tenant_id, public_id, user_handle, email, email_norm, name, status, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
        params![tenant, u.public_id, u.user_handle, u.email, normalise_email(u.email), u.name, u.status, u.created_at],
    )?))
}

/// Inserts the user unless the tenant has one of that e-mail already (then `None`): the check
/// and the insert are one descent of the e-mail index instead of two (bulk imports). Any other
/// clash (public id, handle) is still an error.
pub fn insert_if_new(tx: &WriteTx<'_>, tenant: TenantId, u: &NewUser<'_>) -> Result<Option<UserId>, StoreError> {
    let id = tx.conn().insert_id(
        "INSERT INTO users (tenant_id, public_id, user_handle, email, email_norm, name, status, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (tenant_id, email_norm) DO NOTHING RETURNING id",
        params![tenant, u.public_id, u.user_handle, u.email, normalise_email(u.email), u.name, u.status, u.created_at],
    )?;
    Ok(id.map(UserId))
}

pub fn by_email(tx: &impl Reader, tenant: TenantId, email: &str) -> Result<Option<UserRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM users WHERE tenant_id = ?1 AND email_norm = ?2");
    tx.conn().query_opt(&sql, params![tenant, normalise_email(email)], from_row)
}

/// The user of this e-mail address and their credentials, oldest first, in one statement (a
/// sign-in's start: one round trip on PostgreSQL instead of two).
pub fn by_email_with_credentials(
    tx: &impl Reader,
    tenant: TenantId,
    email: &str,
) -> Result<Option<(UserRow, Vec<CredentialRow>)>, StoreError> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {}, {} FROM users u LEFT JOIN credentials c ON c.tenant_id = u.tenant_id AND c.user_id = u.id
             WHERE u.tenant_id = ?1 AND u.email_norm = ?2 ORDER BY c.created_at, c.id",
            qualified("u", COLUMNS),
            qualified("c", credentials::COLUMNS)
        )
    });
    // A user without credentials comes back once, with the credential's columns NULL.
    tx.conn().query_one_with_many(
        &SQL,
        params![tenant, normalise_email(email)],
        |r| from_row_at(r, 0),
        |r| if r.is_null(WIDTH + 1)? { Ok(None) } else { credentials::from_row_at(r, WIDTH).map(Some) },
    )
}

pub fn by_id(tx: &impl Reader, tenant: TenantId, id: UserId) -> Result<Option<UserRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM users WHERE tenant_id = ?1 AND id = ?2");
    tx.conn().query_opt(&sql, params![tenant, id], from_row)
}

/// The user with their role names in order (one statement where [`by_id`] and
/// [`super::roles::for_user`] took two): what a token grant puts in its tokens.
pub fn by_id_with_roles(
    tx: &impl Reader,
    tenant: TenantId,
    id: UserId,
) -> Result<Option<(UserRow, Vec<String>)>, StoreError> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {}, r.name FROM users u
                 LEFT JOIN user_roles ur ON ur.user_id = u.id
                 LEFT JOIN roles r ON r.id = ur.role_id AND r.tenant_id = u.tenant_id
             WHERE u.tenant_id = ?1 AND u.id = ?2 ORDER BY r.name",
            qualified("u", COLUMNS)
        )
    });
    // A user without roles comes back once, with the role's name NULL.
    tx.conn().query_one_with_many(&SQL, params![tenant, id], |r| from_row_at(r, 0), |r| r.get(WIDTH))
}

pub fn by_public_id(tx: &impl Reader, tenant: TenantId, public_id: &str) -> Result<Option<UserRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM users WHERE tenant_id = ?1 AND public_id = ?2");
    tx.conn().query_opt(&sql, params![tenant, public_id], from_row)
}

pub fn set_status(tx: &WriteTx<'_>, tenant: TenantId, id: UserId, status: UserStatus) -> Result<(), StoreError> {
    tx.conn().execute("UPDATE users SET status = ?3 WHERE tenant_id = ?1 AND id = ?2", params![tenant, id, status])?;
    Ok(())
}

/// The user proved control of the address (an invitation link sent to it, or a verified social login).
/// The language of a user's e-mails (a catalogue's tag), if one was chosen.
pub fn locale(tx: &impl Reader, tenant: TenantId, id: UserId) -> Result<Option<String>, StoreError> {
    let row: Option<Option<String>> =
        tx.conn().query_opt("SELECT locale FROM users WHERE tenant_id = ?1 AND id = ?2", params![tenant, id], |r| {
            r.get(0)
        })?;
    Ok(row.flatten())
}

/// Sets the language of a user's e-mails.
pub fn set_locale(tx: &WriteTx<'_>, tenant: TenantId, id: UserId, locale: &str) -> Result<(), StoreError> {
    tx.conn().execute("UPDATE users SET locale = ?3 WHERE tenant_id = ?1 AND id = ?2", params![tenant, id, locale])?;
    Ok(())
}

pub fn set_email_verified(tx: &WriteTx<'_>, tenant: TenantId, id: UserId) -> Result<(), StoreError> {
    tx.conn()
        .execute("UPDATE users SET email_verified = TRUE WHERE tenant_id = ?1 AND id = ?2", params![tenant, id])?;
    Ok(())
}

/// Changes a user's e-mail address (a SCIM client's); the caller checks it is free.
pub fn set_email(tx: &WriteTx<'_>, tenant: TenantId, id: UserId, email: &str) -> Result<(), StoreError> {
    tx.conn().execute(
        "UPDATE users SET email = ?3, email_norm = ?4 WHERE tenant_id = ?1 AND id = ?2",
        params![tenant, id, email, normalise_email(email)],
    )?;
    Ok(())
}

pub fn set_name(tx: &WriteTx<'_>, tenant: TenantId, id: UserId, name: &str) -> Result<(), StoreError> {
    tx.conn().execute("UPDATE users SET name = ?3 WHERE tenant_id = ?1 AND id = ?2", params![tenant, id, name])?;
    Ok(())
}

/// Users of a tenant, optionally only those with a role or a status, by e-mail.
pub fn list(
    tx: &impl Reader,
    tenant: TenantId,
    role: Option<&str>,
    status: Option<UserStatus>,
) -> Result<Vec<UserRow>, StoreError> {
    let cols = COLUMNS.split(", ").map(|c| format!("u.{c}")).collect::<Vec<_>>().join(", ");
    let sql = format!(
        "SELECT {cols} FROM users u WHERE u.tenant_id = ?1
           AND (CAST(?2 AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM user_roles ur JOIN roles r ON r.id = ur.role_id
                                      WHERE ur.user_id = u.id AND r.name = ?2))
           AND (CAST(?3 AS TEXT) IS NULL OR u.status = ?3)
         ORDER BY u.email_norm"
    );
    let rows = tx.conn().query_all(&sql, params![tenant, role, status], from_row)?;
    Ok(rows)
}

/// The e-mail addresses of a tenant's users in one state, by e-mail (for bulk calls such as
/// `user reinvite --all-pending`, which need no more than that).
pub fn emails_with_status(tx: &impl Reader, tenant: TenantId, status: UserStatus) -> Result<Vec<String>, StoreError> {
    let rows: Vec<String> = tx.conn().query_all(
        "SELECT email FROM users WHERE tenant_id = ?1 AND status = ?2 ORDER BY email_norm",
        params![tenant, status],
        |r| r.get(0),
    )?;
    Ok(rows)
}

/// Marks that a user was offered to add a passkey; true only the first time (the offer is made
/// once, whatever the user chose).
pub fn prompt_passkey_once(tx: &WriteTx<'_>, tenant: TenantId, id: UserId, now: Timestamp) -> Result<bool, StoreError> {
    let n = tx.conn().execute(
        "UPDATE users SET passkey_prompted_at = ?3 WHERE tenant_id = ?1 AND id = ?2 AND passkey_prompted_at IS NULL",
        params![tenant, id, now],
    )?;
    Ok(n == 1)
}

/// Deletes a user; credentials, sessions, invites, codes and refresh tokens go with them, and the
/// applications told of their live sessions get a logout token.
pub fn delete(tx: &WriteTx<'_>, tenant: TenantId, id: UserId, now: Timestamp) -> Result<bool, StoreError> {
    super::outbox::queue_logouts(tx, tenant, super::outbox::Ending::User { user: id, except: None }, now)?;
    Ok(tx.conn().execute("DELETE FROM users WHERE tenant_id = ?1 AND id = ?2", params![tenant, id])? == 1)
}

/// Ends everything a user is signed in with: sessions (the applications told of them get a logout
/// token), refresh tokens and their access tokens.
pub fn sign_out_everywhere(tx: &WriteTx<'_>, tenant: TenantId, id: UserId, now: Timestamp) -> Result<(), StoreError> {
    super::outbox::queue_logouts(tx, tenant, super::outbox::Ending::User { user: id, except: None }, now)?;
    tx.conn().execute("DELETE FROM sessions WHERE tenant_id = ?1 AND user_id = ?2", params![tenant, id])?;
    super::oidc::revoke_grants(tx, tenant, super::oidc::Grants::User(id), now)?;
    Ok(())
}

/// Holds the user's row until the transaction ends (PostgreSQL; SQLite's single writer already
/// serialises writes): a check across the user's rows (their last passkey) then stays true until
/// the write that relies on it commits, whichever node runs a concurrent one.
pub fn lock(tx: &WriteTx<'_>, tenant: TenantId, user: UserId) -> Result<(), StoreError> {
    if tx.conn().engine() == super::sql::Engine::Postgres {
        tx.conn().query(
            "SELECT 1 FROM users WHERE tenant_id = ?1 AND id = ?2 FOR UPDATE",
            params![tenant, user],
            &mut |_| Ok(false),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oidc::{self, NewRefresh};
    use crate::sessions::{self, NewSession};
    use crate::testing::{assert_corrupt, credential_row, force, temp_db, tenant, user, user_with};
    use crate::{InvitePurpose, credentials, invites, roles};

    fn session(tx: &WriteTx<'_>, tenant: TenantId, user: UserId, hash: &[u8]) -> i64 {
        let s =
            NewSession { user_id: user, token_hash: hash, auth_time: 1, amr: "[]", created_at: 1, expires_at: 1000 };
        sessions::insert(tx, tenant, &s).unwrap()
    }

    fn refresh(tx: &WriteTx<'_>, tenant: TenantId, user: UserId, hash: &[u8]) {
        let r = NewRefresh {
            hash,
            family: "f",
            client_id: "c",
            user_id: user,
            session_id: None,
            code_hash: None,
            scope: "openid",
            auth_time: 1,
            amr: "[]",
            expires_at: 1000,
            access_jti: "jti",
            access_expires_at: 1000,
            claims: None,
            offline: false,
            dpop_jkt: None,
        };
        oidc::insert_refresh(tx, tenant, &r, 1).unwrap();
    }

    #[test]
    fn insert_and_every_lookup() {
        let t = temp_db();
        let (a, id) = t.write(|tx| {
            let a = tenant(tx, "a");
            let new = NewUser {
                public_id: "p1",
                user_handle: &[1, 2, 3],
                email: " Ada@Example.COM ",
                name: "Ada",
                status: UserStatus::Invited,
                created_at: 7,
            };
            (a, insert(tx, a, &new).unwrap())
        });
        let want = UserRow {
            id,
            public_id: "p1".into(),
            user_handle: vec![1, 2, 3],
            email: " Ada@Example.COM ".into(),
            name: "Ada".into(),
            picture: None,
            status: UserStatus::Invited,
            created_at: 7,
            email_verified: false,
        };
        t.read(|tx| {
            // Look-up by e-mail is case-insensitive and ignores surrounding blanks.
            assert_eq!(by_email(tx, a, "ada@example.com").unwrap(), Some(want.clone()));
            assert_eq!(by_email(tx, a, "ADA@EXAMPLE.COM").unwrap(), Some(want.clone()));
            assert_eq!(by_id(tx, a, id).unwrap(), Some(want.clone()));
            assert_eq!(by_public_id(tx, a, "p1").unwrap(), Some(want.clone()));
            assert_eq!(by_email(tx, a, "bob@example.com").unwrap(), None);
            assert_eq!(by_id(tx, a, UserId(id.0 + 1)).unwrap(), None);
            assert_eq!(by_public_id(tx, a, "p2").unwrap(), None);
            let stored: String =
                tx.conn().query_one("SELECT status FROM users WHERE id = ?1", params![id], |r| r.get(0)).unwrap();
            assert_eq!(stored, "invited");
        });
    }

    #[test]
    fn insert_if_new_skips_a_taken_address_only() {
        let t = temp_db();
        t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            let ada = user(tx, a, "ada@example.com");
            let new = |email: &'static str, public_id: &'static str, handle: &'static [u8]| NewUser {
                public_id,
                user_handle: handle,
                email,
                name: "x",
                status: UserStatus::Invited,
                created_at: 1,
            };
            assert_eq!(insert_if_new(tx, a, &new("ADA@example.com", "p1", b"h1")).unwrap(), None);
            assert_eq!(by_email(tx, a, "ada@example.com").unwrap().unwrap().id, ada);
            let bob = insert_if_new(tx, a, &new("bob@example.com", "p2", b"h2")).unwrap().unwrap();
            assert_eq!(by_email(tx, a, "Bob@example.com").unwrap().unwrap().id, bob);
            // Another tenant's address of the same name is no clash.
            assert!(insert_if_new(tx, b, &new("ada@example.com", "p1", b"h1")).unwrap().is_some());
            // A clash of public id or handle is an error, not "already present".
            assert!(insert_if_new(tx, a, &new("cy@example.com", "p2", b"h3")).unwrap_err().is_unique_violation());
            assert!(insert_if_new(tx, a, &new("cy@example.com", "p3", b"h2")).unwrap_err().is_unique_violation());
        });
    }

    #[test]
    fn email_public_id_and_handle_are_unique_per_tenant() {
        let t = temp_db();
        t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            user(tx, a, "ada@example.com");
            let clash = |email: &str, public_id: &str, handle: &[u8]| {
                let new = NewUser {
                    public_id,
                    user_handle: handle,
                    email,
                    name: "x",
                    status: UserStatus::Active,
                    created_at: 1,
                };
                insert(tx, a, &new).unwrap_err().is_unique_violation()
            };
            assert!(clash("ADA@example.com", "other", b"other"));
            assert!(clash("bob@example.com", "pub-ada@example.com", b"other"));
            assert!(clash("bob@example.com", "other", b"ada@example.com"));
            // Another tenant has its own namespace.
            user(tx, b, "ada@example.com");
        });
    }

    #[test]
    fn status_name_and_verification() {
        let t = temp_db();
        let (a, id, other) = t.write(|tx| {
            let a = tenant(tx, "a");
            (a, user_with(tx, a, "ada@example.com", UserStatus::Invited), user(tx, a, "bob@example.com"))
        });
        t.write(|tx| {
            set_status(tx, a, id, UserStatus::Active).unwrap();
            set_name(tx, a, id, "Ada L.").unwrap();
            set_email_verified(tx, a, id).unwrap();
        });
        let u = t.read(|tx| by_id(tx, a, id).unwrap().unwrap());
        assert_eq!((u.status, u.name.as_str(), u.email_verified), (UserStatus::Active, "Ada L.", true));
        t.write(|tx| set_status(tx, a, id, UserStatus::Disabled).unwrap());
        assert_eq!(t.read(|tx| by_id(tx, a, id).unwrap().unwrap().status), UserStatus::Disabled);
        // The other user of the tenant is untouched.
        let o = t.read(|tx| by_id(tx, a, other).unwrap().unwrap());
        assert_eq!((o.status, o.name.as_str(), o.email_verified), (UserStatus::Active, "bob@example.com", false));
    }

    #[test]
    fn list_filters_by_role_and_status() {
        let t = temp_db();
        let a = t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            let carol = user_with(tx, a, "Carol@example.com", UserStatus::Disabled);
            let ada = user(tx, a, "ada@example.com");
            user_with(tx, a, "bob@example.com", UserStatus::Invited);
            user(tx, b, "eve@example.com");
            roles::insert(tx, a, "admin", "", 1).unwrap();
            let admin = roles::by_name(tx, a, "admin").unwrap().unwrap().id;
            roles::assign(tx, a, ada, admin).unwrap();
            roles::assign(tx, a, carol, admin).unwrap();
            a
        });
        let emails = |role: Option<&str>, status: Option<UserStatus>| -> Vec<String> {
            t.read(|tx| list(tx, a, role, status).unwrap().into_iter().map(|u| u.email).collect())
        };
        assert_eq!(emails(None, None), ["ada@example.com", "bob@example.com", "Carol@example.com"]);
        assert_eq!(emails(Some("admin"), None), ["ada@example.com", "Carol@example.com"]);
        assert_eq!(emails(None, Some(UserStatus::Invited)), ["bob@example.com"]);
        assert_eq!(emails(Some("admin"), Some(UserStatus::Disabled)), ["Carol@example.com"]);
        assert_eq!(emails(Some("admin"), Some(UserStatus::Invited)), Vec::<String>::new());
        assert_eq!(emails(Some("nobody"), None), Vec::<String>::new());
    }

    #[test]
    fn emails_with_status_stays_in_its_tenant() {
        let t = temp_db();
        let (a, b) = t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            user_with(tx, a, "Zed@example.com", UserStatus::Invited);
            user_with(tx, a, "bob@example.com", UserStatus::Invited);
            user(tx, a, "ada@example.com");
            user_with(tx, a, "cy@example.com", UserStatus::Disabled);
            user_with(tx, b, "eve@example.com", UserStatus::Invited);
            (a, b)
        });
        t.read(|tx| {
            assert_eq!(emails_with_status(tx, a, UserStatus::Invited).unwrap(), ["bob@example.com", "Zed@example.com"]);
            assert_eq!(emails_with_status(tx, a, UserStatus::Active).unwrap(), ["ada@example.com"]);
            assert_eq!(emails_with_status(tx, b, UserStatus::Invited).unwrap(), ["eve@example.com"]);
            assert!(emails_with_status(tx, b, UserStatus::Disabled).unwrap().is_empty());
        });
    }

    #[test]
    fn delete_takes_what_the_user_owns() {
        let t = temp_db();
        let (a, ada, bob) = t.write(|tx| {
            let a = tenant(tx, "a");
            let ada = user(tx, a, "ada@example.com");
            let bob = user(tx, a, "bob@example.com");
            for (u, n) in [(ada, 1u8), (bob, 2)] {
                credentials::insert(tx, a, &credential_row(u, &[n])).unwrap();
                session(tx, a, u, &[n]);
                invites::insert(tx, a, u, &[n], InvitePurpose::Recovery, 1, 1000).unwrap();
            }
            (a, ada, bob)
        });
        t.write(|tx| {
            assert!(delete(tx, a, ada, 0).unwrap());
            assert!(!delete(tx, a, ada, 0).unwrap());
        });
        t.read(|tx| {
            assert!(by_id(tx, a, ada).unwrap().is_none());
            assert_eq!(credentials::count_for_user(tx, a, ada).unwrap(), 0);
            assert!(sessions::valid(tx, a, &[1], 2).unwrap().is_none());
            assert!(invites::valid(tx, a, &[1], 2).unwrap().is_none());
            assert!(by_id(tx, a, bob).unwrap().is_some());
            assert_eq!(credentials::count_for_user(tx, a, bob).unwrap(), 1);
            assert!(sessions::valid(tx, a, &[2], 2).unwrap().is_some());
            assert!(invites::valid(tx, a, &[2], 2).unwrap().is_some());
        });
    }

    #[test]
    fn sign_out_everywhere_ends_sessions_and_refresh_tokens_of_that_user_only() {
        let t = temp_db();
        let (a, ada) = t.write(|tx| {
            let a = tenant(tx, "a");
            let ada = user(tx, a, "ada@example.com");
            let bob = user(tx, a, "bob@example.com");
            session(tx, a, ada, b"s-ada");
            session(tx, a, bob, b"s-bob");
            refresh(tx, a, ada, b"r-ada");
            refresh(tx, a, bob, b"r-bob");
            (a, ada)
        });
        t.write(|tx| sign_out_everywhere(tx, a, ada, 50).unwrap());
        t.read(|tx| {
            assert!(sessions::valid(tx, a, b"s-ada", 2).unwrap().is_none());
            assert_eq!(oidc::refresh(tx, a, b"r-ada").unwrap().unwrap().revoked_at, Some(50));
            assert!(sessions::valid(tx, a, b"s-bob", 2).unwrap().is_some());
            assert_eq!(oidc::refresh(tx, a, b"r-bob").unwrap().unwrap().revoked_at, None);
        });
        // An already revoked token keeps its first revocation time.
        t.write(|tx| sign_out_everywhere(tx, a, ada, 60).unwrap());
        assert_eq!(t.read(|tx| oidc::refresh(tx, a, b"r-ada").unwrap().unwrap().revoked_at), Some(50));
    }

    #[test]
    fn a_user_comes_with_their_credentials_and_a_credential_with_its_owner_in_one_tenant() {
        use crate::ChallengeKind::{Authenticate, Discoverable};
        let t = temp_db();
        let (a, b, ada) = t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            (a, b, user_with(tx, a, "ada@example.com", UserStatus::Active))
        });
        let ada_row = t.read(|tx| by_id(tx, a, ada).unwrap().unwrap());
        // No credential yet: the user alone.
        let found = t.read(|tx| by_email_with_credentials(tx, a, " ADA@example.com").unwrap());
        assert_eq!(found.map(|(u, c)| (u, c.len())), Some((ada_row.clone(), 0)));
        t.write(|tx| {
            let bob = user(tx, a, "bob@example.com");
            for (owner, id, at) in [(ada, b"newer", 9), (ada, b"older", 3), (bob, b"bobs!", 1)] {
                credentials::insert(tx, a, &CredentialRow { created_at: at, ..credential_row(owner, id) }).unwrap();
            }
        });
        t.read(|tx| {
            let (user, creds) = by_email_with_credentials(tx, a, "ada@example.com").unwrap().unwrap();
            assert_eq!(user, ada_row);
            let ids: Vec<&[u8]> = creds.iter().map(|c| c.credential_id.as_slice()).collect();
            assert_eq!(ids, [b"older".as_slice(), b"newer"], "the user's own, oldest first");
            assert_eq!(creds[0].created_at, 3);
            let owned = |t, id| crate::sign_in::lookup(tx, t, "none", (Authenticate, Discoverable), id, 0).unwrap().1;
            let (cred, owner) = owned(a, b"newer").unwrap();
            assert_eq!((cred.credential_id.as_slice(), owner), (b"newer".as_slice(), ada_row.clone()));
            assert!(by_email_with_credentials(tx, a, "eve@example.com").unwrap().is_none());
            assert!(owned(a, b"none").is_none());
            // Another tenant sees neither.
            assert!(by_email_with_credentials(tx, b, "ada@example.com").unwrap().is_none());
            assert!(owned(b, b"newer").is_none());
        });
    }

    #[test]
    fn a_user_comes_with_their_role_names_in_order_in_one_tenant() {
        use crate::roles;
        let t = temp_db();
        let (a, b, ada, bob) = t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            (a, b, user_with(tx, a, "ada@example.com", UserStatus::Active), user(tx, a, "bob@example.com"))
        });
        let ada_row = t.read(|tx| by_id(tx, a, ada).unwrap().unwrap());
        let found = t.read(|tx| by_id_with_roles(tx, a, ada).unwrap());
        assert_eq!(found, Some((ada_row.clone(), vec![])), "no role: the user alone");
        t.write(|tx| {
            for name in ["writer", "admin", "reader"] {
                roles::insert(tx, a, name, "", 1).unwrap();
            }
            for name in ["writer", "admin"] {
                assert!(roles::assign(tx, a, ada, roles::by_name(tx, a, name).unwrap().unwrap().id).unwrap());
            }
            assert!(roles::assign(tx, a, bob, roles::by_name(tx, a, "reader").unwrap().unwrap().id).unwrap());
        });
        t.read(|tx| {
            let found = by_id_with_roles(tx, a, ada).unwrap();
            assert_eq!(found, Some((ada_row.clone(), vec!["admin".to_owned(), "writer".to_owned()])));
            assert_eq!(by_id_with_roles(tx, a, ada).unwrap().unwrap().1, roles::for_user(tx, a, ada).unwrap());
            assert_eq!(by_id_with_roles(tx, a, bob).unwrap().unwrap().1, ["reader"]);
            assert!(by_id_with_roles(tx, b, ada).unwrap().is_none(), "another tenant's user");
            assert!(by_id_with_roles(tx, a, UserId(ada.0 + 100)).unwrap().is_none());
        });
    }

    #[test]
    fn another_tenant_cannot_read_change_or_delete_a_user() {
        let t = temp_db();
        let (a, b, id) = t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            let id = user_with(tx, a, "ada@example.com", UserStatus::Invited);
            session(tx, a, id, b"s");
            refresh(tx, a, id, b"r");
            (a, b, id)
        });
        let before = t.read(|tx| by_id(tx, a, id).unwrap().unwrap());
        t.read(|tx| {
            assert!(by_email(tx, b, "ada@example.com").unwrap().is_none());
            assert!(by_id(tx, b, id).unwrap().is_none());
            assert!(by_public_id(tx, b, "pub-ada@example.com").unwrap().is_none());
            assert!(by_email_with_credentials(tx, b, "ada@example.com").unwrap().is_none());
            assert!(list(tx, b, None, None).unwrap().is_empty());
        });
        t.write(|tx| {
            set_status(tx, b, id, UserStatus::Disabled).unwrap();
            set_name(tx, b, id, "Mallory").unwrap();
            set_email_verified(tx, b, id).unwrap();
            assert!(!delete(tx, b, id, 0).unwrap());
            sign_out_everywhere(tx, b, id, 50).unwrap();
        });
        t.read(|tx| {
            assert_eq!(by_id(tx, a, id).unwrap(), Some(before));
            assert!(sessions::valid(tx, a, b"s", 2).unwrap().is_none(), "an invited user has no valid session");
            let n: i64 = tx.conn().query_one("SELECT count(*) FROM sessions", params![], |r| r.get(0)).unwrap();
            assert_eq!(n, 1);
            assert_eq!(oidc::refresh(tx, a, b"r").unwrap().unwrap().revoked_at, None);
        });
    }

    #[test]
    fn unknown_status_is_corrupt() {
        let t = temp_db();
        let (a, id) = t.write(|tx| {
            let a = tenant(tx, "a");
            let id = user(tx, a, "ada@example.com");
            force(tx, "UPDATE users SET status = 'sleeping'");
            (a, id)
        });
        t.read(|tx| {
            assert_corrupt(by_id(tx, a, id), "users.status");
            assert_corrupt(by_email(tx, a, "ada@example.com"), "users.status");
            assert_corrupt(list(tx, a, None, None), "users.status");
        });
    }
}
