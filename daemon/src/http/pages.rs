//! Server-rendered pages: invite, recovery, account, the hosted login page of `/authorize` and
//! its error pages, and generated avatars. The layout is in [`super::html`].

use hyper::header;
use hyper::{Response, StatusCode};

use super::body::Req;
use maud::{Markup, html as markup};

use super::html::{Data, Page, html, render};
use super::request::session_token;
use super::response::{bytes, with_header};
use super::{Body, Cx};
use latchkey_domain::clock::date;
use latchkey_domain::crypto::sha256;
use latchkey_domain::error::Error;
use latchkey_domain::oidc::authorize::{AuthorizationRequest, scope_in_words};
use latchkey_domain::registry::TenantRuntime;
use latchkey_domain::sessions;
use latchkey_domain::users;

/// `/invite/{token}` and `/recover/{token}`: create a passkey with a one-time link.
pub async fn invite(cx: &Cx<'_>, token: String, recovery: bool) -> Result<Response<Body>, Error> {
    let (now, t) = (cx.now(), cx.tenant.id);
    let found = users::link_holder(&cx.state.db, t, &token, now).await?;
    let tenant = &cx.tenant;
    let Some((_, user)) = found.filter(|(i, _)| i.is_recovery() == recovery) else {
        let main = markup! {
            h1 { "This link no longer works" }
            p { "It is invalid, has been used, or has expired. Ask your administrator for a new one." }
        };
        return Ok(html(StatusCode::NOT_FOUND, render(tenant, &Page::new("Link expired", "expired"), main)));
    };
    let (title, lead) = if recovery {
        (
            "Recover your account",
            "Create a new passkey to get back into your account. Your other signed-in sessions will end.",
        )
    } else {
        (
            "Create your passkey",
            "Sign in without a password: your device keeps a passkey and unlocks it with your fingerprint, face or screen lock.",
        )
    };
    let providers = if recovery { vec![] } else { latchkey_domain::social::buttons(&cx.state.db, t).await };
    let main = markup! {
        h1 { (title) }
        p { "Welcome, " strong { (user.name) } ". " (lead) }
        p.muted { "Account: " (user.email) }
        div.actions {
            button #create-platform .primary type="button" { "Create a passkey on this device" }
            button #create-roaming .secondary type="button" { "Use a security key instead" }
        }
        (social_buttons(tenant, &providers, "invite", &token))
    };
    let kind = if recovery { "recover" } else { "invite" };
    let data = Data { token: Some(&token), email: Some(&user.email), name: Some(&user.name), ..Data::default() };
    Ok(html(StatusCode::OK, render(tenant, &Page::new(title, kind).with(data), main)))
}

