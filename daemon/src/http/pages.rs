//! Server-rendered pages (invite, recovery, account) and their static assets. Pages carry no
//! inline script: data travels in `data-` attributes, behaviour in `/assets/latchkey.js`, so the
//! Content-Security-Policy can forbid everything else.

use std::sync::Arc;

use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode};

use super::Body;
use super::public::TenantRoute;
use super::response::{bytes, with_header};
use crate::State;
use crate::crypto::sha256;
use crate::error::ApiError;
use crate::sessions;
use crate::store;
use crate::tenants::TenantRuntime;

const JS: &str = include_str!("../../assets/latchkey.js");
const CSS: &str = include_str!("../../assets/latchkey.css");

pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                       connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

pub fn asset_name(name: &str) -> Option<&'static str> {
    match name {
        "latchkey.js" => Some("latchkey.js"),
        "latchkey.css" => Some("latchkey.css"),
        _ => None,
    }
}

pub fn asset(name: &'static str) -> Response<Body> {
    let (ct, body) = match name {
        "latchkey.js" => ("text/javascript; charset=utf-8", JS),
        _ => ("text/css; charset=utf-8", CSS),
    };
    with_header(bytes(StatusCode::OK, ct, body), header::CACHE_CONTROL, "public, max-age=300")
}

/// Escapes text for HTML element content and double-quoted attributes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A whole page: `main` is trusted markup; `data` values are escaped into attributes.
pub fn render(tenant: &TenantRuntime, title: &str, page: &str, data: &[(&str, &str)], main: &str) -> String {
    let prefix = escape(&tenant.path_prefix);
    let attrs: String = data.iter().map(|(k, v)| format!(" data-{k}=\"{}\"", escape(v))).collect();
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title} · {tenant_name}</title>\n<link rel=\"stylesheet\" href=\"{prefix}/assets/latchkey.css\">\n\
         <script src=\"{prefix}/assets/latchkey.js\" defer></script>\n</head>\n\
         <body>\n<main id=\"app\" data-page=\"{page}\" data-base=\"{prefix}\"{attrs}>\n\
         <p class=\"tenant\">{tenant_name}</p>\n{main}\n\
         <p id=\"status\" class=\"status\" role=\"status\" aria-live=\"polite\"></p>\n\
         <noscript><p class=\"status error\">This page needs JavaScript to talk to your passkey.</p></noscript>\n\
         </main>\n</body>\n</html>\n",
        title = escape(title),
        tenant_name = escape(&tenant.name),
    )
}

