//! Users as operators manage them over the admin socket: invitations, recovery links, a user's
//! credentials, and the user lifecycle (list, show, disable, enable, delete).

pub mod batch;
pub mod bulk;
pub mod import;
pub mod reinvite;
pub mod rejections;
pub mod roles;
pub mod sorted;
pub mod upload;

use latchkey::admin::{AdminCredential, Invitation, InviteUser, Recovery, User};
use latchkey::codes;

use crate::clock::{Timestamp, date, rfc3339};
use crate::crypto::{b64url, b64url_decode};
use crate::error::Error;
use crate::ids;
use crate::state::State;
use crate::store::invites::InviteRow;
use crate::store::users::{NewUser, UserId, UserRow};
use crate::store::{self, Db, InvitePurpose, Reader, TenantId, UserStatus, WriteTx};
use crate::tenants::require;
use crate::webauthn::{valid_email, valid_name};

fn user_not_found(email: &str, slug: &str) -> Error {
    Error::not_found(codes::USER_NOT_FOUND, format!("no user {email:?} in tenant {slug:?}"))
}

pub fn require_user(tx: &impl Reader, tenant: TenantId, slug: &str, email: &str) -> Result<UserRow, Error> {
    store::users::by_email(tx, tenant, email)?.ok_or_else(|| user_not_found(email, slug))
}

/// Issues a one-time token of `purpose` for `user`, withdrawing older unused ones. Returns the token.
pub(crate) fn issue_token(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    user: UserId,
    purpose: InvitePurpose,
    now: Timestamp,
    expires_at: Timestamp,
) -> Result<String, Error> {
    store::invites::revoke_unused(tx, tenant, user, purpose, now)?;
    let (token, key) = ids::token()?;
    store::invites::insert(tx, tenant, user, &key, purpose, now, expires_at)?;
    Ok(token)
}

/// Invites a user: creates them (status `invited`) unless they exist, and issues an invite link.
/// An already active user is refused: they sign in, or get a recovery link.
pub async fn invite(state: &State, slug: String, req: InviteUser) -> Result<Invitation, Error> {
    let email = req.email.trim().to_owned();
    if !valid_email(&email) {
        return Err(Error::invalid(codes::INVALID_EMAIL, format!("{email:?} is not an e-mail address")));
    }
    if !valid_name(&req.name) {
        return Err(Error::invalid(codes::INVALID_NAME, "name must be 1-64 printable characters"));
    }
    let name = req.name.trim().to_owned();
    let locale = match req.locale.as_deref() {
        None => None,
        Some(tag) => Some(crate::i18n::Locale::parse(tag).ok_or_else(|| {
            Error::invalid(
                codes::INVALID_INPUT,
                format!(
                    "locale {:?} is not one Latchkey speaks: en, de, fr, es, pt-BR, ja or zh-CN",
                    tag.chars().take(32).collect::<String>()
                ),
            )
        })?),
    };
    let now = state.clock.now();
    let expires_at = now + state.config.tokens.invite.as_secs() as i64;
    let handle = ids::user_handle()?;
    let public_id = ids::public_id()?;
    let invitation = state
        .db
        .write(move |tx| -> Result<(Invitation, String, crate::i18n::Locale), Error> {
            crate::store::cluster::admin_lock(tx)?;
            let tenant = require(tx, &slug)?;
            let user = match store::users::by_email(tx, tenant.id, &email)? {
                Some(u) if u.status == UserStatus::Invited => u,
                Some(u) => {
                    return Err(Error::conflict(
                        codes::USER_EXISTS,
                        format!(
                            "{} is already {}; to let them register a new passkey use `latchkey user recover --tenant {slug} {}`",
                            u.email, u.status, u.email
                        ),
                    ));
                }
                None => {
                    let id = store::users::insert(
                        tx,
                        tenant.id,
                        &NewUser { public_id: &public_id, user_handle: &handle, email: &email, name: &name, status: UserStatus::Invited, created_at: now },
                    )?;
                    store::users::by_id(tx, tenant.id, id)?.ok_or_else(|| Error::internal("user vanished"))?
                }
            };
            for role in &req.roles {
                let role = roles::require_role(tx, tenant.id, &slug, role)?;
                store::roles::assign(tx, tenant.id, user.id, role.id)?;
            }
            let token = issue_token(tx, tenant.id, user.id, InvitePurpose::Invite, now, expires_at)?;
            // The language given now, else the one given with an earlier invitation.
            if let Some(l) = locale {
                store::users::set_locale(tx, tenant.id, user.id, l.tag())?;
            }
            let stored = store::users::locale(tx, tenant.id, user.id)?.and_then(|l| crate::i18n::Locale::parse(&l));
            Ok((
                Invitation {
                    email: user.email,
                    name: user.name,
                    invite_url: format!("{}/invite/{token}", tenant.base_url),
                    expires_at: rfc3339(expires_at),
                    emailed: None,
                    email_error: None,
                },
                tenant.brand.display_name.clone().unwrap_or(tenant.name),
                stored.unwrap_or_default(),
            ))
        })
        .await?;
    deliver(state, invitation.0, invitation.1, invitation.2).await
}

