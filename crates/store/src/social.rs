//! `social_providers`, `social_links`, `social_states`, `social_pending_links`: upstream identity
//! providers per tenant, the upstream subjects linked to users, flows waiting for the provider's
//! answer, and links waiting for the user's confirmation.

use super::sql::{ConnExt, Row, params};

use super::users::UserId;
use super::{Reader, SocialKind, SocialPurpose, StoreError, TenantId, WriteTx};
use crate::Timestamp;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderRow {
    pub slug: String,
    pub kind: SocialKind,
    pub label: String,
    pub client_id: String,
    /// Sealed with the key-encryption key; opened only to call the provider.
    pub secret_sealed: Vec<u8>,
    pub issuer: Option<String>,
    pub github_url: Option<String>,
    pub github_api_url: Option<String>,
    pub allowed_domains: Vec<String>,
    pub allowed_orgs: Vec<String>,
    pub create_users: bool,
    pub created_at: Timestamp,
}

fn list_json(items: &[String]) -> String {
    serde_json::to_string(items).unwrap_or_else(|_| "[]".into())
}

fn list_from(text: String) -> Result<Vec<String>, StoreError> {
    super::json_list(&text)
}

const PROVIDER: &str = "SELECT slug, kind, label, client_id, secret_sealed, issuer, github_url, github_api_url,
    allowed_domains, allowed_orgs, create_users, created_at FROM social_providers";

fn provider_row(r: &Row<'_>) -> Result<ProviderRow, StoreError> {
    Ok(ProviderRow {
        slug: r.get(0)?,
        kind: r.get(1)?,
        label: r.get(2)?,
        client_id: r.get(3)?,
        secret_sealed: r.get(4)?,
        issuer: r.get(5)?,
        github_url: r.get(6)?,
        github_api_url: r.get(7)?,
        allowed_domains: list_from(r.get(8)?)?,
        allowed_orgs: list_from(r.get(9)?)?,
        create_users: r.get(10)?,
        created_at: r.get(11)?,
    })
}

/// Google's issuer, and GitHub's API: where the subjects of a provider come from when its row
/// names no other (rows of releases that did not store the default).
pub const GOOGLE_ISSUER: &str = "https://accounts.google.com";
pub const GITHUB_API_URL: &str = "https://api.github.com";

impl ProviderRow {
    /// Where the provider's subjects come from: its issuer (Google, OpenID Connect) or its
    /// GitHub API. A subject is linked together with it.
    pub fn authority(&self) -> &str {
        match self.kind {
            SocialKind::Github => self.github_api_url.as_deref().unwrap_or(GITHUB_API_URL),
            SocialKind::Google => self.issuer.as_deref().unwrap_or(GOOGLE_ISSUER),
            SocialKind::Oidc => self.issuer.as_deref().unwrap_or_default(),
        }
    }
}

/// Adds the provider, or replaces every setting of the tenant's provider with this slug. Links
/// made at another authority (the issuer or GitHub API URL changed, now or while the provider
/// was disabled) are removed: their subjects name other people here. Returns how many.
pub fn upsert_provider(tx: &WriteTx<'_>, tenant: TenantId, p: &ProviderRow) -> Result<u64, StoreError> {
    tx.conn().execute(
        "INSERT INTO social_providers (tenant_id, slug, kind, label, client_id, secret_sealed, issuer, github_url,
           github_api_url, allowed_domains, allowed_orgs, create_users, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
         ON CONFLICT (tenant_id, slug) DO UPDATE SET kind = excluded.kind, label = excluded.label,
           client_id = excluded.client_id, secret_sealed = excluded.secret_sealed, issuer = excluded.issuer,
           github_url = excluded.github_url, github_api_url = excluded.github_api_url,
           allowed_domains = excluded.allowed_domains, allowed_orgs = excluded.allowed_orgs,
           create_users = excluded.create_users",
        params![
            tenant,
            p.slug,
            p.kind,
            p.label,
            p.client_id,
            p.secret_sealed,
            p.issuer,
            p.github_url,
            p.github_api_url,
            list_json(&p.allowed_domains),
            list_json(&p.allowed_orgs),
            p.create_users,
            p.created_at
        ],
    )?;
    let authority = p.authority();
    // Links from before the authority was recorded (migration 0011, provider disabled then).
    tx.conn().execute(
        "UPDATE social_links SET authority = ?3 WHERE tenant_id = ?1 AND provider = ?2 AND authority IS NULL",
        params![tenant, p.slug, authority],
    )?;
    let removed = tx.conn().execute(
        "DELETE FROM social_links WHERE tenant_id = ?1 AND provider = ?2 AND authority <> ?3",
        params![tenant, p.slug, authority],
    )?;
    Ok(removed as u64)
}

