//! Social login over HTTP: `/login/{provider}` sends the browser to the provider with a
//! browser-binding cookie, `/login/{provider}/callback` brings it back signed in (or linked), and
//! `/api/social` lists and removes the signed-in user's links.

use hyper::header::{self, HeaderMap};
use hyper::{Response, StatusCode};
use latchkey::codes;

use super::body::Req;
use super::ceremony::signed_in;
use super::request::{self, session_token};
use super::response::{empty, json, redirect, with_header_value};
use super::{Body, Cx};
use crate::error::Error;
use crate::params::Params;
use crate::sessions;
use crate::social::flow::{self, BROWSER_COOKIE, Callback, Purpose, STATE_TTL};
use crate::store::SocialPurpose;

/// The cookie's path: the tenant's, so that tenants on one host do not see each other's flows.
fn cookie_path(cx: &Cx<'_>) -> String {
    if cx.tenant.path_prefix.is_empty() { "/".to_owned() } else { cx.tenant.path_prefix.clone() }
}

fn secure(cx: &Cx<'_>) -> &'static str {
    if cx.tenant.base.scheme() == "https" { "; Secure" } else { "" }
}

/// `GET /login/{provider}?request=ID | ?invite=TOKEN | ?link=1 | ?device=1`.
pub async fn start(cx: &Cx<'_>, req: Req, provider: String) -> Result<Response<Body>, Error> {
    let q = request::query(&req);
    let bad = |r: crate::params::Repeated| Error::invalid(codes::INVALID_INPUT, r.to_string());
    let purpose = if let Some(request_id) = q.owned("request").map_err(bad)? {
        Purpose::Login { request_id }
    } else if let Some(token) = q.owned("invite").map_err(bad)? {
        Purpose::Invite { token }
    } else if q.has("link") {
        let session_token = session_token(req.headers()).ok_or_else(|| {
            Error::unauthenticated(
                codes::LOGIN_REQUIRED,
                "Sign in first, then link your account from the account page.",
            )
        })?;
        Purpose::Link { session_token }
    } else if q.has("device") {
        Purpose::Device
    } else {
        return Err(Error::invalid(
            codes::INVALID_INPUT,
            "Start from the application you want to use, from your invitation, or from your account page.",
        ));
    };
    let started = flow::start(cx.state, &cx.tenant, &provider, purpose).await?;
    let cookie = format!(
        "{BROWSER_COOKIE}={}; Path={}; Max-Age={STATE_TTL}; HttpOnly; SameSite=Lax{}",
        started.browser,
        cookie_path(cx),
        secure(cx)
    );
    Ok(with_header_value(redirect(&started.redirect), header::SET_COOKIE, &cookie))
}

/// The browser-binding cookie, if the browser sent it.
fn browser_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, value)| *name == BROWSER_COOKIE && !value.is_empty())
        .map(|(_, value)| value.to_owned())
}

/// What the provider's redirect brings back: its query (a repeated parameter counts as absent)
/// and the browser-binding cookie.
pub fn callback_of(query: &[u8], headers: &HeaderMap) -> Callback {
    let q = Params::parse(query);
    let param = |name: &str| q.owned(name).ok().flatten();
    Callback { code: param("code"), state: param("state"), error: param("error"), browser: browser_cookie(headers) }
}

/// `GET /login/{provider}/callback?code&state` (or `?error`).
pub async fn callback(cx: &Cx<'_>, req: Req, provider: String) -> Result<Response<Body>, Error> {
    let cb = callback_of(req.uri().query().unwrap_or("").as_bytes(), req.headers());
    let result = flow::finish(cx.state, &cx.tenant, &provider, cb).await;
    let action = match &result {
        Ok(f) if f.purpose == SocialPurpose::Link => "social.link",
        _ => "social.login",
    };
    let mut e = cx.event("anonymous", action, &crate::audit::outcome(&result, |e| e.code.to_owned()));
    e.detail = Some(provider.clone());
    if let Err(err) = &result
        && err.code == codes::UPSTREAM_REFUSED
    {
        // Which of the provider's answers failed which check (an issuer that differs, a refused
        // client secret, an unreachable provider…): the operator's to see, in the audit and the
        // log, not the user's. Bounded: part of it is the provider's own words.
        let why: String = err.cause.as_deref().unwrap_or("no detail").chars().take(300).collect();
        tracing::warn!(tenant = %cx.tenant.slug, provider = %provider, cause = %why, "social sign-in refused");
        e.detail = Some(format!("{provider}: {why}"));
    }
    if let Ok(f) = &result {
        e.actor = f.email.clone();
        e.subject = Some(f.email.clone());
    }
    cx.state.audit.record(e);
    let done = result?;
    let clear = format!("{BROWSER_COOKIE}=; Path={}; Max-Age=0; HttpOnly; SameSite=Lax{}", cookie_path(cx), secure(cx));
    let mut r = with_header_value(redirect(&done.redirect), header::SET_COOKIE, &clear);
    if let Some(session) = &done.session
        && let Ok(v) = hyper::header::HeaderValue::from_str(&sessions::set_cookie(&cx.tenant, session, cx.now()))
    {
        r.headers_mut().append(header::SET_COOKIE, v);
    }
    Ok(r)
}

/// `GET /api/social`: the providers of the tenant and whether the signed-in user is linked.
pub async fn links(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, Error> {
    let (user, _) = signed_in(cx, &req).await?;
    Ok(json(StatusCode::OK, &crate::social::account_links(cx.state, cx.tenant.id, user).await?))
}

/// `DELETE /api/social/{provider}`: unlinks (cookie calls from the tenant's own pages only).
pub async fn unlink(cx: &Cx<'_>, req: Req, provider: String) -> Result<Response<Body>, Error> {
    let (user, email) = signed_in(cx, &req).await?;
    let result = crate::social::unlink(cx.state, cx.tenant.id, user, provider.clone()).await;
    let mut e = cx.event(&email, "social.unlink", &crate::audit::outcome(&result, |e| e.code.to_owned()));
    e.subject = Some(email);
    e.detail = Some(provider);
    cx.state.audit.record(e);
    result?;
    Ok(empty(StatusCode::NO_CONTENT))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_callback_reads_each_parameter_once_and_the_browser_cookie() {
        let mut headers = HeaderMap::new();
        headers.append(header::COOKIE, "a=1; latchkey_social=; b=2".parse().unwrap());
        headers.append(header::COOKIE, "latchkey_social=brw".parse().unwrap());
        let cb = callback_of(b"code=c%2F1&state=s&state=t&error=", &headers);
        assert_eq!(cb.code.as_deref(), Some("c/1"));
        assert_eq!(cb.state, None, "a repeated state is no state");
        assert_eq!(cb.error, None, "an empty error is no error");
        assert_eq!(cb.browser.as_deref(), Some("brw"), "the first non-empty cookie of that name");
        assert_eq!(callback_of(b"", &HeaderMap::new()).browser, None);
    }
}
