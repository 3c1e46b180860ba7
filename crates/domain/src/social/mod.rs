//! Social login: Google, GitHub and any OpenID Connect provider, per tenant. Latchkey is the
//! OAuth client here. This module keeps the providers' settings (`latchkey social …`); `flow`
//! runs a sign-in, `link` the account page's linking, `oidc` and `github` speak to the providers
//! through `client`.

pub mod client;
pub mod flow;
pub mod github;
pub mod link;
pub mod oidc;
pub mod outcome;

use latchkey::admin::{EnableSocial, Registration, SocialProvider};
use latchkey::codes;

use crate::clock::Timestamp;
use crate::crypto::Kek;
use crate::error::Error;
use crate::state::State;
use crate::store::Db;
use crate::store::social::ProviderRow;
use crate::store::users::UserId;
use crate::store::{self, SocialKind, TenantId};
use crate::tenants::require;

pub use crate::store::social::{GITHUB_API_URL, GOOGLE_ISSUER};
pub const GITHUB_URL: &str = "https://github.com";

/// Associated data of a sealed client secret: bound to its tenant and provider.
fn aad(tenant: TenantId, slug: &str) -> Vec<u8> {
    format!("social:{tenant}:{slug}").into_bytes()
}

/// Opens a provider's client secret, only to call the provider.
pub fn client_secret(kek: &Kek, tenant: TenantId, p: &ProviderRow) -> Result<String, Error> {
    let plain = kek.open(&aad(tenant, &p.slug), &p.secret_sealed)?;
    String::from_utf8(plain).map_err(Error::internal)
}

/// The key of an OIDC provider in URLs, from its label: `Microsoft Entra` → `microsoft-entra`.
pub fn slug_of(label: &str) -> String {
    let mut slug = String::new();
    for c in label.trim().chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    slug.trim_end_matches('-').to_owned()
}

/// Every URL Latchkey calls at a provider is `https`; plain `http` only on the loopback interface
/// (tests, development).
pub fn callable_url(text: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(text).map_err(|_| format!("{text:?} is not an absolute URL"))?;
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d == "localhost",
        None => false,
    };
    match url.scheme() {
        "https" => Ok(url),
        "http" if loopback => Ok(url),
        _ => Err(format!("{text:?}: use https (plain http only for a provider on this machine)")),
    }
}

/// A configured provider base URL: callable, and no query, fragment or user name.
pub fn valid_provider_url(text: &str) -> Result<String, String> {
    let url = callable_url(text)?;
    if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
        return Err(format!("{text:?}: no query, fragment or user name"));
    }
    Ok(text.trim_end_matches('/').to_owned())
}

fn bad(message: impl Into<String>) -> Error {
    Error::invalid(codes::INVALID_PROVIDER, message)
}

/// Seals a client secret for `tenant`'s provider `slug`.
pub fn seal_secret(kek: &Kek, tenant: TenantId, slug: &str, secret: &str) -> Result<Vec<u8>, Error> {
    Ok(kek.seal(&aad(tenant, slug), secret.as_bytes())?)
}

