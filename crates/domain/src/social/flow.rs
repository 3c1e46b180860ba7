//! A social sign-in, from the button to the session: [`start`] stores the flow's state and sends
//! the browser to the provider; [`finish`] takes the state back (once), checks the browser that
//! started it, asks the provider who signed in, and links or signs in by the upstream subject —
//! never by e-mail alone: the e-mail finds the invited or active user on first use only, and only
//! when the provider has verified it.

use std::sync::Arc;

use latchkey::admin::Registration;
use latchkey::codes;

use super::client::Upstream;
use super::oidc::{Cache, Refused};
use super::outcome::{Finished, Identity, already_linked, failed, provider_gone};
use super::{client_secret, github, oidc};
use crate::clock::Timestamp;
use crate::crypto::{b64url, random_token, sha256};
use crate::error::{Error, Kind};
use crate::ids::token_key;
use crate::registry::TenantRuntime;
use crate::sessions;
use crate::state::State;
use crate::store::sessions::SessionRow;
use crate::store::social::{LinkRow, ProviderRow, StateRow};
use crate::store::users::{NewUser, UserId, UserRow};
use crate::store::{self, InvitePurpose, SocialKind, SocialPurpose, UserStatus, WriteTx};

/// How long a flow may take at the provider.
pub const STATE_TTL: i64 = 600;
/// The browser-binding cookie of flows in progress.
pub const BROWSER_COOKIE: &str = "latchkey_social";

/// What the sign-in is for.
#[derive(Debug, Clone)]
pub enum Purpose {
    /// Continue the pending authorization request `request_id` (the hosted login page).
    Login { request_id: String },
    /// Accept an invitation (the invite page).
    Invite { token: String },
    /// Link the provider to the signed-in user of this session (the account page).
    Link { session: SessionRow },
    /// Sign in on the device authorization page (`/device`), then go back to it.
    Device,
}

/// The `request_id` of a `login` flow started on the device authorization page: the sign-in
/// returns to `/device` instead of resuming an authorization request (whose ids are random
/// tokens, never this word).
pub const DEVICE_RETURN: &str = "device";

pub struct Started {
    /// Where to send the browser: the provider's authorization endpoint.
    pub redirect: String,
    /// The browser-binding cookie value to set.
    pub browser: String,
}

/// The callback address registered at the provider.
pub fn callback_url(tenant: &TenantRuntime, slug: &str) -> String {
    format!("{}/login/{slug}/callback", tenant.base_url)
}

fn s256(verifier: &str) -> String {
    b64url(&sha256(verifier.as_bytes()))
}

/// Stores the flow and builds the provider's authorization URL.
pub async fn start(state: &State, tenant: &Arc<TenantRuntime>, slug: &str, purpose: Purpose) -> Result<Started, Error> {
    let now = state.clock.now();
    let (t, s) = (tenant.id, slug.to_owned());
    let (provider, purpose) = state
        .db
        .read(move |tx| -> Result<_, Error> {
            let provider = store::social::provider(tx, t, &s)?.ok_or_else(|| provider_gone(&s))?;
            // The purpose must still be live when the flow starts.
            match &purpose {
                Purpose::Login { request_id } => {
                    store::oidc::request(tx, t, request_id, now)?.ok_or_else(expired_request)?;
                }
                Purpose::Invite { token } => {
                    store::invites::valid(tx, t, &token_key(token), now)?.ok_or_else(expired_invite)?;
                }
                Purpose::Link { session } => super::link::may_start(tx, t, &provider, session, now)?,
                Purpose::Device => {}
            }
            Ok((provider, purpose))
        })
        .await?;
    let state_token = random_token()?;
    let verifier = random_token()?;
    let nonce = random_token()?;
    let browser = random_token()?;
    let redirect_uri = callback_url(tenant, slug);
    let redirect = match provider.kind {
        SocialKind::Github => github::authorize_url(
            provider.github_url.as_deref().unwrap_or(super::GITHUB_URL),
            &provider.client_id,
            &redirect_uri,
            &state_token,
            &s256(&verifier),
            !provider.allowed_orgs.is_empty(),
        ),
        SocialKind::Google | SocialKind::Oidc => {
            let issuer = provider.issuer.as_deref().unwrap_or(super::GOOGLE_ISSUER);
            let d = state.social_cache.discovery(&state.upstream, issuer, now).await.map_err(upstream_failed)?;
            oidc::authorize_url(&d, &provider.client_id, &redirect_uri, &state_token, &s256(&verifier), &nonce)
        }
    };
    let row = StateRow {
        state_hash: sha256(state_token.as_bytes()).to_vec(),
        provider: provider.slug.clone(),
        purpose: match &purpose {
            Purpose::Login { .. } | Purpose::Device => SocialPurpose::Login,
            Purpose::Invite { .. } => SocialPurpose::Invite,
            Purpose::Link { .. } => SocialPurpose::Link,
        },
        request_id: match &purpose {
            Purpose::Login { request_id } => Some(request_id.clone()),
            Purpose::Device => Some(DEVICE_RETURN.to_owned()),
            _ => None,
        },
        invite_hash: match &purpose {
            Purpose::Invite { token } => Some(token_key(token)),
            _ => None,
        },
        user_id: match &purpose {
            Purpose::Link { session } => Some(session.user_id),
            _ => None,
        },
        session_id: match &purpose {
            Purpose::Link { session } => Some(session.id),
            _ => None,
        },
        verifier,
        nonce,
        browser_hash: sha256(browser.as_bytes()).to_vec(),
        expires_at: now + STATE_TTL,
    };
    state.db.write(move |tx| store::social::insert_state(tx, t, &row)).await?;
    Ok(Started { redirect, browser })
}