/// `/account`: the signed-in user's passkeys, or a sign-in form.
pub async fn account(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, Error> {
    let (now, t) = (cx.now(), cx.tenant.id);
    let session = match session_token(req.headers(), &cx.tenant) {
        Some(token) => sessions::find(&cx.state.db, t, token, now).await?,
        None => None,
    };
    let tenant = &cx.tenant;
    let Some((_, user)) = session else {
        let main = markup! {
            h1 { "Sign in" }
            p { "Use the passkey on this device or your security key." }
            div.actions { button #signin .primary type="button" { "Sign in with a passkey" } }
            form #signin-form .signin-form {
                label for="username" { "Or enter your e-mail" }
                input #username name="username" type="email" autocomplete="username webauthn" required;
                button.secondary type="submit" { "Continue" }
            }
        };
        return Ok(html(StatusCode::OK, render(tenant, &Page::new("Sign in", "signin"), main)));
    };
    let allowed = latchkey_domain::consents::list(&cx.state.db, t, user.id).await?;
    let main = markup! {
        h1 { "Your passkeys" }
        p { "Signed in as " strong { (user.email) } "." }
        p #advice .advice hidden {
            "Add a second passkey or a security key as a backup, so that losing one device does not lock you out."
        }
        ul #credentials .credentials {}
        div.actions {
            button #add-platform .primary type="button" { "Add a passkey" }
            button #add-roaming .secondary type="button" { "Add a backup security key" }
        }
        section #social-section hidden {
            h2 { "Other ways to sign in" }
            ul #social .credentials {}
            div.actions { button #step-up .primary type="button" hidden { "Confirm with your passkey" } }
        }
        @if !allowed.is_empty() {
            section #consents-section {
                h2 { "Applications you allowed" }
                ul #consents .credentials {
                    @for c in &allowed {
                        li data-client-id=(c.client_id) {
                            strong { (c.app_name) }
                            span.hint {
                                " · " (c.scopes.iter().map(|s| scope_in_words(s)).collect::<Vec<_>>().join("; "))
                                " · since " (date(c.granted_at))
                            }
                            form method="post" action={ (tenant.path_prefix) "/account/consents/revoke" } {
                                input type="hidden" name="client_id" value=(c.client_id);
                                button.secondary type="submit" { "Revoke" }
                            }
                        }
                    }
                }
            }
        }
    };
    let data = Data { email: Some(&user.email), name: Some(&user.name), ..Data::default() };
    // The revoke forms post back here: their Origin must show.
    let page = Page { referrer_same_origin: true, ..Page::new("Your passkeys", "account").with(data) };
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
pub fn consent(
    tenant: &TenantRuntime,
    request_id: &str,
    request: &AuthorizationRequest,
    email: &str,
) -> Response<Body> {
    let scopes: Vec<&str> = latchkey_domain::oidc::tokens::scopes(&request.scope).collect();
    let main = markup! {
        @if let Some(sha) = &request.logo_sha {
            img #consent-logo .app-logo src={ (tenant.path_prefix) "/logos/" (request.client_id) ".png?v=" (sha.get(..16).unwrap_or(sha)) }
                alt={ (request.client_name) " logo" } width="64" height="64";
        }
        h1 { "Allow " (request.client_name) "?" }
        p { strong #consent-app { (request.client_name) } " asks to:" }
        ul #consent-scopes {
            @for s in &scopes {
                li data-scope=(s) { (scope_in_words(s)) }
            }
        }
        p.hint { "Signed in as " (email) ". You can revoke this on your account page." }
        form method="post" action={ (tenant.path_prefix) "/authorize/consent" } class="actions" {
            input type="hidden" name="request" value=(request_id);
            button #consent-allow .primary type="submit" name="decision" value="allow" { "Allow" }
            button #consent-deny .secondary type="submit" name="decision" value="deny" { "Deny" }
        }
    };
    let page = Page { referrer_same_origin: true, ..Page::new("Allow access", "consent") };
    let page = html(StatusCode::OK, render(tenant, &page, main));
    match latchkey_domain::oidc::introspection::form_target(&request.redirect_uri) {
        Some(source) => {
            let csp = super::html::CSP.replace("form-action 'self'", &format!("form-action 'self' {source}"));
            super::response::with_header_value(page, header::CONTENT_SECURITY_POLICY, &csp)
        }
        None => page,
    }
}

