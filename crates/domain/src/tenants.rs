//! Tenants: the rules a new tenant must meet, and creating, deleting and describing them. What
//! the daemon serves of each tenant lives in the [`crate::registry`], which every change here
//! refreshes.

use latchkey::admin::{AttestationPolicy, CreateTenant, KeyState, OldUrl, Registration, Tenant, UpdateTenant};
use latchkey::codes;

use crate::clock::{Timestamp, date, rfc3339};
use crate::crypto::Kek;
use crate::error::Error;
use crate::oidc::keys;
use crate::state::State;
use crate::store::keys::KeyRow;
use crate::store::tenants::{Attestation, NewTenant, TenantRow};
use crate::store::{self, Db, Reader, TenantId, WriteTx};
use crate::urls::{self, SlugError};

pub use crate::registry::not_found;

pub fn to_wire(row: &TenantRow) -> Tenant {
    Tenant {
        slug: row.slug.clone(),
        name: row.name.clone(),
        base_url: row.base_url.clone(),
        issuer: row.base_url.clone(),
        rp_id: row.rp_id.clone(),
        registration: row.registration,
        created: date(row.created_at),
        old_urls: vec![],
        display_name: row.brand.display_name.clone(),
        accent_color: row.brand.accent_color.clone(),
        default_locale: row.brand.default_locale.clone(),
        logo_sha256: row.brand.logo_sha.clone(),
        attestation_policy: row.attestation.policy,
        allowed_aaguids: row.attestation.allowed_aaguids.clone(),
    }
}

/// [`to_wire`] with the URLs the tenant moved away from that still answer.
pub fn to_wire_with(row: &TenantRow, old: &[(String, Timestamp)]) -> Tenant {
    let old_urls =
        old.iter().map(|(base_url, until)| OldUrl { base_url: base_url.clone(), until: rfc3339(*until) }).collect();
    Tenant { old_urls, ..to_wire(row) }
}

/// A validated tenant creation request.
pub struct ValidTenant {
    pub slug: String,
    pub name: String,
    pub base_url: String,
    pub rp_id: String,
    pub registration: Registration,
}

/// A base URL's host as RP IDs are compared with it: lowercase, an IPv6 address without brackets.
fn host_of(base: &url::Url) -> String {
    base.host_str().unwrap_or_default().trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase()
}

/// Applies the tenant rules (slug, base URL, RP ID; docs/http-api.md) to a creation request.
pub fn validate(req: &CreateTenant, public_url: &str) -> Result<ValidTenant, Error> {
    urls::slug(&req.slug).map_err(|e| match e {
        SlugError::Invalid(m) => Error::invalid(codes::INVALID_SLUG, m),
        SlugError::Reserved(m) => Error::invalid(codes::RESERVED_SLUG, m),
    })?;
    let name = req.name.clone().unwrap_or_else(|| req.slug.clone());
    if name.trim().is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err(Error::invalid(codes::INVALID_INPUT, "name must be 1-100 printable characters"));
    }
    let base_text = req.base_url.clone().unwrap_or_else(|| format!("{public_url}/{}", req.slug));
    let base = urls::base_url(&base_text).map_err(|m| Error::invalid(codes::INVALID_BASE_URL, m))?;
    let base_url = base.as_str().trim_end_matches('/').to_owned();
    let host = host_of(&base);
    let rp_id = match &req.rp_id {
        None => host,
        Some(rp) => {
            let rp = rp.to_ascii_lowercase();
            // WebAuthn: the RP ID is the origin's host or a registrable suffix of it.
            let suffix_of_host = rp == host || host.ends_with(&format!(".{rp}"));
            if rp.is_empty() || !suffix_of_host {
                return Err(Error::invalid(
                    codes::INVALID_RP_ID,
                    format!("rp_id {rp:?} must be the base URL's host {host:?} or a parent domain of it"),
                ));
            }
            // Nor may a parent domain be a public suffix (`co.uk`, `github.io`), or lie within
            // the host's (`amazonaws.com` for `x.s3.amazonaws.com`): browsers refuse such an RP ID
            // (HTML's "registrable domain suffix"), so it would fail at the first ceremony.
            let within_public_suffix = |s: &str| s == rp || s.ends_with(&format!(".{rp}"));
            if rp != host
                && (psl::domain_str(&rp).is_none() || psl::suffix_str(&host).is_some_and(within_public_suffix))
            {
                return Err(Error::invalid(
                    codes::INVALID_RP_ID,
                    format!(
                        "rp_id {rp:?} is a public suffix, which browsers refuse as an RP ID; use a domain \
                         registered under it, such as the base URL's host {host:?}"
                    ),
                ));
            }
            rp
        }
    };
    // What WebAuthn refuses is refused here, before anything is stored; an IP address is kept
    // (the tenant serves all but passkeys: see `Hot::relying_party`).
    if rp_id.parse::<std::net::IpAddr>().is_err()
        && let Err(why) = crate::webauthn::relying_party(&rp_id, &base.origin().ascii_serialization(), &name)
    {
        return Err(Error::invalid(
            codes::INVALID_RP_ID,
            format!("rp_id {rp_id:?} cannot be used for passkeys: {why}"),
        ));
    }
    Ok(ValidTenant {
        slug: req.slug.clone(),
        name,
        base_url,
        rp_id,
        registration: req.registration.unwrap_or_default(),
    })
}