fn expired_request() -> Error {
    failed(
        Kind::Invalid,
        codes::SOCIAL_STATE_INVALID,
        "This sign-in has expired. Go back to the application and sign in again.",
    )
}

fn expired_invite() -> Error {
    failed(
        Kind::Invalid,
        codes::SOCIAL_STATE_INVALID,
        "This invitation link is invalid, used or expired. Ask your administrator for a new one.",
    )
}

fn upstream_failed(r: Refused) -> Error {
    failed(
        Kind::Forbidden,
        codes::UPSTREAM_REFUSED,
        "The identity provider did not confirm who you are. Try again, or sign in with a passkey.",
    )
    .caused_by(format!("{}: {}", r.reason, r.detail))
}

/// What the provider answered at the callback.
#[derive(Debug, Default)]
pub struct Callback {
    pub code: Option<String>,
    pub state: Option<String>,
    pub error: Option<String>,
    /// The browser-binding cookie the browser sent back.
    pub browser: Option<String>,
    /// The session cookie the browser sent back (a `link` flow goes on only in its session).
    pub session: Option<String>,
}

/// Takes the flow back, asks the provider, and signs in or links.
pub async fn finish(state: &State, tenant: &Arc<TenantRuntime>, slug: &str, cb: Callback) -> Result<Finished, Error> {
    let now = state.clock.now();
    let t = tenant.id;
    let invalid_state = || {
        failed(
            Kind::Invalid,
            codes::SOCIAL_STATE_INVALID,
            "This sign-in was already used, has expired, or was started in another browser. Start again.",
        )
    };
    let state_token = cb.state.clone().ok_or_else(invalid_state)?;
    let (s, hash) = (slug.to_owned(), sha256(state_token.as_bytes()));
    let (provider, flow) = state
        .db
        .write(move |tx| -> Result<_, Error> {
            let provider = store::social::provider(tx, t, &s)?.ok_or_else(|| provider_gone(&s))?;
            Ok((provider, store::social::take_state(tx, t, &s, &hash, now)?))
        })
        .await?;
    let flow = flow.ok_or_else(invalid_state)?;
    let browser_ok =
        cb.browser.as_deref().is_some_and(|b| sha256(b.as_bytes()).as_slice() == flow.browser_hash.as_slice());
    if !browser_ok {
        return Err(invalid_state());
    }
    if let Some(error) = &cb.error {
        return Err(failed(
            Kind::Forbidden,
            codes::UPSTREAM_REFUSED,
            format!("{} did not sign you in ({error}).", provider.label),
        )
        .caused_by(format!("callback_error: the provider answered error={error:?}")));
    }
    let code = cb.code.as_deref().ok_or_else(invalid_state)?;
    let secret = client_secret(&state.kek, t, &provider)?;
    let identity =
        ask_provider(&state.upstream, &state.social_cache, tenant, &provider, &flow, code, &secret, now).await?;
    let session_ttl = state.config.tokens.session.as_secs() as i64;
    let base = tenant.base_url.clone();
    if flow.purpose == SocialPurpose::Link {
        let pending = super::link::Pending { session_token: cb.session, token: random_token()? };
        return state
            .db
            .write(move |tx| super::link::pend(tx, t, &base, &provider, &flow, &identity, &pending, now))
            .await;
    }
    state
        .db
        .write(move |tx| -> Result<Finished, Error> {
            settle(tx, t, &base, &provider, &flow, &identity, now, session_ttl)
        })
        .await
}

