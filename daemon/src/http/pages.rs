//! Server-rendered pages: invite, recovery, account, the hosted login page of `/authorize` and
//! its error pages, and generated avatars. The layout is in [`super::html`]; every string comes
//! from the request's catalogue ([`super::i18n`]).

use hyper::header;
use hyper::{Response, StatusCode};

use super::body::Req;
use maud::{Markup, html as markup};

use super::html::{Data, Page, html, logo_version, render};
use super::i18n::Tr;
use super::request::session_token;
use super::response::{bytes, with_header};
use super::{Body, Cx};
use latchkey_domain::clock::date;
use latchkey_domain::crypto::sha256;
use latchkey_domain::error::Error;
use latchkey_domain::oidc::authorize::AuthorizationRequest;
use latchkey_domain::registry::TenantRuntime;
use latchkey_domain::sessions;
use latchkey_domain::users;

/// A message with one value shown in bold (`strong`): the message is formatted around a marker,
/// and the value, escaped, goes where the marker is, wherever the language puts it.
fn rich(tr: Tr, id: &str, var: &str, value: &str) -> Markup {
    rich_with_id(tr, id, &[], (var, value), None)
}

/// [`rich`] with other (plain) variables too, and an optional id on the bold value.
fn rich_with_id(tr: Tr, id: &str, plain: &[(&str, &str)], (var, value): (&str, &str), element: Option<&str>) -> Markup {
    const MARK: &str = "\u{E000}";
    let mut args = plain.to_vec();
    args.push((var, MARK));
    let text = tr.with(id, &args);
    let (before, after) = text.split_once(MARK).unwrap_or((text.as_str(), ""));
    markup! { (before) strong id=[element] { (value) } (after) }
}

/// A page whose form's answer redirects to `source` (a registered place of an application):
/// its `form-action` allows that origin too, as browsers hold the redirect to it.
fn with_form_target(page: Response<Body>, source: Option<String>) -> Response<Body> {
    match source {
        Some(source) => {
            let csp = super::html::CSP.replace("form-action 'self'", &format!("form-action 'self' {source}"));
            super::response::with_header_value(page, header::CONTENT_SECURITY_POLICY, &csp)
        }
        None => page,
    }
}

/// The words of a scope on the consent page.
pub fn scope_words(tr: Tr, scope: &str) -> String {
    tr.t(match scope {
        "openid" => "scope-openid",
        "profile" => "scope-profile",
        "email" => "scope-email",
        "offline_access" => "scope-offline",
        "credentials" => "scope-credentials",
        _ => "scope-other",
    })
}

/// `/invite/{token}` and `/recover/{token}`: create a passkey with a one-time link.
pub async fn invite(cx: &Cx<'_>, token: String, recovery: bool) -> Result<Response<Body>, Error> {
    let (now, t, tr) = (cx.now(), cx.tenant.id, cx.tr);
    let found = users::link_holder(&cx.state.db, t, &token, now).await?;
    let tenant = &cx.tenant;
    let Some((_, user)) = found.filter(|(i, _)| i.is_recovery() == recovery) else {
        let main = markup! {
            h1 { (tr.t("link-expired-heading")) }
            p #error-message role="alert" { (tr.t("link-expired-body")) }
        };
        let title = tr.t("link-expired-title");
        return Ok(html(StatusCode::NOT_FOUND, render(tenant, &Page::of(cx, tr, &title, "expired"), main)));
    };
    let (title, lead) = if recovery {
        (tr.t("recover-title"), tr.t("recover-lead"))
    } else {
        (tr.t("invite-title"), tr.t("invite-lead"))
    };
    let providers = if recovery { vec![] } else { latchkey_domain::social::buttons(&cx.state.db, t).await };
    let main = markup! {
        h1 { (title) }
        p { (rich(tr, "invite-welcome", "name", &user.name)) " " (lead) }
        p.muted { (tr.with("invite-account", &[("email", &user.email)])) }
        div.actions {
            button #create-platform .primary type="button" { (tr.t("invite-create-platform")) }
            button #create-roaming .secondary type="button" { (tr.t("invite-create-roaming")) }
        }
        (social_buttons(&cx.tenant, tr, &providers, "invite", &token))
    };
    let kind = if recovery { "recover" } else { "invite" };
    let data = Data { token: Some(&token), email: Some(&user.email), name: Some(&user.name), ..Data::default() };
    Ok(html(StatusCode::OK, render(tenant, &Page::of(cx, tr, &title, kind).with(data), main)))
}

