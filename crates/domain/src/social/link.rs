//! Linking an upstream account to the signed-in user from the account page (SPEC §6). A link is
//! a lasting way into the account, so it takes more than a session cookie:
//! - the flow starts from a POST of the tenant's own pages, and only within [`PASSKEY_WITHIN`] of
//!   a passkey sign-in in that session ([`may_start`]): a stolen or planted session, or one opened
//!   by a social sign-in, cannot add a way in (the account page asks for the passkey first);
//! - at the callback the session that started it must still be live and be the browser's
//!   ([`pend`]), and the account the provider answered with is not saved but kept, single use and
//!   for [`PENDING_TTL`], for that session;
//! - a confirmation page names that account, and only the user's Confirm, a POST from the same
//!   session, saves the link ([`confirm`]), which is audited and e-mailed ([`notify`]).

use std::sync::Arc;

use latchkey::codes;

use super::outcome::{Confirm, Finished, Identity, already_linked, failed, provider_gone, sign_in_first};
use crate::clock::Timestamp;
use crate::crypto::sha256;
use crate::error::{Error, Kind};
use crate::registry::TenantRuntime;
use crate::sessions;
use crate::state::State;
use crate::store::Db;
use crate::store::sessions::SessionRow;
use crate::store::social::{LinkRow, PendingLinkRow, ProviderRow, StateRow};
use crate::store::{self, Reader, SocialPurpose, TenantId, WriteTx};

/// How recent the session's passkey sign-in must be for linking to start.
pub const PASSKEY_WITHIN: i64 = 600;
/// How long the confirmation page's account waits for Confirm.
pub const PENDING_TTL: i64 = 300;

fn passkey_required() -> Error {
    failed(
        Kind::Forbidden,
        codes::PASSKEY_REQUIRED,
        "Linking another way to sign in needs a passkey sign-in in the last 10 minutes: confirm it is you with \
         your passkey, then link again.",
    )
}

/// Whether the session was opened by a passkey (a sign-in or a registration: `amr` `hwk`, never
/// a social sign-in's `fed`) within [`PASSKEY_WITHIN`].
pub fn recent_passkey(session: &SessionRow, now: Timestamp) -> bool {
    let amr: Vec<String> = serde_json::from_str(&session.amr).unwrap_or_default();
    let passkey = amr.iter().any(|m| m == "hwk") && !amr.iter().any(|m| m == "fed");
    passkey && now - session.auth_time <= PASSKEY_WITHIN
}

/// Whether the session may start linking `p`: a recent passkey sign-in, and no link to this
/// provider yet (a user has at most one per provider: unlink first).
pub fn may_start(
    tx: &impl Reader,
    tenant: TenantId,
    p: &ProviderRow,
    session: &SessionRow,
    now: Timestamp,
) -> Result<(), Error> {
    if !recent_passkey(session, now) {
        return Err(passkey_required());
    }
    if store::social::link_of_user(tx, tenant, &p.slug, session.user_id)?.is_some() {
        return Err(already_linked(&p.label));
    }
    Ok(())
}

/// What the callback of a `link` flow brings: the browser's session cookie, and the token the
/// confirmation page's form will carry (made before the write).
pub struct Pending {
    pub session_token: Option<String>,
    pub token: String,
}

fn session_ended() -> Error {
    failed(
        Kind::Unauthenticated,
        codes::LOGIN_REQUIRED,
        "The session that started linking has ended. Sign in again, then link from your account page.",
    )
}

fn taken(label: &str) -> Error {
    failed(
        Kind::Conflict,
        codes::ALREADY_LINKED,
        format!("This {label} account is already linked to another account here."),
    )
}

/// The callback of a `link` flow: the session that started it must be live and be the one this
/// browser presents; the account is then kept for the user's confirmation, nothing linked yet.
#[allow(clippy::too_many_arguments)]
pub fn pend(
    tx: &WriteTx<'_>,
    t: TenantId,
    base: &str,
    p: &ProviderRow,
    flow: &StateRow,
    id: &Identity,
    pending: &Pending,
    now: Timestamp,
) -> Result<Finished, Error> {
    let token = pending.session_token.as_deref().ok_or_else(session_ended)?;
    let (session, user) = sessions::lookup(tx, t, token, now)?.ok_or_else(session_ended)?;
    if flow.session_id != Some(session.id) || flow.user_id != Some(user.id) {
        return Err(session_ended());
    }
    let done = |confirm| Finished {
        redirect: format!("{base}/account"),
        session: None,
        email: user.email.clone(),
        purpose: SocialPurpose::Link,
        confirm,
        offer_passkey: None,
    };
    match store::social::link_by_subject(tx, t, &p.slug, &id.subject)? {
        // Linked already (another tab): nothing to confirm.
        Some(l) if l.user_id == user.id => return Ok(done(None)),
        Some(_) => return Err(taken(&p.label)),
        None => {}
    }
    if store::social::link_of_user(tx, t, &p.slug, user.id)?.is_some() {
        return Err(already_linked(&p.label));
    }
    let row = PendingLinkRow {
        provider: p.slug.clone(),
        subject: id.subject.clone(),
        user_id: user.id,
        session_id: session.id,
        email: id.verified_email.clone().unwrap_or_default(),
        account: id.account.clone(),
        authority: p.authority().to_owned(),
        expires_at: now + PENDING_TTL,
    };
    store::social::insert_pending(tx, t, &sha256(pending.token.as_bytes()), &row)?;
    Ok(done(Some(Confirm {
        token: pending.token.clone(),
        provider: p.slug.clone(),
        label: p.label.clone(),
        account: id.account.clone(),
    })))
}