pub fn provider(tx: &impl Reader, tenant: TenantId, slug: &str) -> Result<Option<ProviderRow>, StoreError> {
    tx.conn().query_opt(&format!("{PROVIDER} WHERE tenant_id = ?1 AND slug = ?2"), params![tenant, slug], provider_row)
}

pub fn providers(tx: &impl Reader, tenant: TenantId) -> Result<Vec<ProviderRow>, StoreError> {
    let rows = tx.conn().query_all(
        &format!("{PROVIDER} WHERE tenant_id = ?1 ORDER BY created_at, slug"),
        params![tenant],
        provider_row,
    )?;
    Ok(rows)
}

/// Removes the provider (its links stay: enabling it again restores them). False when absent.
pub fn delete_provider(tx: &WriteTx<'_>, tenant: TenantId, slug: &str) -> Result<bool, StoreError> {
    Ok(tx.conn().execute("DELETE FROM social_providers WHERE tenant_id = ?1 AND slug = ?2", params![tenant, slug])?
        == 1)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkRow {
    pub provider: String,
    pub subject: String,
    pub user_id: UserId,
    pub email: String,
    pub created_at: Timestamp,
}

const LINK: &str = "SELECT provider, subject, user_id, email, created_at FROM social_links";

fn link_row(r: &Row<'_>) -> Result<LinkRow, StoreError> {
    Ok(LinkRow { provider: r.get(0)?, subject: r.get(1)?, user_id: r.get(2)?, email: r.get(3)?, created_at: r.get(4)? })
}

/// The user an upstream subject is linked to.
pub fn link_by_subject(
    tx: &impl Reader,
    tenant: TenantId,
    provider: &str,
    subject: &str,
) -> Result<Option<LinkRow>, StoreError> {
    tx.conn().query_opt(
        &format!("{LINK} WHERE tenant_id = ?1 AND provider = ?2 AND subject = ?3"),
        params![tenant, provider, subject],
        link_row,
    )
}

/// The user's link to `provider`, if any (a user has at most one per provider).
pub fn link_of_user(
    tx: &impl Reader,
    tenant: TenantId,
    provider: &str,
    user: UserId,
) -> Result<Option<LinkRow>, StoreError> {
    tx.conn().query_opt(
        &format!("{LINK} WHERE tenant_id = ?1 AND provider = ?2 AND user_id = ?3"),
        params![tenant, provider, user],
        link_row,
    )
}

pub fn links_of_user(tx: &impl Reader, tenant: TenantId, user: UserId) -> Result<Vec<LinkRow>, StoreError> {
    let rows = tx.conn().query_all(
        &format!("{LINK} WHERE tenant_id = ?1 AND user_id = ?2 ORDER BY provider"),
        params![tenant, user],
        link_row,
    )?;
    Ok(rows)
}

/// Links a subject of the provider at `authority` ([`ProviderRow::authority`]).
pub fn insert_link(tx: &WriteTx<'_>, tenant: TenantId, link: &LinkRow, authority: &str) -> Result<(), StoreError> {
    tx.conn().execute(
        "INSERT INTO social_links (tenant_id, provider, subject, user_id, email, created_at, authority)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![tenant, link.provider, link.subject, link.user_id, link.email, link.created_at, authority],
    )?;
    Ok(())
}

/// Removes every link of the user (a recovery: whoever linked an account of theirs to this one
/// must not keep a way in). Returns how many.
pub fn delete_links_of_user(tx: &WriteTx<'_>, tenant: TenantId, user: UserId) -> Result<usize, StoreError> {
    tx.conn().execute("DELETE FROM social_links WHERE tenant_id = ?1 AND user_id = ?2", params![tenant, user])
}

/// Unlinks the user from `provider`; false when there was no link.
pub fn delete_link(tx: &WriteTx<'_>, tenant: TenantId, provider: &str, user: UserId) -> Result<bool, StoreError> {
    Ok(tx.conn().execute(
        "DELETE FROM social_links WHERE tenant_id = ?1 AND provider = ?2 AND user_id = ?3",
        params![tenant, provider, user],
    )? == 1)
}

/// A flow sent to the provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateRow {
    pub state_hash: Vec<u8>,
    pub provider: String,
    pub purpose: SocialPurpose,
    pub request_id: Option<String>,
    pub invite_hash: Option<Vec<u8>>,
    pub user_id: Option<UserId>,
    /// The session that started a `link` flow.
    pub session_id: Option<i64>,
    pub verifier: String,
    pub nonce: String,
    pub browser_hash: Vec<u8>,
    pub expires_at: Timestamp,
}