#[allow(clippy::too_many_arguments)]
async fn ask_provider(
    up: &Upstream,
    cache: &Cache,
    tenant: &TenantRuntime,
    p: &ProviderRow,
    flow: &StateRow,
    code: &str,
    secret: &str,
    now: Timestamp,
) -> Result<Identity, Error> {
    let redirect_uri = callback_url(tenant, &p.slug);
    let identity = match p.kind {
        SocialKind::Github => {
            let x = github::Exchange {
                github_url: p.github_url.as_deref().unwrap_or(super::GITHUB_URL),
                api_url: p.github_api_url.as_deref().unwrap_or(super::GITHUB_API_URL),
                client_id: &p.client_id,
                client_secret: secret,
                code,
                verifier: &flow.verifier,
                redirect_uri: &redirect_uri,
                orgs: &p.allowed_orgs,
            };
            let user = github::exchange(up, &x).await.map_err(upstream_failed)?;
            if !p.allowed_orgs.is_empty() && user.active_orgs.is_empty() {
                return Err(failed(
                    Kind::Forbidden,
                    codes::ORG_NOT_ALLOWED,
                    format!("Your GitHub account {} is not an active member of an allowed organisation.", user.login),
                ));
            }
            Identity {
                subject: user.id,
                verified_email: user.verified_email,
                name: user.name.or(Some(user.login.clone())),
                account: shown(&user.login),
            }
        }
        SocialKind::Google | SocialKind::Oidc => {
            let x = oidc::Exchange {
                issuer: p.issuer.as_deref().unwrap_or(super::GOOGLE_ISSUER),
                client_id: &p.client_id,
                client_secret: secret,
                code,
                verifier: &flow.verifier,
                redirect_uri: &redirect_uri,
                nonce: &flow.nonce,
                google: p.kind == SocialKind::Google,
                now,
            };
            let claims = oidc::exchange(up, cache, &x).await.map_err(upstream_failed)?;
            if p.kind == SocialKind::Google
                && !p.allowed_domains.is_empty()
                && !claims.hd.as_deref().is_some_and(|hd| p.allowed_domains.iter().any(|d| d.eq_ignore_ascii_case(hd)))
            {
                return Err(not_allowed_domain());
            }
            let account = shown(claims.email.as_deref().or(claims.name.as_deref()).unwrap_or(&claims.sub));
            let verified_email = claims.email.filter(|_| claims.email_verified);
            Identity { subject: claims.sub, verified_email, name: claims.name, account }
        }
    };
    let mut identity = identity;
    // Every use of the address (matching a user, creating one, the domain allow-list, the link's
    // record) takes it as an invitation would: one valid address, or the sign-in is refused.
    if let Some(email) = identity.verified_email.take() {
        let email = email.trim().to_owned();
        if !crate::webauthn::valid_email(&email) {
            return Err(failed(
                Kind::Forbidden,
                codes::INVALID_EMAIL,
                format!("{} gave an e-mail address that is not valid here, so it cannot be used to sign in.", p.label),
            )
            .caused_by(format!("upstream e-mail {email:?}")));
        }
        identity.verified_email = Some(email);
    }
    if !p.allowed_domains.is_empty() {
        let domain = identity.verified_email.as_deref().and_then(|e| e.rsplit_once('@')).map(|(_, d)| d.to_owned());
        if !domain.is_some_and(|d| p.allowed_domains.iter().any(|a| a.eq_ignore_ascii_case(&d))) {
            return Err(not_allowed_domain());
        }
    }
    Ok(identity)
}

/// The provider's words as a page or an e-mail shows them: no control or invisible characters,
/// at most 200 characters.
fn shown(text: &str) -> String {
    text.chars().filter(|c| !crate::webauthn::unprintable(*c)).take(200).collect()
}

fn not_allowed_domain() -> Error {
    failed(Kind::Forbidden, codes::DOMAIN_NOT_ALLOWED, "Accounts of this domain cannot sign in here.")
}

