//! Handlers of the end-user JSON API: the four ceremony endpoints and `/api/credentials`.

use hyper::header::{self, HeaderMap};
use hyper::{Method, Response, StatusCode};
use latchkey::codes;
use serde::Serialize;

use super::body::{Req, Text, read_json, read_json_or_default};
use super::request::{header, origin, session_token};
use super::response::{empty, json, with_header_value};
use super::{Body, Cx};
use latchkey_domain::error::Error;
use latchkey_domain::oidc::error::{OAuthCode, OAuthError};
use latchkey_domain::oidc::introspection::check_access_alone;
use latchkey_domain::sessions::{self, Issued};
use latchkey_domain::webauthn::{authenticate, credentials, register};
use latchkey_store::users::UserId;

/// Whether the browser's `Origin` is this tenant's: `None` when it sent none.
pub(super) fn same_origin(cx: &Cx<'_>, headers: &HeaderMap) -> Option<bool> {
    origin(headers).map(|o| o == cx.tenant.origin)
}

fn with_session<T: Serialize>(cx: &Cx<'_>, status: StatusCode, body: &T, issued: Option<&Issued>) -> Response<Body> {
    let r = json(status, body);
    match issued {
        Some(s) => with_session_cookie(r, &sessions::set_cookie(&cx.tenant, s, cx.now())),
        None => r,
    }
}

fn with_session_cookie(r: Response<Body>, cookie: &str) -> Response<Body> {
    with_header_value(r, header::SET_COOKIE, cookie)
}

/// A sign-in in a browser that had a session replaces it: the session of the cookie the browser
/// sent (`old`) ends as a logout ends it, with the grants made in it, so that signing in again
/// (`prompt=login`, `max_age=0`, another account) leaves nothing of the previous session alive.
/// A failure is logged; the new session stands.
pub(super) async fn end_replaced(cx: &Cx<'_>, old: Option<String>, new: &Issued) {
    let Some(old) = old.filter(|old| *old != new.token) else { return };
    let (t, now) = (cx.tenant.id, cx.now());
    match sessions::end_alone(&cx.state.db, t, old, now).await {
        Ok(true) => {
            let mut e = cx.event("browser", "session.replaced", "success");
            e.detail = Some("ended by a new sign-in in the same browser".into());
            cx.state.audit.record(e);
        }
        Ok(false) => {}
        Err(e) => {
            tracing::warn!(tenant = %cx.tenant.slug, error = %e, "the session a new sign-in replaced could not be ended")
        }
    }
}

/// The signed-in user of a credentials call: a Bearer access token of this tenant with scope
/// `credentials`, or the session cookie. State-changing calls authenticated by cookie must come
/// from the tenant's own origin (CSRF); a bearer token is not sent by browsers on their own.
pub(super) async fn signed_in(cx: &Cx<'_>, req: &Req) -> Result<(UserId, String), Error> {
    if let Some(presented) = super::dpop::access_token(cx, req).map_err(token_refused)? {
        let now = cx.now();
        let t = cx.tenant.clone();
        let checked = check_access_alone(cx.state, t, presented, now).await?;
        return match checked {
            Ok((claims, Some(user))) if claims.has_scope("credentials") => Ok((user.id, user.email)),
            Ok(_) => Err(Error::forbidden(codes::INSUFFICIENT_SCOPE, "the access token lacks the credentials scope")),
            Err(e) => Err(token_refused(e)),
        };
    }
    let login = || Error::unauthenticated(codes::LOGIN_REQUIRED, "sign in first: no valid session");
    let token = session_token(req.headers(), &cx.tenant).ok_or_else(login)?;
    if req.method() != Method::GET && same_origin(cx, req.headers()) != Some(true) {
        return Err(Error::forbidden(
            codes::INVALID_ORIGIN_HEADER,
            "changes made with a session cookie must come from this tenant's own pages (Origin header)",
        ));
    }
    let now = cx.now();
    let t = cx.tenant.id;
    let found = sessions::find(&cx.state.db, t, token, now).await?;
    found.map(|(_, user)| (user.id, user.email)).ok_or_else(login)
}

/// A refused access token (or DPoP proof) as the JSON API answers it: 401 with its code, which
/// `errors::api` turns into a `Bearer` or `DPoP` challenge; a failure of ours stays one.
pub(super) fn token_refused(e: OAuthError) -> Error {
    match e.code {
        OAuthCode::InvalidDpopProof | OAuthCode::UseDpopNonce => Error::unauthenticated(e.code(), e.description),
        OAuthCode::ServerError => Error::internal(e.cause.unwrap_or(e.description)),
        OAuthCode::TemporarilyUnavailable => {
            Error::new(latchkey_domain::error::Kind::Unavailable, codes::UNAVAILABLE, e.description)
        }
        _ => Error::unauthenticated(codes::INVALID_TOKEN, e.description),
    }
}