/// Checks an `enable` request into the row to store (the secret still in the clear).
pub fn validate(req: &EnableSocial, registration: Registration) -> Result<(ProviderRow, String), Error> {
    let kind = match req.kind.as_str() {
        "google" => SocialKind::Google,
        "github" => SocialKind::Github,
        "oidc" => SocialKind::Oidc,
        "facebook" | "twitter" => {
            return Err(Error::invalid(
                codes::PROVIDER_NOT_AVAILABLE,
                format!("{} login is coming soon and not available; use google, github or oidc", req.kind),
            ));
        }
        other => {
            return Err(Error::invalid(codes::UNKNOWN_PROVIDER, format!("{other:?}: use google, github or oidc")));
        }
    };
    let client_id = req.client_id.trim();
    let secret = req.client_secret.trim_end_matches(['\r', '\n']);
    if client_id.is_empty() {
        return Err(bad("--client-id is required: the OAuth client id the provider gave you"));
    }
    if secret.is_empty() {
        return Err(bad("the client secret is empty: give it in a file or on standard input"));
    }
    let (slug, label) = match kind {
        SocialKind::Google => ("google".to_owned(), req.name.clone().unwrap_or_else(|| "Google".into())),
        SocialKind::Github => ("github".to_owned(), req.name.clone().unwrap_or_else(|| "GitHub".into())),
        SocialKind::Oidc => {
            let label = req.name.clone().ok_or_else(|| bad("--name is required for oidc: the button's label"))?;
            let slug = slug_of(&label);
            if slug.is_empty() || slug == "google" || slug == "github" {
                return Err(bad(format!("--name {label:?} gives no usable key for URLs; choose another label")));
            }
            (slug, label)
        }
    };
    if label.trim().is_empty() || label.chars().count() > 40 {
        return Err(bad("--name must be 1-40 characters"));
    }
    let issuer = match (kind, &req.issuer) {
        (SocialKind::Github, Some(_)) => return Err(bad("--issuer is for google and oidc providers")),
        (SocialKind::Github, None) => None,
        (SocialKind::Google, None) => Some(GOOGLE_ISSUER.to_owned()),
        (SocialKind::Oidc, None) => return Err(bad("--issuer is required for oidc: the provider's issuer URL")),
        (_, Some(i)) => Some(valid_provider_url(i).map_err(bad)?),
    };
    let (github_url, github_api_url) = match kind {
        SocialKind::Github => (
            Some(valid_provider_url(req.github_url.as_deref().unwrap_or(GITHUB_URL)).map_err(bad)?),
            Some(valid_provider_url(req.github_api_url.as_deref().unwrap_or(GITHUB_API_URL)).map_err(bad)?),
        ),
        _ if req.github_url.is_some() || req.github_api_url.is_some() => {
            return Err(bad("--github-url and --github-api-url are for github"));
        }
        _ => (None, None),
    };
    if !req.allowed_orgs.is_empty() && kind != SocialKind::Github {
        return Err(bad("--allowed-org is for github"));
    }
    let mut domains = vec![];
    for d in &req.allowed_domains {
        let d = d.trim().trim_start_matches('@').to_ascii_lowercase();
        if !crate::webauthn::valid_email(&format!("x@{d}")) {
            return Err(bad(format!("--allowed-domain {d:?} is not a domain name")));
        }
        domains.push(d);
    }
    let orgs: Vec<String> = req.allowed_orgs.iter().map(|o| o.trim().to_owned()).collect();
    if orgs.iter().any(|o| o.is_empty() || o.contains('/')) {
        return Err(bad("--allowed-org takes an organisation's login name"));
    }
    if req.create_users && registration != Registration::Open {
        return Err(bad(
            "--create-users needs a tenant with open registration (latchkey tenant create … --registration open)",
        ));
    }
    let row = ProviderRow {
        slug,
        kind,
        label: label.trim().to_owned(),
        client_id: client_id.to_owned(),
        secret_sealed: vec![],
        issuer,
        github_url,
        github_api_url,
        allowed_domains: domains,
        allowed_orgs: orgs,
        create_users: req.create_users,
        created_at: 0,
    };
    Ok((row, secret.to_owned()))
}

pub fn to_wire(base_url: &str, p: &ProviderRow) -> SocialProvider {
    SocialProvider {
        provider: p.slug.clone(),
        kind: p.kind.as_str().to_owned(),
        label: p.label.clone(),
        client_id: p.client_id.clone(),
        issuer: p.issuer.clone(),
        github_url: p.github_url.clone(),
        github_api_url: p.github_api_url.clone(),
        allowed_domains: p.allowed_domains.clone(),
        allowed_orgs: p.allowed_orgs.clone(),
        create_users: p.create_users,
        callback_url: format!("{base_url}/login/{}/callback", p.slug),
        links_removed: 0,
    }
}

/// Says so when enabling a provider at a new issuer or GitHub API URL removed the links made at
/// the old one.
pub fn links_removed(tenant: &str, p: &ProviderRow, removed: u64) {
    if removed > 0 {
        tracing::info!(
            tenant,
            provider = %p.slug,
            authority = %p.authority(),
            removed,
            "links made at the provider's previous issuer or API URL removed"
        );
    }
}

