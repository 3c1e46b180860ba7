//! HTTP side of the device authorization grant (RFC 8628): `POST /device_authorization` (OAuth
//! errors), the `/device` page, and its two JSON calls `POST /device/lookup` and
//! `POST /device/decide` (JSON API errors). The rules are in [`latchkey_domain::oidc::device`].
//!
//! Wrong user codes are limited per client address: after [`WRONG_CODES_PER_MINUTE`] wrong codes
//! in a minute, every lookup and decision from that address is refused (`rate_limited`) until
//! the next minute, right codes included, so that guessing learns nothing more.

use hyper::{Response, StatusCode};
use latchkey::codes;

use super::body::{Req, Text, read_json};
use super::html::{Data, Page, html, render};
use super::request::{self, session_token};
use super::response::json;
use super::{Body, Cx, oauth};
use latchkey_domain::error::{Error, Kind};
use latchkey_domain::oidc::device::{self, DecideRequest, Decided, Decision, LookupRequest, WRONG_CODES_PER_MINUTE};
use latchkey_domain::oidc::error::OAuthError;
use latchkey_domain::params::Params;
use latchkey_domain::sessions;

const BUCKET: latchkey_domain::ratelimit::Bucket = latchkey_domain::ratelimit::Bucket::DeviceUserCodes;