/// Sends the invitation when `[smtp]` is configured; a failure is reported, never fatal.
async fn deliver(
    state: &State,
    mut inv: Invitation,
    tenant_name: String,
    locale: crate::i18n::Locale,
) -> Result<Invitation, Error> {
    if let Some(m) = state.live.get().mailer.clone() {
        let invite = crate::mail::Invite {
            tenant: &tenant_name,
            email: &inv.email,
            name: &inv.name,
            url: &inv.invite_url,
            recovery: false,
            locale,
        };
        match m.send(&invite).await {
            Ok(()) => inv.emailed = Some(true),
            Err(e) => {
                tracing::warn!(email = %inv.email, error = %e, "invitation e-mail not sent");
                inv.emailed = Some(false);
                inv.email_error = Some(e);
            }
        }
    }
    Ok(inv)
}

/// E-mails the invitation of a user made by a SCIM client when `[smtp]` is set; a failure is
/// logged (the client cannot be told: its call has succeeded).
pub(crate) async fn send_invitation(
    state: &State,
    tenant: &crate::registry::TenantRuntime,
    email: &str,
    name: &str,
    url: &str,
    expires_at: Timestamp,
) {
    let inv = Invitation {
        email: email.to_owned(),
        name: name.to_owned(),
        invite_url: url.to_owned(),
        expires_at: rfc3339(expires_at),
        emailed: None,
        email_error: None,
    };
    let _ = deliver(state, inv, tenant.display_name.clone(), crate::i18n::Locale::default()).await;
}

/// Issues a one-time recovery link with which the user registers a new passkey.
pub async fn recover(state: &State, slug: String, email: String) -> Result<Recovery, Error> {
    let now = state.clock.now();
    let expires_at = now + state.config.tokens.invite.as_secs() as i64;
    state
        .db
        .write(move |tx| -> Result<Recovery, Error> {
            crate::store::cluster::admin_lock(tx)?;
            let tenant = require(tx, &slug)?;
            let user = require_user(tx, tenant.id, &slug, &email)?;
            if user.status == UserStatus::Disabled {
                return Err(Error::conflict(
                    codes::USER_DISABLED,
                    format!("{} is disabled; enable the account before issuing a recovery link", user.email),
                ));
            }
            let token = issue_token(tx, tenant.id, user.id, InvitePurpose::Recovery, now, expires_at)?;
            tracing::info!(tenant = %slug, user = %user.public_id, "recovery link issued");
            Ok(Recovery {
                email: user.email,
                recovery_url: format!("{}/recover/{token}", tenant.base_url),
                expires_at: rfc3339(expires_at),
            })
        })
        .await
}

fn admin_credential(c: &store::credentials::CredentialRow) -> AdminCredential {
    AdminCredential {
        id: b64url(&c.credential_id),
        kind: c.kind.as_str().to_owned(),
        device: crate::webauthn::device::shown_label(c),
        name: c.name.clone(),
        created: date(c.created_at),
        last_used: c.last_used_at.map(date),
        synced: c.backed_up,
        sign_count: c.sign_count,
    }
}

pub async fn credentials(db: &Db, slug: String, email: String) -> Result<Vec<AdminCredential>, Error> {
    db.read(move |tx| -> Result<_, Error> {
        let tenant = require(tx, &slug)?;
        let user = require_user(tx, tenant.id, &slug, &email)?;
        Ok(store::credentials::for_user(tx, tenant.id, user.id)?.iter().map(admin_credential).collect())
    })
    .await
}

/// Revokes one credential. Unlike the user's own API, an operator may remove the last one (a
/// lost device); the user then needs a recovery link.
pub async fn revoke_credential(db: &Db, slug: String, email: String, id: String) -> Result<(), Error> {
    let raw = b64url_decode(&id).unwrap_or_default();
    db.write(move |tx| -> Result<_, Error> {
        crate::store::cluster::admin_lock(tx)?;
        let tenant = require(tx, &slug)?;
        let user = require_user(tx, tenant.id, &slug, &email)?;
        if !store::credentials::delete(tx, tenant.id, user.id, &raw)? {
            return Err(Error::not_found(
                codes::CREDENTIAL_NOT_FOUND,
                format!(
                    "{email} has no credential {id:?}; `latchkey credential list --tenant {slug} {email}` shows them"
                ),
            ));
        }
        Ok(())
    })
    .await
}

