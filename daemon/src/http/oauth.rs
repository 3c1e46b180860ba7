//! HTTP side of the OpenID Connect endpoints: parameters in, redirects and JSON out, CORS from the
//! tenant's applications, `no-store` on everything that carries a token.

use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};
use serde::Serialize;

use super::body::{Req, read_form, read_form_or_query};
use super::request::{self, session_token};
use super::response::{bytes, empty, no_store, redirect, with_header_value};
use super::{Body, Cx, dpop, pages};
use latchkey_domain::apps;
use latchkey_domain::oidc::authorize::{self, Outcome, Resumed};
use latchkey_domain::oidc::clients::{Presented as Client, presented};
use latchkey_domain::oidc::dpop::Jkt;
use latchkey_domain::oidc::error::{OAuthCode, OAuthError};
use latchkey_domain::oidc::grants;
use latchkey_domain::oidc::introspection::{self, LogoutOutcome, LogoutRequest, Presented};
use latchkey_domain::params::Params;
use latchkey_domain::sessions;

/// Adds the CORS headers when the request's origin is one of the tenant's applications'.
pub async fn cors(cx: &Cx<'_>, origin: Option<String>, response: Response<Body>) -> Response<Body> {
    with_allowed_origin(response, allowed(cx, origin).await)
}

fn with_allowed_origin(mut response: Response<Body>, allowed: Option<String>) -> Response<Body> {
    if let Some(v) = allowed.and_then(|o| HeaderValue::from_str(&o).ok()) {
        let h = response.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, v);
        h.insert(header::VARY, HeaderValue::from_static("Origin"));
        // A DPoP client in a browser reads the nonce, and why a proof was refused.
        h.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static("DPoP-Nonce, WWW-Authenticate"));
    }
    response
}

/// `OPTIONS` on `/token`, `/userinfo`, `/revoke`: `methods` are the ones the endpoint takes.
pub async fn preflight(cx: &Cx<'_>, origin: Option<String>, methods: &'static str) -> Response<Body> {
    let allowed = allowed(cx, origin).await;
    let mut r = empty(if allowed.is_some() { StatusCode::NO_CONTENT } else { StatusCode::FORBIDDEN });
    if allowed.is_some() {
        let h = r.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static(methods));
        h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("Authorization, Content-Type, DPoP"));
        h.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
    }
    with_allowed_origin(r, allowed)
}

/// The request's origin, when one of the tenant's applications lists it.
async fn allowed(cx: &Cx<'_>, origin: Option<String>) -> Option<String> {
    let origin = origin?;
    let listed = apps::lists_origin(&cx.state.db, cx.tenant.id, origin.clone()).await.ok()?;
    listed.then_some(origin)
}

pub(super) fn json<T: Serialize>(value: &T) -> Result<Response<Body>, OAuthError> {
    let body = serde_json::to_vec(value).map_err(OAuthError::server_error)?;
    Ok(no_store(bytes(StatusCode::OK, "application/json", body)))
}

fn limit(cx: &Cx<'_>) -> u64 {
    cx.state.config.limits.json_body_max
}

/// The form of a client-authenticated endpoint and the client as it presented itself.
pub(super) async fn client_form(cx: &Cx<'_>, req: Req) -> Result<(Client, Params), OAuthError> {
    let authorization = request::header(req.headers(), header::AUTHORIZATION).map(str::to_owned);
    let form = read_form(req, limit(cx)).await?;
    let client = presented(authorization.as_deref(), &form)?;
    // A private_key_jwt assertion is verified here, once, for every endpoint that takes it.
    let client = latchkey_domain::oidc::client_assertion::verify(cx.state, &cx.tenant, client).await?;
    Ok((client, form))
}