/// Creates a tenant, with its first signing key when a spare one is ready, in one transaction.
/// Without one the tenant is usable at once all the same and its key is made in the background
/// (RSA generation takes 50–150 ms: [`crate::oidc::keygen`]).
pub async fn create(state: &State, req: CreateTenant) -> Result<Tenant, Error> {
    let v = validate(&req, &state.config.public_base())?;
    let bits = state.config.rsa_bits;
    let generated = if state.keygen.held() { None } else { state.spare_keys.try_take(bits) };
    let keyless = generated.is_none();
    let kek = state.kek.clone();
    let now = state.clock.now();
    let row = state
        .db
        .write(move |tx| -> Result<TenantRow, Error> {
            let id = insert_tenant(tx, &kek, &v, generated.as_ref(), bits, now)?;
            Ok(TenantRow {
                id,
                slug: v.slug,
                name: v.name,
                base_url: v.base_url,
                rp_id: v.rp_id,
                registration: v.registration,
                created_at: now,
                brand: Default::default(),
                attestation: Default::default(),
            })
        })
        .await?;
    if keyless {
        state.keygen.soon(row.id, &row.slug);
    }
    // The other nodes serve it too before the caller hears of it.
    state.registry.publish(&row.slug).await?;
    Ok(to_wire(&row))
}

/// Stores a validated tenant, with its first signing key if given, refusing a taken slug or base
/// URL. Without a key the tenant waits for [`crate::oidc::keygen`] to make one.
pub fn insert_tenant(
    tx: &WriteTx<'_>,
    kek: &Kek,
    v: &ValidTenant,
    key: Option<&keys::GeneratedKey>,
    bits: u32,
    now: i64,
) -> Result<TenantId, Error> {
    // Nodes creating the same slug at once: the second waits here, then sees the first's row.
    store::cluster::admin_lock(tx)?;
    if store::tenants::by_slug(tx, &v.slug)?.is_some() {
        return Err(Error::conflict(codes::TENANT_EXISTS, format!("tenant {:?} already exists", v.slug)));
    }
    if let Some(other) = store::tenants::by_base_url(tx, &v.base_url)? {
        return Err(Error::conflict(
            codes::BASE_URL_TAKEN,
            format!("base URL {} is already used by tenant {:?}", v.base_url, other.slug),
        ));
    }
    if store::tenants::old_url_owner(tx, &v.base_url)?.is_some() {
        return Err(old_url_taken(&v.base_url));
    }
    let new = NewTenant {
        slug: &v.slug,
        name: &v.name,
        base_url: &v.base_url,
        rp_id: &v.rp_id,
        registration: v.registration,
        created_at: now,
    };
    let id = store::tenants::insert(tx, &new)?;
    if let Some(key) = key {
        insert_key(tx, kek, id, key, bits, now)?;
    }
    Ok(id)
}

pub fn insert_key(
    tx: &WriteTx<'_>,
    kek: &Kek,
    tenant: TenantId,
    generated: &keys::GeneratedKey,
    bits: u32,
    now: i64,
) -> Result<(), Error> {
    let row = seal_key(kek, tenant, generated, bits, now)?;
    store::keys::insert_current(tx, tenant, &row, now)?;
    Ok(())
}

