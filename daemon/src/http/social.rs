//! Social login over HTTP: `/login/{provider}` sends the browser to the provider with a
//! browser-binding cookie, `/login/{provider}/callback` brings it back signed in (or, for a link,
//! to a confirmation page whose form posts to `/login/{provider}/confirm`), and `/api/social`
//! lists the signed-in user's links, starts linking (POST) and unlinks (DELETE).

use hyper::header::{self, HeaderMap};
use hyper::{Response, StatusCode};
use latchkey::codes;

use super::body::{Req, read_form};
use super::ceremony::{same_origin, signed_in};
use super::request::{self, session_token};
use super::response::{empty, json, redirect, with_header_value};
use super::{Body, Cx, pages};
use latchkey_domain::error::Error;
use latchkey_domain::params::Params;
use latchkey_domain::sessions;
use latchkey_domain::social::flow::{self, BROWSER_COOKIE, Callback, Purpose, STATE_TTL, Started};
use latchkey_domain::social::{link, outcome};

/// The browser-binding cookie of a flow just started (named and scoped as the tenant's session
/// cookie is: its path, so that tenants on one host do not see each other's flows, and `__Host-`
/// where the tenant is at the root of an https host).
fn binding_cookie(cx: &Cx<'_>, started: &Started) -> String {
    sessions::tenant_cookie(&cx.tenant, BROWSER_COOKIE, &started.browser, STATE_TTL)
}

/// A provider's failure is the operator's to see: its cause (an issuer that differs, an endpoint
/// on another host, a refused client secret, an unreachable provider…) is logged at warn and
/// becomes the audit event's detail, at the start of a flow as at its callback; the user sees a
/// sentence. Bounded: part of it is the provider's own words.
fn upstream_cause(cx: &Cx<'_>, provider: &str, err: &Error, step: &'static str) -> Option<String> {
    if err.code != codes::UPSTREAM_REFUSED {
        return None;
    }
    let why: String = err.cause.as_deref().unwrap_or("no detail").chars().take(300).collect();
    tracing::warn!(tenant = %cx.tenant.slug, provider = %provider, step, cause = %why, "social sign-in refused");
    Some(format!("{provider}: {why}"))
}

/// `GET /login/{provider}?request=ID | ?invite=TOKEN | ?device=1`.
pub async fn start(cx: &Cx<'_>, req: Req, provider: String) -> Result<Response<Body>, Error> {
    let q = request::query(&req);
    let bad = |r: latchkey_domain::params::ParamError| Error::invalid(codes::INVALID_INPUT, r.to_string());
    let purpose = if let Some(request_id) = q.owned("request").map_err(bad)? {
        Purpose::Login { request_id }
    } else if let Some(token) = q.owned("invite").map_err(bad)? {
        Purpose::Invite { token }
    } else if q.has("link") {
        // Linking is a POST from the account page (see `link`): a link that any page could
        // make the browser follow must not start one.
        return Err(Error::invalid(
            codes::INVALID_INPUT,
            "Link another way to sign in with the Link button of your account page.",
        ));
    } else if q.has("device") {
        Purpose::Device
    } else {
        return Err(Error::invalid(
            codes::INVALID_INPUT,
            "Start from the application you want to use, from your invitation, or from your account page.",
        ));
    };
    let started = flow::start(cx.state, &cx.tenant, &provider, purpose).await;
    if let Err(err) = &started
        && let Some(detail) = upstream_cause(cx, &provider, err, "start")
    {
        let mut e = cx.event("anonymous", "social.login", &format!("failure: {}", err.code));
        e.detail = Some(detail);
        cx.state.audit.record(e);
    }
    let started = started?;
    Ok(with_header_value(redirect(&started.redirect), header::SET_COOKIE, &binding_cookie(cx, &started)))
}

