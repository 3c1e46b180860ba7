//! The public listener: parse the request into a [`Route`], then run one handler.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use latchkey::codes;

use super::Body;
use super::response::{self, bytes, public_error, secure, with_header};
use crate::State;
use crate::error::ApiError;
use crate::tenants::TenantRuntime;

/// Every route of the public listener.
#[derive(Debug)]
pub enum Route {
    Healthz,
    Readyz,
    Metrics,
    Tenant(Arc<TenantRuntime>, TenantRoute),
    /// No tenant answers at this host and path.
    UnknownTenant,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TenantRoute {
    Discovery,
    Jwks,
    RegisterStart,
    RegisterFinish,
    AuthStart,
    AuthFinish,
    /// `/api/credentials`
    Credentials,
    /// `/api/credentials/{id}`
    Credential(String),
    InvitePage(String),
    RecoverPage(String),
    AccountPage,
    Asset(&'static str),
    Authorize,
    AuthorizeResume,
    Token,
    Userinfo,
    Logout,
    Revoke,
    Introspect,
    Avatar(String),
    BulkInvite,
    NotFound,
}

impl Route {
    /// A short, fixed label for logs and metrics (never the raw path: that would be unbounded).
    pub fn name(&self) -> &'static str {
        match self {
            Route::Healthz => "healthz",
            Route::Readyz => "readyz",
            Route::Metrics => "metrics",
            Route::UnknownTenant => "unknown_tenant",
            Route::Tenant(_, r) => match r {
                TenantRoute::Discovery => "discovery",
                TenantRoute::Jwks => "jwks",
                TenantRoute::RegisterStart => "register_start",
                TenantRoute::RegisterFinish => "register_finish",
                TenantRoute::AuthStart => "auth_start",
                TenantRoute::AuthFinish => "auth_finish",
                TenantRoute::Credentials => "credentials",
                TenantRoute::Credential(_) => "credential",
                TenantRoute::InvitePage(_) => "invite_page",
                TenantRoute::RecoverPage(_) => "recover_page",
                TenantRoute::AccountPage => "account_page",
                TenantRoute::Asset(_) => "asset",
                TenantRoute::Authorize => "authorize",
                TenantRoute::AuthorizeResume => "authorize_resume",
                TenantRoute::Token => "token",
                TenantRoute::Userinfo => "userinfo",
                TenantRoute::Logout => "logout",
                TenantRoute::Revoke => "revoke",
                TenantRoute::Introspect => "introspect",
                TenantRoute::Avatar(_) => "avatar",
                TenantRoute::BulkInvite => "bulk_invite",
                TenantRoute::NotFound => "tenant_not_found",
            },
        }
    }

    /// Methods the route answers; anything else is 405 (never 404, so clients see the
    /// difference between a wrong path and a wrong method).
    fn methods(&self) -> &'static [Method] {
        match self {
            Route::Healthz | Route::Readyz | Route::Metrics => &[Method::GET, Method::HEAD],
            Route::Tenant(_, r) => match r {
                TenantRoute::Discovery | TenantRoute::Jwks => &[Method::GET, Method::HEAD, Method::OPTIONS],
                TenantRoute::RegisterStart
                | TenantRoute::RegisterFinish
                | TenantRoute::AuthStart
                | TenantRoute::AuthFinish => &[Method::POST],
                TenantRoute::Credentials => &[Method::GET],
                TenantRoute::Credential(_) => &[Method::PATCH, Method::DELETE],
                TenantRoute::InvitePage(_)
                | TenantRoute::RecoverPage(_)
                | TenantRoute::AccountPage
                | TenantRoute::Asset(_) => &[Method::GET, Method::HEAD],
                TenantRoute::Authorize | TenantRoute::AuthorizeResume | TenantRoute::Avatar(_) => &[Method::GET],
                TenantRoute::Token | TenantRoute::Revoke => &[Method::POST, Method::OPTIONS],
                TenantRoute::Userinfo => &[Method::GET, Method::POST, Method::OPTIONS],
                TenantRoute::Logout => &[Method::GET, Method::POST],
                TenantRoute::Introspect | TenantRoute::BulkInvite => &[Method::POST],
                TenantRoute::NotFound => &[],
            },
            Route::UnknownTenant => &[],
        }
    }
}