/// A generated key as stored: its private key sealed with the key-encryption key, bound to the
/// tenant and kid.
pub fn seal_key(
    kek: &Kek,
    tenant: TenantId,
    generated: &keys::GeneratedKey,
    bits: u32,
    now: i64,
) -> Result<KeyRow, Error> {
    let sealed = kek.seal(&keys::aad(tenant, &generated.kid), &generated.pkcs8)?;
    Ok(KeyRow {
        kid: generated.kid.clone(),
        state: KeyState::Current,
        alg: generated.alg,
        bits,
        sealed_private_key: sealed,
        created_at: now,
    })
}

/// Looks a tenant up by slug inside a transaction, or answers 404.
pub fn require(tx: &impl Reader, slug: &str) -> Result<TenantRow, Error> {
    store::tenants::by_slug(tx, slug)?.ok_or_else(|| not_found(slug))
}

pub async fn delete(state: &State, slug: String) -> Result<(), Error> {
    let s = slug.clone();
    state
        .db
        .write(move |tx| -> Result<(), Error> {
            store::cluster::admin_lock(tx)?;
            let row = require(tx, &s)?;
            store::tenants::delete(tx, row.id)?;
            Ok(())
        })
        .await?;
    state.registry.publish(&slug).await?;
    Ok(())
}

/// Every tenant, in the admin API's terms.
pub async fn list(db: &Db) -> Result<Vec<Tenant>, Error> {
    let rows = db.read(|tx| store::tenants::list(tx)).await?;
    Ok(rows.iter().map(to_wire).collect())
}

/// The tenant of `slug`, in the admin API's terms, with its old URLs.
pub async fn show(db: &Db, slug: String) -> Result<Tenant, Error> {
    db.read(move |tx| -> Result<_, Error> {
        let row = require(tx, &slug)?;
        Ok(to_wire_with(&row, &store::tenants::old_urls_of(tx, row.id)?))
    })
    .await
}

fn old_url_taken(url: &str) -> Error {
    Error::conflict(
        codes::BASE_URL_TAKEN,
        format!("base URL {url} still answers for a tenant that moved away from it (see `latchkey tenant show`)"),
    )
}

/// The RP ID a tenant moving to `host` keeps: its own while the host is it or under it (passkeys
/// go on working), else none.
fn rp_id_still_valid(rp_id: &str, host: &str) -> bool {
    host == rp_id || host.ends_with(&format!(".{rp_id}"))
}

/// Checks a change of a tenant's name, registration, base URL (its issuer) or RP ID against
/// SPEC §8's rules: a new base URL keeps the RP ID while it is still valid for the new host; one
/// that needs another RP ID is refused unless `req.rp_id` names it, and any RP ID change needs
/// `req.confirm` (passkeys registered under the old one stop working). Returns the tenant as it
/// would be.
pub fn checked_change(cur: &TenantRow, req: &UpdateTenant, public_url: &str) -> Result<ValidTenant, Error> {
    let base_text = req.base_url.clone().unwrap_or_else(|| cur.base_url.clone());
    let host = host_of(&urls::base_url(&base_text).map_err(|m| Error::invalid(codes::INVALID_BASE_URL, m))?);
    let rp_id = match &req.rp_id {
        Some(rp) => rp.to_ascii_lowercase(),
        None if rp_id_still_valid(&cur.rp_id, &host) => cur.rp_id.clone(),
        None => {
            return Err(Error::invalid(
                codes::INVALID_RP_ID,
                format!(
                    "the new base URL's host {host:?} is outside the RP ID {:?}: passkeys registered under it \
                     would stop working. To move anyway, name the new RP ID (--rp-id {host}) and confirm with --yes",
                    cur.rp_id
                ),
            ));
        }
    };
    if rp_id != cur.rp_id && !req.confirm {
        return Err(Error::invalid(
            codes::CONFIRMATION_REQUIRED,
            format!(
                "changing the RP ID from {:?} to {rp_id:?} makes every passkey registered under {:?} stop working \
                 (users need a recovery link: `latchkey user recover`); repeat with --yes to go on",
                cur.rp_id, cur.rp_id
            ),
        ));
    }
    validate(
        &CreateTenant {
            slug: cur.slug.clone(),
            name: Some(req.name.clone().unwrap_or_else(|| cur.name.clone())),
            base_url: Some(base_text),
            rp_id: Some(rp_id),
            registration: Some(req.registration.unwrap_or(cur.registration)),
        },
        public_url,
    )
}