pub fn insert_state(tx: &WriteTx<'_>, tenant: TenantId, s: &StateRow) -> Result<(), StoreError> {
    tx.conn().execute(
        "INSERT INTO social_states (state_hash, tenant_id, provider, purpose, request_id, invite_hash, user_id,
           verifier, nonce, browser_hash, expires_at, session_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        params![
            s.state_hash,
            tenant,
            s.provider,
            s.purpose,
            s.request_id,
            s.invite_hash,
            s.user_id,
            s.verifier,
            s.nonce,
            s.browser_hash,
            s.expires_at,
            s.session_id
        ],
    )?;
    Ok(())
}

/// Takes the state out (single use): only when it belongs to `tenant` and `provider` and has not
/// expired. A state of another tenant or provider is left in place.
pub fn take_state(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    provider: &str,
    state_hash: &[u8],
    now: Timestamp,
) -> Result<Option<StateRow>, StoreError> {
    tx.conn().query_opt(
        "DELETE FROM social_states WHERE state_hash = ?1 AND tenant_id = ?2 AND provider = ?3 AND expires_at > ?4
             RETURNING state_hash, provider, purpose, request_id, invite_hash, user_id, verifier, nonce, browser_hash,
               expires_at, session_id",
        params![state_hash, tenant, provider, now],
        |r| {
            Ok(StateRow {
                state_hash: r.get(0)?,
                provider: r.get(1)?,
                purpose: r.get(2)?,
                request_id: r.get(3)?,
                invite_hash: r.get(4)?,
                user_id: r.get(5)?,
                verifier: r.get(6)?,
                nonce: r.get(7)?,
                browser_hash: r.get(8)?,
                expires_at: r.get(9)?,
                session_id: r.get(10)?,
            })
        },
    )
}

/// An upstream account waiting for the user's Confirm on the confirmation page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingLinkRow {
    pub provider: String,
    pub subject: String,
    pub user_id: UserId,
    pub session_id: i64,
    /// The verified e-mail to keep with the link ('' when none).
    pub email: String,
    /// The account as the page names it: an e-mail or a GitHub login.
    pub account: String,
    /// [`ProviderRow::authority`] when the account was read.
    pub authority: String,
    pub expires_at: Timestamp,
}