pub fn route(state: &State, host: Option<&str>, path: &str) -> Route {
    match path {
        "/healthz" => return Route::Healthz,
        "/readyz" => return Route::Readyz,
        "/metrics" => return Route::Metrics,
        _ => {}
    }
    let Some((tenant, rest)) = state.registry.resolve(host, path) else {
        return Route::UnknownTenant;
    };
    Route::Tenant(tenant, tenant_route(&rest))
}

/// Routes a path below a tenant's base URL.
fn tenant_route(rest: &str) -> TenantRoute {
    let segs: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
    match segs.as_slice() {
        [".well-known", "openid-configuration"] => TenantRoute::Discovery,
        [".well-known", "jwks.json"] => TenantRoute::Jwks,
        ["register", "start"] => TenantRoute::RegisterStart,
        ["register", "finish"] => TenantRoute::RegisterFinish,
        ["auth", "start"] => TenantRoute::AuthStart,
        ["auth", "finish"] => TenantRoute::AuthFinish,
        ["api", "credentials"] => TenantRoute::Credentials,
        ["api", "v1", "users", "invite"] => TenantRoute::BulkInvite,
        ["api", "credentials", id] if !id.is_empty() => TenantRoute::Credential((*id).to_owned()),
        ["invite", token] if !token.is_empty() => TenantRoute::InvitePage((*token).to_owned()),
        ["recover", token] if !token.is_empty() => TenantRoute::RecoverPage((*token).to_owned()),
        ["account"] => TenantRoute::AccountPage,
        ["authorize"] => TenantRoute::Authorize,
        ["authorize", "resume"] => TenantRoute::AuthorizeResume,
        ["token"] => TenantRoute::Token,
        ["userinfo"] => TenantRoute::Userinfo,
        ["logout"] => TenantRoute::Logout,
        ["revoke"] => TenantRoute::Revoke,
        ["introspect"] => TenantRoute::Introspect,
        ["avatars", file] if file.ends_with(".svg") => TenantRoute::Avatar(file.trim_end_matches(".svg").to_owned()),
        ["assets", name] => match super::pages::asset_name(name) {
            Some(n) => TenantRoute::Asset(n),
            None => TenantRoute::NotFound,
        },
        _ => TenantRoute::NotFound,
    }
}

/// Entry point of the public listener.
pub async fn handle(state: Arc<State>, mut req: Request<Incoming>, peer: SocketAddr) -> Response<Body> {
    let ip = crate::ratelimit::client_ip(peer, req.headers(), &state.config.trusted_proxies);
    req.extensions_mut().insert(crate::audit::ClientIp(ip));
    let started = Instant::now();
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned)
        .or_else(|| req.uri().authority().map(|a| a.to_string()));
    let route = route(&state, host.as_deref(), req.uri().path());
    let name = route.name();
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let had_body = super::body::has_body(&req);
    let mut response = match limited(&state, &route, peer, &req) {
        Some(refusal) => secure(refusal),
        None => secure(dispatch(&state, route, req).await),
    };
    // An error may have been answered before the body was read: do not reuse this connection.
    if had_body && (response.status().is_client_error() || response.status().is_server_error()) {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    let status = response.status().as_u16();
    let elapsed = started.elapsed();
    state.metrics.observe(name, status, elapsed);
    // The query string is left out on purpose: it may carry codes and tokens.
    tracing::info!(target: "latchkeyd::http", %peer, %method, %path, route = name, status, ms = %format_args!("{:.3}", elapsed.as_secs_f64() * 1e3));
    response
}

/// Applies the per-IP limits of `[limits]` to the endpoints they cover.
fn limited(state: &State, route: &Route, peer: SocketAddr, req: &Request<Incoming>) -> Option<Response<Body>> {
    let (bucket, per_minute) = match route {
        Route::Tenant(
            _,
            TenantRoute::RegisterStart | TenantRoute::RegisterFinish | TenantRoute::AuthStart | TenantRoute::AuthFinish,
        ) => ("ceremony", state.config.limits.ceremony_rate_per_minute),
        Route::Tenant(_, TenantRoute::Token | TenantRoute::Revoke | TenantRoute::Introspect) => {
            ("token", state.config.limits.token_rate_per_minute)
        }
        _ => return None,
    };
    let ip = crate::ratelimit::client_ip(peer, req.headers(), &state.config.trusted_proxies);
    if state.limiter.allow(ip, bucket, per_minute, state.clock.now()) {
        return None;
    }
    let mut r = public_error(&ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        codes::RATE_LIMITED,
        "too many requests from your address; wait a minute and try again",
    ));
    r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
    Some(r)
}

