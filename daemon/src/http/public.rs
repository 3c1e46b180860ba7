//! The public listener: parse the request into a [`Route`], apply the per-IP limits, then run the
//! one handler of that route. Each arm of `dispatch` also names the error renderer of its
//! boundary (JSON API, OAuth or page).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use latchkey::codes;

use super::body::{Req, RequestBody};
use super::response::{self, bytes, secure, with_header};
use super::route::{self, Route, TenantRoute, Unrouted};
use super::{Body, Cx, bulk, ceremony, device, errors, oauth, pages, request, social};
use latchkey_domain::error::{Error, Kind};
use latchkey_domain::oidc::error::OAuthError;
use latchkey_domain::ratelimit::Bucket;
use latchkey_domain::state::State;

/// Entry point of the public listener. `hsts` is the `Strict-Transport-Security` value when this
/// daemon serves TLS itself.
pub async fn handle(
    state: Arc<State>,
    hsts: Option<HeaderValue>,
    req: Request<Incoming>,
    peer: SocketAddr,
) -> Response<Body> {
    let started = Instant::now();
    let req = req.map(|b| RequestBody::new(b, state.config.limits.drain_max()));
    let ip = request::client_ip(peer, req.headers(), &state.config.trusted_proxies);
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let had_body = super::body::has_body(&req);
    let (name, response) = match find(&state, &req) {
        Ok(route) => {
            let name = route.name();
            let response = match limited(&state, &route, ip) {
                Some(refusal) => errors::api(&refusal),
                None => dispatch(&state, route, ip, req).await,
            };
            (name, response)
        }
        Err(unrouted) => (unrouted.name(), refuse(&unrouted, &path)),
    };
    let mut response = secure(response);
    // HSTS only where this daemon terminates TLS itself: behind a proxy, the proxy's to send (a
    // header on plain HTTP means nothing to browsers, and the proxy may serve other names).
    if let Some(hsts) = hsts {
        response.headers_mut().insert(header::STRICT_TRANSPORT_SECURITY, hsts);
    }
    // An error may have been answered before the body was read: do not reuse this connection.
    // Nor while draining: the client's next request goes through the load balancer again.
    let draining = state.draining.load(std::sync::atomic::Ordering::Acquire);
    if draining || (had_body && (response.status().is_client_error() || response.status().is_server_error())) {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    let status = response.status().as_u16();
    let elapsed = started.elapsed();
    state.metrics.observe(name, status, elapsed);
    // The query string is left out on purpose: it may carry codes and tokens; so is the token
    // that an invitation or recovery link carries in its path (whoever reads the log could
    // otherwise register a passkey on the account).
    let path = logged_path(name, &path);
    // Numbers stay numbers (JSON logs); probes and scrapes every few seconds only at debug level.
    let ms = (elapsed.as_secs_f64() * 1e6).round() / 1e3;
    if matches!(name, "healthz" | "readyz") {
        tracing::debug!(target: "latchkeyd::http", %peer, %method, %path, route = name, status, ms);
    } else {
        tracing::info!(target: "latchkeyd::http", %peer, %method, %path, route = name, status, ms);
    }
    response
}

/// The path as logged: an invitation or recovery page's token replaced by `…`.
fn logged_path<'a>(route: &str, path: &'a str) -> std::borrow::Cow<'a, str> {
    match (route, path.rsplit_once('/')) {
        ("invite_page" | "recover_page", Some((page, _token))) => format!("{page}/…").into(),
        _ => path.into(),
    }
}

/// The route of a request: a daemon-wide one, or one below the tenant served at its host and path.
fn find(state: &State, req: &Req) -> Result<Route, Unrouted> {
    let path = req.uri().path();
    let host = request::host(req);
    if let Some(global) = route::global(req.method(), path) {
        return global;
    }
    if let Some((tenant, rest)) = state.registry.resolve(host.as_deref(), path) {
        return Ok(Route::Tenant(tenant, route::tenant(req.method(), &rest)?));
    }
    let (tenant, rest) =
        state.registry.moved(host.as_deref(), path, state.clock.now()).ok_or(Unrouted::UnknownTenant)?;
    Ok(Route::Moved(tenant, route::tenant(req.method(), &rest)?, rest))
}