/// A link just saved: for the audit and the e-mail.
#[derive(Debug, Clone)]
pub struct Linked {
    pub email: String,
    pub name: String,
    pub provider: String,
    pub label: String,
    pub subject: String,
    pub account: String,
    /// The language of the user's e-mails.
    pub locale: crate::i18n::Locale,
}

fn expired() -> Error {
    failed(
        Kind::Invalid,
        codes::SOCIAL_STATE_INVALID,
        "This confirmation has expired or was already used. Link the account again from your account page.",
    )
}

/// The confirmation page's answer, from the session that started the link: Confirm saves the
/// link (`Some`), Cancel forgets the account (`None`). Either way the pending link is used up;
/// a refusal changes nothing.
pub async fn confirm(
    db: &Db,
    now: Timestamp,
    tenant: &Arc<TenantRuntime>,
    provider: String,
    session_token: String,
    token: String,
    accept: bool,
) -> Result<Option<Linked>, Error> {
    let (t, now, hash) = (tenant.id, now, sha256(token.as_bytes()));
    db.write(move |tx| -> Result<Option<Linked>, Error> {
        crate::store::cluster::admin_lock(tx)?;
        let (session, user) = sessions::lookup(tx, t, &session_token, now)?.ok_or_else(sign_in_first)?;
        let pending = store::social::take_pending(tx, t, &provider, &hash, session.id, now)?.ok_or_else(expired)?;
        if pending.user_id != user.id {
            return Err(expired());
        }
        if !accept {
            return Ok(None);
        }
        let p = store::social::provider(tx, t, &provider)?.ok_or_else(|| provider_gone(&provider))?;
        // Enabled again at another issuer or API meanwhile: the subject means someone else now.
        if p.authority() != pending.authority {
            return Err(expired());
        }
        match store::social::link_by_subject(tx, t, &p.slug, &pending.subject)? {
            Some(l) if l.user_id == user.id => return Ok(None),
            Some(_) => return Err(taken(&p.label)),
            None => {}
        }
        if store::social::link_of_user(tx, t, &p.slug, user.id)?.is_some() {
            return Err(already_linked(&p.label));
        }
        let row = LinkRow {
            provider: p.slug.clone(),
            subject: pending.subject.clone(),
            user_id: user.id,
            email: pending.email.clone(),
            created_at: now,
        };
        // A concurrent link on another node (PostgreSQL) meets the unique keys.
        store::social::insert_link(tx, t, &row, &pending.authority)
            .map_err(|e| if e.is_unique_violation() { already_linked(&p.label) } else { Error::from(e) })?;
        let locale =
            store::users::locale(tx, t, user.id)?.and_then(|l| crate::i18n::Locale::parse(&l)).unwrap_or_default();
        Ok(Some(Linked {
            locale,
            email: user.email,
            name: user.name,
            provider: p.slug,
            label: p.label,
            subject: pending.subject,
            account: pending.account,
        }))
    })
    .await
}

