//! HTTP side of the OpenID Connect endpoints: parameters in, redirects and JSON out, CORS from the
//! tenant's applications, `no-store` on everything that carries a token.

use std::sync::Arc;

use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde::Serialize;

use super::Body;
use super::body::read_bounded;
use super::pages::{self, escape, html, render};
use super::public::TenantRoute;
use super::response::{bytes, empty};
use crate::State;
use crate::oidc::authorize::{self, AuthorizationRequest, Outcome, Params, Resumed};
use crate::oidc::clients::presented;
use crate::oidc::error::OAuthError;
use crate::oidc::grants::{self, Form};
use crate::oidc::introspection::{self, LogoutRequest};
use crate::sessions;
use crate::store;
use crate::tenants::TenantRuntime;

pub async fn handle(
    state: &State,
    tenant: Arc<TenantRuntime>,
    route: TenantRoute,
    req: Request<Incoming>,
) -> Response<Body> {
    let origin = req.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let cors_route = matches!(route, TenantRoute::Token | TenantRoute::Userinfo | TenantRoute::Revoke);
    let allowed_origin = match (&origin, cors_route) {
        (Some(o), true) => allowed(state, &tenant, o).await,
        _ => None,
    };
    let mut response = if req.method() == Method::OPTIONS {
        preflight(allowed_origin.is_some())
    } else {
        match run(state, tenant, route, req).await {
            Ok(r) => r,
            Err(e) => oauth_error(&e),
        }
    };
    if let Some(o) = allowed_origin
        && let Ok(v) = HeaderValue::from_str(&o)
    {
        let h = response.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, v);
        h.insert(header::VARY, HeaderValue::from_static("Origin"));
    }
    response
}

/// The request's origin, when one of the tenant's applications lists it.
async fn allowed(state: &State, tenant: &TenantRuntime, origin: &str) -> Option<String> {
    let t = tenant.id;
    let o = origin.to_owned();
    let apps = state.db.read(move |tx| store::apps::list(tx, t)).await.ok()?;
    apps.iter().any(|a| a.cors_origins.contains(&o)).then(|| origin.to_owned())
}

fn preflight(allowed: bool) -> Response<Body> {
    let mut r = empty(if allowed { StatusCode::NO_CONTENT } else { StatusCode::FORBIDDEN });
    if allowed {
        let h = r.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, OPTIONS"));
        h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("Authorization, Content-Type"));
        h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
    }
    r
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
    error_description: &'a str,
}

pub fn oauth_error(e: &OAuthError) -> Response<Body> {
    if let Some(cause) = &e.cause {
        tracing::error!(error = e.error, cause = %cause, "oauth request failed");
    }
    let body = serde_json::to_vec(&ErrorBody { error: e.error, error_description: &e.description }).unwrap_or_default();
    let mut r = no_store(bytes(e.status, "application/json", body));
    if let Some(w) = &e.www_authenticate
        && let Ok(v) = HeaderValue::from_str(w)
    {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    r
}

fn no_store(mut r: Response<Body>) -> Response<Body> {
    let h = r.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    r
}

fn json<T: Serialize>(value: &T) -> Result<Response<Body>, OAuthError> {
    let body = serde_json::to_vec(value).map_err(OAuthError::server_error)?;
    Ok(no_store(bytes(StatusCode::OK, "application/json", body)))
}

fn redirect(to: &str) -> Result<Response<Body>, OAuthError> {
    let mut r = empty(StatusCode::FOUND);
    r.headers_mut().insert(header::LOCATION, HeaderValue::from_str(to).map_err(OAuthError::server_error)?);
    Ok(no_store(r))
}

/// A form body (`application/x-www-form-urlencoded`), bounded.
async fn form(state: &State, req: Request<Incoming>) -> Result<(hyper::HeaderMap, Vec<(String, String)>), OAuthError> {
    let is_form = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/x-www-form-urlencoded"));
    if !is_form {
        return Err(OAuthError::invalid_request("send parameters as application/x-www-form-urlencoded"));
    }
    let headers = req.headers().clone();
    let body = read_bounded(req, state.config.limits.json_body_max)
        .await
        .map_err(|e| OAuthError::new(e.status, "invalid_request", e.message))?;
    Ok((headers, url::form_urlencoded::parse(&body).into_owned().collect()))
}

fn field(form: &[(String, String)], name: &str) -> Option<String> {
    form.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).filter(|v| !v.is_empty())
}

fn bearer(req: &Request<Incoming>) -> Option<String> {
    let v = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim().to_owned())
}