fn limit(cx: &Cx<'_>) -> u64 {
    cx.state.config.limits.json_body_max
}

/// Records a ceremony's audit event and metric; `who` names the user on success.
fn record_ceremony(cx: &Cx<'_>, kind: &'static str, outcome: &Result<(), &'static str>, who: Option<(&str, String)>) {
    let outcome_text = match outcome {
        Ok(()) => "success".to_owned(),
        Err(code) => format!("failure: {code}"),
    };
    let mut e = cx.event("anonymous", kind, &outcome_text);
    if let Some((email, detail)) = who {
        e.actor = email.to_owned();
        e.subject = Some(email.to_owned());
        e.detail = Some(detail);
    }
    cx.state.metrics.ceremony(kind, outcome.err().unwrap_or("success"));
    cx.state.audit.record(e);
}

pub async fn register_start(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, Error> {
    // A session cookie counts only from the tenant's own origin (or without an Origin, for
    // non-browser clients, which cannot be tricked into sending a cookie).
    let session_token = match same_origin(cx, req.headers()) {
        Some(false) => None,
        _ => session_token(req.headers(), &cx.tenant),
    };
    let user_agent = header(req.headers(), header::USER_AGENT).map(str::to_owned);
    let caller = register::Caller { session_token, user_agent };
    let body: register::StartRequest = read_json(req, limit(cx), Text::Printable).await?;
    let options = register::start(cx.state, cx.tenant.clone(), body, caller).await?;
    Ok(json(StatusCode::OK, &options))
}

pub async fn register_finish(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, Error> {
    let old = session_token(req.headers(), &cx.tenant);
    let body: register::FinishRequest = read_json(req, limit(cx), Text::Printable).await?;
    let done = register::finish(cx.state, cx.tenant.clone(), body).await;
    let who = done
        .as_ref()
        .ok()
        .map(|d| (d.response.user.email.as_str(), format!("{} via {}", d.response.credential.kind, d.via)));
    record_ceremony(cx, "registration", &done.as_ref().map(|_| ()).map_err(Error::code), who);
    let done = done?;
    if let Some(new) = &done.session {
        end_replaced(cx, old, new).await;
    }
    Ok(with_session(cx, StatusCode::CREATED, &done.response, done.session.as_ref()))
}

pub async fn auth_start(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, Error> {
    let body: authenticate::StartRequest = read_json_or_default(req, limit(cx), Text::Printable).await?;
    Ok(json(StatusCode::OK, &authenticate::start(cx.state, cx.tenant.clone(), body).await?))
}

pub async fn auth_finish(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, Error> {
    let old = session_token(req.headers(), &cx.tenant);
    let body: authenticate::FinishRequest = read_json(req, limit(cx), Text::Printable).await?;
    let done = authenticate::finish(cx.state, cx.tenant.clone(), body).await;
    let who = done.as_ref().ok().map(|d| (d.response.user.email.as_str(), "passkey".to_owned()));
    record_ceremony(cx, "login", &done.as_ref().map(|_| ()).map_err(Error::code), who);
    let done = done?;
    end_replaced(cx, old, &done.session).await;
    Ok(with_session(cx, StatusCode::OK, &done.response, Some(&done.session)))
}

pub async fn credential_list(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, Error> {
    let (user, _) = signed_in(cx, &req).await?;
    Ok(json(StatusCode::OK, &credentials::list(&cx.state.db, cx.tenant.clone(), user).await?))
}

/// Audits a change to a credential of the signed-in user.
fn record_change<T>(cx: &Cx<'_>, email: &str, action: &str, id: String, result: &Result<T, Error>) {
    let mut e = cx.event(email, action, &latchkey_domain::audit::outcome(result, |e| e.code.to_owned()));
    e.subject = Some(email.to_owned());
    e.detail = Some(id);
    cx.state.audit.record(e);
}

pub async fn credential_rename(cx: &Cx<'_>, req: Req, id: String) -> Result<Response<Body>, Error> {
    let (user, email) = signed_in(cx, &req).await?;
    let body: credentials::Rename = read_json(req, limit(cx), Text::Printable).await?;
    let result = credentials::rename(&cx.state.db, cx.tenant.clone(), user, &id, body).await;
    record_change(cx, &email, "credential.rename", id, &result);
    Ok(json(StatusCode::OK, &result?))
}

pub async fn credential_delete(cx: &Cx<'_>, req: Req, id: String) -> Result<Response<Body>, Error> {
    let (user, email) = signed_in(cx, &req).await?;
    let result = credentials::delete(&cx.state.db, cx.tenant.clone(), user, &id).await;
    record_change(cx, &email, "credential.revoke", id, &result);
    result?;
    Ok(empty(StatusCode::NO_CONTENT))
}