pub fn html(status: StatusCode, body: String) -> Response<Body> {
    let mut r = bytes(status, "text/html; charset=utf-8", body);
    let h = r.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

pub async fn page(
    state: &State,
    tenant: Arc<TenantRuntime>,
    route: TenantRoute,
    req: Request<Incoming>,
) -> Response<Body> {
    match render_page(state, &tenant, route, &req).await {
        Ok(r) => r,
        Err(e) => {
            if let Some(cause) = &e.cause {
                tracing::error!(cause = %cause, "page failed");
            }
            let main = format!("<h1>Something went wrong</h1>\n<p>{}</p>", escape(&e.message));
            html(e.status, render(&tenant, "Error", "error", &[], &main))
        }
    }
}

async fn render_page(
    state: &State,
    tenant: &Arc<TenantRuntime>,
    route: TenantRoute,
    req: &Request<Incoming>,
) -> Result<Response<Body>, ApiError> {
    let now = state.clock.now();
    let t = tenant.id;
    match route {
        TenantRoute::InvitePage(ref token) | TenantRoute::RecoverPage(ref token) => {
            let recovery = matches!(route, TenantRoute::RecoverPage(_));
            let hash = sha256(token.as_bytes());
            let found = state
                .db
                .read(move |tx| -> Result<_, ApiError> {
                    let Some(invite) = store::invites::valid(tx, t, &hash, now)? else {
                        return Ok(None);
                    };
                    Ok(store::users::by_id(tx, t, invite.user_id)?.map(|u| (invite, u)))
                })
                .await?;
            let Some((invite, user)) = found.filter(|(i, _)| i.is_recovery() == recovery) else {
                let main = "<h1>This link no longer works</h1>\n<p>It is invalid, has been used, or has expired. \
                            Ask your administrator for a new one.</p>";
                return Ok(html(StatusCode::NOT_FOUND, render(tenant, "Link expired", "expired", &[], main)));
            };
            let _ = invite;
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
            let main = format!(
                "<h1>{title}</h1>\n<p>Welcome, <strong>{name}</strong>. {lead}</p>\n<p class=\"muted\">Account: {email}</p>\n\
                 <div class=\"actions\">\n<button id=\"create-platform\" class=\"primary\" type=\"button\">Create a passkey on this device</button>\n\
                 <button id=\"create-roaming\" class=\"secondary\" type=\"button\">Use a security key instead</button>\n</div>",
                name = escape(&user.name),
                email = escape(&user.email),
            );
            let page = if recovery { "recover" } else { "invite" };
            let data = [("token", token.as_str()), ("email", user.email.as_str()), ("name", user.name.as_str())];
            Ok(html(StatusCode::OK, render(tenant, title, page, &data, &main)))
        }
        TenantRoute::AccountPage => {
            let session = match sessions::token(req.headers()) {
                Some(token) => state.db.read(move |tx| sessions::lookup(tx, t, &token, now)).await?,
                None => None,
            };
            match session {
                Some((_, user)) => {
                    let main = format!(
                        "<h1>Your passkeys</h1>\n<p>Signed in as <strong>{email}</strong>.</p>\n\
                         <p id=\"advice\" class=\"advice\" hidden>Add a second passkey or a security key as a backup, \
                         so that losing one device does not lock you out.</p>\n\
                         <ul id=\"credentials\" class=\"credentials\"></ul>\n<div class=\"actions\">\n\
                         <button id=\"add-platform\" class=\"primary\" type=\"button\">Add a passkey</button>\n\
                         <button id=\"add-roaming\" class=\"secondary\" type=\"button\">Add a backup security key</button>\n</div>",
                        email = escape(&user.email)
                    );
                    let data = [("email", user.email.as_str()), ("name", user.name.as_str())];
                    Ok(html(StatusCode::OK, render(tenant, "Your passkeys", "account", &data, &main)))
                }
                None => {
                    let main = "<h1>Sign in</h1>\n<p>Use the passkey on this device or your security key.</p>\n\
                        <div class=\"actions\"><button id=\"signin\" class=\"primary\" type=\"button\">Sign in with a passkey</button></div>\n\
                        <form id=\"signin-form\" class=\"signin-form\">\n<label for=\"username\">Or enter your e-mail</label>\n\
                        <input id=\"username\" name=\"username\" type=\"email\" autocomplete=\"username webauthn\" required>\n\
                        <button class=\"secondary\" type=\"submit\">Continue</button>\n</form>";
                    Ok(html(StatusCode::OK, render(tenant, "Sign in", "signin", &[], main)))
                }
            }
        }
        _ => Err(ApiError::internal("not a page route")),
    }
}

/// A generated avatar: the user's initials on a colour derived from their id. `picture` in tokens
/// points here for users without a picture of their own.
pub async fn avatar(state: &State, tenant: &TenantRuntime, public_id: &str) -> Response<Body> {
    let t = tenant.id;
    let id = public_id.to_owned();
    let user = state.db.read(move |tx| store::users::by_public_id(tx, t, &id)).await.ok().flatten();
    let Some(user) = user else {
        return bytes(StatusCode::NOT_FOUND, "text/plain; charset=utf-8", "no such user\n");
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
    with_header(r, header::CACHE_CONTROL, "public, max-age=3600")
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_markup() {
        assert_eq!(escape(r#"<a href="x">'&'</a>"#), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    }
}