fn unverified(label: &str) -> Error {
    failed(
        Kind::Forbidden,
        codes::EMAIL_NOT_VERIFIED,
        format!("{label} has not verified your e-mail address, so it cannot be matched to an account here."),
    )
}

fn disabled() -> Error {
    failed(Kind::Forbidden, codes::USER_DISABLED, "This account is disabled.")
}

/// Signs in (linking on first use), in one write transaction: all of it or nothing. (A `link`
/// flow from the account page ends in [`super::link::pend`] instead.)
#[allow(clippy::too_many_arguments)]
fn settle(
    tx: &WriteTx<'_>,
    t: store::TenantId,
    base: &str,
    p: &ProviderRow,
    flow: &StateRow,
    id: &Identity,
    now: Timestamp,
    session_ttl: i64,
) -> Result<Finished, Error> {
    let linked = store::social::link_by_subject(tx, t, &p.slug, &id.subject)?;
    let link = |tx: &WriteTx<'_>, user: UserId, email: &str| -> Result<(), Error> {
        if store::social::link_of_user(tx, t, &p.slug, user)?.is_some() {
            return Err(already_linked(&p.label));
        }
        let row = LinkRow {
            provider: p.slug.clone(),
            subject: id.subject.clone(),
            user_id: user,
            email: email.to_owned(),
            created_at: now,
        };
        // A concurrent link of the same account on another node (PostgreSQL) meets the unique key.
        store::social::insert_link(tx, t, &row, p.authority())
            .map_err(|e| if e.is_unique_violation() { already_linked(&p.label) } else { Error::from(e) })?;
        Ok(())
    };
    let user = match linked {
        Some(l) => store::users::by_id(tx, t, l.user_id)?.ok_or_else(|| Error::internal("link without user"))?,
        None => first_use(tx, t, p, flow, id, now, &link)?,
    };
    if user.status == UserStatus::Disabled {
        return Err(disabled());
    }
    let session = sessions::create(tx, t, user.id, &["fed", p.slug.as_str()], now, session_ttl)?;
    let redirect = match &flow.request_id {
        Some(request) if request == DEVICE_RETURN => format!("{base}/device"),
        Some(request) => {
            let q: String = url::form_urlencoded::byte_serialize(request.as_bytes()).collect();
            format!("{base}/authorize/resume?request={q}")
        }
        None => format!("{base}/account"),
    };
    // Once per user, whatever they choose: a social sign-in without a passkey is offered one.
    let offer_passkey = (store::credentials::count_for_user(tx, t, user.id)? == 0
        && store::users::prompt_passkey_once(tx, t, user.id, now)?)
    .then(|| user.name.clone());
    Ok(Finished {
        redirect,
        session: Some(session),
        email: user.email,
        purpose: flow.purpose,
        confirm: None,
        offer_passkey,
    })
}

fn open_registration(tx: &WriteTx<'_>, t: store::TenantId) -> Result<bool, Error> {
    Ok(store::tenants::by_id(tx, t)?.is_some_and(|row| row.registration == Registration::Open))
}