/// `POST /api/social/{provider}`: the account page starts linking the signed-in user to the
/// provider. A session cookie from the tenant's own pages (never a bearer token: the flow runs in
/// this browser), with a passkey sign-in in the last minutes (else `passkey_required`, and the
/// page asks for the passkey). Answers `{redirect}` (the provider's URL) and the browser-binding
/// cookie.
pub async fn link(cx: &Cx<'_>, req: Req, provider: String) -> Result<Response<Body>, Error> {
    let token = session_token(req.headers(), &cx.tenant).ok_or_else(outcome::sign_in_first)?;
    if same_origin(cx, req.headers()) != Some(true) {
        return Err(Error::forbidden(
            codes::INVALID_ORIGIN_HEADER,
            "linking must start from this tenant's own account page (Origin header)",
        ));
    }
    let (t, now) = (cx.tenant.id, cx.now());
    let found = sessions::find(&cx.state.db, t, token, now).await?;
    let Some((session, user)) = found else {
        return Err(outcome::sign_in_first());
    };
    let started = flow::start(cx.state, &cx.tenant, &provider, Purpose::Link { session }).await;
    if let Err(err) = &started {
        let mut e = cx.event(&user.email, "social.link", &format!("failure: {}", err.code));
        e.subject = Some(user.email.clone());
        e.detail = Some(upstream_cause(cx, &provider, err, "start").unwrap_or_else(|| provider.clone()));
        cx.state.audit.record(e);
    }
    let started = started?;
    let body = serde_json::json!({ "redirect": started.redirect });
    Ok(with_header_value(json(StatusCode::OK, &body), header::SET_COOKIE, &binding_cookie(cx, &started)))
}

/// The callback's parts as the provider's redirect brings them back: its query (a repeated
/// parameter counts as absent), the browser-binding cookie under `browser_cookie` (its name for
/// this tenant), and the browser's session (a link's callback checks it is the one that started).
pub fn callback_of(query: &[u8], headers: &HeaderMap, browser_cookie: &str, session: Option<String>) -> Callback {
    let q = Params::parse(query);
    let param = |name: &str| q.owned(name).ok().flatten();
    Callback {
        code: param("code"),
        state: param("state"),
        error: param("error"),
        browser: request::cookie(headers, browser_cookie),
        session,
    }
}

/// `GET /login/{provider}/callback?code&state` (or `?error`).
pub async fn callback(cx: &Cx<'_>, req: Req, provider: String) -> Result<Response<Body>, Error> {
    let old_session = session_token(req.headers(), &cx.tenant);
    let browser = sessions::cookie_name(&cx.tenant, BROWSER_COOKIE);
    let cb = callback_of(req.uri().query().unwrap_or("").as_bytes(), req.headers(), &browser, old_session.clone());
    let result = flow::finish(cx.state, &cx.tenant, &provider, cb).await;
    // A link waiting for its confirmation is audited when confirmed (`confirm`).
    if !result.as_ref().is_ok_and(|f| f.confirm.is_some()) {
        let mut e =
            cx.event("anonymous", "social.login", &latchkey_domain::audit::outcome(&result, |e| e.code.to_owned()));
        e.detail = Some(provider.clone());
        if let Err(err) = &result {
            e.detail = upstream_cause(cx, &provider, err, "callback").or(e.detail);
        }
        if let Ok(f) = &result {
            e.actor = f.email.clone();
            e.subject = Some(f.email.clone());
        }
        cx.state.audit.record(e);
    }
    let done = result?;
    let clear = sessions::tenant_cookie(&cx.tenant, BROWSER_COOKIE, "", 0);
    if let Some(confirm) = &done.confirm {
        let page = pages::confirm_link(cx, &done.email, confirm);
        return Ok(with_header_value(page, header::SET_COOKIE, &clear));
    }
    let next = match &done.offer_passkey {
        Some(name) => pages::offer_passkey(cx, &done.email, name, &done.redirect),
        None => redirect(&done.redirect),
    };
    let mut r = with_header_value(next, header::SET_COOKIE, &clear);
    if let Some(session) = &done.session {
        super::ceremony::end_replaced(cx, old_session, session).await;
        if let Ok(v) = hyper::header::HeaderValue::from_str(&sessions::set_cookie(&cx.tenant, session, cx.now())) {
            r.headers_mut().append(header::SET_COOKIE, v);
        }
    }
    Ok(r)
}