/// Tells the user by e-mail that a way into their account was added, when `[smtp]` is
/// configured. In the background: the browser does not wait for the mail server, and a failed
/// delivery is logged, never an error of the link.
pub fn notify(state: &State, tenant: &TenantRuntime, linked: Linked) {
    let Some(mailer) = state.live.get().mailer.clone() else {
        return;
    };
    let (tenant_name, account_url) = (tenant.display_name.clone(), format!("{}/account", tenant.base_url));
    tokio::spawn(async move {
        let notice = crate::mail::LinkNotice {
            tenant: &tenant_name,
            email: &linked.email,
            name: &linked.name,
            provider: &linked.label,
            account: &linked.account,
            account_url: &account_url,
            locale: linked.locale,
        };
        if let Err(e) = mailer.send_link_notice(&notice).await {
            tracing::warn!(email = %linked.email, error = %e, "link notice e-mail not sent");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SocialKind;
    use crate::store::testing::{count_rows, temp_db, tenant, user};
    use crate::store::users::UserId;

    fn session(amr: &str, auth_time: Timestamp) -> SessionRow {
        SessionRow { id: 1, user_id: UserId(1), auth_time, amr: amr.into(), expires_at: 10_000 }
    }

    #[test]
    fn only_a_recent_passkey_sign_in_may_link() {
        let now = 5000;
        assert!(recent_passkey(&session(r#"["hwk","user"]"#, now - PASSKEY_WITHIN), now));
        assert!(!recent_passkey(&session(r#"["hwk","user"]"#, now - PASSKEY_WITHIN - 1), now), "too old");
        assert!(!recent_passkey(&session(r#"["fed","github"]"#, now), now), "a social sign-in");
        // A provider whose key happens to be `hwk` is still a social sign-in.
        assert!(!recent_passkey(&session(r#"["fed","hwk"]"#, now), now));
        assert!(!recent_passkey(&session("not json", now), now));
    }

    fn github() -> ProviderRow {
        ProviderRow {
            slug: "github".into(),
            kind: SocialKind::Github,
            label: "GitHub".into(),
            client_id: "cid".into(),
            secret_sealed: vec![],
            issuer: None,
            github_url: None,
            github_api_url: None,
            allowed_domains: vec![],
            allowed_orgs: vec![],
            create_users: false,
            created_at: 1,
        }
    }

    fn flow(user_id: UserId, session_id: i64) -> StateRow {
        StateRow {
            state_hash: vec![1],
            provider: "github".into(),
            purpose: SocialPurpose::Link,
            request_id: None,
            invite_hash: None,
            user_id: Some(user_id),
            session_id: Some(session_id),
            verifier: "v".into(),
            nonce: "n".into(),
            browser_hash: vec![2],
            expires_at: 1000,
        }
    }

    fn who(subject: &str) -> Identity {
        Identity { subject: subject.into(), verified_email: None, name: None, account: "octo-ada".into() }
    }

    #[test]
    fn the_callback_keeps_the_account_for_the_session_that_started_it() {
        let t = temp_db();
        let (a, ada, bob, ada_session, bob_session) = t.write(|tx| {
            let a = tenant(tx, "a");
            let (ada, bob) = (user(tx, a, "ada@example.com"), user(tx, a, "bob@example.com"));
            let s = sessions::create(tx, a, ada, &["hwk", "user"], 1, 3600).unwrap();
            let b = sessions::create(tx, a, bob, &["hwk", "user"], 1, 3600).unwrap();
            (a, ada, bob, s, b)
        });
        let pend_with = |token: Option<&str>, f: &StateRow, id: &Identity| {
            let pending = Pending { session_token: token.map(str::to_owned), token: "form-token".into() };
            t.db.write_blocking(|tx| pend(tx, a, "http://localhost/a", &github(), f, id, &pending, 10))
        };
        let rows = || -> i64 { t.read(|tx| count_rows(tx, "social_pending_links")) };
        let ada_flow = flow(ada, ada_session.id);
        // No session, or another session (Bob's) than the one that started the flow.
        for token in [None, Some(bob_session.token.as_str()), Some("made-up")] {
            let err = pend_with(token, &ada_flow, &who("42")).unwrap_err();
            assert_eq!(err.code, codes::LOGIN_REQUIRED);
        }
        assert_eq!(rows(), 0, "nothing kept");
        let done = pend_with(Some(&ada_session.token), &ada_flow, &who("42")).unwrap();
        let c = done.confirm.expect("a confirmation");
        assert_eq!((c.account.as_str(), c.label.as_str(), done.session.is_none()), ("octo-ada", "GitHub", true));
        assert_eq!(rows(), 1);
        assert!(t.read(|tx| store::social::links_of_user(tx, a, ada).unwrap()).is_empty(), "not linked yet");
        // An upstream account linked to Bob is not offered to Ada.
        t.write(|tx| {
            let row = LinkRow {
                provider: "github".into(),
                subject: "7".into(),
                user_id: bob,
                email: "".into(),
                created_at: 1,
            };
            store::social::insert_link(tx, a, &row, crate::social::GITHUB_API_URL).unwrap()
        });
        let err = pend_with(Some(&ada_session.token), &ada_flow, &who("7")).unwrap_err();
        assert_eq!(err.code, codes::ALREADY_LINKED);
        assert_eq!(rows(), 1);
    }
}