/// First use of an upstream identity: the invited or active user with the provider's verified
/// e-mail (an invited user becomes active), or a new user where the provider may create them.
fn first_use(
    tx: &WriteTx<'_>,
    t: store::TenantId,
    p: &ProviderRow,
    flow: &StateRow,
    id: &Identity,
    now: Timestamp,
    link: &dyn Fn(&WriteTx<'_>, UserId, &str) -> Result<(), Error>,
) -> Result<UserRow, Error> {
    let email = id.verified_email.clone().ok_or_else(|| unverified(&p.label))?;
    let found = store::users::by_email(tx, t, &email)?;
    if let Some(hash) = &flow.invite_hash {
        // The invitation names its user: the provider's address must be that user's.
        let invite = store::invites::valid(tx, t, hash, now)?.ok_or_else(expired_invite)?;
        if found.as_ref().map(|u| u.id) != Some(invite.user_id) {
            return Err(failed(
                Kind::Forbidden,
                codes::NO_ACCOUNT,
                format!("{} signed you in as {email}, which is not the invited address.", p.label),
            ));
        }
        if !store::invites::consume(tx, t, invite.id, now)? {
            return Err(expired_invite());
        }
    }
    let user = match found {
        Some(u) if u.status == UserStatus::Disabled => return Err(disabled()),
        Some(u) => {
            if u.status == UserStatus::Invited {
                store::users::set_status(tx, t, u.id, UserStatus::Active)?;
                store::invites::revoke_unused(tx, t, u.id, InvitePurpose::Invite, now)?;
            }
            u
        }
        // Only while the tenant's registration is open: it may have been closed since the
        // provider was enabled with `--create-users`, and the tenant's word is the last.
        None if p.create_users && open_registration(tx, t)? => {
            let handle = crate::ids::user_handle()?;
            let public_id = crate::ids::public_id()?;
            let name = id.name.clone().filter(|n| crate::webauthn::valid_name(n)).unwrap_or_else(|| email.clone());
            let new = NewUser {
                public_id: &public_id,
                user_handle: &handle,
                email: &email,
                name: &name,
                status: UserStatus::Active,
                created_at: now,
            };
            let id = store::users::insert(tx, t, &new)?;
            store::users::by_id(tx, t, id)?.ok_or_else(|| Error::internal("new user vanished"))?
        }
        None => {
            return Err(failed(
                Kind::Forbidden,
                codes::NO_ACCOUNT,
                format!("There is no account for {email} here. Ask your administrator for an invitation."),
            ));
        }
    };
    link(tx, user.id, &email)?;
    store::users::set_email_verified(tx, t, user.id)?;
    store::users::by_id(tx, t, user.id)?.ok_or_else(|| Error::internal("user vanished"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::{TempDb, temp_db, tenant, user, user_with};

    fn github(create_users: bool) -> ProviderRow {
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
            create_users,
            created_at: 1,
        }
    }

    fn flow(purpose: SocialPurpose, user_id: Option<UserId>, invite_hash: Option<Vec<u8>>) -> StateRow {
        StateRow {
            state_hash: vec![1],
            provider: "github".into(),
            purpose,
            request_id: (purpose == SocialPurpose::Login).then(|| "req-1".to_owned()),
            invite_hash,
            user_id,
            session_id: None,
            verifier: "v".into(),
            nonce: "n".into(),
            browser_hash: vec![2],
            expires_at: 1000,
        }
    }

    fn who(subject: &str, email: Option<&str>) -> Identity {
        Identity {
            subject: subject.into(),
            verified_email: email.map(str::to_owned),
            name: Some("Ada".into()),
            account: email.unwrap_or("octo-ada").to_owned(),
        }
    }

    /// Settles in a transaction that commits only on success, as the daemon does.
    fn settle_in(
        t: &TempDb,
        tenant: store::TenantId,
        p: &ProviderRow,
        f: &StateRow,
        id: &Identity,
    ) -> Result<Finished, Error> {
        t.db.write_blocking(|tx| settle(tx, tenant, "http://localhost/a", p, f, id, 10, 3600))
    }

    fn links(t: &TempDb, tenant: store::TenantId) -> Vec<LinkRow> {
        t.read(|tx| {
            let mut all = vec![];
            for u in 1..20 {
                all.extend(store::social::links_of_user(tx, tenant, UserId(u)).unwrap());
            }
            all
        })
    }

    #[test]
    fn first_use_links_by_verified_email_then_follows_the_subject() {
        let t = temp_db();
        let (a, ada) = t.write(|tx| {
            let a = tenant(tx, "a");
            (a, user_with(tx, a, "ada@example.com", UserStatus::Invited))
        });
        let login = flow(SocialPurpose::Login, None, None);
        let done = settle_in(&t, a, &github(false), &login, &who("42", Some("Ada@Example.com"))).unwrap();
        assert_eq!(done.redirect, "http://localhost/a/authorize/resume?request=req-1");
        assert!(done.session.is_some());
        let user = t.read(|tx| store::users::by_id(tx, a, ada).unwrap().unwrap());
        assert_eq!(user.status, UserStatus::Active, "an invited user becomes active");
        // She has no passkey: offered one, under her name, this once.
        assert_eq!(done.offer_passkey.as_deref(), Some(user.name.as_str()));
        // Later: the provider reports another address; the link by subject still signs Ada in.
        let again = settle_in(&t, a, &github(false), &login, &who("42", Some("new@elsewhere.org"))).unwrap();
        assert_eq!(again.email, "ada@example.com");
        assert_eq!(again.offer_passkey, None, "offered once, whatever she chose");
        // And with no verified address at all.
        assert!(settle_in(&t, a, &github(false), &login, &who("42", None)).is_ok());
    }

    #[test]
    fn refusals_store_nothing() {
        let t = temp_db();
        let (a, b, ada) = t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            let ada = user(tx, a, "ada@example.com");
            user_with(tx, a, "off@example.com", UserStatus::Disabled);
            user(tx, b, "bob@example.com");
            (a, b, ada)
        });
        let login = flow(SocialPurpose::Login, None, None);
        let code = |r: Result<Finished, Error>| r.err().map(|e| e.code);
        let p = github(false);
        assert_eq!(code(settle_in(&t, a, &p, &login, &who("1", None))), Some(codes::EMAIL_NOT_VERIFIED));
        assert_eq!(code(settle_in(&t, a, &p, &login, &who("1", Some("nobody@example.com")))), Some(codes::NO_ACCOUNT));
        assert_eq!(code(settle_in(&t, a, &p, &login, &who("1", Some("off@example.com")))), Some(codes::USER_DISABLED));
        // Tenant isolation: B's user with this address is not found from tenant A.
        assert_eq!(code(settle_in(&t, a, &p, &login, &who("1", Some("bob@example.com")))), Some(codes::NO_ACCOUNT));
        assert!(links(&t, a).is_empty() && links(&t, b).is_empty(), "no link stored");
        // Ada links subject 7; another subject of the same provider with her address is refused
        // (a recycled address cannot take the account over).
        settle_in(&t, a, &p, &login, &who("7", Some("ada@example.com"))).unwrap();
        assert_eq!(code(settle_in(&t, a, &p, &login, &who("8", Some("ada@example.com")))), Some(codes::ALREADY_LINKED));
        assert_eq!(links(&t, a).len(), 1);
        assert_eq!(links(&t, a)[0].user_id, ada);
        // A link of tenant A signs nobody in at tenant B.
        assert_eq!(code(settle_in(&t, b, &p, &login, &who("7", None))), Some(codes::EMAIL_NOT_VERIFIED));
    }

    #[test]
    fn create_users_only_where_the_provider_may() {
        let t = temp_db();
        let a = t.write(|tx| tenant(tx, "a"));
        let login = flow(SocialPurpose::Login, None, None);
        // Only while the tenant's registration is open, whatever the provider says.
        let closed = settle_in(&t, a, &github(true), &login, &who("9", Some("new@example.com")));
        assert_eq!(closed.err().map(|e| e.code), Some(codes::NO_ACCOUNT));
        assert!(t.read(|tx| store::users::by_email(tx, a, "new@example.com").unwrap()).is_none(), "nobody created");
        t.write(|tx| store::tenants::update(tx, a, "a", Registration::Open).unwrap());
        let done = settle_in(&t, a, &github(true), &login, &who("9", Some("new@example.com"))).unwrap();
        let user = t.read(|tx| store::users::by_email(tx, a, "new@example.com").unwrap().unwrap());
        assert_eq!((user.status, done.email.as_str()), (UserStatus::Active, "new@example.com"));
        assert!(user.email_verified);
    }

    #[test]
    fn an_invitation_accepted_by_the_invited_address_only() {
        let t = temp_db();
        let (a, ada) = t.write(|tx| {
            let a = tenant(tx, "a");
            let ada = user_with(tx, a, "ada@example.com", UserStatus::Invited);
            user(tx, a, "eve@example.com");
            store::invites::insert(tx, a, ada, &sha256(b"tok"), InvitePurpose::Invite, 1, 1000).unwrap();
            (a, ada)
        });
        let invite = flow(SocialPurpose::Invite, None, Some(sha256(b"tok").to_vec()));
        let err = settle_in(&t, a, &github(false), &invite, &who("3", Some("eve@example.com"))).unwrap_err();
        assert_eq!(err.code, codes::NO_ACCOUNT, "another user's address cannot accept Ada's invitation");
        let done = settle_in(&t, a, &github(false), &invite, &who("4", Some("ada@example.com"))).unwrap();
        assert_eq!(done.redirect, "http://localhost/a/account");
        t.read(|tx| {
            assert!(store::invites::valid(tx, a, &sha256(b"tok"), 10).unwrap().is_none(), "the invite is consumed");
            assert_eq!(store::users::by_id(tx, a, ada).unwrap().unwrap().status, UserStatus::Active);
        });
    }
}