pub fn insert_pending(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    token_hash: &[u8],
    p: &PendingLinkRow,
) -> Result<(), StoreError> {
    tx.conn().execute(
        "INSERT INTO social_pending_links (token_hash, tenant_id, provider, subject, user_id, session_id, email,
           account, authority, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            token_hash,
            tenant,
            p.provider,
            p.subject,
            p.user_id,
            p.session_id,
            p.email,
            p.account,
            p.authority,
            p.expires_at
        ],
    )?;
    Ok(())
}

/// Takes a pending link out (single use): only in `tenant`, for `provider`, for the session that
/// started it, before it expires. Anything else leaves it in place.
pub fn take_pending(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    provider: &str,
    token_hash: &[u8],
    session_id: i64,
    now: Timestamp,
) -> Result<Option<PendingLinkRow>, StoreError> {
    tx.conn().query_opt(
        "DELETE FROM social_pending_links
             WHERE token_hash = ?1 AND tenant_id = ?2 AND provider = ?3 AND session_id = ?4 AND expires_at > ?5
             RETURNING provider, subject, user_id, session_id, email, account, authority, expires_at",
        params![token_hash, tenant, provider, session_id, now],
        |r| {
            Ok(PendingLinkRow {
                provider: r.get(0)?,
                subject: r.get(1)?,
                user_id: r.get(2)?,
                session_id: r.get(3)?,
                email: r.get(4)?,
                account: r.get(5)?,
                authority: r.get(6)?,
                expires_at: r.get(7)?,
            })
        },
    )
}