/// `latchkey social enable`: stores (or replaces) the provider with its secret sealed.
pub async fn enable(state: &State, slug: String, req: EnableSocial) -> Result<SocialProvider, Error> {
    let now = state.clock.now();
    let kek = state.kek.clone();
    // Checked before anything is stored: the request's own rules, then (unless `no_verify`) that
    // the provider answers, so that a wrong issuer shows now, not as a failed sign-in later.
    let s = slug.clone();
    let registration = state.db.read(move |tx| require(tx, &s)).await?.registration;
    let (row, _) = validate(&req, registration)?;
    if !req.no_verify {
        check_provider(state, &row, now).await?;
    }
    state
        .db
        .write(move |tx| -> Result<SocialProvider, Error> {
            crate::store::cluster::admin_lock(tx)?;
            let tenant = require(tx, &slug)?;
            let (mut row, secret) = validate(&req, tenant.registration)?;
            row.secret_sealed = seal_secret(&kek, tenant.id, &row.slug, &secret)?;
            row.created_at = now;
            let removed = store::social::upsert_provider(tx, tenant.id, &row)?;
            links_removed(&slug, &row, removed);
            Ok(SocialProvider { links_removed: removed, ..to_wire(&tenant.base_url, &row) })
        })
        .await
}

/// Reads what a sign-in through the provider will read first: the issuer's discovery document
/// (checked as the flow checks it), or GitHub's API root.
async fn check_provider(state: &State, row: &ProviderRow, now: Timestamp) -> Result<(), Error> {
    let failed = |what: String, why: String| {
        // What a provider answered is bounded: an error must not carry a whole document.
        let why: String = why.chars().take(300).collect();
        Error::invalid(
            codes::PROVIDER_UNREACHABLE,
            format!(
                "{what}: {why}. Check the address (and that this server can reach it), or pass --no-verify to save \
                 the provider anyway"
            ),
        )
    };
    match row.kind {
        SocialKind::Google | SocialKind::Oidc => {
            let issuer = row.issuer.as_deref().unwrap_or(GOOGLE_ISSUER);
            state.social_cache.discovery(&state.upstream, issuer, now).await.map(|_| ()).map_err(|r| {
                failed(
                    format!("the discovery document of {issuer} could not be used"),
                    format!("{}: {}", r.reason, r.detail),
                )
            })
        }
        SocialKind::Github => {
            let api = row.github_api_url.as_deref().unwrap_or(GITHUB_API_URL);
            state
                .upstream
                .get_json::<serde_json::Value>(api, None)
                .await
                .map(|_| ())
                .map_err(|e| failed(format!("GitHub's API at {api} did not answer"), e.to_string()))
        }
    }
}

/// `latchkey social disable`: the button disappears at once; links stay for a later enable.
pub async fn disable(db: &Db, slug: String, provider: String) -> Result<(), Error> {
    db.write(move |tx| -> Result<(), Error> {
        crate::store::cluster::admin_lock(tx)?;
        let tenant = require(tx, &slug)?;
        if !store::social::delete_provider(tx, tenant.id, &provider)? {
            return Err(Error::not_found(
                codes::PROVIDER_NOT_FOUND,
                format!("no provider {provider:?} in tenant {slug:?}; `latchkey social list --tenant {slug}`"),
            ));
        }
        Ok(())
    })
    .await
}

pub async fn list(db: &Db, slug: String) -> Result<Vec<SocialProvider>, Error> {
    db.read(move |tx| -> Result<Vec<SocialProvider>, Error> {
        let tenant = require(tx, &slug)?;
        Ok(store::social::providers(tx, tenant.id)?.iter().map(|p| to_wire(&tenant.base_url, p)).collect())
    })
    .await
}

/// The buttons of the tenant's enabled providers: (key in URLs, label). A database failure
/// shows no buttons rather than no page.
pub async fn buttons(db: &Db, tenant: TenantId) -> Vec<(String, String)> {
    let rows = db.read(move |tx| store::social::providers(tx, tenant)).await;
    rows.map(|rows| rows.into_iter().map(|p| (p.slug, p.label)).collect()).unwrap_or_default()
}

/// A provider on the account page: whether the signed-in user is linked to it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AccountLink {
    pub provider: String,
    pub label: String,
    pub linked: bool,
    /// The e-mail the provider gave when the link was made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