/// `/account`: the signed-in user's passkeys, or a sign-in form.
pub async fn account(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, Error> {
    let (now, t, tr) = (cx.now(), cx.tenant.id, cx.tr);
    let session = match session_token(req.headers(), &cx.tenant) {
        Some(token) => sessions::find(&cx.state.db, t, token, now).await?,
        None => None,
    };
    let tenant = &cx.tenant;
    let Some((_, user)) = session else {
        let main = markup! {
            h1 { (tr.t("signin-title")) }
            p { (tr.t("signin-lead")) }
            div.actions { button #signin .primary type="button" { (tr.t("signin-button")) } }
            form #signin-form .signin-form {
                label for="username" { (tr.t("signin-email-label")) }
                input #username name="username" type="email" autocomplete="username webauthn" required;
                button.secondary type="submit" { (tr.t("continue")) }
            }
        };
        let title = tr.t("signin-title");
        return Ok(html(StatusCode::OK, render(tenant, &Page::of(cx, tr, &title, "signin"), main)));
    };
    let allowed = latchkey_domain::consents::list(&cx.state.db, t, user.id).await?;
    let main = markup! {
        h1 { (tr.t("account-title")) }
        p { (rich(tr, "account-signed-in-as", "email", &user.email)) }
        p #advice .advice hidden { (tr.t("account-advice")) }
        ul #credentials .credentials {}
        div.actions {
            button #add-platform .primary type="button" { (tr.t("account-add-platform")) }
            button #add-roaming .secondary type="button" { (tr.t("account-add-roaming")) }
        }
        section #social-section hidden {
            h2 { (tr.t("account-other-ways")) }
            ul #social .credentials {}
            div.actions { button #step-up .primary type="button" hidden { (tr.t("account-step-up")) } }
        }
        @if !allowed.is_empty() {
            section #consents-section {
                h2 { (tr.t("account-allowed-apps")) }
                ul #consents .credentials {
                    @for c in &allowed {
                        li data-client-id=(c.client_id) {
                            strong { (c.app_name) }
                            span.hint {
                                " · " (c.scopes.iter().map(|s| scope_words(tr, s)).collect::<Vec<_>>().join("; "))
                                " · " (tr.with("account-allowed-since", &[("date", &date(c.granted_at))]))
                            }
                            form method="post" action={ (tenant.path_prefix) "/account/consents/revoke" } {
                                input type="hidden" name="client_id" value=(c.client_id);
                                button.secondary type="submit" { (tr.t("account-revoke")) }
                            }
                        }
                    }
                }
            }
        }
    };
    let data = Data { email: Some(&user.email), name: Some(&user.name), ..Data::default() };
    // The revoke forms post back here: their Origin must show.
    let title = tr.t("account-title");
    let page = Page { referrer_same_origin: true, ..Page::of(cx, tr, &title, "account").with(data) };
    Ok(html(StatusCode::OK, render(tenant, &page, main)))
}