/// A request to a URL the tenant moved away from: the same JWKS (tokens issued before the move
/// name the old issuer, and their verifiers fetch the old `jwks_uri`), and 308 to the same path
/// under the tenant's URL for everything else (method and body kept).
async fn moved(
    state: &State,
    tenant: &latchkey_domain::registry::TenantRuntime,
    route: TenantRoute,
    rest: &str,
    req: &Req,
) -> Response<Body> {
    match route {
        TenantRoute::Jwks => match tenant.load(&state.registry).await {
            Ok(hot) => jwks(state, tenant, hot.jwks_json.clone(), hot.rs256().is_none(), req),
            Err(e) => errors::api(&e),
        },
        TenantRoute::DocumentPreflight => document_preflight(),
        _ => {
            let rest = if rest == "/" { "" } else { rest };
            let query = req.uri().query().map(|q| format!("?{q}")).unwrap_or_default();
            let location = format!("{}{rest}{query}", tenant.base_url);
            match HeaderValue::from_str(&location) {
                Ok(v) => {
                    let mut r = response::empty(StatusCode::PERMANENT_REDIRECT);
                    r.headers_mut().insert(header::LOCATION, v);
                    r
                }
                Err(_) => errors::api(&Error::invalid(codes::INVALID_REQUEST, "the path cannot be moved")),
            }
        }
    }
}

fn refuse(unrouted: &Unrouted, path: &str) -> Response<Body> {
    match unrouted {
        Unrouted::UnknownTenant => errors::api(&Error::not_found(
            codes::TENANT_NOT_FOUND,
            "no tenant is served at this address; check the issuer URL",
        )),
        Unrouted::NoSuchPath => errors::api(&Error::not_found(codes::NOT_FOUND, format!("no such endpoint: {path}"))),
        Unrouted::WrongMethod(allow) => {
            let e = Error::new(Kind::MethodNotAllowed, codes::METHOD_NOT_ALLOWED, format!("use {allow} here"));
            response::with_header_value(errors::api(&e), header::ALLOW, allow)
        }
    }
}

/// Applies the per-IP limits of `[limits]` to the endpoints they cover.
fn limited(state: &State, route: &Route, ip: std::net::IpAddr) -> Option<Error> {
    let live = state.live.get();
    let (bucket, per_minute) = match route {
        Route::Tenant(
            _,
            TenantRoute::RegisterStart | TenantRoute::RegisterFinish | TenantRoute::AuthStart | TenantRoute::AuthFinish,
        ) => (Bucket::Ceremony, live.ceremony_rate_per_minute),
        // Each stores what a sign-in needs for its ten minutes (a pending request, a social
        // login's state), and asks nothing of the caller: the ceremonies' limit, counted apart.
        Route::Tenant(
            _,
            TenantRoute::Authorize
            | TenantRoute::AuthorizeResume
            | TenantRoute::AuthorizeAnother
            | TenantRoute::AuthorizeConsent
            | TenantRoute::SocialStart(_)
            | TenantRoute::SocialLink(_),
        ) => (Bucket::Authorize, live.ceremony_rate_per_minute),
        Route::Tenant(
            _,
            TenantRoute::Token
            | TenantRoute::Revoke
            | TenantRoute::Introspect
            | TenantRoute::Par
            | TenantRoute::DeviceAuthorization,
        ) => (Bucket::Token, live.token_rate_per_minute),
        _ => return None,
    };
    if state.limiter.allow(ip, bucket, per_minute, state.clock.now()) {
        return None;
    }
    Some(Error::new(
        Kind::RateLimited,
        codes::RATE_LIMITED,
        "too many requests from your address; wait a minute and try again",
    ))
}

/// Renders a JSON API handler's result.
fn api(r: Result<Response<Body>, Error>) -> Response<Body> {
    r.unwrap_or_else(|e| errors::api(&e))
}

/// Renders an OAuth handler's result.
fn oauth(r: Result<Response<Body>, OAuthError>) -> Response<Body> {
    r.unwrap_or_else(|e| errors::oauth(&e))
}

/// Renders a page handler's result.
fn page(cx: &Cx<'_>, r: Result<Response<Body>, Error>) -> Response<Body> {
    r.unwrap_or_else(|e| errors::page(cx, &e))
}