/// The tenant's providers and the user's links to them (a link to a disabled provider is shown
/// too, so that it can be removed).
pub async fn account_links(db: &Db, tenant: TenantId, user: UserId) -> Result<Vec<AccountLink>, Error> {
    db.read(move |tx| -> Result<Vec<AccountLink>, Error> {
        let links = store::social::links_of_user(tx, tenant, user)?;
        let mut out: Vec<AccountLink> = store::social::providers(tx, tenant)?
            .into_iter()
            .map(|p| {
                let link = links.iter().find(|l| l.provider == p.slug);
                AccountLink {
                    linked: link.is_some(),
                    email: link.map(|l| l.email.clone()),
                    provider: p.slug,
                    label: p.label,
                }
            })
            .collect();
        let orphans: Vec<_> = links.iter().filter(|l| !out.iter().any(|o| o.provider == l.provider)).collect();
        for l in orphans {
            out.push(AccountLink {
                provider: l.provider.clone(),
                label: l.provider.clone(),
                linked: true,
                email: Some(l.email.clone()),
            });
        }
        Ok(out)
    })
    .await
}

/// Unlinks the signed-in user from a provider, unless it is their only way to sign in.
pub async fn unlink(db: &Db, tenant: TenantId, user: UserId, provider: String) -> Result<(), Error> {
    db.write(move |tx| -> Result<(), Error> {
        crate::store::cluster::admin_lock(tx)?;
        if store::social::link_of_user(tx, tenant, &provider, user)?.is_none() {
            return Err(Error::not_found(
                codes::PROVIDER_NOT_FOUND,
                format!("your account is not linked to {provider:?}"),
            ));
        }
        let passkeys = store::credentials::count_for_user(tx, tenant, user)?;
        let links = store::social::links_of_user(tx, tenant, user)?.len();
        if passkeys == 0 && links <= 1 {
            return Err(Error::conflict(
                codes::LAST_CREDENTIAL,
                "this is your only way to sign in: add a passkey first, then unlink",
            ));
        }
        store::social::delete_link(tx, tenant, &provider, user)?;
        Ok(())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(kind: &str) -> EnableSocial {
        EnableSocial {
            kind: kind.into(),
            client_id: "cid".into(),
            client_secret: "secret\n".into(),
            name: None,
            issuer: None,
            github_url: None,
            github_api_url: None,
            allowed_domains: vec![],
            allowed_orgs: vec![],
            create_users: false,
            no_verify: false,
        }
    }

    #[test]
    fn slugs_and_urls() {
        assert_eq!(slug_of("Microsoft Entra"), "microsoft-entra");
        assert_eq!(slug_of("  GitLab (work)! "), "gitlab-work");
        assert!(valid_provider_url("https://login.example.com/").is_ok());
        assert!(valid_provider_url("http://127.0.0.1:9000").is_ok());
        assert!(valid_provider_url("http://localhost:9000").is_ok());
        assert!(valid_provider_url("http://login.example.com").is_err());
        assert!(valid_provider_url("https://user@login.example.com").is_err());
    }

    #[test]
    fn enable_requests_are_checked() {
        let (row, secret) = validate(&req("google"), Registration::Invite).unwrap();
        assert_eq!(
            (row.slug.as_str(), row.issuer.as_deref(), secret.as_str()),
            ("google", Some(GOOGLE_ISSUER), "secret")
        );
        let (row, _) = validate(&req("github"), Registration::Invite).unwrap();
        assert_eq!(row.github_api_url.as_deref(), Some(GITHUB_API_URL));
        let code = |r: &EnableSocial| validate(r, Registration::Invite).unwrap_err().code;
        assert_eq!(code(&req("facebook")), codes::PROVIDER_NOT_AVAILABLE);
        assert_eq!(code(&req("twitter")), codes::PROVIDER_NOT_AVAILABLE);
        assert_eq!(code(&req("myspace")), codes::UNKNOWN_PROVIDER);
        assert_eq!(code(&req("oidc")), codes::INVALID_PROVIDER, "oidc needs a name and an issuer");
        let oidc = EnableSocial {
            name: Some("Entra".into()),
            issuer: Some("https://login.example.com/tenant/v2.0".into()),
            ..req("oidc")
        };
        assert_eq!(validate(&oidc, Registration::Invite).unwrap().0.slug, "entra");
        let create = EnableSocial { create_users: true, ..req("google") };
        assert_eq!(code(&create), codes::INVALID_PROVIDER);
        assert!(validate(&create, Registration::Open).is_ok());
        let org = EnableSocial { allowed_orgs: vec!["acme".into()], ..req("google") };
        assert_eq!(code(&org), codes::INVALID_PROVIDER);
    }
}