async fn run(
    state: &State,
    tenant: Arc<TenantRuntime>,
    route: TenantRoute,
    req: Request<Incoming>,
) -> Result<Response<Body>, OAuthError> {
    match route {
        TenantRoute::Authorize => {
            let params = Params::parse(req.uri().query().unwrap_or(""));
            let session = sessions::token(req.headers());
            match authorize::authorize(state, &tenant, params, session).await? {
                Outcome::InvalidRedirect(why) => Ok(invalid_redirect_page(&tenant, &why)),
                Outcome::Redirect(to) => redirect(&to),
                Outcome::Login { request_id, request } => Ok(login_page(&tenant, &request_id, &request)),
            }
        }
        TenantRoute::AuthorizeResume => {
            let params = Params::parse(req.uri().query().unwrap_or(""));
            let id = params.get("request").ok().flatten().unwrap_or_default().to_owned();
            let session = sessions::token(req.headers());
            match authorize::resume(state, &tenant, id.clone(), session).await? {
                Resumed::Redirect(to) => redirect(&to),
                Resumed::Login(request) => Ok(login_page(&tenant, &id, &request)),
                Resumed::Expired => Ok(html(
                    StatusCode::BAD_REQUEST,
                    render(
                        &tenant,
                        "Sign-in expired",
                        "expired",
                        &[],
                        "<h1>This sign-in has expired</h1>\n<p>Go back to the application and sign in again.</p>",
                    ),
                )),
            }
        }
        TenantRoute::Token => {
            let ip = crate::audit::ip_of(&req);
            let (headers, fields) = form(state, req).await?;
            let client = presented(&headers, &fields)?;
            let grant = field(&fields, "grant_type").unwrap_or_default();
            let mut e = crate::audit::event(
                state.clock.now(),
                Some(&tenant.slug),
                &client.client_id,
                &format!("token.{grant}"),
                "",
            );
            e.ip = ip;
            let result = grants::token(state, tenant, client, Form(fields)).await;
            e.outcome = crate::audit::outcome(&result, |e| e.error.to_owned());
            state.metrics.grant(&grant, e.outcome.strip_prefix("failure: ").unwrap_or(&e.outcome));
            state.audit.record(e);
            json(&result?)
        }
        TenantRoute::Userinfo => {
            let token = match bearer(&req) {
                Some(t) => Some(t),
                None if req.method() == Method::POST => field(&form(state, req).await?.1, "access_token"),
                None => None,
            };
            let Some(token) = token else {
                let mut e = OAuthError::new(StatusCode::UNAUTHORIZED, "invalid_token", "an access token is required");
                e.www_authenticate = Some("Bearer realm=\"latchkey\"".into());
                return Err(e);
            };
            json(&introspection::userinfo(state, tenant, token).await?)
        }
        TenantRoute::Revoke => {
            let (headers, fields) = form(state, req).await?;
            let client = presented(&headers, &fields)?;
            let token = field(&fields, "token").ok_or_else(|| OAuthError::invalid_request("token is required"))?;
            introspection::revoke(state, tenant, client, token).await?;
            Ok(no_store(empty(StatusCode::OK)))
        }
        TenantRoute::Introspect => {
            let (headers, fields) = form(state, req).await?;
            let client = presented(&headers, &fields)?;
            let token = field(&fields, "token").ok_or_else(|| OAuthError::invalid_request("token is required"))?;
            json(&introspection::introspect(state, tenant, client, token).await?)
        }
        TenantRoute::Logout => {
            let session_token = sessions::token(req.headers());
            let fields: Vec<(String, String)> = if req.method() == Method::POST {
                form(state, req).await?.1
            } else {
                url::form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes()).into_owned().collect()
            };
            let request = LogoutRequest {
                session_token,
                id_token_hint: field(&fields, "id_token_hint"),
                client_id: field(&fields, "client_id"),
                post_logout_redirect_uri: field(&fields, "post_logout_redirect_uri"),
                state: field(&fields, "state"),
            };
            let t = tenant.clone();
            state.audit.record(crate::audit::event(
                state.clock.now(),
                Some(&tenant.slug),
                "browser",
                "logout",
                "success",
            ));
            let mut r = match introspection::logout(state, t, request).await? {
                Some(to) => redirect(&to)?,
                None => html(
                    StatusCode::OK,
                    render(
                        &tenant,
                        "Signed out",
                        "signed-out",
                        &[],
                        "<h1>You are signed out</h1>\n<p>You can close this window.</p>",
                    ),
                ),
            };
            if let Ok(v) = HeaderValue::from_str(&sessions::clear_cookie(&tenant)) {
                r.headers_mut().insert(header::SET_COOKIE, v);
            }
            Ok(r)
        }
        TenantRoute::Avatar(id) => Ok(pages::avatar(state, &tenant, &id).await),
        _ => Err(OAuthError::invalid_request("no such endpoint")),
    }
}

fn invalid_redirect_page(tenant: &TenantRuntime, why: &str) -> Response<Body> {
    let main = format!(
        "<h1>Invalid redirect URI</h1>\n<p>{}</p>\n<p class=\"muted\">The application sent you here with an address it has not \
         registered, so you are not sent back. Tell the application's administrator.</p>",
        escape(why)
    );
    html(StatusCode::BAD_REQUEST, render(tenant, "Invalid redirect URI", "error", &[], &main))
}

fn login_page(tenant: &TenantRuntime, request_id: &str, request: &AuthorizationRequest) -> Response<Body> {
    let main = format!(
        "<h1>Sign in</h1>\n<p>to continue to <strong>{app}</strong></p>\n\
         <form id=\"signin-form\" class=\"signin-form\">\n<label for=\"username\">E-mail</label>\n\
         <input id=\"username\" name=\"username\" type=\"email\" autocomplete=\"username webauthn\" value=\"{hint}\" required>\n\
         <button class=\"primary\" type=\"submit\">Continue with a passkey</button>\n</form>\n\
         <div class=\"actions\"><button id=\"signin\" class=\"secondary\" type=\"button\">Sign in with a passkey (no e-mail)</button></div>",
        app = escape(&request.client_name),
        hint = escape(request.login_hint.as_deref().unwrap_or("")),
    );
    let data = [("request", request_id)];
    html(StatusCode::OK, render(tenant, "Sign in", "login", &data, &main))
}