/// `POST /account/consents/revoke` (`client_id`) from the account page: forgets what the
/// signed-in user allowed the app (which asks again next time) and ends the app's tokens for
/// them; back to `/account`.
pub async fn revoke_consent(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, Error> {
    if super::ceremony::same_origin(cx, req.headers()) != Some(true) {
        return Err(Error::forbidden(
            latchkey::codes::INVALID_ORIGIN_HEADER,
            "This must come from this site's own account page. Open your account page and revoke it there.",
        ));
    }
    let (now, t) = (cx.now(), cx.tenant.id);
    let session = match session_token(req.headers(), &cx.tenant) {
        Some(token) => sessions::find(&cx.state.db, t, token, now).await?,
        None => None,
    };
    let form = super::body::read_form(req, cx.state.config.limits.json_body_max).await?;
    let client_id = form
        .owned("client_id")
        .map_err(|e| Error::invalid(latchkey::codes::INVALID_INPUT, e.to_string()))?
        .unwrap_or_default();
    if let Some((_, user)) = session
        && latchkey_domain::consents::revoke(&cx.state.db, t, user.id, client_id.clone(), now).await?
    {
        let mut e = cx.event(&user.email, "consent.revoked", "success");
        e.subject = Some(user.email.clone());
        e.detail = Some(client_id);
        cx.state.audit.record(e);
    }
    Ok(super::response::redirect(&format!("{}/account", cx.tenant.path_prefix)))
}

/// The consent page: the application's name and what it asks for in plain words; Allow posts
/// the decision, Deny too. The answer to the form is a redirect to the application, which the
/// page's `form-action` must allow (browsers hold a form's redirects to it).
pub fn consent(cx: &Cx<'_>, request_id: &str, request: &AuthorizationRequest, email: &str) -> Response<Body> {
    let (tenant, tr) = (&cx.tenant, cx.tr_for(request.ui_locales.as_deref()));
    let scopes: Vec<&str> = latchkey_domain::oidc::tokens::scopes(&request.scope).collect();
    let app = request.client_name.as_str();
    let main = markup! {
        (app_logo_img(&cx.tenant, tr, request, "consent-logo"))
        h1 { (tr.with("consent-heading", &[("app", app)])) }
        p { (rich(tr, "consent-asks", "app", app)) }
        ul #consent-scopes {
            @for s in &scopes {
                li data-scope=(s) { (scope_words(tr, s)) }
            }
        }
        p.hint { (tr.with("consent-signed-in", &[("email", email)])) }
        form method="post" action={ (tenant.path_prefix) "/authorize/consent" } class="actions" {
            input type="hidden" name="request" value=(request_id);
            button #consent-allow .primary type="submit" name="decision" value="allow" { (tr.t("consent-allow")) }
            button #consent-deny .secondary type="submit" name="decision" value="deny" { (tr.t("consent-deny")) }
        }
    };
    let title = tr.t("consent-title");
    let page = Page { referrer_same_origin: true, ..Page::of(cx, tr, &title, "consent") };
    let page = html(StatusCode::OK, render(tenant, &page, main));
    with_form_target(page, latchkey_domain::oidc::introspection::form_target(&request.redirect_uri))
}

/// The application's logo, if it has one, named by its hash (cached for good).
fn app_logo_img(tenant: &TenantRuntime, tr: Tr, request: &AuthorizationRequest, id: &str) -> Markup {
    let app = request.client_name.as_str();
    markup! {
        @if let Some(sha) = &request.logo_sha {
            img .app-logo id=(id) src={ (tenant.path_prefix) "/logos/" (request.client_id) ".png?v=" (logo_version(sha)) }
                alt=(tr.with("consent-logo", &[("app", app)])) width="64" height="64";
        }
    }
}

/// The one-time offer of a passkey to a user who signed in with a social login and has none:
/// Add (a registration ceremony with the session just made, then on to `next`) or Not now (a
/// plain link to `next`: the sign-in goes on either way).
pub fn offer_passkey(cx: &Cx<'_>, email: &str, name: &str, next: &str) -> Response<Body> {
    let (tenant, tr) = (&cx.tenant, cx.tr);
    let main = markup! {
        h1 #offer-passkey { (tr.t("offer-passkey-heading")) }
        p { (tr.t("offer-passkey-body")) }
        div.actions {
            button #add-passkey .primary type="button" { (tr.t("offer-passkey-add")) }
            a #skip-passkey .secondary href=(next) { (tr.t("offer-passkey-skip")) }
        }
    };
    let data = Data { email: Some(email), name: Some(name), next: Some(next), ..Data::default() };
    let title = tr.t("offer-passkey-title");
    // No language menu: this page answers the provider's callback, whose code and state are
    // spent; coming back to that URL could only show an error.
    let page = Page { tr, ..Page::new(&title, "offer-passkey") }.with(data);
    html(StatusCode::OK, render(tenant, &page, main))
}