/// `POST /device_authorization`.
pub async fn authorization(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, OAuthError> {
    let (client, form) = oauth::client_form(cx, req).await?;
    let mut e = cx.event(&client.client_id, "device.requested", "");
    let result = device::authorize(&cx.state.db, cx.now(), &cx.tenant, client, form).await;
    e.outcome = latchkey_domain::audit::outcome(&result, |e| e.code().to_owned());
    cx.state.audit.record(e);
    oauth::json(&result?)
}

fn limit(cx: &Cx<'_>) -> u64 {
    cx.state.config.limits.json_body_max
}

fn too_many() -> Error {
    Error::new(
        Kind::RateLimited,
        codes::RATE_LIMITED,
        "too many wrong codes from your address; wait a minute and try again",
    )
}

/// Refuses every attempt from an address that has used up its wrong codes this minute.
fn check_limit(cx: &Cx<'_>) -> Result<(), Error> {
    if cx.state.limiter.exhausted(cx.ip, BUCKET, WRONG_CODES_PER_MINUTE, cx.now()) { Err(too_many()) } else { Ok(()) }
}

/// Counts a wrong code and answers it.
fn wrong_code(cx: &Cx<'_>) -> Error {
    cx.state.limiter.allow(cx.ip, BUCKET, WRONG_CODES_PER_MINUTE, cx.now());
    device::invalid_user_code()
}

/// These calls come from the tenant's own page: a request that names another origin is refused
/// (the decision, made with the session cookie, must name this one, as every cookie API).
fn check_origin(cx: &Cx<'_>, req: &Req, required: bool) -> Result<(), Error> {
    match request::origin(req.headers()) {
        Some(o) if o == cx.tenant.origin => Ok(()),
        None if !required => Ok(()),
        _ => Err(Error::forbidden(
            codes::INVALID_ORIGIN_HEADER,
            "this call must come from this tenant's own pages (Origin header)",
        )),
    }
}

/// `POST /device/lookup {"user_code"}` → `{client_name, scopes, user_code}`.
pub async fn lookup(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, Error> {
    check_origin(cx, &req, false)?;
    check_limit(cx)?;
    let body: LookupRequest = read_json(req, limit(cx), Text::Printable).await?;
    match device::lookup(&cx.state.db, cx.now(), cx.tenant.id, &body.user_code).await? {
        Some(found) => Ok(json(StatusCode::OK, &found)),
        None => Err(wrong_code(cx)),
    }
}

/// `POST /device/decide {"user_code", "approve"}` with the session cookie →
/// `{"status": "approved" | "denied"}`.
pub async fn decide(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, Error> {
    check_origin(cx, &req, true)?;
    check_limit(cx)?;
    let session = session_token(req.headers(), &cx.tenant);
    let body: DecideRequest = read_json(req, limit(cx), Text::Printable).await?;
    let decision = device::decide(&cx.state.db, cx.now(), cx.tenant.id, session, &body.user_code, body.approve).await?;
    match decision {
        Decision::Done { approved, client_id, email } => {
            let action = if approved { "device.approved" } else { "device.denied" };
            let mut e = cx.event(&email, action, "success");
            e.subject = Some(email.clone());
            e.detail = Some(client_id);
            cx.state.audit.record(e);
            Ok(json(StatusCode::OK, &Decided { status: if approved { "approved" } else { "denied" } }))
        }
        Decision::LoginRequired => {
            Err(Error::unauthenticated(codes::LOGIN_REQUIRED, "sign in first: no valid session"))
        }
        Decision::UnknownCode => Err(wrong_code(cx)),
    }
}

/// The code field's value from the page's query (`?user_code=`, as `verification_uri_complete`
/// sends it), not yet escaped: in canonical form when it is a code; otherwise as given (the user
/// corrects it), cut to the field's 32 characters.
pub fn prefill(query: &Params) -> String {
    let typed = query.owned("user_code").ok().flatten().unwrap_or_default();
    let prefill = device::canonical_user_code(&typed).map(|c| device::display(&c)).unwrap_or(typed);
    prefill.chars().take(32).collect()
}

/// `GET /device[?user_code=…]`: enter the code, sign in with a passkey, approve or deny.
pub async fn page(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, Error> {
    let prefill = prefill(&request::query(&req));
    let (now, t) = (cx.now(), cx.tenant.id);
    let session = match session_token(req.headers(), &cx.tenant) {
        Some(token) => sessions::find(&cx.state.db, t, token, now).await?,
        None => None,
    };
    let email = session.map(|(_, user)| user.email).unwrap_or_default();
    // Social providers sign in and come back here (the page keeps the code in the tab meanwhile).
    let providers = latchkey_domain::social::buttons(&cx.state.db, t).await;
    let tr = cx.tr;
    let social = super::pages::social_buttons(&cx.tenant, tr, &providers, "device", "1");
    let main = maud::html! {
        h1 { (tr.t("device-title")) }
        section #device-code {
            p { (tr.t("device-enter-code")) }
            form #device-form .signin-form {
                label for="user-code" { (tr.t("device-code-label")) }
                input #user-code name="user_code" type="text" autocomplete="off" autocapitalize="characters"
                    spellcheck="false" maxlength="32" placeholder="XXXX-XXXX" value=(prefill) required;
                button.primary type="submit" { (tr.t("continue")) }
            }
        }
        section #device-signin hidden {
            p { (tr.t("device-signin-to")) " " strong data-field="app" {} }
            div.actions { button #signin .primary type="button" { (tr.t("signin-button")) } }
            (social)
        }
        section #device-confirm hidden {
            p { strong data-field="app" {} }
            p { (tr.t("device-asks")) " " strong #device-user {} }
            p { (tr.t("device-with")) }
            ul #device-scopes .credentials {}
            p.code-check {
                (tr.t("device-code-label")) " " strong #device-code-shown .user-code {} ". " (tr.t("device-code-check"))
            }
            div.actions {
                button #approve .primary type="button" { (tr.t("device-approve")) }
                button #deny .secondary type="button" { (tr.t("device-deny")) }
            }
        }
        section #device-done hidden {
            p #device-result {}
            p.muted { (tr.t("close-window")) }
        }
    };
    let data = Data { email: Some(&email), ..Data::default() };
    let title = tr.t("device-title");
    let page = Page::of(cx, tr, &title, "device").with(data);
    Ok(html(StatusCode::OK, render(&cx.tenant, &page, main)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_field_is_prefilled_from_the_query() {
        let prefilled = |q: &str| prefill(&Params::parse(q.as_bytes()));
        assert_eq!(prefilled("user_code=bcdf%20ghjk"), "BCDF-GHJK");
        assert_eq!(prefilled("user_code=ABCD"), "ABCD", "not a code: as typed, for the user to correct");
        assert_eq!(prefilled(&format!("user_code={}", "x".repeat(40))).len(), 32);
        assert_eq!(prefilled("user_code=BCDFGHJK&user_code=BCDFGHJK"), "", "a repeated parameter is absent");
    }
}