/// A link's confirmation page (the callback of a link from `/account`): names the upstream
/// account before anything is saved. The form posts back, from this page's origin and the
/// session that started the link, to `/login/{provider}/confirm`.
pub fn confirm_link(
    tenant: &TenantRuntime,
    email: &str,
    c: &latchkey_domain::social::outcome::Confirm,
) -> Response<Body> {
    let label = c.label.as_str();
    let main = markup! {
        h1 { "Link your " (label) " account?" }
        p { (label) " signed you in as " strong #upstream-account { (c.account) } "." }
        p {
            "Once linked, this " (label) " account signs in to " strong { (email) } " here, without your passkey. "
            "Link it only if it is yours."
        }
        form method="post" action={ (tenant.path_prefix) "/login/" (c.provider) "/confirm" } class="actions" {
            input type="hidden" name="token" value=(c.token);
            button #confirm-link .primary type="submit" name="decision" value="confirm" { "Link " (label) " account" }
            button #cancel-link .secondary type="submit" name="decision" value="cancel" { "Cancel" }
        }
    };
    // Every response says `Referrer-Policy: no-referrer`, with which browsers send `Origin: null`
    // with a form's POST; the confirmation must show its origin, so this page relaxes the policy
    // to `same-origin` (a referrer only ever goes to this same origin).
    let page = Page { referrer_same_origin: true, ..Page::new("Link an account", "link-confirm") };
    html(StatusCode::OK, render(tenant, &page, main))
}

/// The hosted login page of a pending authorization request.
pub fn login(
    tenant: &TenantRuntime,
    request_id: &str,
    request: &AuthorizationRequest,
    providers: &[(String, String)],
) -> Response<Body> {
    let main = markup! {
        h1 { "Sign in" }
        p { "to continue to " strong { (request.client_name) } }
        @match request.require_acr.as_deref() {
            Some("phrh") => p #step-up .notice {
                (request.client_name) " asks for a passkey that stays on its device, or a security key: "
                "a passkey synced between devices will not do here."
            },
            Some(_) => p #step-up .notice {
                (request.client_name) " asks for a sign-in with a passkey."
            },
            None => {},
        }
        form #signin-form .signin-form {
            label for="username" { "E-mail" }
            input #username name="username" type="email" autocomplete="username webauthn"
                value=(request.login_hint.as_deref().unwrap_or("")) required;
            button.primary type="submit" { "Continue with a passkey" }
        }
        div.actions { button #signin .secondary type="button" { "Sign in with a passkey (no e-mail)" } }
        (social_buttons(tenant, providers, "request", request_id))
    };
    let data = Data { request: Some(request_id), ..Data::default() };
    html(StatusCode::OK, render(tenant, &Page::new("Sign in", "login").with(data), main))
}

/// `prompt=select_account` with a signed-in user: continue as them (the resume link, which
/// issues the code), or sign in with another account. Plain links: no script needed.
pub fn select_account(
    tenant: &TenantRuntime,
    request_id: &str,
    request: &AuthorizationRequest,
    name: &str,
    email: &str,
) -> Response<Body> {
    let id: String = url::form_urlencoded::byte_serialize(request_id.as_bytes()).collect();
    let main = markup! {
        h1 { "Choose an account" }
        p { "to continue to " strong { (request.client_name) } }
        div.actions {
            a #continue-as .primary href={ (tenant.path_prefix) "/authorize/resume?request=" (id) } {
                "Continue as " (name)
            }
            p.hint { (email) }
            a #another-account .secondary href={ (tenant.path_prefix) "/authorize/another?request=" (id) } {
                "Use another account"
            }
        }
    };
    html(StatusCode::OK, render(tenant, &Page::new("Choose an account", "select-account"), main))
}

