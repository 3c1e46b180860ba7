//! `latchkey apply` / `latchkey export`: tenants, roles and applications as code. Apply computes a
//! plan against the database, then (unless dry-run) carries it out in one transaction, so a file
//! is applied wholly or not at all. Matching is by tenant slug and by role or app name; apply
//! creates and updates, it never deletes.

use std::collections::HashMap;

use latchkey::admin::{
    AppCreatedIn, ApplyRequest, ApplyResult, CreateApp, CreateTenant, Declared, DeclaredApp, DeclaredRole,
    DeclaredTenant, Registration,
};
use latchkey::codes;

use crate::State;
use crate::crypto::{random_token, sha256};
use crate::error::Error;
use crate::oidc::keys::{self, GeneratedKey};
use crate::store::apps::AppRow;
use crate::store::{self, Reader, TenantId, WriteTx};
use crate::tenants::{ValidTenant, insert_with_key, validate};
use crate::users::roles::valid_name;

enum Step {
    CreateTenant(ValidTenant),
    UpdateTenant { id: TenantId, slug: String, name: String, registration: Registration },
    CreateRole { slug: String, role: DeclaredRole },
    UpdateRole { tenant: TenantId, slug: String, id: i64, role: DeclaredRole },
    CreateApp { slug: String, app: AppRow },
    UpdateApp { tenant: TenantId, slug: String, app: AppRow },
}

impl Step {
    fn describe(&self) -> String {
        match self {
            Step::CreateTenant(t) => format!("create tenant {} ({})", t.slug, t.base_url),
            Step::UpdateTenant { slug, name, registration, .. } => {
                format!("update tenant {slug}: name {name:?}, registration {}", registration.as_str())
            }
            Step::CreateRole { slug, role } => format!("create role {slug}/{}", role.name),
            Step::UpdateRole { slug, role, .. } => {
                format!("update role {slug}/{}: description {:?}", role.name, role.description)
            }
            Step::CreateApp { slug, app } => format!("create app {slug}/{} ({})", app.name, app.app_type.as_str()),
            Step::UpdateApp { slug, app, .. } => format!("update app {slug}/{} ({})", app.name, app.client_id),
        }
    }
}

fn bad(message: String) -> Error {
    Error::invalid(codes::INVALID_INPUT, message)
}

fn app_row(d: &DeclaredApp) -> Result<AppRow, Error> {
    crate::apps::validate(&CreateApp {
        name: d.name.clone(),
        app_type: d.app_type,
        redirect_uris: d.redirect_uris.clone(),
        post_logout_redirect_uris: d.post_logout_redirect_uris.clone(),
        cors_origins: d.cors_origins.clone(),
        scopes: d.scopes.clone(),
    })
}

fn plan(tx: &impl Reader, declared: &Declared, public_url: &str) -> Result<Vec<Step>, Error> {
    let mut steps = vec![];
    let mut seen = std::collections::HashSet::new();
    for t in &declared.tenants {
        if !seen.insert(t.slug.clone()) {
            return Err(bad(format!("tenant {:?} appears twice in the file", t.slug)));
        }
        let existing = store::tenants::by_slug(tx, &t.slug)?;
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
                if t.base_url.as_ref().is_some_and(|b| b.trim_end_matches('/') != row.base_url) {
                    return Err(bad(format!(
                        "tenant {}: base_url cannot change (it is the issuer); it is {}",
                        t.slug, row.base_url
                    )));
                }
                if t.rp_id.as_ref().is_some_and(|r| r != &row.rp_id) {
                    return Err(bad(format!(
                        "tenant {}: rp_id cannot change once passkeys exist; it is {}",
                        t.slug, row.rp_id
                    )));
                }
                let name = t.name.clone().unwrap_or_else(|| row.name.clone());
                let registration = t.registration.unwrap_or(row.registration);
                if name != row.name || registration != row.registration {
                    steps.push(Step::UpdateTenant { id: row.id, slug: t.slug.clone(), name, registration });
                }
                (Some(row.id), store::roles::list(tx, row.id)?, store::apps::list(tx, row.id)?)
            }
        };
        for role in &t.roles {
            if !valid_name(&role.name) {
                return Err(bad(format!("tenant {}: {:?} is not a role name", t.slug, role.name)));
            }
            match (tenant_id, current_roles.iter().find(|r| r.name == role.name)) {
                (Some(tid), Some(cur)) if cur.description != role.description => {
                    steps.push(Step::UpdateRole { tenant: tid, slug: t.slug.clone(), id: cur.id, role: role.clone() });
                }
                (_, Some(_)) => {}
                (_, None) => steps.push(Step::CreateRole { slug: t.slug.clone(), role: role.clone() }),
            }
        }
        for app in &t.apps {
            let mut wanted = app_row(app)?;
            let matching: Vec<&AppRow> = current_apps.iter().filter(|a| a.name == app.name).collect();
            match (tenant_id, matching.as_slice()) {
                (_, []) => steps.push(Step::CreateApp { slug: t.slug.clone(), app: wanted }),
                (Some(tid), [cur]) => {
                    if cur.app_type != app.app_type {
                        return Err(bad(format!(
                            "app {}/{}: its type cannot change from {}",
                            t.slug,
                            app.name,
                            cur.app_type.as_str()
                        )));
                    }
                    let same = cur.redirect_uris == wanted.redirect_uris
                        && cur.post_logout_redirect_uris == wanted.post_logout_redirect_uris
                        && cur.cors_origins == wanted.cors_origins
                        && cur.scopes == wanted.scopes;
                    if !same {
                        wanted.client_id = cur.client_id.clone();
                        steps.push(Step::UpdateApp { tenant: tid, slug: t.slug.clone(), app: wanted });
                    }
                }
                _ => {
                    return Err(bad(format!(
                        "tenant {} has several apps named {:?}; rename them first",
                        t.slug, app.name
                    )));
                }
            }
        }
    }
    Ok(steps)
}