/// `POST /login/{provider}/confirm` (the confirmation page's form: `token`, `decision` =
/// `confirm` or `cancel`), from the session that started the link and the tenant's own page.
/// Confirm saves the link, audits it with the upstream subject and e-mails the user; either way
/// the browser goes back to the account page.
pub async fn confirm(cx: &Cx<'_>, req: Req, provider: String) -> Result<Response<Body>, Error> {
    if same_origin(cx, req.headers()) != Some(true) {
        return Err(Error::forbidden(
            codes::INVALID_ORIGIN_HEADER,
            "This confirmation must come from this site's own page. Link the account again from your account page.",
        ));
    }
    let token = session_token(req.headers(), &cx.tenant).ok_or_else(outcome::sign_in_first)?;
    let form = read_form(req, cx.state.config.limits.json_body_max).await?;
    let bad = |r: latchkey_domain::params::ParamError| Error::invalid(codes::INVALID_INPUT, r.to_string());
    let pending = form.owned("token").map_err(bad)?.unwrap_or_default();
    let accept = match form.owned("decision").map_err(bad)?.as_deref() {
        Some("confirm") => true,
        Some("cancel") => false,
        _ => return Err(Error::invalid(codes::INVALID_INPUT, "Choose Link or Cancel on the confirmation page.")),
    };
    let result = link::confirm(&cx.state.db, cx.now(), &cx.tenant, provider.clone(), token, pending, accept).await;
    match &result {
        Ok(Some(linked)) => {
            let mut e = cx.event(&linked.email, "social.link", "success");
            e.subject = Some(linked.email.clone());
            let detail = format!("{provider}: subject {} ({})", linked.subject, linked.account);
            e.detail = Some(detail.chars().take(300).collect());
            cx.state.audit.record(e);
            link::notify(cx.state, &cx.tenant, linked.clone());
        }
        Ok(None) => {}
        Err(err) => {
            let mut e = cx.event("anonymous", "social.link", &format!("failure: {}", err.code));
            e.detail = Some(provider);
            cx.state.audit.record(e);
        }
    }
    result?;
    let mut r = redirect(&format!("{}/account", cx.tenant.base_url));
    *r.status_mut() = StatusCode::SEE_OTHER;
    Ok(r)
}

/// `GET /api/social`: the providers of the tenant and whether the signed-in user is linked.
pub async fn links(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, Error> {
    let (user, _) = signed_in(cx, &req).await?;
    Ok(json(StatusCode::OK, &latchkey_domain::social::account_links(&cx.state.db, cx.tenant.id, user).await?))
}

/// `DELETE /api/social/{provider}`: unlinks (cookie calls from the tenant's own pages only).
pub async fn unlink(cx: &Cx<'_>, req: Req, provider: String) -> Result<Response<Body>, Error> {
    let (user, email) = signed_in(cx, &req).await?;
    let result = latchkey_domain::social::unlink(&cx.state.db, cx.tenant.id, user, provider.clone()).await;
    let mut e = cx.event(&email, "social.unlink", &latchkey_domain::audit::outcome(&result, |e| e.code.to_owned()));
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
        let cb = callback_of(b"code=c%2F1&state=s&state=t&error=", &headers, "latchkey_social", None);
        assert_eq!(cb.code.as_deref(), Some("c/1"));
        assert_eq!(cb.state, None, "a repeated state is no state");
        assert_eq!(cb.error, None, "an empty error is no error");
        assert_eq!(cb.browser.as_deref(), Some("brw"), "the first non-empty cookie of that name");
        assert_eq!(callback_of(b"", &HeaderMap::new(), "latchkey_social", None).browser, None);
        assert_eq!(callback_of(b"", &headers, "__Host-latchkey_social", None).browser, None, "the tenant's name only");
    }
}
