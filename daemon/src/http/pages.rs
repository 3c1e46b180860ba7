//! Server-rendered pages: invite, recovery, account, the hosted login page of `/authorize` and
//! its error pages, and generated avatars. The layout is in [`super::html`].

use hyper::header;
use hyper::{Response, StatusCode};

use super::body::Req;
use super::html::{escape, html, render};
use super::request::session_token;
use super::response::{bytes, with_header};
use super::{Body, Cx};
use crate::crypto::sha256;
use crate::error::Error;
use crate::oidc::authorize::AuthorizationRequest;
use crate::registry::TenantRuntime;
use crate::sessions;
use crate::store;

/// `/invite/{token}` and `/recover/{token}`: create a passkey with a one-time link.
pub async fn invite(cx: &Cx<'_>, token: String, recovery: bool) -> Result<Response<Body>, Error> {
    let (now, t) = (cx.now(), cx.tenant.id);
    let hash = crate::ids::token_key(&token);
    let found = cx
        .state
        .db
        .read(move |tx| -> Result<_, Error> {
            let Some(invite) = store::invites::valid(tx, t, &hash, now)? else {
                return Ok(None);
            };
            Ok(store::users::by_id(tx, t, invite.user_id)?.map(|u| (invite, u)))
        })
        .await?;
    let tenant = &cx.tenant;
    let Some((_, user)) = found.filter(|(i, _)| i.is_recovery() == recovery) else {
        let main = "<h1>This link no longer works</h1>\n<p>It is invalid, has been used, or has expired. \
                    Ask your administrator for a new one.</p>";
        return Ok(html(StatusCode::NOT_FOUND, render(tenant, "Link expired", "expired", &[], main)));
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
    let mut main = format!(
        "<h1>{title}</h1>\n<p>Welcome, <strong>{name}</strong>. {lead}</p>\n<p class=\"muted\">Account: {email}</p>\n\
         <div class=\"actions\">\n<button id=\"create-platform\" class=\"primary\" type=\"button\">Create a passkey on this device</button>\n\
         <button id=\"create-roaming\" class=\"secondary\" type=\"button\">Use a security key instead</button>\n</div>",
        name = escape(&user.name),
        email = escape(&user.email),
    );
    if !recovery {
        let providers = crate::social::buttons(cx.state, t).await;
        main.push_str(&social_buttons(tenant, &providers, "invite", &token));
    }
    let page = if recovery { "recover" } else { "invite" };
    let data = [("token", token.as_str()), ("email", user.email.as_str()), ("name", user.name.as_str())];
    Ok(html(StatusCode::OK, render(tenant, title, page, &data, &main)))
}

/// `/account`: the signed-in user's passkeys, or a sign-in form.
pub async fn account(cx: &Cx<'_>, req: Req) -> Result<Response<Body>, Error> {
    let (now, t) = (cx.now(), cx.tenant.id);
    let session = match session_token(req.headers(), &cx.tenant) {
        Some(token) => cx.state.db.read(move |tx| sessions::lookup(tx, t, &token, now)).await?,
        None => None,
    };
    let tenant = &cx.tenant;
    let Some((_, user)) = session else {
        let main = "<h1>Sign in</h1>\n<p>Use the passkey on this device or your security key.</p>\n\
            <div class=\"actions\"><button id=\"signin\" class=\"primary\" type=\"button\">Sign in with a passkey</button></div>\n\
            <form id=\"signin-form\" class=\"signin-form\">\n<label for=\"username\">Or enter your e-mail</label>\n\
            <input id=\"username\" name=\"username\" type=\"email\" autocomplete=\"username webauthn\" required>\n\
            <button class=\"secondary\" type=\"submit\">Continue</button>\n</form>";
        return Ok(html(StatusCode::OK, render(tenant, "Sign in", "signin", &[], main)));
    };
    let main = format!(
        "<h1>Your passkeys</h1>\n<p>Signed in as <strong>{email}</strong>.</p>\n\
         <p id=\"advice\" class=\"advice\" hidden>Add a second passkey or a security key as a backup, \
         so that losing one device does not lock you out.</p>\n\
         <ul id=\"credentials\" class=\"credentials\"></ul>\n<div class=\"actions\">\n\
         <button id=\"add-platform\" class=\"primary\" type=\"button\">Add a passkey</button>\n\
         <button id=\"add-roaming\" class=\"secondary\" type=\"button\">Add a backup security key</button>\n</div>\n\
         <section id=\"social-section\" hidden>\n<h2>Other ways to sign in</h2>\n<ul id=\"social\" class=\"credentials\"></ul>\n\
         <div class=\"actions\"><button id=\"step-up\" class=\"primary\" type=\"button\" hidden>Confirm with your passkey</button></div>\n</section>",
        email = escape(&user.email)
    );
    let data = [("email", user.email.as_str()), ("name", user.name.as_str())];
    Ok(html(StatusCode::OK, render(tenant, "Your passkeys", "account", &data, &main)))
}

/// A link's confirmation page (the callback of a link from `/account`): names the upstream
/// account before anything is saved. The form posts back, from this page's origin and the
/// session that started the link, to `/login/{provider}/confirm`.
pub fn confirm_link(tenant: &TenantRuntime, email: &str, c: &crate::social::outcome::Confirm) -> Response<Body> {
    let main = format!(
        "<h1>Link your {label} account?</h1>\n\
         <p>{label} signed you in as <strong id=\"upstream-account\">{account}</strong>.</p>\n\
         <p>Once linked, this {label} account signs in to <strong>{email}</strong> here, without your passkey. \
         Link it only if it is yours.</p>\n\
         <form method=\"post\" action=\"{prefix}/login/{provider}/confirm\" class=\"actions\">\n\
         <input type=\"hidden\" name=\"token\" value=\"{token}\">\n\
         <button id=\"confirm-link\" class=\"primary\" type=\"submit\" name=\"decision\" value=\"confirm\">Link {label} account</button>\n\
         <button id=\"cancel-link\" class=\"secondary\" type=\"submit\" name=\"decision\" value=\"cancel\">Cancel</button>\n\
         </form>",
        label = escape(&c.label),
        account = escape(&c.account),
        email = escape(email),
        prefix = escape(&tenant.path_prefix),
        provider = escape(&c.provider),
        token = escape(&c.token),
    );
    // Every response says `Referrer-Policy: no-referrer`, with which browsers send `Origin: null`
    // with a form's POST; the confirmation must show its origin, so this page relaxes the policy
    // to `same-origin` (a referrer only ever goes to this same origin).
    let page = render(tenant, "Link an account", "link-confirm", &[], &main).replacen(
        "<meta charset=\"utf-8\">",
        "<meta charset=\"utf-8\">\n<meta name=\"referrer\" content=\"same-origin\">",
        1,
    );
    html(StatusCode::OK, page)
}

/// The hosted login page of a pending authorization request.
pub fn login(
    tenant: &TenantRuntime,
    request_id: &str,
    request: &AuthorizationRequest,
    providers: &[(String, String)],
) -> Response<Body> {
    let mut main = format!(
        "<h1>Sign in</h1>\n<p>to continue to <strong>{app}</strong></p>\n\
         <form id=\"signin-form\" class=\"signin-form\">\n<label for=\"username\">E-mail</label>\n\
         <input id=\"username\" name=\"username\" type=\"email\" autocomplete=\"username webauthn\" value=\"{hint}\" required>\n\
         <button class=\"primary\" type=\"submit\">Continue with a passkey</button>\n</form>\n\
         <div class=\"actions\"><button id=\"signin\" class=\"secondary\" type=\"button\">Sign in with a passkey (no e-mail)</button></div>",
        app = escape(&request.client_name),
        hint = escape(request.login_hint.as_deref().unwrap_or("")),
    );
    main.push_str(&social_buttons(tenant, providers, "request", request_id));
    let data = [("request", request_id)];
    html(StatusCode::OK, render(tenant, "Sign in", "login", &data, &main))
}

/// One link per enabled social provider, carrying what the sign-in is for (`request` or
/// `invite`). Plain links: they work without JavaScript and without passkey support.
pub(super) fn social_buttons(tenant: &TenantRuntime, providers: &[(String, String)], key: &str, value: &str) -> String {
    if providers.is_empty() {
        return String::new();
    }
    let value: String = url::form_urlencoded::byte_serialize(value.as_bytes()).collect();
    let links: String = providers
        .iter()
        .map(|(slug, label)| {
            format!(
                "<a class=\"secondary social\" data-provider=\"{slug}\" href=\"{prefix}/login/{slug}?{key}={value}\">Continue with {label}</a>\n",
                slug = escape(slug),
                prefix = escape(&tenant.path_prefix),
                label = escape(label),
            )
        })
        .collect();
    format!("<div class=\"actions social-buttons\">\n{links}</div>")
}

/// An authorization request with an unknown client or redirect URI: never redirected.
pub fn invalid_redirect(tenant: &TenantRuntime, why: &str) -> Response<Body> {
    let main = format!(
        "<h1>Invalid redirect URI</h1>\n<p>{}</p>\n<p class=\"muted\">The application sent you here with an address it has not \
         registered, so you are not sent back. Tell the application's administrator.</p>",
        escape(why)
    );
    html(StatusCode::BAD_REQUEST, render(tenant, "Invalid redirect URI", "error", &[], &main))
}

/// A pending authorization request that is gone.
pub fn sign_in_expired(tenant: &TenantRuntime) -> Response<Body> {
    let main = "<h1>This sign-in has expired</h1>\n<p>Go back to the application and sign in again.</p>";
    html(StatusCode::BAD_REQUEST, render(tenant, "Sign-in expired", "expired", &[], main))
}

/// `/logout` reached without proof that an application sent the user (no valid
/// `id_token_hint`): ask before ending the session. The form posts back to `/logout` with the
/// same parameters; the session cookie (SameSite=Lax) only travels with a POST from our own page.
/// `returns_to` (a registered post-logout place, as a CSP source) joins the page's `form-action`:
/// browsers hold the redirect that answers the form to it too, and would stop there.
pub fn confirm_sign_out(tenant: &TenantRuntime, params: &[(&str, String)], returns_to: Option<&str>) -> Response<Body> {
    let hidden: String =
        params.iter().map(|(k, v)| format!("<input type=\"hidden\" name=\"{k}\" value=\"{}\">\n", escape(v))).collect();
    let main = format!(
        "<h1>Sign out?</h1>\n<p>Do you want to sign out of {name} on this device?</p>\n\
         <form method=\"post\" action=\"{prefix}/logout\" class=\"actions\">\n{hidden}\
         <button class=\"primary\" type=\"submit\">Sign out</button>\n</form>",
        name = escape(&tenant.name),
        prefix = escape(&tenant.path_prefix),
    );
    let page = html(StatusCode::OK, render(tenant, "Sign out", "confirm-sign-out", &[], &main));
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
    let main = "<h1>You are signed out</h1>\n<p>You can close this window.</p>";
    html(StatusCode::OK, render(tenant, "Signed out", "signed-out", &[], main))
}

/// A generated avatar: the user's initials on a colour derived from their id. `picture` in tokens
/// points here for users without a picture of their own.
pub async fn avatar(cx: &Cx<'_>, public_id: String) -> Result<Response<Body>, Error> {
    let t = cx.tenant.id;
    let user = cx.state.db.read(move |tx| store::users::by_public_id(tx, t, &public_id)).await?;
    let Some(user) = user else {
        return Err(Error::not_found(latchkey::codes::USER_NOT_FOUND, "no such user"));
    };
    let initials: String =
        user.name.split_whitespace().filter_map(|w| w.chars().next()).take(2).flat_map(char::to_uppercase).collect();
    let hue = sha256(user.public_id.as_bytes())[0] as u32 * 360 / 256;
    let svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"128\" height=\"128\" viewBox=\"0 0 128 128\">\
         <rect width=\"128\" height=\"128\" fill=\"hsl({hue},55%,45%)\"/>\
         <text x=\"64\" y=\"64\" dy=\".35em\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"52\" fill=\"#fff\">{}</text></svg>",
        escape(&initials)
    );
    let r = bytes(StatusCode::OK, "image/svg+xml", svg);
    let r = with_header(r, header::CONTENT_SECURITY_POLICY, "default-src 'none'; style-src 'unsafe-inline'");
    Ok(with_header(r, header::CACHE_CONTROL, "public, max-age=3600"))
}