fn execute(
    tx: &WriteTx<'_>,
    steps: Vec<Step>,
    keys: &mut HashMap<String, GeneratedKey>,
    state_kek: &crate::crypto::Kek,
    bits: u32,
    now: i64,
) -> Result<Vec<AppCreatedIn>, Error> {
    let mut created = vec![];
    let tenant_id = |tx: &WriteTx<'_>, slug: &str| -> Result<TenantId, Error> {
        Ok(store::tenants::by_slug(tx, slug)?.ok_or_else(|| Error::internal("tenant vanished during apply"))?.id)
    };
    for step in steps {
        match step {
            Step::CreateTenant(v) => {
                let key = keys.remove(&v.slug).ok_or_else(|| {
                    Error::conflict(codes::INVALID_INPUT, "the configuration changed during apply; run it again")
                })?;
                insert_with_key(tx, state_kek, &v, &key, bits, now)?;
            }
            Step::UpdateTenant { id, name, registration, .. } => store::tenants::update(tx, id, &name, registration)?,
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
                let confidential = app.app_type.is_confidential();
                let secret = if confidential { Some(random_token()?) } else { None };
                app.secret_hash = secret.as_ref().map(|s| sha256(s.as_bytes()).to_vec());
                store::apps::insert(tx, tid, &app)?;
                created.push(AppCreatedIn {
                    tenant: slug,
                    name: app.name,
                    client_id: app.client_id,
                    client_secret: secret,
                });
            }
            Step::UpdateApp { tenant, app, .. } => store::apps::update_lists(tx, tenant, &app)?,
        }
    }
    Ok(created)
}

pub async fn apply(state: &State, req: ApplyRequest) -> Result<ApplyResult, Error> {
    let public = state.config.public_base();
    let declared = req.declared;
    let d = declared.clone();
    let p = public.clone();
    let (descriptions, new_tenants) = state
        .db
        .read(move |tx| -> Result<_, Error> {
            let steps = plan(tx, &d, &p)?;
            let new: Vec<String> = steps
                .iter()
                .filter_map(|s| if let Step::CreateTenant(v) = s { Some(v.slug.clone()) } else { None })
                .collect();
            Ok((steps.iter().map(Step::describe).collect::<Vec<_>>(), new))
        })
        .await?;
    if req.dry_run || descriptions.is_empty() {
        return Ok(ApplyResult { dry_run: req.dry_run, changes: descriptions, created_apps: vec![] });
    }
    // RSA keys for new tenants are generated before the transaction, off the async threads.
    let bits = state.config.rsa_bits;
    let mut keys = HashMap::new();
    for slug in &new_tenants {
        let k = tokio::task::spawn_blocking(move || keys::generate(bits)).await.map_err(Error::internal)??;
        keys.insert(slug.clone(), k);
    }
    let kek = state.kek.clone();
    let now = state.clock.now();
    let (changes, created) = state
        .db
        .write(move |tx| -> Result<_, Error> {
            let steps = plan(tx, &declared, &public)?;
            let changes: Vec<String> = steps.iter().map(Step::describe).collect();
            let created = execute(tx, steps, &mut keys, &kek, bits, now)?;
            Ok((changes, created))
        })
        .await?;
    for slug in &new_tenants {
        state.registry.refresh(state, slug).await?;
    }
    Ok(ApplyResult { dry_run: false, changes, created_apps: created })
}

/// One tenant's configuration in the declarative format, secrets left out.
pub async fn export(state: &State, slug: String) -> Result<Declared, Error> {
    state
        .db
        .read(move |tx| -> Result<Declared, Error> {
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
                })
                .collect();
            Ok(Declared {
                tenants: vec![DeclaredTenant {
                    slug: t.slug,
                    name: Some(t.name),
                    base_url: Some(t.base_url),
                    rp_id: Some(t.rp_id),
                    registration: Some(t.registration),
                    roles,
                    apps,
                }],
            })
        })
        .await
}