async fn dispatch(state: &State, route: Route, req: Request<Incoming>) -> Response<Body> {
    let allowed = route.methods();
    if !allowed.is_empty() && !allowed.contains(req.method()) {
        let allow = allowed.iter().map(Method::as_str).collect::<Vec<_>>().join(", ");
        let mut r = public_error(&ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            codes::METHOD_NOT_ALLOWED,
            format!("{} is not allowed here; use {allow}", req.method()),
        ));
        if let Ok(v) = HeaderValue::from_str(&allow) {
            r.headers_mut().insert(header::ALLOW, v);
        }
        return r;
    }
    match route {
        Route::Healthz => bytes(StatusCode::OK, "text/plain; charset=utf-8", "ok\n"),
        Route::Readyz => match state.db.ping().await {
            Ok(()) => bytes(StatusCode::OK, "text/plain; charset=utf-8", "ready\n"),
            Err(e) => public_error(&ApiError {
                status: StatusCode::SERVICE_UNAVAILABLE,
                code: codes::UNAVAILABLE,
                message: "the database does not answer".into(),
                cause: Some(e.to_string()),
            }),
        },
        Route::Metrics => bytes(StatusCode::OK, "text/plain; version=0.0.4; charset=utf-8", state.metrics.render()),
        Route::UnknownTenant => public_error(&ApiError::not_found(
            codes::TENANT_NOT_FOUND,
            "no tenant is served at this address; check the issuer URL",
        )),
        Route::Tenant(t, TenantRoute::Discovery) => public_document(&req, t.discovery_json.clone()),
        Route::Tenant(t, TenantRoute::Jwks) => public_document(&req, t.jwks_json.clone()),
        Route::Tenant(_, TenantRoute::NotFound) => {
            public_error(&ApiError::not_found(codes::NOT_FOUND, format!("no such endpoint: {}", req.uri().path())))
        }
        Route::Tenant(t, r @ (TenantRoute::InvitePage(_) | TenantRoute::RecoverPage(_) | TenantRoute::AccountPage)) => {
            super::pages::page(state, t, r, req).await
        }
        Route::Tenant(_, TenantRoute::Asset(name)) => super::pages::asset(name),
        Route::Tenant(t, TenantRoute::BulkInvite) => super::bulk::invite(state, t, req).await,
        Route::Tenant(
            t,
            r @ (TenantRoute::Authorize
            | TenantRoute::AuthorizeResume
            | TenantRoute::Token
            | TenantRoute::Userinfo
            | TenantRoute::Logout
            | TenantRoute::Revoke
            | TenantRoute::Introspect
            | TenantRoute::Avatar(_)),
        ) => super::oauth::handle(state, t, r, req).await,
        Route::Tenant(t, r) => super::ceremony::handle(state, t, r, req).await,
    }
}

/// Discovery and JWKS: public, cacheable for a short while (rotation publishes the new key
/// before it signs anything clients have not seen), readable from any origin.
fn public_document(req: &Request<Incoming>, body: bytes::Bytes) -> Response<Body> {
    let r = if req.method() == Method::OPTIONS {
        let r = response::empty(StatusCode::NO_CONTENT);
        let r = with_header(r, header::ACCESS_CONTROL_ALLOW_METHODS, "GET, HEAD, OPTIONS");
        with_header(r, header::ACCESS_CONTROL_MAX_AGE, "86400")
    } else if req.method() == Method::HEAD {
        let mut r = bytes(StatusCode::OK, "application/json", bytes::Bytes::new());
        if let Ok(v) = HeaderValue::from_str(&body.len().to_string()) {
            r.headers_mut().insert(header::CONTENT_LENGTH, v);
        }
        r
    } else {
        bytes(StatusCode::OK, "application/json", body)
    };
    let r = with_header(r, header::ACCESS_CONTROL_ALLOW_ORIGIN, "*");
    with_header(r, header::CACHE_CONTROL, "public, max-age=300")
}