/// `GET|POST /authorize`.
pub async fn authorize(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, OAuthError> {
    let session = session_token(req.headers(), &cx.tenant);
    // A POST's parameters are its form (its query is not read); a cross-site POST carries no
    // session cookie (SameSite=Lax), so it shows the login page rather than answering at once.
    let params = read_form_or_query(req, limit(cx)).await?;
    Ok(match authorize::authorize(cx.state, &cx.tenant, params, session).await? {
        Outcome::InvalidRedirect(why) => pages::invalid_redirect(cx, &why),
        Outcome::Redirect(to) => redirect(&to),
        Outcome::Login { request_id, request } => {
            let providers = latchkey_domain::social::buttons(&cx.state.db, cx.tenant.id).await;
            pages::login(cx, &request_id, &request, &providers)
        }
        Outcome::SelectAccount { request_id, request, name, email } => {
            pages::select_account(cx, &request_id, &request, &name, &email)
        }
        Outcome::Consent { request_id, request, email } => pages::consent(cx, &request_id, &request, &email),
    })
}

/// `POST /authorize/consent` (`request`, `decision=allow|deny`), from the consent page: its
/// form, with the session cookie, from this tenant's own origin.
pub async fn consent(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, OAuthError> {
    if super::ceremony::same_origin(cx, req.headers()) != Some(true) {
        return Ok(pages::sign_in_expired(cx));
    }
    let session = session_token(req.headers(), &cx.tenant);
    let form = read_form(req, limit(cx)).await?;
    let id = form.owned("request")?.unwrap_or_default();
    let allow = match form.owned("decision")?.as_deref() {
        Some("allow") => true,
        Some("deny") => false,
        _ => return Err(OAuthError::invalid_request("decision must be allow or deny")),
    };
    let resumed = authorize::consent(cx.state, &cx.tenant, id.clone(), session, allow).await?;
    if let Resumed::Decided { client_id, email, allowed, .. } = &resumed {
        let action = if *allowed { "consent.allowed" } else { "consent.denied" };
        let mut e = cx.event(email, action, "success");
        e.subject = Some(email.clone());
        e.detail = Some(client_id.clone());
        cx.state.audit.record(e);
    }
    Ok(resumed_page(cx, &id, resumed).await)
}

/// `GET /authorize/another`: "Use another account" on the account chooser.
pub async fn another_account(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, OAuthError> {
    let id = request::query(&req).owned("request")?.unwrap_or_default();
    let session = session_token(req.headers(), &cx.tenant);
    let resumed = authorize::another_account(cx.state, &cx.tenant, id.clone(), session).await?;
    Ok(resumed_page(cx, &id, resumed).await)
}

/// `GET /authorize/resume`: back from the hosted login page.
pub async fn resume(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, OAuthError> {
    let id = request::query(&req).owned("request")?.unwrap_or_default();
    let session = session_token(req.headers(), &cx.tenant);
    let resumed = authorize::resume(cx.state, &cx.tenant, id.clone(), session).await?;
    Ok(resumed_page(cx, &id, resumed).await)
}

/// Where a pending request goes next: back to the app, the login page again, or "expired".
async fn resumed_page(cx: &Cx<'_>, id: &str, resumed: Resumed) -> Response<Body> {
    match resumed {
        Resumed::Redirect(to) | Resumed::Decided { to, .. } => redirect(&to),
        Resumed::Login(request) => {
            let providers = latchkey_domain::social::buttons(&cx.state.db, cx.tenant.id).await;
            pages::login(cx, id, &request, &providers)
        }
        Resumed::Consent { request, email } => pages::consent(cx, id, &request, &email),
        Resumed::StepUpUnavailable { client_name, required, back_to } => {
            pages::step_up_unavailable(cx, &client_name, &required, &back_to)
        }
        Resumed::Expired => pages::sign_in_expired(cx),
    }
}

/// `POST /token`.
pub async fn token(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, OAuthError> {
    let proof = dpop::header(req.headers())?;
    let (client, form) = client_form(cx, req).await?;
    let grant = form.owned("grant_type")?.unwrap_or_default();
    let device = grant == latchkey_domain::oidc::device::GRANT_TYPE;
    let action = if device { "device.redeemed".to_owned() } else { format!("token.{}", grants::grant_name(&grant)) };
    let mut e = cx.event(&client.client_id, &action, "");
    let result = match token_proof(cx, proof, &client).await {
        Ok(jkt) => grants::token(cx.state, cx.tenant.clone(), client, form, jkt).await,
        Err(e) => Err(e),
    };
    e.outcome = latchkey_domain::audit::outcome(&result, |e| e.code().to_owned());
    cx.state.metrics.grant(
        latchkey_domain::oidc::grants::grant_name(&grant),
        e.outcome.strip_prefix("failure: ").unwrap_or(&e.outcome),
    );
    // A device polls every few seconds until the user decides: only the final answer is audited.
    let waiting = matches!(&result, Err(e) if matches!(e.code, OAuthCode::AuthorizationPending | OAuthCode::SlowDown));
    if !(device && waiting) {
        cx.state.audit.record(e);
    }
    json(&result?)
}

/// The key of a token request's DPoP proof, checked and spent once the client is authenticated
/// (so that nobody else can fill the record of spent proofs); a proof to an app that requires
/// DPoP must carry a nonce.
async fn token_proof(cx: &Cx<'_>, proof: Option<String>, client: &Client) -> Result<Option<Jkt>, OAuthError> {
    let Some(proof) = proof else { return Ok(None) };
    let app = latchkey_domain::oidc::clients::authenticate_for_grant(&cx.state.db, cx.tenant.id, client).await?;
    let nonce_required = app.require_dpop;
    let path = format!("{}/token", cx.tenant.path_prefix);
    let proof = dpop::check(cx, &proof, &hyper::Method::POST, &path, None, nonce_required)?;
    dpop::spend(cx, &proof).await?;
    Ok(Some(proof.jkt))
}

/// `POST /par` (RFC 9126): 201 with the `request_uri`.
pub async fn par(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, OAuthError> {
    let (client, form) = client_form(cx, req).await?;
    let mut e = cx.event(&client.client_id, "authorize.push", "");
    let result = latchkey_domain::oidc::par::push(cx.state, &cx.tenant, client, form).await;
    e.outcome = latchkey_domain::audit::outcome(&result, |e| e.code().to_owned());
    cx.state.audit.record(e);
    let body = serde_json::to_vec(&result?).map_err(OAuthError::server_error)?;
    Ok(no_store(bytes(StatusCode::CREATED, "application/json", body)))
}

/// `GET|POST /userinfo`: the token in the `Authorization` header, or in a POST's form.
pub async fn userinfo(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, OAuthError> {
    let presented = match dpop::access_token(cx, &req)? {
        Some(p) => Some(p),
        None if req.method() == hyper::Method::POST => {
            read_form(req, limit(cx)).await?.owned("access_token")?.map(|token| Presented { token, proof: None })
        }
        None => None,
    };
    let presented = presented.ok_or_else(OAuthError::token_required)?;
    let info = introspection::userinfo(cx.state, cx.now(), cx.tenant.clone(), presented).await;
    json(&info.map_err(OAuthError::at_resource)?)
}

/// `POST /revoke` (RFC 7009).
pub async fn revoke(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, OAuthError> {
    let (client, form) = client_form(cx, req).await?;
    let token = form.owned("token")?.ok_or_else(|| OAuthError::invalid_request("token is required"))?;
    introspection::revoke(cx.state, cx.tenant.clone(), client, token).await?;
    Ok(no_store(empty(StatusCode::OK)))
}

/// `POST /introspect` (RFC 7662).
pub async fn introspect(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, OAuthError> {
    let (client, form) = client_form(cx, req).await?;
    let token = form.owned("token")?.ok_or_else(|| OAuthError::invalid_request("token is required"))?;
    json(&introspection::introspect(&cx.state.db, cx.now(), cx.tenant.clone(), client, token).await?)
}

/// `GET|POST /logout` (RP-initiated logout).
pub async fn logout(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, OAuthError> {
    let session_token = session_token(req.headers(), &cx.tenant);
    let confirmed = req.method() == hyper::Method::POST;
    let fields = read_form_or_query(req, limit(cx)).await?;
    let request = LogoutRequest {
        confirmed,
        session_token,
        id_token_hint: fields.owned("id_token_hint")?,
        client_id: fields.owned("client_id")?,
        post_logout_redirect_uri: fields.owned("post_logout_redirect_uri")?,
        state: fields.owned("state")?,
    };
    let echo: Vec<(&str, String)> = [
        ("id_token_hint", &request.id_token_hint),
        ("client_id", &request.client_id),
        ("post_logout_redirect_uri", &request.post_logout_redirect_uri),
        ("state", &request.state),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.clone().map(|v| (k, v)))
    .collect();
    let r = match introspection::logout(cx.state, cx.tenant.clone(), request).await? {
        LogoutOutcome::Confirm { returns_to } => {
            return Ok(pages::confirm_sign_out(cx, &echo, returns_to.as_deref()));
        }
        LogoutOutcome::SignedOut(Some(to)) => redirect(&to),
        LogoutOutcome::SignedOut(None) => pages::signed_out(cx),
    };
    cx.state.audit.record(cx.event("browser", "logout", "success"));
    Ok(with_header_value(r, header::SET_COOKIE, &sessions::clear_cookie(&cx.tenant)))
}