/// A link's confirmation page (the callback of a link from `/account`): names the upstream
/// account before anything is saved. The form posts back, from this page's origin and the
/// session that started the link, to `/login/{provider}/confirm`.
pub fn confirm_link(cx: &Cx<'_>, email: &str, c: &latchkey_domain::social::outcome::Confirm) -> Response<Body> {
    let (tenant, tr) = (&cx.tenant, cx.tr);
    let label = c.label.as_str();
    let main = markup! {
        h1 { (tr.with("link-confirm-heading", &[("provider", label)])) }
        p { (rich_with_id(tr, "link-confirm-signed-in", &[("provider", label)], ("name", &c.account), Some("upstream-account"))) }
        p { (tr.with("link-confirm-body", &[("provider", label), ("email", email)])) }
        form method="post" action={ (tenant.path_prefix) "/login/" (c.provider) "/confirm" } class="actions" {
            input type="hidden" name="token" value=(c.token);
            button #confirm-link .primary type="submit" name="decision" value="confirm" {
                (tr.with("link-confirm-button", &[("provider", label)]))
            }
            button #cancel-link .secondary type="submit" name="decision" value="cancel" { (tr.t("cancel")) }
        }
    };
    // Every response says `Referrer-Policy: no-referrer`, with which browsers send `Origin: null`
    // with a form's POST; the confirmation must show its origin, so this page relaxes the policy
    // to `same-origin` (a referrer only ever goes to this same origin).
    let title = tr.t("link-confirm-title");
    let page = Page { referrer_same_origin: true, ..Page::of(cx, tr, &title, "link-confirm") };
    html(StatusCode::OK, render(tenant, &page, main))
}

/// The hosted login page of a pending authorization request.
pub fn login(
    cx: &Cx<'_>,
    request_id: &str,
    request: &AuthorizationRequest,
    providers: &[(String, String)],
) -> Response<Body> {
    let tr = cx.tr_for(request.ui_locales.as_deref());
    html(StatusCode::OK, login_page(&cx.tenant, tr, &cx.here, request_id, request, providers))
}

/// The login page's HTML in `tr`'s language, `here` being its own path (for the language menu).
/// Needs nothing of the request but its arguments: the render bench calls it.
pub fn login_page(
    tenant: &TenantRuntime,
    tr: Tr,
    here: &str,
    request_id: &str,
    request: &AuthorizationRequest,
    providers: &[(String, String)],
) -> String {
    let app = request.client_name.as_str();
    let main = markup! {
        (app_logo_img(tenant, tr, request, "login-logo"))
        h1 { (rich(tr, "login-heading", "app", app)) }
        @match request.require_acr.as_deref() {
            Some("phrh") => p #step-up .notice { (tr.with("login-step-up-bound", &[("app", app)])) },
            Some(_) => p #step-up .notice { (tr.with("login-step-up-passkey", &[("app", app)])) },
            None => {},
        }
        form #signin-form .signin-form {
            label for="username" { (tr.t("login-email-label")) }
            input #username name="username" type="email" autocomplete="username webauthn"
                value=(request.login_hint.as_deref().unwrap_or("")) required;
            button.primary type="submit" { (tr.t("login-continue")) }
        }
        div.actions { button #signin .secondary type="button" { (tr.t("login-no-email")) } }
        (social_buttons(tenant, tr, providers, "request", request_id))
    };
    let data = Data { request: Some(request_id), ..Data::default() };
    let title = tr.with("login-heading", &[("app", app)]);
    let page = Page { title: &title, kind: "login", tr, here: Some(here), data, ..Page::default() };
    render(tenant, &page, main)
}