pub fn to_wire(tx: &impl Reader, tenant: TenantId, u: &UserRow) -> Result<User, Error> {
    Ok(User {
        id: u.public_id.clone(),
        email: u.email.clone(),
        name: u.name.clone(),
        status: u.status.as_str().to_owned(),
        roles: store::roles::for_user(tx, tenant, u.id)?,
        created: date(u.created_at),
        credentials: store::credentials::count_for_user(tx, tenant, u.id)?,
    })
}

pub async fn list(db: &Db, slug: String, role: Option<String>, status: Option<String>) -> Result<Vec<User>, Error> {
    let status = match status {
        None => None,
        Some(s) => Some(UserStatus::parse(&s).ok_or_else(|| {
            Error::invalid(codes::INVALID_INPUT, format!("status {s:?}: use invited, active or disabled"))
        })?),
    };
    db.read(move |tx| -> Result<_, Error> {
        let tenant = require(tx, &slug)?;
        if let Some(r) = &role {
            roles::require_role(tx, tenant.id, &slug, r)?;
        }
        // Roles and credential counts for the whole tenant in two queries, not two per user.
        let mut roles = store::roles::by_user(tx, tenant.id)?;
        let counts = store::credentials::counts_by_user(tx, tenant.id)?;
        Ok(store::users::list(tx, tenant.id, role.as_deref(), status)?
            .into_iter()
            .map(|u| User {
                roles: roles.remove(&u.id).unwrap_or_default(),
                credentials: counts.get(&u.id).copied().unwrap_or(0),
                id: u.public_id,
                email: u.email,
                name: u.name,
                status: u.status.as_str().to_owned(),
                created: date(u.created_at),
            })
            .collect())
    })
    .await
}

pub async fn show(db: &Db, slug: String, email: String) -> Result<User, Error> {
    db.read(move |tx| -> Result<_, Error> {
        let tenant = require(tx, &slug)?;
        let user = require_user(tx, tenant.id, &slug, &email)?;
        to_wire(tx, tenant.id, &user)
    })
    .await
}

/// Disables (or enables) a user. Disabling ends their sessions and refresh tokens at once; their
/// access tokens stop working at this service's endpoints, which check the user on every call.
pub async fn set_enabled(db: &Db, now: Timestamp, slug: String, email: String, enabled: bool) -> Result<User, Error> {
    db.write(move |tx| -> Result<_, Error> {
        crate::store::cluster::admin_lock(tx)?;
        let tenant = require(tx, &slug)?;
        let user = require_user(tx, tenant.id, &slug, &email)?;
        if enabled {
            if user.status == UserStatus::Disabled {
                let has_credentials = store::credentials::count_for_user(tx, tenant.id, user.id)? > 0;
                store::users::set_status(
                    tx,
                    tenant.id,
                    user.id,
                    if has_credentials { UserStatus::Active } else { UserStatus::Invited },
                )?;
            }
        } else {
            store::users::set_status(tx, tenant.id, user.id, UserStatus::Disabled)?;
            store::users::sign_out_everywhere(tx, tenant.id, user.id, now)?;
        }
        let user = require_user(tx, tenant.id, &slug, &email)?;
        to_wire(tx, tenant.id, &user)
    })
    .await
}

pub async fn delete(db: &Db, now: Timestamp, slug: String, email: String) -> Result<(), Error> {
    db.write(move |tx| -> Result<_, Error> {
        crate::store::cluster::admin_lock(tx)?;
        let tenant = require(tx, &slug)?;
        let user = require_user(tx, tenant.id, &slug, &email)?;
        store::users::delete(tx, tenant.id, user.id, now)?;
        Ok(())
    })
    .await
}

/// The invitation or recovery link of `token`, still valid at `now`, with its user.
pub async fn link_holder(
    db: &Db,
    tenant: TenantId,
    token: &str,
    now: Timestamp,
) -> Result<Option<(InviteRow, UserRow)>, Error> {
    let hash = ids::token_key(token);
    db.read(move |tx| -> Result<_, Error> {
        let Some(invite) = store::invites::valid(tx, tenant, &hash, now)? else {
            return Ok(None);
        };
        Ok(store::users::by_id(tx, tenant, invite.user_id)?.map(|u| (invite, u)))
    })
    .await
}

/// The user whose public id (`sub`) is `public_id`.
pub async fn by_public_id(db: &Db, tenant: TenantId, public_id: String) -> Result<Option<UserRow>, Error> {
    db.read(move |tx| Ok(store::users::by_public_id(tx, tenant, &public_id)?)).await
}
