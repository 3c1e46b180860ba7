//! `latchkey apply` / `latchkey export`: tenants, roles and applications as code. Apply computes a
//! plan against the database, then (unless dry-run) carries it out in one transaction, so a file
//! is applied wholly or not at all. Matching is by tenant slug, by role or app name and by social
//! provider key. Apply creates and updates what the file names and never deletes what it leaves
//! out (tenants, roles, apps, providers, users). An update sets the file's values: an app's
//! redirect URIs, post-logout URIs, origins and scopes, a role's description and a provider's
//! settings become exactly the file's, so values missing from an entry are removed — the plan
//! lists each field with its old and new value (and, for lists, what is added and removed).

use latchkey::admin::{
    AppCreatedIn, ApplyRequest, ApplyResult, CreateApp, CreateTenant, Declared, DeclaredApp, DeclaredRole,
    DeclaredSocial, DeclaredTenant, EnableSocial, FieldChange, PlannedChange, Registration, UpdateTenant,
};
use latchkey::codes;
use serde_json::Value;

use crate::crypto::{Kek, constant_time_eq, random_token, sha256};
use crate::error::Error;
use crate::state::State;
use crate::store::Db;
use crate::store::apps::AppRow;
use crate::store::social::ProviderRow;
use crate::store::tenants::TenantRow;
use crate::store::{self, Reader, TenantId, WriteTx};
use crate::tenants::{ValidTenant, check_url_free, checked_change, insert_tenant, store_change, validate};
use crate::users::roles::valid_name;

enum Step {
    CreateTenant(ValidTenant),
    /// A tenant's brand, set as `tenant brand` sets it (after its creation or update).
    SetBrand {
        slug: String,
        brand: crate::store::tenants::Brand,
        /// A new logo (`Some(None)`: none), stored with the brand.
        logo: Option<Option<crate::logo::Logo>>,
        fields: Vec<FieldChange>,
    },
    /// A tenant's attestation policy, set as `tenant update --attestation-policy` sets it.
    SetAttestation {
        slug: String,
        attestation: crate::store::tenants::Attestation,
        fields: Vec<FieldChange>,
    },
    UpdateTenant {
        current: Box<TenantRow>,
        wanted: Box<ValidTenant>,
        fields: Vec<FieldChange>,
    },
    CreateRole {
        slug: String,
        role: DeclaredRole,
    },
    UpdateRole {
        tenant: TenantId,
        slug: String,
        id: i64,
        role: DeclaredRole,
        fields: Vec<FieldChange>,
    },
    CreateApp {
        slug: String,
        app: AppRow,
    },
    UpdateApp {
        tenant: TenantId,
        slug: String,
        app: AppRow,
        fields: Vec<FieldChange>,
    },
    /// A social provider to create or change; `secret` is `None` to keep the stored one.
    PutSocial {
        slug: String,
        row: ProviderRow,
        secret: Option<String>,
        /// `None` for a new provider.
        fields: Option<Vec<FieldChange>>,
    },
}

/// A scalar field that changes, or `None`.
fn scalar(field: &str, old: impl Into<Value>, new: impl Into<Value>) -> Option<FieldChange> {
    let (old, new) = (old.into(), new.into());
    (old != new).then(|| FieldChange { field: field.to_owned(), old, new, added: vec![], removed: vec![] })
}

/// A list field that changes (the file's list replaces the stored one), or `None`.
fn list(field: &str, old: &[String], new: &[String]) -> Option<FieldChange> {
    (old != new).then(|| FieldChange {
        field: field.to_owned(),
        old: old.into(),
        new: new.into(),
        added: new.iter().filter(|v| !old.contains(v)).cloned().collect(),
        removed: old.iter().filter(|v| !new.contains(v)).cloned().collect(),
    })
}

