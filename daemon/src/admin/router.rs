//! Admin request handling: [`route::parse`] names the call, one `match` runs its operation, and
//! errors become `{code, message}` answers in `http::errors::admin`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode};
use latchkey::admin::{
    ApplyRequest, AuditEvent, Confirm, CreateApp, CreateRole, CreateTenant, Emails, EnableSocial, InviteUser, PREFIX,
    SigningAlg, Status, UpdateApp, UpdateTenant,
};
use latchkey::codes;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::AdminPeer;
use super::audit::{self, Note};
use super::route::{self, AdminRoute, AdminUnrouted};
use crate::http::body::{Req, RequestBody, Text, read_json, read_json_or_default};
use crate::http::response::{empty, json, with_header_value};
use crate::http::{Body, errors, request};
use latchkey_domain::error::{Error, Kind};
use latchkey_domain::oidc::rotation;
use latchkey_domain::state::State;
use latchkey_domain::{apps, tenants, users, webhooks};

pub async fn handle(state: Arc<State>, req: Request<Incoming>, peer: AdminPeer) -> Response<Body> {
    let started = Instant::now();
    let req = req.map(|b| RequestBody::new(b, state.config.limits.drain_max()));
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let had_body = crate::http::body::has_body(&req);
    let route = route::parse(&method, &path);
    let mut note = Note::default();
    let mut response = match &route {
        Ok(r) => match dispatch(&state, r.clone(), req, peer, &mut note).await {
            Ok(resp) => {
                let outcome = if resp.status().is_success() {
                    "success".to_owned()
                } else {
                    format!("failure: {}", resp.status())
                };
                audit::record(&state, r, peer.uid, note, &outcome);
                resp
            }
            Err(e) => {
                audit::record(&state, r, peer.uid, note, &format!("failure: {}", e.code));
                errors::admin(&e)
            }
        },
        Err(unrouted) => refuse(unrouted, &method, &path),
    };
    if had_body && !response.status().is_success() {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    let status = response.status().as_u16();
    let ms = (started.elapsed().as_secs_f64() * 1e6).round() / 1e3;
    tracing::info!(target: "latchkeyd::admin", uid = peer.uid, %method, %path, status, ms);
    response
}

fn refuse(unrouted: &AdminUnrouted, method: &hyper::Method, path: &str) -> Response<Body> {
    match unrouted {
        AdminUnrouted::NotFound => errors::admin(&Error::not_found(
            codes::NOT_FOUND,
            format!("no admin call {method} {path}; calls live under {PREFIX}/"),
        )),
        AdminUnrouted::BadEncoding(seg) => {
            errors::admin(&Error::invalid(codes::INVALID_INPUT, format!("bad percent-encoding in {seg:?}")))
        }
        AdminUnrouted::WrongMethod(allow) => {
            let e = Error::new(Kind::MethodNotAllowed, codes::METHOD_NOT_ALLOWED, format!("use {allow} on {path}"));
            with_header_value(errors::admin(&e), header::ALLOW, allow)
        }
    }
}

fn ok<T: Serialize>(value: &T) -> Result<Response<Body>, Error> {
    Ok(json(StatusCode::OK, value))
}

fn created<T: Serialize>(value: &T) -> Result<Response<Body>, Error> {
    Ok(json(StatusCode::CREATED, value))
}

fn done() -> Result<Response<Body>, Error> {
    Ok(empty(StatusCode::NO_CONTENT))
}

async fn body<T: DeserializeOwned>(state: &State, req: Req) -> Result<T, Error> {
    read_json(req, state.config.limits.json_body_max, Text::NoNul).await
}

/// An application's create or update, or a tenant's brand, which may carry a logo (base64, 4/3 of its size).
async fn app_body<T: DeserializeOwned>(state: &State, req: Req) -> Result<T, Error> {
    let room = (latchkey_domain::logo::MAX_BYTES as u64) * 4 / 3 + 4;
    read_json(req, state.config.limits.json_body_max + room, Text::NoNul).await
}

/// A FIDO metadata BLOB (a few MiB from the FIDO Alliance) with its roots.
async fn mds_body(req: Req) -> Result<latchkey::admin::ImportMds, Error> {
    let room = latchkey_domain::webauthn::mds::MAX_BLOB_BYTES as u64 + 1024 * 1024;
    read_json(req, room, Text::NoNul).await
}

/// Destructive calls need `{"confirm": true}` (the CLI's `--yes`).
async fn confirmed(state: &State, req: Req, what: &str) -> Result<(), Error> {
    let c: Confirm = read_json_or_default(req, state.config.limits.json_body_max, Text::NoNul).await?;
    if c.confirm {
        Ok(())
    } else {
        Err(Error::invalid(
            codes::CONFIRMATION_REQUIRED,
            format!("deleting {what} cannot be undone; send {{\"confirm\": true}} (the CLI's --yes)"),
        ))
    }
}

/// A numeric id or count from the path or the query.
fn number(text: &str, what: &str) -> Result<i64, Error> {
    text.parse().map_err(|_| Error::invalid(codes::INVALID_INPUT, format!("{text:?} is not a {what} number")))
}

/// Query parameters of an admin call (repeats: the last one counts; these are filters, not
/// credentials). A value with a control character is refused, as on the public listener: a NUL
/// byte could not even be compared with on PostgreSQL.
fn query(req: &Req) -> Result<HashMap<String, String>, Error> {
    let q: HashMap<String, String> =
        url::form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes()).into_owned().collect();
    match q.iter().find(|(_, v)| latchkey_domain::params::has_control(v)) {
        Some((name, _)) => Err(Error::invalid(
            codes::INVALID_REQUEST,
            format!("the parameter {name} holds a control character; remove it"),
        )),
        None => Ok(q),
    }
}

