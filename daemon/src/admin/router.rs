//! Admin request dispatch: path segments under `/admin/v1` to one operation each.

use std::sync::Arc;
use std::time::Instant;

use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use latchkey::admin::{
    ApplyRequest, AuditEvent, Confirm, CreateApp, CreateRole, CreateTenant, Emails, InviteUser, PREFIX, Status,
};
use latchkey::codes;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::AdminPeer;
use crate::error::ApiError;
use crate::http::Body;
use crate::http::body::{read_json, read_json_or_default};
use crate::http::response::{admin_error, empty, json};
use crate::oidc::rotation;
use crate::{State, apps, store, tenants, users};

pub async fn handle(state: Arc<State>, req: Request<Incoming>, peer: AdminPeer) -> Response<Body> {
    let started = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let had_body = crate::http::body::has_body(&req);
    let mut response = match dispatch(&state, req).await {
        Ok(r) => r,
        Err(e) => admin_error(&e),
    };
    if had_body && !response.status().is_success() {
        response.headers_mut().insert(hyper::header::CONNECTION, hyper::header::HeaderValue::from_static("close"));
    }
    let status = response.status().as_u16();
    // Every admin operation is audited (reads included: who looked at what is part of the trail).
    let segs: Vec<&str> = path.trim_start_matches(PREFIX).split('/').filter(|s| !s.is_empty()).collect();
    let tenant = match segs.as_slice() {
        ["tenants", slug, ..] => Some(*slug),
        _ => None,
    };
    if !(method == Method::GET && segs.last() == Some(&"audit")) {
        let outcome = if (200..300).contains(&status) { "success".to_owned() } else { format!("failure: {status}") };
        state.audit.record(crate::audit::event(
            state.clock.now(),
            tenant,
            &format!("admin uid {}", peer.uid),
            &format!("admin {method} {}", path.trim_start_matches(PREFIX)),
            &outcome,
        ));
    }
    tracing::info!(target: "latchkeyd::admin", uid = peer.uid, %method, %path, status, ms = %format_args!("{:.3}", started.elapsed().as_secs_f64() * 1e3));
    response
}

fn ok<T: Serialize>(value: &T) -> Result<Response<Body>, ApiError> {
    Ok(json(StatusCode::OK, value))
}

fn created<T: Serialize>(value: &T) -> Result<Response<Body>, ApiError> {
    Ok(json(StatusCode::CREATED, value))
}

async fn body<T: DeserializeOwned>(state: &State, req: Request<Incoming>) -> Result<T, ApiError> {
    read_json(req, state.config.limits.json_body_max).await
}

/// Destructive calls need `{"confirm": true}` (the CLI's `--yes`).
async fn confirmed(state: &State, req: Request<Incoming>, what: &str) -> Result<(), ApiError> {
    let c: Confirm = read_json_or_default(req, state.config.limits.json_body_max).await?;
    if c.confirm {
        Ok(())
    } else {
        Err(ApiError::bad_request(
            codes::CONFIRMATION_REQUIRED,
            format!("deleting {what} cannot be undone; send {{\"confirm\": true}} (the CLI's --yes)"),
        ))
    }
}