/// `field old → new`; lists add what they gain and lose.
fn render(c: &FieldChange) -> String {
    if c.field == "client_secret" {
        return "client secret replaced".into();
    }
    let text = |v: &Value| match v {
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(|i| format!("{:?}", i.as_str().unwrap_or_default())).collect();
            format!("[{}]", items.join(", "))
        }
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    };
    let mut line = format!("{} {} → {}", c.field, text(&c.old), text(&c.new));
    if c.old.is_array() {
        let quoted = |v: &[String]| v.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", ");
        let mut parts = vec![];
        if !c.added.is_empty() {
            parts.push(format!("adds {}", quoted(&c.added)));
        }
        if !c.removed.is_empty() {
            parts.push(format!("removes {}", quoted(&c.removed)));
        }
        if parts.is_empty() {
            parts.push("reorders".into());
        }
        line.push_str(&format!(" ({}; the file's list replaces the stored one)", parts.join(", ")));
    }
    line
}

impl Step {
    /// The slug of the tenant whose own row this step creates or changes (what the registry holds).
    fn tenant_changed(&self) -> Option<String> {
        match self {
            Step::CreateTenant(v) => Some(v.slug.clone()),
            Step::UpdateTenant { current, .. } => Some(current.slug.clone()),
            Step::SetBrand { slug, .. } | Step::SetAttestation { slug, .. } => Some(slug.clone()),
            _ => None,
        }
    }

    fn planned(&self) -> PlannedChange {
        let (action, kind, tenant, name, fields) = match self {
            Step::CreateTenant(t) => ("create", "tenant", &t.slug, &t.slug, None),
            Step::UpdateTenant { current, fields, .. } => {
                ("update", "tenant", &current.slug, &current.slug, Some(fields))
            }
            Step::SetBrand { slug, fields, .. } | Step::SetAttestation { slug, fields, .. } => {
                ("update", "tenant", slug, slug, Some(fields))
            }
            Step::CreateRole { slug, role } => ("create", "role", slug, &role.name, None),
            Step::UpdateRole { slug, role, fields, .. } => ("update", "role", slug, &role.name, Some(fields)),
            Step::CreateApp { slug, app } => ("create", "app", slug, &app.name, None),
            Step::UpdateApp { slug, app, fields, .. } => ("update", "app", slug, &app.name, Some(fields)),
            Step::PutSocial { slug, row, fields: None, .. } => ("create", "social", slug, &row.slug, None),
            Step::PutSocial { slug, row, fields: Some(f), .. } => ("update", "social", slug, &row.slug, Some(f)),
        };
        PlannedChange {
            action: action.into(),
            kind: kind.into(),
            tenant: tenant.clone(),
            name: name.clone(),
            changes: fields.cloned().unwrap_or_default(),
        }
    }

    fn describe(&self) -> String {
        let head = match self {
            Step::CreateTenant(t) => return format!("create tenant {} ({})", t.slug, t.base_url),
            Step::CreateRole { slug, role } => return format!("create role {slug}/{}", role.name),
            Step::CreateApp { slug, app } => {
                return format!("create app {slug}/{} ({})", app.name, app.app_type.as_str());
            }
            Step::PutSocial { slug, row, fields: None, .. } => {
                return format!("create social {slug}/{} ({})", row.slug, row.kind.as_str());
            }
            Step::UpdateTenant { current, .. } => format!("update tenant {}", current.slug),
            Step::SetBrand { slug, .. } | Step::SetAttestation { slug, .. } => format!("update tenant {slug}"),
            Step::UpdateRole { slug, role, .. } => format!("update role {slug}/{}", role.name),
            Step::UpdateApp { slug, app, .. } => format!("update app {slug}/{} ({})", app.name, app.client_id),
            Step::PutSocial { slug, row, .. } => format!("update social {slug}/{}", row.slug),
        };
        let fields: Vec<String> = self.planned().changes.iter().map(render).collect();
        format!("{head}: {}", fields.join(", "))
    }
}

fn bad(message: String) -> Error {
    Error::invalid(codes::INVALID_INPUT, message)
}

fn consent_word(app: &AppRow) -> &'static str {
    if app.consent_explicit { "explicit" } else { "implicit" }
}