/// `prompt=select_account` with a signed-in user: continue as them (the resume link, which
/// issues the code), or sign in with another account. Plain links: no script needed.
pub fn select_account(
    cx: &Cx<'_>,
    request_id: &str,
    request: &AuthorizationRequest,
    name: &str,
    email: &str,
) -> Response<Body> {
    let (tenant, tr) = (&cx.tenant, cx.tr_for(request.ui_locales.as_deref()));
    let id: String = url::form_urlencoded::byte_serialize(request_id.as_bytes()).collect();
    let main = markup! {
        h1 { (tr.t("select-title")) }
        p { (rich(tr, "login-lead", "app", &request.client_name)) }
        div.actions {
            a #continue-as .primary href={ (tenant.path_prefix) "/authorize/resume?request=" (id) } {
                (tr.with("select-continue-as", &[("name", name)]))
            }
            p.hint { (email) }
            a #another-account .secondary href={ (tenant.path_prefix) "/authorize/another?request=" (id) } {
                (tr.t("select-another"))
            }
        }
    };
    let title = tr.t("select-title");
    html(StatusCode::OK, render(tenant, &Page::of(cx, tr, &title, "select-account"), main))
}

/// The application asks for a sign-in this account cannot give (`acr` step-up): what is
/// missing and how to get it, and a link back to the application, which is told `access_denied`.
pub fn step_up_unavailable(cx: &Cx<'_>, client_name: &str, required: &str, back_to: &str) -> Response<Body> {
    let (tenant, tr) = (&cx.tenant, cx.tr);
    let app = [("app", client_name)];
    let main = markup! {
        h1 #step-up-unavailable { (tr.t("step-up-title")) }
        p { (tr.with(if required == "phrh" { "step-up-bound" } else { "step-up-passkey" }, &app)) }
        p { (tr.with("step-up-add", &app)) " " a href={ (tenant.path_prefix) "/account" } { (tr.t("step-up-account-link")) } }
        div.actions { a #back-to-app .secondary href=(back_to) { (tr.with("step-up-back", &app)) } }
    };
    let title = tr.t("step-up-title");
    html(StatusCode::FORBIDDEN, render(tenant, &Page::of(cx, tr, &title, "step-up-unavailable"), main))
}

/// One link per enabled social provider, carrying what the sign-in is for (`request` or
/// `invite`). Plain links: they work without JavaScript and without passkey support.
pub(super) fn social_buttons(
    tenant: &TenantRuntime,
    tr: Tr,
    providers: &[(String, String)],
    key: &str,
    value: &str,
) -> Markup {
    let value: String = url::form_urlencoded::byte_serialize(value.as_bytes()).collect();
    markup! {
        @if !providers.is_empty() {
            div.actions.social-buttons {
                @for (slug, label) in providers {
                    a.secondary.social data-provider=(slug)
                        href={ (tenant.path_prefix) "/login/" (slug) "?" (key) "=" (value) } {
                        (tr.with("social-continue", &[("provider", label)]))
                    }
                }
            }
        }
    }
}

/// An authorization request with an unknown client or redirect URI: never redirected. (`why`
/// names what was wrong, in English, as every error description does.)
pub fn invalid_redirect(cx: &Cx<'_>, why: &str) -> Response<Body> {
    let (tenant, tr) = (&cx.tenant, cx.tr);
    let title = tr.t("invalid-redirect-title");
    let main = markup! {
        h1 { (title) }
        p #error-message role="alert" lang="en" { (why) }
        p.muted { (tr.t("invalid-redirect-body")) }
    };
    html(StatusCode::BAD_REQUEST, render(tenant, &Page::of(cx, tr, &title, "error"), main))
}

/// A pending authorization request that is gone (used, or older than ten minutes).
pub fn sign_in_expired(cx: &Cx<'_>) -> Response<Body> {
    let (tenant, tr) = (&cx.tenant, cx.tr);
    let main = markup! {
        h1 { (tr.t("expired-heading")) }
        p #error-message role="alert" { (tr.t("expired-body")) }
    };
    let title = tr.t("expired-title");
    html(StatusCode::BAD_REQUEST, render(tenant, &Page::of(cx, tr, &title, "expired"), main))
}

/// `/logout` reached without proof that an application sent the user (no valid
/// `id_token_hint`): ask before ending the session. The form posts back to `/logout` with the
/// same parameters; the session cookie (SameSite=Lax) only travels with a POST from our own page.
/// `returns_to` (a registered post-logout place, as a CSP source) joins the page's `form-action`:
/// browsers hold the redirect that answers the form to it too, and would stop there.
pub fn confirm_sign_out(cx: &Cx<'_>, params: &[(&str, String)], returns_to: Option<&str>) -> Response<Body> {
    let (tenant, tr) =
        (&cx.tenant, cx.tr_for(params.iter().find(|(k, _)| *k == "ui_locales").map(|(_, v)| v.as_str())));
    let main = markup! {
        h1 { (tr.t("signout-heading")) }
        p { (tr.with("signout-question", &[("tenant", &tenant.display_name)])) }
        form method="post" action={ (tenant.path_prefix) "/logout" } class="actions" {
            @for (name, value) in params {
                input type="hidden" name=(name) value=(value);
            }
            button.primary type="submit" { (tr.t("signout-button")) }
        }
    };
    let title = tr.t("signout-title");
    let page = html(StatusCode::OK, render(tenant, &Page::of(cx, tr, &title, "confirm-sign-out"), main));
    with_form_target(page, returns_to.map(str::to_owned))
}

/// After `/logout` without a registered place to return to.
pub fn signed_out(cx: &Cx<'_>) -> Response<Body> {
    let (tenant, tr) = (&cx.tenant, cx.tr);
    let main = markup! {
        h1 { (tr.t("signed-out-heading")) }
        p { (tr.t("close-window")) }
    };
    let title = tr.t("signed-out-title");
    html(StatusCode::OK, render(tenant, &Page::of(cx, tr, &title, "signed-out"), main))
}

/// `GET /locale/{tag}?back=PATH`, the language menu: remembers the language in the
/// `latchkey_locale` cookie (a year, this tenant's path) and goes back to `back`, a path of this
/// tenant (anything else goes to the account page). An unknown language changes nothing.
pub fn set_locale(cx: &Cx<'_>, req: &Req, tag: &str) -> Response<Body> {
    let prefix = cx.tenant.path_prefix.as_str();
    let back = super::request::query(req).owned("back").ok().flatten();
    let own = |b: &String| {
        let rest = &b[prefix.len().min(b.len())..];
        b.starts_with(prefix) && rest.starts_with('/') && !rest.starts_with("//") && !b.contains('\\')
    };
    let to = back.filter(own).unwrap_or_else(|| format!("{prefix}/account"));
    let r = super::response::redirect(&to);
    match super::i18n::Locale::parse(tag).filter(|l| l.tag() == tag) {
        Some(l) => {
            with_header_value_owned(r, &sessions::tenant_cookie(&cx.tenant, super::i18n::COOKIE, l.tag(), 365 * 86_400))
        }
        None => r,
    }
}

fn with_header_value_owned(r: Response<Body>, cookie: &str) -> Response<Body> {
    super::response::with_header_value(r, header::SET_COOKIE, cookie)
}

/// `GET /brand.css`: the tenant's accent colour as the pages' `--accent`, after the default
/// stylesheet. Pages name it with the colour in the query, so it is cached for good.
pub fn brand_css(cx: &Cx<'_>, query: Option<&str>) -> Response<Body> {
    // Only `#rrggbb` is stored (`brand::changed`); anything else would not get here.
    let css = match &cx.tenant.accent_color {
        Some(c) if c.len() == 7 && c[1..].bytes().all(|b| b.is_ascii_hexdigit()) => {
            // Links on the dark theme's background keep its light accent: the tenant's colour,
            // dark enough for white labels, would be too dark to read there.
            format!(
                ":root {{ --accent: {c}; --accent-bg: {c}; }}\n\
                 @media (prefers-color-scheme: dark) {{ :root {{ --accent: #9cbcff; }} }}\n"
            )
        }
        _ => String::new(),
    };
    let r = bytes(StatusCode::OK, "text/css; charset=utf-8", css);
    let colour = cx.tenant.accent_color.as_deref().unwrap_or("").trim_start_matches('#');
    super::html::cached_as(r, query, colour)
}

/// `GET /logos/{client_id}.png`: an application's logo, as the operator gave it (a PNG checked
/// when stored). The pages name it with its hash in the query, so it is cached for good.
pub async fn app_logo(cx: &Cx<'_>, client_id: String, query: Option<&str>) -> Result<Response<Body>, Error> {
    let logo = latchkey_domain::apps::logo_of(&cx.state.db, cx.tenant.id, client_id).await?;
    // Only PNGs are stored (`apps::logo` checks them).
    let Some(logo) = logo else {
        return Err(Error::not_found(latchkey::codes::APP_NOT_FOUND, "no such application logo"));
    };
    let r = bytes(StatusCode::OK, "image/png", logo.bytes);
    let r = with_header(r, header::CONTENT_SECURITY_POLICY, "default-src 'none'");
    Ok(super::html::cached_as(r, query, logo_version(&logo.sha)))
}

/// `GET /logo`: the tenant's logo, a PNG or an SVG checked when stored to be plain drawing. Its
/// own policy forbids everything an SVG could do beyond drawing (script, fetches, forms), even
/// when opened directly; the pages name it with its hash, so it is cached for good.
pub async fn tenant_logo(cx: &Cx<'_>, query: Option<&str>) -> Result<Response<Body>, Error> {
    let logo = latchkey_domain::tenants::logo_of(&cx.state.db, cx.tenant.id).await?;
    let Some(logo) = logo else {
        return Err(Error::not_found(latchkey::codes::NOT_FOUND, "this tenant has no logo"));
    };
    let content_type = if logo.content_type == "image/svg+xml" { "image/svg+xml" } else { "image/png" };
    let r = bytes(StatusCode::OK, content_type, logo.bytes);
    let r = with_header(r, header::CONTENT_SECURITY_POLICY, "default-src 'none'; style-src 'unsafe-inline'; sandbox");
    Ok(super::html::cached_as(r, query, logo_version(&logo.sha)))
}

/// A generated avatar: the user's initials on a colour derived from their id. `picture` in tokens
/// points here for users without a picture of their own.
pub async fn avatar(cx: &Cx<'_>, public_id: String) -> Result<Response<Body>, Error> {
    let t = cx.tenant.id;
    let user = users::by_public_id(&cx.state.db, t, public_id).await?;
    let Some(user) = user else {
        return Err(Error::not_found(latchkey::codes::USER_NOT_FOUND, "no such user"));
    };
    let initials: String =
        user.name.split_whitespace().filter_map(|w| w.chars().next()).take(2).flat_map(char::to_uppercase).collect();
    let hue = sha256(user.public_id.as_bytes())[0] as u32 * 360 / 256;
    let svg = markup! {
        svg xmlns="http://www.w3.org/2000/svg" width="128" height="128" viewBox="0 0 128 128" {
            rect width="128" height="128" fill={ "hsl(" (hue) ",55%,45%)" } {}
            text x="64" y="64" dy=".35em" text-anchor="middle" font-family="sans-serif" font-size="52" fill="#fff" {
                (initials)
            }
        }
    }
    .into_string();
    let r = bytes(StatusCode::OK, "image/svg+xml", svg);
    let r = with_header(r, header::CONTENT_SECURITY_POLICY, "default-src 'none'; style-src 'unsafe-inline'");
    Ok(with_header(r, header::CACHE_CONTROL, "public, max-age=3600"))
}