/// The attestation policy a change makes of the tenant's `cur` (nothing asked: `cur` as it is,
/// whatever the metadata says since). `any` keeps no list of AAGUIDs (one is only proven by
/// attestation); `verified` needs imported metadata (without it every registration would be
/// refused), and each AAGUID newly listed must be in it.
pub fn attestation_change(
    tx: &impl Reader,
    cur: &Attestation,
    policy: Option<AttestationPolicy>,
    allowed_aaguids: Option<&[String]>,
) -> Result<Attestation, Error> {
    if policy.is_none() && allowed_aaguids.is_none() {
        return Ok(cur.clone());
    }
    let policy = policy.unwrap_or(cur.policy);
    let allowed = match allowed_aaguids {
        Some(list) => crate::webauthn::attestation::checked_aaguids(list)?,
        None if policy == AttestationPolicy::Any => vec![],
        None => cur.allowed_aaguids.clone(),
    };
    let bad = |m: String| Error::invalid(codes::INVALID_INPUT, m);
    match policy {
        AttestationPolicy::Any if !allowed.is_empty() => Err(bad(
            "allowed AAGUIDs need --attestation-policy verified: an authenticator's model is only proven by its \
             attestation"
                .into(),
        )),
        AttestationPolicy::Any => Ok(Attestation { policy, allowed_aaguids: vec![] }),
        AttestationPolicy::Verified => {
            if store::mds::blob(tx)?.is_none() {
                return Err(bad(
                    "a verified policy needs FIDO metadata to check against, and none is imported: download the \
                     BLOB from https://mds3.fidoalliance.org/ and run `latchkey mds import FILE` first"
                        .into(),
                ));
            }
            for a in allowed.iter().filter(|a| !cur.allowed_aaguids.contains(a)) {
                if store::mds::entry(tx, a)?.is_none() {
                    return Err(bad(format!(
                        "AAGUID {a} is not in the imported FIDO metadata (latchkey mds status); check it, or \
                         import newer metadata"
                    )));
                }
            }
            Ok(Attestation { policy, allowed_aaguids: allowed })
        }
    }
}

/// Refuses a base URL another tenant has, or still answers at after moving away from it.
pub fn check_url_free(tx: &impl Reader, cur: &TenantRow, base_url: &str) -> Result<(), Error> {
    if let Some(other) = store::tenants::by_base_url(tx, base_url)?.filter(|o| o.id != cur.id) {
        return Err(Error::conflict(
            codes::BASE_URL_TAKEN,
            format!("base URL {base_url} is already used by tenant {:?}", other.slug),
        ));
    }
    match store::tenants::old_url_owner(tx, base_url)? {
        Some(owner) if owner != cur.id => Err(old_url_taken(base_url)),
        _ => Ok(()),
    }
}

/// Stores a checked change in the caller's transaction. A moved tenant's old URL answers until
/// `now + keep_old_url` seconds (not at all for 0); moving back to a URL it still answers at
/// takes that URL out of the old ones.
pub fn store_change(
    tx: &WriteTx<'_>,
    cur: &TenantRow,
    v: &ValidTenant,
    keep_old_url: u64,
    now: Timestamp,
) -> Result<(), Error> {
    if v.base_url != cur.base_url {
        check_url_free(tx, cur, &v.base_url)?;
        store::tenants::forget_old_url(tx, &v.base_url)?;
        if keep_old_url > 0 {
            let until = now.saturating_add(i64::try_from(keep_old_url).unwrap_or(i64::MAX));
            store::tenants::keep_old_url(tx, cur.id, &cur.base_url, until)?;
        }
    }
    if v.base_url != cur.base_url || v.rp_id != cur.rp_id {
        store::tenants::set_url(tx, cur.id, &v.base_url, &v.rp_id)?;
    }
    if v.name != cur.name || v.registration != cur.registration {
        store::tenants::update(tx, cur.id, &v.name, v.registration)?;
    }
    Ok(())
}