/// One operation per call.
async fn dispatch(
    state: &Arc<State>,
    route: AdminRoute,
    req: Req,
    peer: AdminPeer,
    note: &mut Note,
) -> Result<Response<Body>, Error> {
    use AdminRoute as A;
    match route {
        A::Status => ok(&status(state).await?),
        A::TenantList => ok(&tenants::list(&state.db).await?),
        A::TenantCreate => {
            let r: CreateTenant = body(state, req).await?;
            note.tenant = Some(r.slug.clone());
            note.subject = Some(r.slug.clone());
            created(&tenants::create(state, r).await?)
        }
        A::TenantShow(slug) => ok(&tenants::show(&state.db, slug).await?),
        A::TenantUpdate(slug) => {
            let r: UpdateTenant = body(state, req).await?;
            // The request itself says what was asked: `{"base_url": "…"}`.
            note.detail = serde_json::to_string(&r).ok();
            ok(&tenants::update(state, slug, r).await?)
        }
        A::TenantBrand(slug) => {
            let r: latchkey::admin::BrandTenant = app_body(state, req).await?;
            // What was asked, a new logo by its size, not its bytes.
            let mut shown = r.clone();
            shown.logo =
                shown.logo.map(|b| if b.trim() == "none" { b } else { format!("{} base64 characters", b.len()) });
            note.detail = serde_json::to_string(&shown).ok();
            ok(&latchkey_domain::brand::set(state, slug, r).await?)
        }
        A::ScimStatus(slug) => ok(&latchkey_domain::scim::status(state, slug).await?),
        A::WebhookList(slug) => ok(&webhooks::list(state, slug).await?),
        A::WebhookCreate(slug) => {
            let r: latchkey::admin::CreateWebhook = body(state, req).await?;
            // The receiver's origin and the events: never the secret, nor credentials, a path or
            // a query that may carry a token (the trail is itself sent to webhooks).
            note.subject = webhooks::origin(&r.url);
            note.detail = Some(format!("events {}", r.events.join(",")));
            created(&webhooks::add(state, slug, r).await?)
        }
        A::WebhookDelete(slug, id) => {
            let id = number(&id, "webhook")?;
            confirmed(state, req, &format!("webhook {id} with its deliveries, pending ones included")).await?;
            webhooks::remove(state, slug, id).await?;
            done()
        }
        A::WebhookDeliveries(slug) => {
            let q = query(&req)?;
            let webhook = q.get("webhook").map(|w| number(w, "webhook")).transpose()?;
            let failed = q.get("failed").is_some_and(|v| v == "true" || v == "1");
            let limit = q.get("limit").map(|l| number(l, "limit")).transpose()?;
            ok(&webhooks::deliveries(state, slug, webhook, failed, limit).await?)
        }
        A::WebhookRedeliver(slug, id) => {
            let id = number(&id, "delivery")?;
            ok(&webhooks::redeliver(state, slug, id).await?)
        }
        A::ScimSet(slug, change) => {
            use super::route::ScimChange as C;
            let (enable, rotate) = match change {
                C::Enable => (true, false),
                C::RotateToken => (true, true),
                C::Disable => (false, false),
            };
            ok(&latchkey_domain::scim::set(state, slug, enable, rotate).await?)
        }
        A::MdsStatus => match latchkey_domain::webauthn::attestation::status(&state.db).await? {
            Some(s) => ok(&s),
            None => Err(Error::not_found(
                codes::NOT_FOUND,
                "no FIDO metadata is imported: download the BLOB from https://mds3.fidoalliance.org/ and run \
                 `latchkey mds import FILE`",
            )),
        },
        A::MdsImport => {
            let r = mds_body(req).await?;
            note.detail = Some(format!(
                "{} bytes, {}",
                r.blob.len(),
                if r.roots.is_empty() {
                    "FIDO Alliance root".to_owned()
                } else {
                    format!("{} own root(s)", r.roots.len())
                }
            ));
            let s = latchkey_domain::webauthn::attestation::import(state, r).await?;
            note.subject = Some(format!("serial {}", s.serial));
            ok(&s)
        }
        A::TenantDelete(slug) => {
            confirmed(state, req, &format!("tenant {slug:?} and all its users, apps and keys")).await?;
            tenants::delete(state, slug).await?;
            done()
        }
        A::AppList(slug) => ok(&apps::list(&state.db, slug).await?),
        A::AppCreate(slug) => {
            let r: CreateApp = app_body(state, req).await?;
            note.detail = Some(format!("name {:?}, type {}", r.name, r.app_type.as_str()));
            let app = apps::create(&state.db, state.clock.now(), slug, r).await?;
            note.subject = Some(app.app.client_id.clone());
            created(&app)
        }
        A::AppShow(slug, id) => ok(&apps::show(&state.db, slug, id).await?),
        A::AppUpdate(slug, id) => {
            let r: UpdateApp = app_body(state, req).await?;
            // The request itself says what was asked: `{"add_redirect_uris": [...]}` (a new
            // logo by its size, not its bytes).
            let mut shown = r.clone();
            shown.logo_png = shown.logo_png.map(|b| format!("{} base64 characters", b.len()));
            note.detail = serde_json::to_string(&shown).ok();
            ok(&apps::update(&state.db, slug, id, r).await?)
        }
        A::AppDelete(slug, id) => {
            confirmed(state, req, &format!("application {id:?}")).await?;
            apps::delete(&state.db, slug, id).await?;
            done()
        }
        A::AppRotateSecret(slug, id) => ok(&apps::rotate_secret(&state.db, slug, id).await?),
        A::KeyList(slug) => ok(&rotation::list(state, slug).await?),
        A::KeyRotate(slug) => {
            // No body (an earlier CLI) or `{}`: the RS256 key.
            let r: latchkey::admin::RotateKey =
                read_json_or_default(req, state.config.limits.json_body_max, Text::NoNul).await?;
            let alg = match r.alg.as_deref() {
                None => SigningAlg::RS256,
                Some(a) => SigningAlg::parse(a).ok_or_else(|| {
                    Error::invalid(codes::INVALID_INPUT, format!("alg {a:?}: a signing key is RS256, ES256 or EdDSA"))
                })?,
            };
            let key = rotation::rotate(state, slug, alg).await?;
            note.subject = Some(key.kid.clone());
            note.detail = Some(format!("alg {alg}"));
            created(&key)
        }
        A::KeyRetire(slug, kid) => {
            confirmed(state, req, &format!("signing key {kid:?} (tokens it signed stop verifying)")).await?;
            ok(&rotation::retire(state, slug, kid).await?)
        }
        A::UserList(slug) => {
            let q = query(&req)?;
            ok(&users::list(&state.db, slug, q.get("role").cloned(), q.get("status").cloned()).await?)
        }
        A::UserInvite(slug) => {
            let r: InviteUser = body(state, req).await?;
            note.subject = Some(r.email.clone());
            created(&users::invite(state, slug, r).await?)
        }
        A::UserImport(slug) => {
            let query = request::query(&req);
            let dry_run = query.get("dry_run").ok().flatten().is_some_and(|v| v == "true" || v == "1");
            // The uploaded file's name (the CLI sends it), bounded: the event's subject.
            let file: Option<String> = query.get("file").ok().flatten().map(|f| f.chars().take(200).collect());
            let actor = audit::actor(peer.uid);
            let response = super::import::import(state, slug, dry_run, req, actor, file).await?;
            // The import records its event when it ends, with its counts (a dry run records none).
            note.recorded_elsewhere = true;
            Ok(response)
        }
        A::UserReinvite(slug) => {
            let response = super::reinvite::reinvite(state, slug, req, audit::actor(peer.uid)).await?;
            // Like an import: one event when it ends, with its counts (a dry run records none).
            note.recorded_elsewhere = true;
            Ok(response)
        }
        A::UserShow(slug, email) => ok(&users::show(&state.db, slug, email).await?),
        A::UserDelete(slug, email) => {
            confirmed(state, req, &format!("user {email:?} with their credentials and sessions")).await?;
            users::delete(&state.db, state.clock.now(), slug, email).await?;
            done()
        }
        A::UserDisable(slug, email) => ok(&users::set_enabled(&state.db, state.clock.now(), slug, email, false).await?),
        A::UserEnable(slug, email) => ok(&users::set_enabled(&state.db, state.clock.now(), slug, email, true).await?),
        A::UserRecover(slug, email) => created(&users::recover(state, slug, email).await?),
        A::UserCredentials(slug, email) => ok(&users::credentials(&state.db, slug, email).await?),
        A::UserCredentialRevoke(slug, email, id) => {
            note.detail = Some(format!("credential {id}"));
            users::revoke_credential(&state.db, slug, email, id).await?;
            done()
        }
        A::RoleList(slug) => ok(&users::roles::list(&state.db, slug).await?),
        A::RoleCreate(slug) => {
            let r: CreateRole = body(state, req).await?;
            note.subject = Some(r.name.clone());
            created(&users::roles::create(&state.db, state.clock.now(), slug, r).await?)
        }
        A::RoleDelete(slug, name) => {
            confirmed(state, req, &format!("role {name:?}")).await?;
            users::roles::delete(&state.db, slug, name).await?;
            done()
        }
        A::RoleAssign(slug, name) => {
            let r: Emails = body(state, req).await?;
            note.detail = Some(format!("role {name}"));
            note.per_subject = r.emails.clone();
            ok(&users::roles::change(&state.db, slug, name, r, true).await?)
        }
        A::RoleUnassign(slug, name) => {
            let r: Emails = body(state, req).await?;
            note.detail = Some(format!("role {name}"));
            note.per_subject = r.emails.clone();
            ok(&users::roles::change(&state.db, slug, name, r, false).await?)
        }
        A::SocialList(slug) => ok(&latchkey_domain::social::list(&state.db, slug).await?),
        A::SocialEnable(slug) => {
            let r: EnableSocial = body(state, req).await?;
            note.subject = Some(r.name.clone().unwrap_or_else(|| r.kind.clone()));
            let provider = latchkey_domain::social::enable(state, slug, r).await?;
            note.subject = Some(provider.provider.clone());
            created(&provider)
        }
        A::SocialDisable(slug, provider) => {
            confirmed(state, req, &format!("social provider {provider:?} (its client secret; links stay)")).await?;
            latchkey_domain::social::disable(&state.db, slug, provider).await?;
            done()
        }
        A::Audit(slug) => ok(&read_audit(state, Some(slug), &query(&req)?).await?),
        A::AuditAll => {
            let q = query(&req)?;
            ok(&read_audit(state, q.get("tenant").cloned(), &q).await?)
        }
        A::Export(slug) => ok(&latchkey_domain::declarative::export(&state.db, slug).await?),
        A::Apply => {
            let r: ApplyRequest = read_json(req, state.config.limits.invite_file_max, Text::NoNul).await?;
            // A dry run changes nothing, so it is not recorded, like a read.
            note.recorded_elsewhere = r.dry_run;
            note.per_tenant = r.declared.tenants.iter().map(|t| (t.slug.clone(), None)).collect();
            let result = latchkey_domain::declarative::apply(state, r).await?;
            note.applied(&result);
            ok(&result)
        }
        A::Backup => super::backup::backup(state).await,
    }
}