/// One handler per route.
async fn dispatch(state: &State, route: Route, ip: std::net::IpAddr, req: Req) -> Response<Body> {
    use TenantRoute as R;
    let (tenant, route) = match route {
        Route::Healthz => return bytes(StatusCode::OK, "text/plain; charset=utf-8", "ok\n"),
        Route::Readyz => return readyz(state).await,
        Route::Tenant(tenant, route) => (tenant, route),
        Route::Moved(tenant, route, rest) => return moved(state, &tenant, route, &rest, &req).await,
    };
    // A node that has lost step with the others (its change listener cannot read their
    // changes) could serve a rotated-out key or a deleted tenant: it refuses instead, as its
    // /readyz already says, until it has caught up.
    if let Some(age) = state.db.out_of_step() {
        return errors::api(&out_of_step(age));
    }
    state.metrics.tenant_request(&tenant.slug);
    // Keys load on a tenant's first request (see tenants.rs); the documents are ready bytes.
    let (discovery_json, jwks_json, keyless) = match tenant.load(&state.registry).await {
        Ok(hot) => (hot.discovery_json.clone(), hot.jwks_json.clone(), hot.rs256().is_none()),
        Err(e) => return errors::api(&e),
    };
    let (tr, here) = super::i18n::of_request(&req, &tenant);
    let cx = Cx { state, tenant, ip, tr, here };
    let origin = request::origin(req.headers());
    let proof_sent = super::dpop::sent(req.headers());
    let nonced = |r| super::dpop::with_nonce(&cx, proof_sent, r);
    match route {
        R::Discovery => document(&req, discovery_json),
        R::Jwks => jwks(state, &cx.tenant, jwks_json, keyless, &req),
        R::DocumentPreflight => document_preflight(),
        R::RegisterStart => api(ceremony::register_start(&cx, req).await),
        R::RegisterFinish => api(ceremony::register_finish(&cx, req).await),
        R::AuthStart => api(ceremony::auth_start(&cx, req).await),
        R::AuthFinish => api(ceremony::auth_finish(&cx, req).await),
        R::CredentialList => nonced(api(ceremony::credential_list(&cx, req).await)),
        R::CredentialRename(id) => nonced(api(ceremony::credential_rename(&cx, req, id).await)),
        R::CredentialDelete(id) => nonced(api(ceremony::credential_delete(&cx, req, id).await)),
        R::BulkInvite => nonced(api(bulk::invite(&cx, req).await)),
        R::Scim(rest) => super::scim::serve(&cx, req, &rest).await,
        R::InvitePage(token) => page(&cx, pages::invite(&cx, token, false).await),
        R::RecoverPage(token) => page(&cx, pages::invite(&cx, token, true).await),
        R::AccountPage => page(&cx, pages::account(&cx, req).await),
        R::ConsentRevoke => page(&cx, pages::revoke_consent(&cx, req).await),
        R::Asset(a) => super::html::asset(a, req.uri().query()),
        R::Avatar(id) => pages::avatar(&cx, id).await.unwrap_or_else(|e| errors::text(&e)),
        R::SetLocale(tag) => pages::set_locale(&cx, &req, &tag),
        R::BrandCss => pages::brand_css(&cx, req.uri().query()),
        R::TenantLogo => pages::tenant_logo(&cx, req.uri().query()).await.unwrap_or_else(|e| errors::text(&e)),
        R::AppLogo(id) => pages::app_logo(&cx, id, req.uri().query()).await.unwrap_or_else(|e| errors::text(&e)),
        R::Authorize => oauth(oauth::authorize(&cx, req).await),
        R::AuthorizeResume => oauth(oauth::resume(&cx, req).await),
        R::AuthorizeAnother => oauth(oauth::another_account(&cx, req).await),
        R::AuthorizeConsent => oauth(oauth::consent(&cx, req).await),
        R::Token => oauth::cors(&cx, origin, nonced(oauth(oauth::token(&cx, req).await))).await,
        R::Userinfo => oauth::cors(&cx, origin, nonced(oauth(oauth::userinfo(&cx, req).await))).await,
        R::Revoke => oauth::cors(&cx, origin, oauth(oauth::revoke(&cx, req).await)).await,
        R::OAuthPreflight(methods) => oauth::preflight(&cx, origin, methods).await,
        R::Introspect => oauth(oauth::introspect(&cx, req).await),
        R::Par => oauth(oauth::par(&cx, req).await),
        R::DeviceAuthorization => oauth(device::authorization(&cx, req).await),
        R::DevicePage => page(&cx, device::page(&cx, req).await),
        R::DeviceLookup => api(device::lookup(&cx, req).await),
        R::DeviceDecide => api(device::decide(&cx, req).await),
        R::SocialStart(provider) => page(&cx, social::start(&cx, req, provider).await),
        R::SocialCallback(provider) => page(&cx, social::callback(&cx, req, provider).await),
        R::SocialConfirm(provider) => page(&cx, social::confirm(&cx, req, provider).await),
        R::SocialLinks => api(social::links(&cx, req).await),
        R::SocialLink(provider) => api(social::link(&cx, req, provider).await),
        R::SocialUnlink(provider) => api(social::unlink(&cx, req, provider).await),
        R::Logout => oauth(oauth::logout(&cx, req).await),
    }
}