/// The application asks for a sign-in this account cannot give (`acr` step-up): what is
/// missing and how to get it, and a link back to the application, which is told `access_denied`.
pub fn step_up_unavailable(tenant: &TenantRuntime, client_name: &str, required: &str, back_to: &str) -> Response<Body> {
    let main = markup! {
        h1 #step-up-unavailable { "A stronger sign-in is needed" }
        @if required == "phrh" {
            p {
                strong { (client_name) } " asks for a passkey that stays on its device, or a security key. "
                "Your account has only passkeys synced between devices."
            }
        } @else {
            p { strong { (client_name) } " asks for a sign-in with a passkey. Your account has none." }
        }
        p {
            "Add one on " a href={ (tenant.path_prefix) "/account" } { "your account page" }
            ", then sign in to " (client_name) " again."
        }
        div.actions { a #back-to-app .secondary href=(back_to) { "Back to " (client_name) } }
    };
    html(StatusCode::FORBIDDEN, render(tenant, &Page::new("A stronger sign-in is needed", "step-up-unavailable"), main))
}

/// One link per enabled social provider, carrying what the sign-in is for (`request` or
/// `invite`). Plain links: they work without JavaScript and without passkey support.
pub(super) fn social_buttons(tenant: &TenantRuntime, providers: &[(String, String)], key: &str, value: &str) -> Markup {
    let value: String = url::form_urlencoded::byte_serialize(value.as_bytes()).collect();
    markup! {
        @if !providers.is_empty() {
            div.actions.social-buttons {
                @for (slug, label) in providers {
                    a.secondary.social data-provider=(slug)
                        href={ (tenant.path_prefix) "/login/" (slug) "?" (key) "=" (value) } {
                        "Continue with " (label)
                    }
                }
            }
        }
    }
}

/// An authorization request with an unknown client or redirect URI: never redirected.
pub fn invalid_redirect(tenant: &TenantRuntime, why: &str) -> Response<Body> {
    let main = markup! {
        h1 { "Invalid redirect URI" }
        p { (why) }
        p.muted {
            "The application sent you here with an address it has not registered, so you are not sent back. "
            "Tell the application's administrator."
        }
    };
    html(StatusCode::BAD_REQUEST, render(tenant, &Page::new("Invalid redirect URI", "error"), main))
}

/// A pending authorization request that is gone.
pub fn sign_in_expired(tenant: &TenantRuntime) -> Response<Body> {
    let main = markup! {
        h1 { "This sign-in has expired" }
        p { "Go back to the application and sign in again." }
    };
    html(StatusCode::BAD_REQUEST, render(tenant, &Page::new("Sign-in expired", "expired"), main))
}

/// `/logout` reached without proof that an application sent the user (no valid
/// `id_token_hint`): ask before ending the session. The form posts back to `/logout` with the
/// same parameters; the session cookie (SameSite=Lax) only travels with a POST from our own page.
/// `returns_to` (a registered post-logout place, as a CSP source) joins the page's `form-action`:
/// browsers hold the redirect that answers the form to it too, and would stop there.
pub fn confirm_sign_out(tenant: &TenantRuntime, params: &[(&str, String)], returns_to: Option<&str>) -> Response<Body> {
    let main = markup! {
        h1 { "Sign out?" }
        p { "Do you want to sign out of " (tenant.name) " on this device?" }
        form method="post" action={ (tenant.path_prefix) "/logout" } class="actions" {
            @for (name, value) in params {
                input type="hidden" name=(name) value=(value);
            }
            button.primary type="submit" { "Sign out" }
        }
    };
    let page = html(StatusCode::OK, render(tenant, &Page::new("Sign out", "confirm-sign-out"), main));
    match returns_to {
        Some(source) => {
            let csp = super::html::CSP.replace("form-action 'self'", &format!("form-action 'self' {source}"));
            super::response::with_header_value(page, header::CONTENT_SECURITY_POLICY, &csp)
        }
        None => page,
    }
}

/// After `/logout` without a registered place to return to.
pub fn signed_out(tenant: &TenantRuntime) -> Response<Body> {
    let main = markup! {
        h1 { "You are signed out" }
        p { "You can close this window." }
    };
    html(StatusCode::OK, render(tenant, &Page::new("Signed out", "signed-out"), main))
}

/// `GET /logos/{client_id}.png`: an application's logo, as the operator gave it (a PNG checked
/// when stored). The pages name it with its hash in the query, so it may be cached for good.
pub async fn app_logo(cx: &Cx<'_>, client_id: String) -> Result<Response<Body>, Error> {
    let logo = latchkey_domain::apps::logo_of(&cx.state.db, cx.tenant.id, client_id).await?;
    // Only PNGs are stored (`apps::logo` checks them).
    let Some((_, image)) = logo else {
        return Err(Error::not_found(latchkey::codes::APP_NOT_FOUND, "no such application logo"));
    };
    let r = bytes(StatusCode::OK, "image/png", image);
    let r = with_header(r, header::CONTENT_SECURITY_POLICY, "default-src 'none'");
    Ok(with_header(r, header::CACHE_CONTROL, "public, max-age=86400"))
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