pub fn sweep(tx: &WriteTx<'_>, now: Timestamp) -> Result<usize, StoreError> {
    Ok(tx.conn().execute("DELETE FROM social_states WHERE expires_at <= ?1", params![now])?
        + tx.conn().execute("DELETE FROM social_pending_links WHERE expires_at <= ?1", params![now])?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{temp_db, tenant, user};

    fn google(slug: &str) -> ProviderRow {
        ProviderRow {
            slug: slug.into(),
            kind: SocialKind::Google,
            label: "Google".into(),
            client_id: "cid".into(),
            secret_sealed: vec![1, 2, 3],
            issuer: Some("https://accounts.google.com".into()),
            github_url: None,
            github_api_url: None,
            allowed_domains: vec!["acme.com".into()],
            allowed_orgs: vec![],
            create_users: false,
            created_at: 1,
        }
    }

    fn state(hash: &[u8], provider: &str) -> StateRow {
        StateRow {
            state_hash: hash.to_vec(),
            provider: provider.into(),
            purpose: SocialPurpose::Login,
            request_id: Some("req".into()),
            invite_hash: None,
            user_id: None,
            session_id: None,
            verifier: "v".into(),
            nonce: "n".into(),
            browser_hash: vec![9; 32],
            expires_at: 100,
        }
    }

    #[test]
    fn providers_upsert_list_delete_per_tenant() {
        let t = temp_db();
        let (a, b) = t.write(|tx| (tenant(tx, "a"), tenant(tx, "b")));
        t.write(|tx| {
            upsert_provider(tx, a, &google("google")).unwrap();
            let mut changed = google("google");
            changed.client_id = "cid2".into();
            changed.allowed_domains = vec![];
            upsert_provider(tx, a, &changed).unwrap();
            assert_eq!(providers(tx, a).unwrap(), vec![changed.clone()]);
            assert!(provider(tx, b, "google").unwrap().is_none(), "another tenant sees nothing");
            assert!(!delete_provider(tx, b, "google").unwrap());
            assert!(provider(tx, a, "google").unwrap().is_some());
            assert!(delete_provider(tx, a, "google").unwrap());
            assert!(providers(tx, a).unwrap().is_empty());
        });
    }

    #[test]
    fn links_by_subject_one_per_provider_and_user() {
        let t = temp_db();
        let (a, b, ada, bob) = t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            (a, b, user(tx, a, "ada@example.com"), user(tx, a, "bob@example.com"))
        });
        let link = |user_id, subject: &str| LinkRow {
            provider: "github".into(),
            subject: subject.into(),
            user_id,
            email: "x@example.com".into(),
            created_at: 1,
        };
        t.write(|tx| {
            let gh = GITHUB_API_URL;
            insert_link(tx, a, &link(ada, "42"), gh).unwrap();
            assert!(
                insert_link(tx, a, &link(bob, "42"), gh).unwrap_err().is_unique_violation(),
                "one user per subject"
            );
            assert!(
                insert_link(tx, a, &link(ada, "43"), gh).unwrap_err().is_unique_violation(),
                "one subject per user"
            );
            assert_eq!(link_by_subject(tx, a, "github", "42").unwrap().unwrap().user_id, ada);
            assert_eq!(link_of_user(tx, a, "github", ada).unwrap().unwrap().subject, "42");
            assert_eq!(links_of_user(tx, a, ada).unwrap().len(), 1);
            // Tenant B: nothing to read, nothing to delete.
            assert!(link_by_subject(tx, b, "github", "42").unwrap().is_none());
            assert!(!delete_link(tx, b, "github", ada).unwrap());
            assert!(link_of_user(tx, a, "github", ada).unwrap().is_some());
            assert!(delete_link(tx, a, "github", ada).unwrap());
            assert!(link_by_subject(tx, a, "github", "42").unwrap().is_none());
            // A recovery removes every link of the user, and only theirs.
            insert_link(tx, a, &link(ada, "42"), gh).unwrap();
            insert_link(tx, a, &LinkRow { provider: "google".into(), ..link(ada, "g") }, gh).unwrap();
            insert_link(tx, a, &link(bob, "77"), gh).unwrap();
            assert_eq!(delete_links_of_user(tx, b, ada).unwrap(), 0);
            assert_eq!(delete_links_of_user(tx, a, ada).unwrap(), 2);
            assert!(links_of_user(tx, a, ada).unwrap().is_empty());
            assert_eq!(links_of_user(tx, a, bob).unwrap().len(), 1);
        });
    }

    #[test]
    fn a_provider_moved_to_another_issuer_or_api_loses_the_links_made_at_the_old_one() {
        let t = temp_db();
        let (a, ada, bob) = t.write(|tx| {
            let a = tenant(tx, "a");
            (a, user(tx, a, "ada@example.com"), user(tx, a, "bob@example.com"))
        });
        let link = |provider: &str, user_id| LinkRow {
            provider: provider.into(),
            subject: "42".into(),
            user_id,
            email: "x@example.com".into(),
            created_at: 1,
        };
        let mut gh = google("github");
        gh.kind = SocialKind::Github;
        gh.issuer = None;
        t.write(|tx| {
            assert_eq!(upsert_provider(tx, a, &gh).unwrap(), 0);
            assert_eq!(gh.authority(), GITHUB_API_URL, "the default API");
            insert_link(tx, a, &link("github", ada), gh.authority()).unwrap();
            insert_link(tx, a, &link("google", bob), GOOGLE_ISSUER).unwrap();
            // Other settings change: the link stays.
            gh.client_id = "other".into();
            assert_eq!(upsert_provider(tx, a, &gh).unwrap(), 0);
            assert!(link_by_subject(tx, a, "github", "42").unwrap().is_some());
            // Disabled, then enabled at GitHub Enterprise Server: user 42 there is someone else.
            assert!(delete_provider(tx, a, "github").unwrap());
            assert!(link_by_subject(tx, a, "github", "42").unwrap().is_some(), "disabling keeps links");
            gh.github_api_url = Some("https://ghe.example.com/api/v3".into());
            assert_eq!(upsert_provider(tx, a, &gh).unwrap(), 1);
            assert!(link_by_subject(tx, a, "github", "42").unwrap().is_none());
            assert!(link_by_subject(tx, a, "google", "42").unwrap().is_some(), "another provider's link stays");
            // A link from before authorities were recorded takes the provider's at its next enable.
            tx.conn().execute("UPDATE social_links SET authority = NULL", params![]).unwrap();
            assert_eq!(upsert_provider(tx, a, &google("google")).unwrap(), 0);
            let kept: String = tx
                .conn()
                .query_one("SELECT authority FROM social_links WHERE provider = 'google'", params![], |r| r.get(0))
                .unwrap();
            assert_eq!(kept, google("google").authority());
        });
    }

    #[test]
    fn pending_links_are_taken_once_by_their_session_and_go_with_it() {
        let t = temp_db();
        let (a, b, ada, s1, s2) = t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            let ada = user(tx, a, "ada@example.com");
            let session = |hash: &[u8]| {
                let new = crate::sessions::NewSession {
                    user_id: ada,
                    token_hash: hash,
                    auth_time: 1,
                    amr: r#"["hwk","user"]"#,
                    created_at: 1,
                    expires_at: 1000,
                };
                crate::sessions::insert(tx, a, &new).unwrap()
            };
            (a, b, ada, session(b"s1"), session(b"s2"))
        });
        let pending = |session_id| PendingLinkRow {
            provider: "github".into(),
            subject: "42".into(),
            user_id: ada,
            session_id,
            email: "".into(),
            account: "octo-ada".into(),
            authority: GITHUB_API_URL.into(),
            expires_at: 100,
        };
        t.write(|tx| {
            insert_pending(tx, a, b"p1", &pending(s1)).unwrap();
            assert!(take_pending(tx, b, "github", b"p1", s1, 10).unwrap().is_none(), "another tenant");
            assert!(take_pending(tx, a, "google", b"p1", s1, 10).unwrap().is_none(), "another provider");
            assert!(take_pending(tx, a, "github", b"p1", s2, 10).unwrap().is_none(), "another session");
            assert!(take_pending(tx, a, "github", b"p1", s1, 100).unwrap().is_none(), "expired");
            assert_eq!(take_pending(tx, a, "github", b"p1", s1, 10).unwrap(), Some(pending(s1)));
            assert!(take_pending(tx, a, "github", b"p1", s1, 10).unwrap().is_none(), "single use");
            // Ending the session (sign-out, recovery) ends what waited for it.
            insert_pending(tx, a, b"p2", &pending(s2)).unwrap();
            assert!(crate::sessions::delete(tx, a, b"s2").unwrap());
            let left: i64 =
                tx.conn().query_one("SELECT count(*) FROM social_pending_links", params![], |r| r.get(0)).unwrap();
            assert_eq!(left, 0);
            insert_pending(tx, a, b"p3", &pending(s1)).unwrap();
            assert_eq!(sweep(tx, 100).unwrap(), 1);
        });
    }

    #[test]
    fn states_are_taken_once_by_their_tenant_and_provider_before_expiry() {
        let t = temp_db();
        let (a, b) = t.write(|tx| (tenant(tx, "a"), tenant(tx, "b")));
        t.write(|tx| {
            insert_state(tx, a, &state(b"s1", "google")).unwrap();
            assert!(take_state(tx, b, "google", b"s1", 10).unwrap().is_none(), "another tenant");
            assert!(take_state(tx, a, "github", b"s1", 10).unwrap().is_none(), "another provider");
            assert!(take_state(tx, a, "google", b"s1", 100).unwrap().is_none(), "expired");
            assert_eq!(take_state(tx, a, "google", b"s1", 10).unwrap(), Some(state(b"s1", "google")));
            assert!(take_state(tx, a, "google", b"s1", 10).unwrap().is_none(), "single use");
            insert_state(tx, a, &state(b"s2", "google")).unwrap();
            assert_eq!(sweep(tx, 100).unwrap(), 1);
        });
    }
}