fn out_of_step(age: std::time::Duration) -> Error {
    Error::new(
        Kind::Unavailable,
        codes::UNAVAILABLE,
        format!(
            "this node has not read the other nodes' changes for {} s (its change listener cannot reach the \
             database): it answers no tenant request until it has, so as not to serve stale tenants or keys",
            age.as_secs()
        ),
    )
}

async fn readyz(state: &State) -> Response<Body> {
    if state.draining.load(std::sync::atomic::Ordering::Acquire) {
        return errors::api(&Error::new(
            Kind::Unavailable,
            codes::UNAVAILABLE,
            "this node is stopping: it serves requests still in flight and new ones until its drain ends \
             (server.drain), and should get no more from the load balancer",
        ));
    }
    let health = state.db.health().await;
    if let Some(age) = health.listener_age.filter(|a| *a > latchkey_store::cluster::READY_LAG) {
        return errors::api(&out_of_step(age));
    }
    match health.up {
        None => bytes(
            StatusCode::OK,
            "text/plain; charset=utf-8",
            format!("ready ({}, {:.1} ms)\n", health.backend, health.ping.as_secs_f64() * 1000.0),
        ),
        Some(why) => errors::api(
            &Error::new(
                Kind::Unavailable,
                codes::UNAVAILABLE,
                format!("the {} database does not answer", health.backend),
            )
            .caused_by(why),
        ),
    }
}

/// Discovery and JWKS: public, cacheable for a short while (rotation publishes the new key
/// before it signs anything clients have not seen), readable from any origin.
fn document(req: &Req, body: bytes::Bytes) -> Response<Body> {
    let r = if req.method() == Method::HEAD {
        let len = body.len().to_string();
        response::with_header_value(
            bytes(StatusCode::OK, "application/json", bytes::Bytes::new()),
            header::CONTENT_LENGTH,
            &len,
        )
    } else {
        bytes(StatusCode::OK, "application/json", body)
    };
    public_document(r)
}

/// The tenant's JWKS. While its first key is being made ([`latchkey_domain::oidc::keygen`]) the
/// set is cached by no one (a verifier would keep it for five minutes) and the tenant moves to
/// the front of the queue: a verifier polling for the key gets it within moments.
fn jwks(
    state: &State,
    tenant: &latchkey_domain::registry::TenantRuntime,
    json: bytes::Bytes,
    keyless: bool,
    req: &Req,
) -> Response<Body> {
    let r = document(req, json);
    if !keyless {
        return r;
    }
    state.keygen.soon(tenant.id, &tenant.slug);
    with_header(r, header::CACHE_CONTROL, "no-store")
}

fn document_preflight() -> Response<Body> {
    let r = response::empty(StatusCode::NO_CONTENT);
    let r = with_header(r, header::ACCESS_CONTROL_ALLOW_METHODS, "GET, HEAD, OPTIONS");
    public_document(with_header(r, header::ACCESS_CONTROL_MAX_AGE, "86400"))
}

fn public_document(r: Response<Body>) -> Response<Body> {
    let r = with_header(r, header::ACCESS_CONTROL_ALLOW_ORIGIN, "*");
    with_header(r, header::CACHE_CONTROL, "public, max-age=300")
}

#[cfg(test)]
mod tests {
    use super::logged_path;

    #[test]
    fn link_tokens_stay_out_of_the_log() {
        assert_eq!(logged_path("recover_page", "/acme/recover/AaIdu7OXQRaPQrqCZycB2F"), "/acme/recover/…");
        assert_eq!(logged_path("invite_page", "/invite/AaIdu7OXQRaPQrqCZycB2F"), "/invite/…");
        assert_eq!(logged_path("auth_start", "/acme/auth/start"), "/acme/auth/start");
    }
}