async fn dispatch(state: &Arc<State>, req: Request<Incoming>) -> Result<Response<Body>, ApiError> {
    let path = req.uri().path().to_owned();
    let Some(rest) = path.strip_prefix(PREFIX) else {
        return Err(ApiError::not_found(codes::NOT_FOUND, format!("admin calls live under {PREFIX}/")));
    };
    let segs: Vec<String> = rest.split('/').filter(|s| !s.is_empty()).map(percent_decode).collect::<Result<_, _>>()?;
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let m = req.method().clone();
    match (&m, segs.as_slice()) {
        (&Method::GET, ["status"]) => ok(&status(state).await?),

        (&Method::GET, ["tenants"]) => {
            let rows = state.db.read(|tx| store::tenants::list(tx)).await?;
            ok(&rows.iter().map(tenants::to_wire).collect::<Vec<_>>())
        }
        (&Method::POST, ["tenants"]) => {
            let r: CreateTenant = body(state, req).await?;
            created(&tenants::create(state, r).await?)
        }
        (&Method::GET, ["tenants", slug]) => {
            let slug = slug.to_string();
            let row = state.db.read(move |tx| tenants::require(tx, &slug)).await?;
            ok(&tenants::to_wire(&row))
        }
        (&Method::DELETE, ["tenants", slug]) => {
            let slug = slug.to_string();
            confirmed(state, req, &format!("tenant {slug:?} and all its users, apps and keys")).await?;
            tenants::delete(state, slug).await?;
            Ok(empty(StatusCode::NO_CONTENT))
        }

        (&Method::GET, ["tenants", slug, "apps"]) => ok(&apps::list(state, slug.to_string()).await?),
        (&Method::POST, ["tenants", slug, "apps"]) => {
            let slug = slug.to_string();
            let r: CreateApp = body(state, req).await?;
            created(&apps::create(state, slug, r).await?)
        }
        (&Method::GET, ["tenants", slug, "apps", id]) => {
            ok(&apps::show(state, slug.to_string(), id.to_string()).await?)
        }
        (&Method::DELETE, ["tenants", slug, "apps", id]) => {
            let (slug, id) = (slug.to_string(), id.to_string());
            confirmed(state, req, &format!("application {id:?}")).await?;
            apps::delete(state, slug, id).await?;
            Ok(empty(StatusCode::NO_CONTENT))
        }
        (&Method::POST, ["tenants", slug, "apps", id, "rotate-secret"]) => {
            ok(&apps::rotate_secret(state, slug.to_string(), id.to_string()).await?)
        }

        (&Method::GET, ["tenants", slug, "keys"]) => ok(&rotation::list(state, slug.to_string()).await?),
        (&Method::POST, ["tenants", slug, "keys", "rotate"]) => {
            created(&rotation::rotate(state, slug.to_string()).await?)
        }
        (&Method::POST, ["tenants", slug, "keys", kid, "retire"]) => {
            ok(&rotation::retire(state, slug.to_string(), kid.to_string()).await?)
        }

        (&Method::POST, ["tenants", slug, "users", "invite"]) => {
            let slug = slug.to_string();
            let r: InviteUser = body(state, req).await?;
            created(&users::invite(state, slug, r).await?)
        }
        (&Method::POST, ["tenants", slug, "users", "import"]) => {
            let dry_run = query(&req).get("dry_run").is_some_and(|v| v == "true" || v == "1");
            super::import::import(state, slug.to_string(), dry_run, req).await
        }
        (&Method::GET, ["tenants", slug, "users"]) => {
            let q = query(&req);
            ok(&users::list(state, slug.to_string(), q.get("role").cloned(), q.get("status").cloned()).await?)
        }
        (&Method::GET, ["tenants", slug, "users", email]) => {
            ok(&users::show(state, slug.to_string(), email.to_string()).await?)
        }
        (&Method::POST, ["tenants", slug, "users", email, "disable"]) => {
            ok(&users::set_enabled(state, slug.to_string(), email.to_string(), false).await?)
        }
        (&Method::POST, ["tenants", slug, "users", email, "enable"]) => {
            ok(&users::set_enabled(state, slug.to_string(), email.to_string(), true).await?)
        }
        (&Method::DELETE, ["tenants", slug, "users", email]) => {
            let (slug, email) = (slug.to_string(), email.to_string());
            confirmed(state, req, &format!("user {email:?} with their credentials and sessions")).await?;
            users::delete(state, slug, email).await?;
            Ok(empty(StatusCode::NO_CONTENT))
        }
        (&Method::POST, ["backup"]) => super::backup::backup(state).await,
        (&Method::POST, ["apply"]) => {
            let r: ApplyRequest = read_json(req, state.config.limits.invite_file_max).await?;
            ok(&crate::declarative::apply(state, r).await?)
        }
        (&Method::GET, ["tenants", slug, "export"]) => ok(&crate::declarative::export(state, slug.to_string()).await?),
        (&Method::GET, ["tenants", slug, "audit"]) => {
            let q = query(&req);
            let num = |k: &str| q.get(k).and_then(|v| v.parse::<i64>().ok());
            let (since, after, limit) =
                (num("since").unwrap_or(0), num("after").unwrap_or(0), num("limit").unwrap_or(1000).clamp(1, 10_000));
            let (slug, user) = (slug.to_string(), q.get("user").cloned());
            state.audit.flush().await;
            let rows = state
                .db
                .read(move |tx| store::audit::query(tx, &slug, since, user.as_deref(), after, limit as u32))
                .await?;
            let events: Vec<AuditEvent> = rows
                .into_iter()
                .map(|(id, e)| AuditEvent {
                    id,
                    at: crate::clock::rfc3339(e.at),
                    actor: e.actor,
                    action: e.action,
                    outcome: e.outcome,
                    ip: e.ip,
                    subject: e.subject,
                    detail: e.detail,
                })
                .collect();
            ok(&events)
        }
        (&Method::GET, ["tenants", slug, "roles"]) => ok(&users::roles::list(state, slug.to_string()).await?),
        (&Method::POST, ["tenants", slug, "roles"]) => {
            let slug = slug.to_string();
            let r: CreateRole = body(state, req).await?;
            created(&users::roles::create(state, slug, r).await?)
        }
        (&Method::DELETE, ["tenants", slug, "roles", name]) => {
            let (slug, name) = (slug.to_string(), name.to_string());
            confirmed(state, req, &format!("role {name:?}")).await?;
            users::roles::delete(state, slug, name).await?;
            Ok(empty(StatusCode::NO_CONTENT))
        }
        (&Method::POST, ["tenants", slug, "roles", name, action @ ("assign" | "unassign")]) => {
            let (slug, name, assign) = (slug.to_string(), name.to_string(), *action == "assign");
            let r: Emails = body(state, req).await?;
            ok(&users::roles::change(state, slug, name, r, assign).await?)
        }
        (&Method::POST, ["tenants", slug, "users", email, "recover"]) => {
            created(&users::recover(state, slug.to_string(), email.to_string()).await?)
        }
        (&Method::GET, ["tenants", slug, "users", email, "credentials"]) => {
            ok(&users::credentials(state, slug.to_string(), email.to_string()).await?)
        }
        (&Method::DELETE, ["tenants", slug, "users", email, "credentials", id]) => {
            users::revoke_credential(state, slug.to_string(), email.to_string(), id.to_string()).await?;
            Ok(empty(StatusCode::NO_CONTENT))
        }

        _ => Err(ApiError::not_found(codes::NOT_FOUND, format!("no admin call {m} {path}"))),
    }
}

/// Query parameters of an admin call.
fn query(req: &Request<Incoming>) -> std::collections::HashMap<String, String> {
    url::form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes()).into_owned().collect()
}

/// Decodes `%XX` escapes of a path segment (e-mail addresses travel in paths).
fn percent_decode(seg: &str) -> Result<String, ApiError> {
    let bad = || ApiError::bad_request(codes::INVALID_INPUT, format!("bad percent-encoding in {seg:?}"));
    let bytes = seg.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = seg.get(i + 1..i + 3).ok_or_else(bad)?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad())
}

async fn status(state: &State) -> Result<Status, ApiError> {
    let tenants = state.db.read(|tx| store::tenants::count(tx)).await?;
    Ok(Status {
        version: latchkey::VERSION.to_owned(),
        uptime_seconds: state.started.elapsed().as_secs(),
        listen: state.listen_addr.to_string(),
        public_url: state.config.public_base(),
        database: state.db.path().display().to_string(),
        admin_socket: state.config.admin_socket.display().to_string(),
        tenants,
    })
}