async fn read_audit(
    state: &State,
    tenant: Option<String>,
    q: &HashMap<String, String>,
) -> Result<Vec<AuditEvent>, Error> {
    let num = |k: &str| -> Result<Option<i64>, Error> {
        q.get(k)
            .map(|v| {
                v.parse::<i64>().map_err(|_| {
                    Error::invalid(
                        codes::INVALID_INPUT,
                        format!("{k} must be a whole number (Unix seconds, or a count)"),
                    )
                })
            })
            .transpose()
    };
    let text = |k: &str| q.get(k).filter(|v| !v.is_empty()).cloned();
    let filter = latchkey_domain::audit::Filter {
        tenant,
        since: num("since")?.unwrap_or(0),
        until: num("until")?,
        subject: text("user"),
        actor: text("actor"),
        action: text("action").map(|glob| latchkey_domain::audit::like_pattern(&glob)),
        app: text("app"),
        outcome: text("outcome"),
        after_id: num("after")?.unwrap_or(0),
        limit: num("limit")?.unwrap_or(1000).clamp(1, 10_000) as u32,
    };
    let cursor = q
        .get("cursor")
        .map(|text| {
            latchkey_domain::audit::Cursor::parse(text).ok_or_else(|| {
                Error::invalid(
                    codes::INVALID_INPUT,
                    "cursor must be empty (to start) or the cursor of an event an earlier answer gave",
                )
            })
        })
        .transpose()?;
    Ok(latchkey_domain::audit::query(&state.audit, &state.db, filter, cursor).await?)
}

async fn status(state: &State) -> Result<Status, Error> {
    let tenants = tenants::count(&state.db).await?;
    let schema = state.db.schema().await?;
    Ok(Status {
        version: latchkey::VERSION.to_owned(),
        commit: crate::args::COMMIT.to_owned(),
        schema_version: latchkey_store::migrations::SCHEMA_VERSION as u64,
        database_schema_version: schema.version as u64,
        database_serves_from: schema.serves_from.unwrap_or_default(),
        uptime_seconds: state.started.elapsed().as_secs(),
        listen: state.listen_addr.to_string(),
        public_url: state.config.public_base(),
        database: state.db.describe(),
        admin_socket: state.config.admin_socket.display().to_string(),
        tenants,
        rsa_engine: state.rsa_engine.as_str().to_owned(),
    })
}