/// Changes a tenant ([`checked_change`], [`store_change`]) in one transaction, then serves the
/// change on every node.
pub async fn update(state: &State, slug: String, req: UpdateTenant) -> Result<Tenant, Error> {
    if req.is_empty() {
        return Err(Error::invalid(
            codes::INVALID_INPUT,
            "nothing to change: give a name, base_url, rp_id, registration, attestation_policy or allowed_aaguids",
        ));
    }
    let public_url = state.config.public_base();
    let now = state.clock.now();
    let keep = req.keep_old_url_seconds.unwrap_or(latchkey::admin::KEEP_OLD_URL_SECONDS);
    let slug = state
        .db
        .write(move |tx| -> Result<String, Error> {
            crate::store::cluster::admin_lock(tx)?;
            let cur = require(tx, &slug)?;
            let v = checked_change(&cur, &req, &public_url)?;
            let attestation =
                attestation_change(tx, &cur.attestation, req.attestation_policy, req.allowed_aaguids.as_deref())?;
            store_change(tx, &cur, &v, keep, now)?;
            if attestation != cur.attestation {
                store::tenants::set_attestation(tx, cur.id, &attestation)?;
            }
            Ok(cur.slug)
        })
        .await?;
    state.registry.publish(&slug).await?;
    show(&state.db, slug).await
}

/// How many tenants there are.
pub async fn count(db: &Db) -> Result<u64, Error> {
    Ok(db.read(|tx| store::tenants::count(tx)).await?)
}

/// A tenant's logo (`tenant brand --logo`): its content type and bytes.
pub async fn logo_of(db: &Db, tenant: TenantId) -> Result<Option<store::apps::StoredLogo>, Error> {
    Ok(db.read(move |tx| store::tenants::logo(tx, tenant)).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(slug: &str) -> CreateTenant {
        CreateTenant { slug: slug.into(), ..CreateTenant::default() }
    }

    #[test]
    fn defaults_follow_public_url() {
        let v = validate(&req("acme"), "http://localhost:8080").unwrap();
        assert_eq!(v.base_url, "http://localhost:8080/acme");
        assert_eq!(v.rp_id, "localhost");
        assert_eq!(v.registration, Registration::Invite);
    }

    #[test]
    fn custom_domain_and_rp_id() {
        let mut r = req("acme");
        r.base_url = Some("https://login.acme.com/".into());
        r.rp_id = Some("acme.com".into());
        let v = validate(&r, "https://id.example.com").unwrap();
        assert_eq!(v.base_url, "https://login.acme.com");
        assert_eq!(v.rp_id, "acme.com");
        r.rp_id = Some("evil.com".into());
        assert_eq!(validate(&r, "https://id.example.com").err().map(|e| e.code), Some(codes::INVALID_RP_ID));
    }

    #[test]
    fn a_parent_domain_rp_id_must_be_registrable() {
        let rp_id = |base: &str, rp: &str| {
            let mut r = req("acme");
            r.base_url = Some(base.into());
            r.rp_id = Some(rp.into());
            validate(&r, "https://id.example.com").map(|v| v.rp_id).map_err(|e| e.code)
        };
        let refused = Err(codes::INVALID_RP_ID);
        assert_eq!(rp_id("https://login.acme.co.uk", "acme.co.uk"), Ok("acme.co.uk".into()));
        assert_eq!(rp_id("https://login.acme.co.uk", "co.uk"), refused);
        assert_eq!(rp_id("https://login.acme.co.uk", "uk"), refused);
        assert_eq!(rp_id("https://login.corp.test", "corp.test"), Ok("corp.test".into()));
        assert_eq!(rp_id("https://login.corp.test", "test"), refused);
        // Private suffixes too: one site on github.io may not claim them all.
        assert_eq!(rp_id("https://acme.github.io", "github.io"), refused);
        assert_eq!(rp_id("https://login.acme.github.io", "acme.github.io"), Ok("acme.github.io".into()));
        // Within the host's public suffix (s3.amazonaws.com), though not one itself.
        assert_eq!(rp_id("https://acme.s3.amazonaws.com", "amazonaws.com"), refused);
        // The host itself is always its own RP ID, public suffix or not (as browsers allow).
        assert_eq!(rp_id("https://github.io", "github.io"), Ok("github.io".into()));
        assert_eq!(rp_id("http://localhost:8080", "localhost"), Ok("localhost".into()));
        assert_eq!(rp_id("https://app.localhost", "localhost"), refused);
    }

    #[test]
    fn refuses_bad_input() {
        let code = |r: CreateTenant| validate(&r, "https://id.example.com").err().map(|e| e.code);
        assert_eq!(code(req("Bad Slug")), Some(codes::INVALID_SLUG));
        assert_eq!(code(req("metrics")), Some(codes::RESERVED_SLUG));
        let mut r = req("acme");
        r.base_url = Some("http://acme.com".into());
        assert_eq!(code(r), Some(codes::INVALID_BASE_URL));
    }
}