fn app_row(d: &DeclaredApp) -> Result<AppRow, Error> {
    crate::apps::validate(&CreateApp {
        name: d.name.clone(),
        app_type: d.app_type,
        redirect_uris: d.redirect_uris.clone(),
        post_logout_redirect_uris: d.post_logout_redirect_uris.clone(),
        cors_origins: d.cors_origins.clone(),
        scopes: d.scopes.clone(),
        device_flow: d.device_flow,
        require_acr: d.require_acr.clone(),
        consent: d.consent.clone(),
        backchannel_logout_uri: d.backchannel_logout_uri.clone(),
        backchannel_logout_session_required: d.backchannel_logout_session_required,
        logo_png: None,
        signing_alg: d.signing_alg.clone(),
        require_par: d.require_par,
        require_dpop: d.require_dpop,
        token_auth: d.token_auth.clone(),
        jwks: d.jwks.clone(),
        jwks_uri: d.jwks_uri.clone(),
    })
}

/// What differs between the stored provider and the declared one.
fn social_changes(cur: &ProviderRow, new: &ProviderRow) -> Vec<FieldChange> {
    [
        scalar("kind", cur.kind.as_str(), new.kind.as_str()),
        scalar("name", cur.label.as_str(), new.label.as_str()),
        scalar("client_id", cur.client_id.as_str(), new.client_id.as_str()),
        scalar("issuer", cur.issuer.clone(), new.issuer.clone()),
        scalar("github_url", cur.github_url.clone(), new.github_url.clone()),
        scalar("github_api_url", cur.github_api_url.clone(), new.github_api_url.clone()),
        list("allowed_domains", &cur.allowed_domains, &new.allowed_domains),
        list("allowed_orgs", &cur.allowed_orgs, &new.allowed_orgs),
        scalar("create_users", cur.create_users, new.create_users),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Plans one declared provider: validated exactly as `latchkey social enable`.
fn plan_social(
    tx: &impl Reader,
    kek: &Kek,
    slug: &str,
    tenant: Option<TenantId>,
    registration: Registration,
    d: &DeclaredSocial,
) -> Result<Option<Step>, Error> {
    let req = EnableSocial {
        kind: d.kind.clone(),
        client_id: d.client_id.clone(),
        // Validation wants a secret; whether one was given is decided below.
        client_secret: d.client_secret.clone().unwrap_or_else(|| "kept".into()),
        name: d.name.clone(),
        issuer: d.issuer.clone(),
        github_url: d.github_url.clone(),
        github_api_url: d.github_api_url.clone(),
        allowed_domains: d.allowed_domains.clone(),
        allowed_orgs: d.allowed_orgs.clone(),
        create_users: d.create_users,
        // `apply` plans without calling providers (a dry run must not reach out).
        no_verify: true,
    };
    let (row, _) = crate::social::validate(&req, registration)
        .map_err(|e| Error::new(e.kind, e.code, format!("tenant {slug}, social {}: {}", d.kind, e.message)))?;
    let secret = d.client_secret.as_deref().map(|s| s.trim_end_matches(['\r', '\n']).to_owned());
    let current = match tenant {
        Some(t) => store::social::provider(tx, t, &row.slug)?,
        None => None,
    };
    let Some(cur) = current else {
        if secret.as_deref().is_none_or(str::is_empty) {
            return Err(bad(match &d.client_secret_file {
                Some(file) => format!(
                    "tenant {slug}, social {}: a new provider needs its client secret, and {file} does not exist \
                     (write the secret there, next to the configuration file)",
                    row.slug
                ),
                None => format!(
                    "tenant {slug}, social {}: a new provider needs client_secret_file (the file with its client \
                     secret)",
                    row.slug
                ),
            }));
        }
        return Ok(Some(Step::PutSocial { slug: slug.to_owned(), row, secret, fields: None }));
    };
    let mut changes = social_changes(&cur, &row);
    let secret = match (secret, tenant) {
        (Some(s), Some(t)) => {
            let stored = crate::social::client_secret(kek, t, &cur)?;
            if constant_time_eq(stored.as_bytes(), s.as_bytes()) {
                None
            } else {
                changes.push(FieldChange {
                    field: "client_secret".into(),
                    old: Value::Null,
                    new: Value::Null,
                    added: vec![],
                    removed: vec![],
                });
                Some(s)
            }
        }
        _ => None,
    };
    if changes.is_empty() {
        return Ok(None);
    }
    Ok(Some(Step::PutSocial { slug: slug.to_owned(), row, secret, fields: Some(changes) }))
}

fn plan(tx: &impl Reader, kek: &Kek, declared: &Declared, public_url: &str) -> Result<Vec<Step>, Error> {
    let mut steps = vec![];
    let mut seen = std::collections::HashSet::new();
    for t in &declared.tenants {
        if !seen.insert(t.slug.clone()) {
            return Err(bad(format!("tenant {:?} appears twice in the file", t.slug)));
        }
        let existing = store::tenants::by_slug(tx, &t.slug)?;
        let registration = t.registration.or(existing.as_ref().map(|r| r.registration)).unwrap_or_default();
        let (tenant_id, current_roles, current_apps) = match &existing {
            None => {
                let req = CreateTenant {
                    slug: t.slug.clone(),
                    name: t.name.clone(),
                    base_url: t.base_url.clone(),
                    rp_id: t.rp_id.clone(),
                    registration: t.registration,
                };
                steps.push(Step::CreateTenant(validate(&req, public_url)?));
                (None, vec![], vec![])
            }
            Some(row) => {
                // A new base_url moves the tenant as `latchkey tenant update --base-url` does (the
                // old URL answers for 30 days); an RP ID change needs that command's --yes.
                let change = UpdateTenant {
                    name: t.name.clone(),
                    base_url: t.base_url.clone(),
                    rp_id: t.rp_id.clone(),
                    registration: t.registration,
                    keep_old_url_seconds: None,
                    confirm: false,
                    ..UpdateTenant::default()
                };
                let wanted = checked_change(row, &change, public_url).map_err(|e| {
                    let why = if e.code == codes::CONFIRMATION_REQUIRED {
                        format!(
                            "rp_id cannot change in apply (passkeys registered under {:?} would stop working); \
                             use `latchkey tenant update {} --rp-id ID --yes`",
                            row.rp_id, t.slug
                        )
                    } else {
                        e.message.clone()
                    };
                    bad(format!("tenant {}: {why}", t.slug))
                })?;
                if wanted.base_url != row.base_url {
                    check_url_free(tx, row, &wanted.base_url)?;
                }
                let fields: Vec<FieldChange> = [
                    scalar("name", row.name.as_str(), wanted.name.as_str()),
                    scalar("registration", row.registration.as_str(), wanted.registration.as_str()),
                    scalar("base_url", row.base_url.as_str(), wanted.base_url.as_str()),
                ]
                .into_iter()
                .flatten()
                .collect();
                if !fields.is_empty() {
                    steps.push(Step::UpdateTenant { current: Box::new(row.clone()), wanted: Box::new(wanted), fields });
                }
                (Some(row.id), store::roles::list(tx, row.id)?, store::apps::list(tx, row.id)?)
            }
        };
        // The brand: what the file gives replaces what is set (absent keeps it).
        let current_brand = existing.as_ref().map(|r| r.brand.clone()).unwrap_or_default();
        let asked = latchkey::admin::BrandTenant {
            display_name: t.display_name.clone(),
            color: t.color.clone(),
            default_locale: t.default_locale.clone(),
            // The logo is checked below, from the file `logo_file` names.
            logo: None,
        };
        let mut brand = crate::brand::changed(&current_brand, &asked)
            .map_err(|e| bad(format!("tenant {}: {}", t.slug, e.message)))?;
        // The logo, from the file `logo_file` names (the CLI sends its bytes); checked as
        // `tenant brand --logo` checks it, changed only when its content differs.
        let logo = match t.logo.as_deref().map(str::trim) {
            None => None,
            Some("none") => Some(None),
            Some(b64) => Some(Some(
                crate::logo::check(b64, crate::logo::Formats::PngOrSvg)
                    .map_err(|e| bad(format!("tenant {}: {}", t.slug, e.message)))?,
            )),
        };
        let logo = logo.filter(|l| l.as_ref().map(|l| &l.sha) != current_brand.logo_sha.as_ref());
        if let Some(l) = &logo {
            brand.logo_sha = l.as_ref().map(|l| l.sha.clone());
        }
        let none = || "none".to_owned();
        let fields: Vec<FieldChange> = [
            scalar(
                "display_name",
                current_brand.display_name.clone().unwrap_or_else(none),
                brand.display_name.clone().unwrap_or_else(none),
            ),
            scalar(
                "color",
                current_brand.accent_color.clone().unwrap_or_else(none),
                brand.accent_color.clone().unwrap_or_else(none),
            ),
            scalar(
                "default_locale",
                current_brand.default_locale.clone().unwrap_or_else(none),
                brand.default_locale.clone().unwrap_or_else(none),
            ),
            scalar(
                "logo_sha256",
                current_brand.logo_sha.clone().unwrap_or_else(none),
                brand.logo_sha.clone().unwrap_or_else(none),
            ),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !fields.is_empty() {
            steps.push(Step::SetBrand { slug: t.slug.clone(), brand, logo, fields });
        }
        // The attestation policy, checked as `tenant update` checks it.
        let current_attestation = existing.as_ref().map(|r| r.attestation.clone()).unwrap_or_default();
        let attestation = crate::tenants::attestation_change(
            tx,
            &current_attestation,
            t.attestation_policy,
            t.allowed_aaguids.as_deref(),
        )
        .map_err(|e| bad(format!("tenant {}: {}", t.slug, e.message)))?;
        let fields: Vec<FieldChange> = [
            scalar("attestation_policy", current_attestation.policy.as_str(), attestation.policy.as_str()),
            list("allowed_aaguids", &current_attestation.allowed_aaguids, &attestation.allowed_aaguids),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !fields.is_empty() {
            steps.push(Step::SetAttestation { slug: t.slug.clone(), attestation, fields });
        }
        for role in &t.roles {
            if !valid_name(&role.name) {
                return Err(bad(format!("tenant {}: {:?} is not a role name", t.slug, role.name)));
            }
            match (tenant_id, current_roles.iter().find(|r| r.name == role.name)) {
                (Some(tid), Some(cur)) if cur.description != role.description => {
                    let fields = scalar("description", cur.description.as_str(), role.description.as_str())
                        .into_iter()
                        .collect();
                    steps.push(Step::UpdateRole {
                        tenant: tid,
                        slug: t.slug.clone(),
                        id: cur.id,
                        role: role.clone(),
                        fields,
                    });
                }
                (_, Some(_)) => {}
                (_, None) => steps.push(Step::CreateRole { slug: t.slug.clone(), role: role.clone() }),
            }
        }
        let mut app_names = std::collections::HashSet::new();
        for app in &t.apps {
            let mut wanted = app_row(app)?;
            // A key is made with `key rotate --alg`, never by a file: an app whose algorithm the
            // tenant has no key of is refused in the plan.
            // (A tenant the file creates has its RS256 key only: no id matches none.)
            crate::apps::ensure_key_for(tx, tenant_id.unwrap_or(TenantId(0)), &t.slug, wanted.signing_alg)?;
            // Names are unique per tenant (apps are matched by them), in the file as in the database.
            if !app_names.insert(wanted.name.clone()) {
                return Err(Error::conflict(
                    codes::APP_NAME_TAKEN,
                    format!(
                        "tenant {}: app {:?} appears twice in the file; app names are unique per tenant",
                        t.slug, app.name
                    ),
                ));
            }
            match (tenant_id, current_apps.iter().find(|a| a.name == wanted.name)) {
                (_, None) => steps.push(Step::CreateApp { slug: t.slug.clone(), app: wanted }),
                (Some(tid), Some(cur)) => {
                    if cur.app_type != app.app_type {
                        return Err(bad(format!(
                            "app {}/{}: its type cannot change from {}",
                            t.slug,
                            app.name,
                            cur.app_type.as_str()
                        )));
                    }
                    // A secret is made, or given up, only when an app is created.
                    if cur.token_auth != wanted.token_auth {
                        return Err(bad(format!(
                            "app {}/{}: its token_auth cannot change from {} (delete the app and create it again)",
                            t.slug,
                            app.name,
                            cur.token_auth.as_str()
                        )));
                    }
                    let fields: Vec<FieldChange> = [
                        list("redirect_uris", &cur.redirect_uris, &wanted.redirect_uris),
                        list(
                            "post_logout_redirect_uris",
                            &cur.post_logout_redirect_uris,
                            &wanted.post_logout_redirect_uris,
                        ),
                        list("cors_origins", &cur.cors_origins, &wanted.cors_origins),
                        list("scopes", &cur.scopes, &wanted.scopes),
                        scalar("device_flow", cur.device_flow, wanted.device_flow),
                        scalar(
                            "require_acr",
                            cur.require_acr.as_deref().unwrap_or("none"),
                            wanted.require_acr.as_deref().unwrap_or("none"),
                        ),
                        scalar("consent", consent_word(cur), consent_word(&wanted)),
                        scalar("signing_alg", cur.signing_alg.as_str(), wanted.signing_alg.as_str()),
                        scalar("require_par", cur.require_par, wanted.require_par),
                        scalar("require_dpop", cur.require_dpop, wanted.require_dpop),
                        scalar("jwks", cur.jwks.as_deref().unwrap_or("none"), wanted.jwks.as_deref().unwrap_or("none")),
                        scalar(
                            "jwks_uri",
                            cur.jwks_uri.as_deref().unwrap_or("none"),
                            wanted.jwks_uri.as_deref().unwrap_or("none"),
                        ),
                        scalar(
                            "backchannel_logout_uri",
                            cur.backchannel_logout_uri.as_deref().unwrap_or("none"),
                            wanted.backchannel_logout_uri.as_deref().unwrap_or("none"),
                        ),
                        scalar(
                            "backchannel_logout_session_required",
                            cur.backchannel_logout_session_required,
                            wanted.backchannel_logout_session_required,
                        ),
                    ]
                    .into_iter()
                    .flatten()
                    .collect();
                    if !fields.is_empty() {
                        wanted.client_id = cur.client_id.clone();
                        // A logo is set with `app update --logo`; the file leaves it alone.
                        wanted.logo_sha = cur.logo_sha.clone();
                        steps.push(Step::UpdateApp { tenant: tid, slug: t.slug.clone(), app: wanted, fields });
                    }
                }
                (None, Some(_)) => return Err(Error::internal("apps of a tenant that does not exist yet")),
            }
        }
        let mut keys = std::collections::HashSet::new();
        for social in &t.social {
            if let Some(step) = plan_social(tx, kek, &t.slug, tenant_id, registration, social)? {
                if let Step::PutSocial { row, .. } = &step
                    && !keys.insert(row.slug.clone())
                {
                    return Err(bad(format!("tenant {}: social provider {:?} appears twice", t.slug, row.slug)));
                }
                steps.push(step);
            }
        }
    }
    Ok(steps)
}

/// Applies the planned steps; the tenants it creates are pushed to `new_tenants`, without keys.
fn execute(
    tx: &WriteTx<'_>,
    steps: Vec<Step>,
    new_tenants: &mut Vec<(TenantId, String)>,
    state_kek: &crate::crypto::Kek,
    now: i64,
) -> Result<Vec<AppCreatedIn>, Error> {
    let mut created = vec![];
    let tenant_id = |tx: &WriteTx<'_>, slug: &str| -> Result<TenantId, Error> {
        Ok(store::tenants::by_slug(tx, slug)?.ok_or_else(|| Error::internal("tenant vanished during apply"))?.id)
    };
    for step in steps {
        match step {
            Step::CreateTenant(v) => {
                let id = insert_tenant(tx, state_kek, &v, None, 0, now)?;
                new_tenants.push((id, v.slug));
            }
            Step::UpdateTenant { current, wanted, .. } => {
                store_change(tx, &current, &wanted, latchkey::admin::KEEP_OLD_URL_SECONDS, now)?
            }
            Step::SetBrand { slug, brand, logo, .. } => {
                let id = tenant_id(tx, &slug)?;
                if let Some(logo) = &logo {
                    store::tenants::put_logo(tx, id, logo.as_ref().map(|l| (l.content_type, l.bytes.as_slice())))?;
                }
                store::tenants::set_brand(tx, id, &brand)?
            }
            Step::SetAttestation { slug, attestation, .. } => {
                store::tenants::set_attestation(tx, tenant_id(tx, &slug)?, &attestation)?
            }
            Step::CreateRole { slug, role } => {
                store::roles::insert(tx, tenant_id(tx, &slug)?, &role.name, &role.description, now)?
            }
            Step::UpdateRole { tenant, id, role, .. } => {
                store::roles::set_description(tx, tenant, id, &role.description)?
            }
            Step::CreateApp { slug, mut app } => {
                let tid = tenant_id(tx, &slug)?;
                app.client_id = crate::apps::new_client_id()?;
                app.created_at = now;
                // A private_key_jwt app signs its assertions: it gets no secret.
                let confidential = app.app_type.is_confidential() && app.token_auth == crate::store::TokenAuth::Secret;
                let secret = if confidential { Some(random_token()?) } else { None };
                app.secret_hash = secret.as_ref().map(|s| sha256(s.as_bytes()).to_vec());
                if app.token_auth == crate::store::TokenAuth::PrivateKeyJwt {
                    app.secret_hash = Some(crate::apps::unknown_secret_hash()?);
                }
                store::apps::insert(tx, tid, &app)?;
                created.push(AppCreatedIn {
                    tenant: slug,
                    name: app.name,
                    client_id: app.client_id,
                    client_secret: secret,
                });
            }
            Step::UpdateApp { tenant, app, .. } => store::apps::update(tx, tenant, &app)?,
            Step::PutSocial { slug, mut row, secret, .. } => {
                let tid = tenant_id(tx, &slug)?;
                row.created_at = now;
                row.secret_sealed = match secret {
                    Some(s) => crate::social::seal_secret(state_kek, tid, &row.slug, &s)?,
                    None => {
                        let cur = store::social::provider(tx, tid, &row.slug)?
                            .ok_or_else(|| Error::internal("provider vanished during apply"))?;
                        row.created_at = cur.created_at;
                        cur.secret_sealed
                    }
                };
                let removed = store::social::upsert_provider(tx, tid, &row)?;
                crate::social::links_removed(&slug, &row, removed);
            }
        }
    }
    Ok(created)
}

pub async fn apply(state: &State, req: ApplyRequest) -> Result<ApplyResult, Error> {
    let public = state.config.public_base();
    let declared = req.declared;
    let d = declared.clone();
    let p = public.clone();
    let k = state.kek.clone();
    let (descriptions, planned) = state
        .db
        .read(move |tx| -> Result<_, Error> {
            let steps = plan(tx, &k, &d, &p)?;
            Ok((
                steps.iter().map(Step::describe).collect::<Vec<_>>(),
                steps.iter().map(Step::planned).collect::<Vec<_>>(),
            ))
        })
        .await?;
    if req.dry_run || planned.is_empty() {
        return Ok(ApplyResult { dry_run: req.dry_run, changes: descriptions, plan: planned, created_apps: vec![] });
    }
    // New tenants are stored without keys, which are made in the background afterwards (about
    // 60 ms of a core each: ten thousand tenants would otherwise wait ten minutes for theirs).
    let kek = state.kek.clone();
    let now = state.clock.now();
    // Planned again inside the write transaction: what is applied is what the database holds now.
    let (changes, planned, created, touched, new_tenants) = state
        .db
        .write(move |tx| -> Result<_, Error> {
            store::cluster::admin_lock(tx)?;
            let steps = plan(tx, &kek, &declared, &public)?;
            let changes: Vec<String> = steps.iter().map(Step::describe).collect();
            let planned: Vec<PlannedChange> = steps.iter().map(Step::planned).collect();
            let touched: Vec<String> = steps.iter().filter_map(Step::tenant_changed).collect();
            let mut new_tenants = vec![];
            let created = execute(tx, steps, &mut new_tenants, &kek, now)?;
            Ok((changes, planned, created, touched, new_tenants))
        })
        .await?;
    // Queued before anything else can fail: the tenants are stored.
    state.keygen.enqueue(new_tenants);
    // New tenants are routed from now on; changed ones serve their new name and registration
    // mode at once (the registry holds both).
    for slug in &touched {
        state.registry.refresh(slug).await?;
    }
    // Changed applications too: on PostgreSQL every node then refuses a removed application.
    if !changes.is_empty() {
        state.db.wait_published().await;
    }
    Ok(ApplyResult { dry_run: false, changes, plan: planned, created_apps: created })
}

/// One tenant's configuration in the declarative format, secrets left out.
pub async fn export(db: &Db, slug: String) -> Result<Declared, Error> {
    db.read(move |tx| -> Result<Declared, Error> {
        let t = crate::tenants::require(tx, &slug)?;
        let roles = store::roles::list(tx, t.id)?
            .into_iter()
            .map(|r| DeclaredRole { name: r.name, description: r.description })
            .collect();
        let apps = store::apps::list(tx, t.id)?
            .into_iter()
            .map(|a| DeclaredApp {
                name: a.name,
                app_type: a.app_type,
                redirect_uris: a.redirect_uris,
                post_logout_redirect_uris: a.post_logout_redirect_uris,
                cors_origins: a.cors_origins,
                scopes: a.scopes,
                device_flow: a.device_flow,
                require_acr: a.require_acr,
                consent: a.consent_explicit.then(|| "explicit".to_owned()),
                backchannel_logout_uri: a.backchannel_logout_uri,
                backchannel_logout_session_required: a.backchannel_logout_session_required,
                signing_alg: (a.signing_alg != crate::store::SigningAlg::RS256)
                    .then(|| a.signing_alg.as_str().to_owned()),
                require_par: a.require_par,
                require_dpop: a.require_dpop,
                token_auth: (a.token_auth != crate::store::TokenAuth::Secret).then(|| a.token_auth.as_str().to_owned()),
                jwks: a.jwks,
                jwks_uri: a.jwks_uri,
            })
            .collect();
        // The logo is named, not carried: `{slug}-logo.svg|png` next to the file (saved with
        // `curl -o` from the tenant's /logo). Applied while that file is missing, it is kept.
        let logo_file = store::tenants::logo(tx, t.id)?
            .map(|l| format!("{}-logo.{}", t.slug, if l.content_type == "image/svg+xml" { "svg" } else { "png" }));
        // Providers without their secrets, each naming the file its secret would be read
        // from: applied back here (no such file) the stored secret is kept; on a new
        // install the operator writes the file first.
        let social = store::social::providers(tx, t.id)?
            .into_iter()
            .map(|p| DeclaredSocial {
                kind: p.kind.as_str().to_owned(),
                name: Some(p.label),
                client_id: p.client_id,
                client_secret_file: Some(format!("{}-{}.secret", t.slug, p.slug)),
                client_secret: None,
                issuer: p.issuer,
                github_url: p.github_url,
                github_api_url: p.github_api_url,
                allowed_domains: p.allowed_domains,
                allowed_orgs: p.allowed_orgs,
                create_users: p.create_users,
            })
            .collect();
        Ok(Declared {
            tenants: vec![DeclaredTenant {
                slug: t.slug,
                name: Some(t.name),
                base_url: Some(t.base_url),
                rp_id: Some(t.rp_id),
                registration: Some(t.registration),
                display_name: t.brand.display_name,
                color: t.brand.accent_color,
                default_locale: t.brand.default_locale,
                logo_file,
                logo: None,
                attestation_policy: Some(t.attestation.policy),
                allowed_aaguids: (!t.attestation.allowed_aaguids.is_empty()).then_some(t.attestation.allowed_aaguids),
                roles,
                apps,
                social,
            }],
        })
    })
    .await
}
