//! Handlers of the end-user JSON API: the four ceremony endpoints and `/api/credentials`.

use std::sync::Arc;

use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use latchkey::codes;
use serde::Serialize;

use super::Body;
use super::body::{read_json, read_json_or_default};
use super::public::TenantRoute;
use super::response::{empty, json, public_error};
use crate::State;
use crate::error::ApiError;
use crate::oidc::introspection::check_access;
use crate::sessions::{self, Issued};
use crate::tenants::TenantRuntime;
use crate::webauthn::{authenticate, credentials, register};

pub async fn handle(
    state: &State,
    tenant: Arc<TenantRuntime>,
    route: TenantRoute,
    req: Request<Incoming>,
) -> Response<Body> {
    match run(state, tenant, route, req).await {
        Ok(r) => r,
        Err(e) => public_error(&e),
    }
}

fn bearer(req: &Request<Incoming>) -> Option<String> {
    let v = header(req, header::AUTHORIZATION)?;
    let (scheme, token) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim().to_owned())
}

fn header(req: &Request<Incoming>, name: header::HeaderName) -> Option<String> {
    req.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
}

/// The browser's `Origin`, when it sent one and it is this tenant's.
fn same_origin(req: &Request<Incoming>, tenant: &TenantRuntime) -> Option<bool> {
    header(req, header::ORIGIN).map(|o| o == tenant.origin)
}

fn with_session<T: Serialize>(
    status: StatusCode,
    body: &T,
    tenant: &TenantRuntime,
    issued: Option<&Issued>,
    now: i64,
) -> Response<Body> {
    let mut r = json(status, body);
    if let Some(s) = issued
        && let Ok(v) = HeaderValue::from_str(&sessions::set_cookie(tenant, s, now))
    {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

/// The signed-in user of a credentials call: a Bearer access token of this tenant with scope
/// `credentials`, or the session cookie. State-changing calls authenticated by cookie must come
/// from the tenant's own origin (CSRF); a bearer token is not sent by browsers on their own.
async fn signed_in(
    state: &State,
    tenant: &Arc<TenantRuntime>,
    req: &Request<Incoming>,
) -> Result<(crate::store::users::UserId, String), ApiError> {
    if let Some(token) = bearer(req) {
        let now = state.clock.now();
        let t = tenant.clone();
        let checked =
            state.db.read(move |tx| Ok::<_, crate::store::StoreError>(check_access(tx, &t, &token, now))).await?;
        return match checked {
            Ok((claims, Some(user))) if claims.has_scope("credentials") => Ok((user.id, user.email)),
            Ok(_) => Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "insufficient_scope",
                "the access token lacks the credentials scope",
            )),
            Err(e) => Err(ApiError::new(StatusCode::UNAUTHORIZED, "invalid_token", e.description)),
        };
    }
    let login = || ApiError::new(StatusCode::UNAUTHORIZED, codes::LOGIN_REQUIRED, "sign in first: no valid session");
    let token = sessions::token(req.headers()).ok_or_else(login)?;
    if req.method() != Method::GET && same_origin(req, tenant) != Some(true) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            codes::INVALID_ORIGIN_HEADER,
            "changes made with a session cookie must come from this tenant's own pages (Origin header)",
        ));
    }
    let now = state.clock.now();
    let t = tenant.id;
    let found = state.db.read(move |tx| sessions::lookup(tx, t, &token, now)).await?;
    found.map(|(_, user)| (user.id, user.email)).ok_or_else(login)
}

async fn run(
    state: &State,
    tenant: Arc<TenantRuntime>,
    route: TenantRoute,
    req: Request<Incoming>,
) -> Result<Response<Body>, ApiError> {
    let limit = state.config.limits.json_body_max;
    let now = state.clock.now();
    match route {
        TenantRoute::RegisterStart => {
            // A session cookie counts only from the tenant's own origin (or without an Origin, for
            // non-browser clients, which cannot be tricked into sending a cookie).
            let session_token = match same_origin(&req, &tenant) {
                Some(false) => None,
                _ => sessions::token(req.headers()),
            };
            let caller = register::Caller { session_token, user_agent: header(&req, header::USER_AGENT) };
            let body: register::StartRequest = read_json(req, limit).await?;
            let options = register::start(state, tenant, body, caller).await?;
            Ok(json(StatusCode::OK, &options))
        }
        TenantRoute::RegisterFinish => {
            let ip = crate::audit::ip_of(&req);
            let body: register::FinishRequest = read_json(req, limit).await?;
            let t = tenant.clone();
            let done = register::finish(state, t, body).await;
            let mut e = crate::audit::event(
                now,
                Some(&tenant.slug),
                "anonymous",
                "registration",
                &crate::audit::outcome(&done, |e| e.code.to_owned()),
            );
            e.ip = ip;
            if let Ok(d) = &done {
                e.actor = d.response.user.email.clone();
                e.subject = Some(d.response.user.email.clone());
                e.detail = Some(format!("{} via {}", d.response.credential.kind, d.via));
            }
            state.metrics.ceremony("registration", e.outcome.strip_prefix("failure: ").unwrap_or(&e.outcome));
            state.audit.record(e);
            let done = done?;
            Ok(with_session(StatusCode::CREATED, &done.response, &tenant, done.session.as_ref(), now))
        }
        TenantRoute::AuthStart => {
            let body: authenticate::StartRequest = read_json_or_default(req, limit).await?;
            Ok(json(StatusCode::OK, &authenticate::start(state, tenant, body).await?))
        }
        TenantRoute::AuthFinish => {
            let ip = crate::audit::ip_of(&req);
            let body: authenticate::FinishRequest = read_json(req, limit).await?;
            let t = tenant.clone();
            let done = authenticate::finish(state, t, body).await;
            let mut e = crate::audit::event(
                now,
                Some(&tenant.slug),
                "anonymous",
                "login",
                &crate::audit::outcome(&done, |e| e.code.to_owned()),
            );
            e.ip = ip;
            if let Ok(d) = &done {
                e.actor = d.response.user.email.clone();
                e.subject = Some(d.response.user.email.clone());
                e.detail = Some("passkey".into());
            }
            state.metrics.ceremony("login", e.outcome.strip_prefix("failure: ").unwrap_or(&e.outcome));
            state.audit.record(e);
            let done = done?;
            Ok(with_session(StatusCode::OK, &done.response, &tenant, Some(&done.session), now))
        }
        TenantRoute::Credentials => {
            let (user, _) = signed_in(state, &tenant, &req).await?;
            Ok(json(StatusCode::OK, &credentials::list(state, tenant, user).await?))
        }
        TenantRoute::Credential(id) => {
            let (user, email) = signed_in(state, &tenant, &req).await?;
            let mut e = crate::audit::event(now, Some(&tenant.slug), &email, "credential.revoke", "success");
            e.ip = crate::audit::ip_of(&req);
            e.subject = Some(email.clone());
            e.detail = Some(id.clone());
            let t = tenant.clone();
            let result = if req.method() == Method::DELETE {
                credentials::delete(state, t, user, &id).await.map(|()| empty(StatusCode::NO_CONTENT))
            } else {
                e.action = "credential.rename".into();
                let body: credentials::Rename = read_json(req, limit).await?;
                credentials::rename(state, t, user, &id, body).await.map(|c| json(StatusCode::OK, &c))
            };
            e.outcome = crate::audit::outcome(&result, |e| e.code.to_owned());
            state.audit.record(e);
            result
        }
        _ => Err(ApiError::not_found(codes::NOT_FOUND, "no such endpoint")),
    }
}
