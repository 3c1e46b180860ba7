//! Every route of the public listener, parsed in one place from the method and the path. A path
//! that exists with another method is a 405 with `Allow` (never a 404), and the one `match` in
//! `public::dispatch` names a handler for each variant.

use std::sync::Arc;

use hyper::Method;

use super::html::Asset;
use latchkey_domain::registry::TenantRuntime;

#[derive(Debug)]
pub enum Route {
    Healthz,
    Readyz,
    Tenant(Arc<TenantRuntime>, TenantRoute),
    /// A route below a URL the tenant moved away from (`tenant update --base-url`), with the
    /// path below it: its JWKS is served there, everything else moves with 308.
    Moved(Arc<TenantRuntime>, TenantRoute, String),
}

/// A route below a tenant's base URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TenantRoute {
    /// `GET|HEAD /.well-known/openid-configuration`
    Discovery,
    /// `GET|HEAD /.well-known/jwks.json`
    Jwks,
    /// `OPTIONS` on discovery or JWKS: readable from any origin.
    DocumentPreflight,
    RegisterStart,
    RegisterFinish,
    AuthStart,
    AuthFinish,
    /// `GET /api/credentials`
    CredentialList,
    /// `PATCH /api/credentials/{id}`
    CredentialRename(String),
    /// `DELETE /api/credentials/{id}`
    CredentialDelete(String),
    InvitePage(String),
    RecoverPage(String),
    AccountPage,
    /// `POST /account/consents/revoke`: forget what the user allowed an application.
    ConsentRevoke,
    Asset(Asset),
    Authorize,
    AuthorizeResume,
    AuthorizeAnother,
    /// `POST /authorize/consent`: the consent page's Allow or Deny.
    AuthorizeConsent,
    Token,
    Userinfo,
    Revoke,
    Introspect,
    /// `POST /par`: a pushed authorization request (RFC 9126).
    Par,
    /// `OPTIONS` on `/token`, `/userinfo`, `/revoke`: CORS for the tenant's applications, with
    /// the methods the endpoint takes.
    OAuthPreflight(&'static str),
    /// `POST /device_authorization` (RFC 8628 §3.1).
    DeviceAuthorization,
    /// `GET /device`: enter the user code, sign in, approve or deny.
    DevicePage,
    /// `POST /device/lookup`: the application and scopes of a user code.
    DeviceLookup,
    /// `POST /device/decide`: approve or deny, with the session cookie.
    DeviceDecide,
    Logout,
    /// `GET /avatars/{public_id}.svg`
    Avatar(String),
    /// `GET /logos/{client_id}.png`: an application's logo.
    AppLogo(String),
    /// `GET /locale/{tag}?back=PATH`: the language menu (sets the `latchkey_locale` cookie).
    SetLocale(String),
    /// `GET /brand.css`: the tenant's accent colour, for its pages.
    BrandCss,
    /// `GET /logo`: the tenant's logo, for its pages.
    TenantLogo,
    /// `POST /api/v1/users/invite`
    BulkInvite,
    /// `GET /login/{provider}`: off to the identity provider.
    SocialStart(String),
    /// `GET /login/{provider}/callback`: back from it.
    SocialCallback(String),
    /// `POST /login/{provider}/confirm`: the answer of a link's confirmation page.
    SocialConfirm(String),
    /// `GET /api/social`: the signed-in user's links and the tenant's providers.
    SocialLinks,
    /// `POST /api/social/{provider}`: start linking (the account page).
    SocialLink(String),
    /// `DELETE /api/social/{provider}`: unlink.
    SocialUnlink(String),
    /// Any method on `/scim/v2/…` (RFC 7644), with the path below it: the SCIM endpoint routes
    /// its own resources and answers in its own error shape.
    Scim(String),
}

/// Why a request has no route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unrouted {
    /// No tenant is served at this host and path.
    UnknownTenant,
    /// The tenant has no such endpoint.
    NoSuchPath,
    /// The path exists; these methods are allowed on it.
    WrongMethod(String),
}

impl Route {
    /// A short, fixed label for logs and metrics (never the raw path: that would be unbounded).
    pub fn name(&self) -> &'static str {
        match self {
            Route::Healthz => "healthz",
            Route::Readyz => "readyz",
            Route::Moved(..) => "moved",
            Route::Tenant(_, r) => match r {
                TenantRoute::Discovery => "discovery",
                TenantRoute::Jwks => "jwks",
                TenantRoute::DocumentPreflight => "document_preflight",
                TenantRoute::RegisterStart => "register_start",
                TenantRoute::RegisterFinish => "register_finish",
                TenantRoute::AuthStart => "auth_start",
                TenantRoute::AuthFinish => "auth_finish",
                TenantRoute::CredentialList => "credentials",
                TenantRoute::CredentialRename(_) | TenantRoute::CredentialDelete(_) => "credential",
                TenantRoute::InvitePage(_) => "invite_page",
                TenantRoute::RecoverPage(_) => "recover_page",
                TenantRoute::AccountPage => "account_page",
                TenantRoute::ConsentRevoke => "consent_revoke",
                TenantRoute::Asset(_) => "asset",
                TenantRoute::Authorize => "authorize",
                TenantRoute::AuthorizeResume => "authorize_resume",
                TenantRoute::AuthorizeAnother => "authorize_another",
                TenantRoute::AuthorizeConsent => "authorize_consent",
                TenantRoute::Token => "token",
                TenantRoute::Userinfo => "userinfo",
                TenantRoute::Revoke => "revoke",
                TenantRoute::Introspect => "introspect",
                TenantRoute::Par => "par",
                TenantRoute::OAuthPreflight(_) => "oauth_preflight",
                TenantRoute::DeviceAuthorization => "device_authorization",
                TenantRoute::DevicePage => "device_page",
                TenantRoute::DeviceLookup => "device_lookup",
                TenantRoute::DeviceDecide => "device_decide",
                TenantRoute::Logout => "logout",
                TenantRoute::Avatar(_) => "avatar",
                TenantRoute::AppLogo(_) => "app_logo",
                TenantRoute::SetLocale(_) => "set_locale",
                TenantRoute::BrandCss => "brand_css",
                TenantRoute::TenantLogo => "tenant_logo",
                TenantRoute::Scim(_) => "scim",
                TenantRoute::BulkInvite => "bulk_invite",
                TenantRoute::SocialStart(_) => "social_start",
                TenantRoute::SocialCallback(_) => "social_callback",
                TenantRoute::SocialConfirm(_) => "social_confirm",
                TenantRoute::SocialLinks => "social_links",
                TenantRoute::SocialLink(_) => "social_link",
                TenantRoute::SocialUnlink(_) => "social_unlink",
            },
        }
    }
}

impl Unrouted {
    pub fn name(&self) -> &'static str {
        match self {
            Unrouted::UnknownTenant => "unknown_tenant",
            Unrouted::NoSuchPath => "not_found",
            Unrouted::WrongMethod(_) => "method_not_allowed",
        }
    }
}

/// The daemon-wide routes, which answer on any host. (`/metrics` is served on a listener of its
/// own: see `http::scrape`.)
pub fn global(method: &Method, path: &str) -> Option<Result<Route, Unrouted>> {
    let route = match path {
        "/healthz" => Route::Healthz,
        "/readyz" => Route::Readyz,
        _ => return None,
    };
    Some(pick(method, &[(READ, ())]).map(|()| route))
}

const READ: &[Method] = &[Method::GET, Method::HEAD];
const POST: &[Method] = &[Method::POST];
const GET: &[Method] = &[Method::GET];
const OPTIONS: &[Method] = &[Method::OPTIONS];

/// Picks the entry of one path's table that lists `method`; otherwise the table's methods, as
/// the `Allow` header lists them. Both listeners route with it.
pub fn by_method<T: Clone>(method: &Method, table: &[(&[Method], T)]) -> Result<T, String> {
    match table.iter().find(|(methods, _)| methods.contains(method)) {
        Some((_, route)) => Ok(route.clone()),
        None => {
            let allow: Vec<&str> = table.iter().flat_map(|(m, _)| m.iter()).map(Method::as_str).collect();
            Err(allow.join(", "))
        }
    }
}

fn pick<T: Clone>(method: &Method, table: &[(&[Method], T)]) -> Result<T, Unrouted> {
    by_method(method, table).map_err(Unrouted::WrongMethod)
}

/// Routes `rest`, the path below a tenant's base URL.
pub fn tenant(method: &Method, rest: &str) -> Result<TenantRoute, Unrouted> {
    use TenantRoute as R;
    let segs: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
    let one = |route: R, methods: &[Method]| pick(method, &[(methods, route)]);
    match segs.as_slice() {
        [".well-known", "openid-configuration"] => {
            pick(method, &[(READ, R::Discovery), (OPTIONS, R::DocumentPreflight)])
        }
        [".well-known", "jwks.json"] => pick(method, &[(READ, R::Jwks), (OPTIONS, R::DocumentPreflight)]),
        ["register", "start"] => one(R::RegisterStart, POST),
        ["register", "finish"] => one(R::RegisterFinish, POST),
        ["auth", "start"] => one(R::AuthStart, POST),
        ["auth", "finish"] => one(R::AuthFinish, POST),
        ["api", "credentials"] => one(R::CredentialList, GET),
        ["api", "credentials", id] if !id.is_empty() => pick(
            method,
            &[
                (&[Method::PATCH], R::CredentialRename((*id).to_owned())),
                (&[Method::DELETE], R::CredentialDelete((*id).to_owned())),
            ],
        ),
        ["api", "v1", "users", "invite"] => one(R::BulkInvite, POST),
        ["invite", token] if !token.is_empty() => one(R::InvitePage((*token).to_owned()), READ),
        ["recover", token] if !token.is_empty() => one(R::RecoverPage((*token).to_owned()), READ),
        ["account"] => one(R::AccountPage, READ),
        ["account", "consents", "revoke"] => one(R::ConsentRevoke, POST),
        ["assets", name] => match Asset::from_file_name(name) {
            Some(a) => one(R::Asset(a), READ),
            None => Err(Unrouted::NoSuchPath),
        },
        // OIDC Core §3.1.2.1: the authorization endpoint takes GET and a form POST alike.
        ["authorize"] => one(R::Authorize, &[Method::GET, Method::POST]),
        ["authorize", "resume"] => one(R::AuthorizeResume, GET),
        ["authorize", "another"] => one(R::AuthorizeAnother, GET),
        ["authorize", "consent"] => one(R::AuthorizeConsent, POST),
        ["token"] => pick(method, &[(POST, R::Token), (OPTIONS, R::OAuthPreflight("POST, OPTIONS"))]),
        ["userinfo"] => pick(
            method,
            &[(&[Method::GET, Method::POST], R::Userinfo), (OPTIONS, R::OAuthPreflight("GET, POST, OPTIONS"))],
        ),
        ["revoke"] => pick(method, &[(POST, R::Revoke), (OPTIONS, R::OAuthPreflight("POST, OPTIONS"))]),
        ["introspect"] => one(R::Introspect, POST),
        ["par"] => one(R::Par, POST),
        ["device_authorization"] => one(R::DeviceAuthorization, POST),
        ["device"] => one(R::DevicePage, READ),
        ["device", "lookup"] => one(R::DeviceLookup, POST),
        ["device", "decide"] => one(R::DeviceDecide, POST),
        ["logout"] => one(R::Logout, &[Method::GET, Method::POST]),
        ["login", p] if !p.is_empty() => one(R::SocialStart((*p).to_owned()), GET),
        ["login", p, "callback"] if !p.is_empty() => one(R::SocialCallback((*p).to_owned()), GET),
        ["login", p, "confirm"] if !p.is_empty() => one(R::SocialConfirm((*p).to_owned()), POST),
        ["api", "social"] => one(R::SocialLinks, GET),
        ["api", "social", p] if !p.is_empty() => pick(
            method,
            &[(POST, R::SocialLink((*p).to_owned())), (&[Method::DELETE], R::SocialUnlink((*p).to_owned()))],
        ),
        ["avatars", file] => match file.strip_suffix(".svg").filter(|id| !id.is_empty()) {
            Some(id) => one(R::Avatar(id.to_owned()), GET),
            None => Err(Unrouted::NoSuchPath),
        },
        ["brand.css"] => one(R::BrandCss, READ),
        ["scim", "v2", rest @ ..] => Ok(R::Scim(rest.join("/"))),
        ["logo"] => one(R::TenantLogo, READ),
        ["locale", tag] if !tag.is_empty() => one(R::SetLocale((*tag).to_owned()), GET),
        ["logos", file] => match file.strip_suffix(".png").filter(|id| !id.is_empty()) {
            Some(id) => one(R::AppLogo(id.to_owned()), READ),
            None => Err(Unrouted::NoSuchPath),
        },
        _ => Err(Unrouted::NoSuchPath),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TenantRoute as R;

    #[test]
    fn route_table() {
        let m = |s: &str| Method::from_bytes(s.as_bytes()).unwrap();
        let wrong = |allow: &str| Err(Unrouted::WrongMethod(allow.to_owned()));
        let cases: &[(&str, &str, Result<TenantRoute, Unrouted>)] = &[
            ("GET", "/.well-known/openid-configuration", Ok(R::Discovery)),
            ("HEAD", "/.well-known/jwks.json", Ok(R::Jwks)),
            ("OPTIONS", "/.well-known/jwks.json", Ok(R::DocumentPreflight)),
            ("POST", "/.well-known/jwks.json", wrong("GET, HEAD, OPTIONS")),
            ("POST", "/register/start", Ok(R::RegisterStart)),
            ("GET", "/register/start", wrong("POST")),
            ("POST", "/register/finish", Ok(R::RegisterFinish)),
            ("POST", "/auth/start", Ok(R::AuthStart)),
            ("POST", "/auth/finish", Ok(R::AuthFinish)),
            ("GET", "/api/credentials", Ok(R::CredentialList)),
            ("PATCH", "/api/credentials/abc", Ok(R::CredentialRename("abc".into()))),
            ("DELETE", "/api/credentials/abc", Ok(R::CredentialDelete("abc".into()))),
            ("GET", "/api/credentials/abc", wrong("PATCH, DELETE")),
            ("GET", "/api/credentials/", Err(Unrouted::NoSuchPath)),
            ("POST", "/api/v1/users/invite", Ok(R::BulkInvite)),
            ("GET", "/invite/tok", Ok(R::InvitePage("tok".into()))),
            ("GET", "/invite/", Err(Unrouted::NoSuchPath)),
            ("HEAD", "/recover/tok", Ok(R::RecoverPage("tok".into()))),
            ("GET", "/account", Ok(R::AccountPage)),
            ("GET", "/assets/latchkey.css", Ok(R::Asset(Asset::Stylesheet))),
            ("GET", "/assets/other.css", Err(Unrouted::NoSuchPath)),
            ("GET", "/authorize", Ok(R::Authorize)),
            ("POST", "/authorize", Ok(R::Authorize)),
            ("PUT", "/authorize", wrong("GET, POST")),
            ("GET", "/authorize/resume", Ok(R::AuthorizeResume)),
            ("GET", "/authorize/another", Ok(R::AuthorizeAnother)),
            ("POST", "/authorize/consent", Ok(R::AuthorizeConsent)),
            ("POST", "/account/consents/revoke", Ok(R::ConsentRevoke)),
            ("POST", "/token", Ok(R::Token)),
            ("OPTIONS", "/token", Ok(R::OAuthPreflight("POST, OPTIONS"))),
            ("GET", "/token", wrong("POST, OPTIONS")),
            ("GET", "/userinfo", Ok(R::Userinfo)),
            ("POST", "/userinfo", Ok(R::Userinfo)),
            ("OPTIONS", "/userinfo", Ok(R::OAuthPreflight("GET, POST, OPTIONS"))),
            ("POST", "/revoke", Ok(R::Revoke)),
            ("POST", "/introspect", Ok(R::Introspect)),
            ("POST", "/par", Ok(R::Par)),
            ("OPTIONS", "/introspect", wrong("POST")),
            ("POST", "/device_authorization", Ok(R::DeviceAuthorization)),
            ("GET", "/device_authorization", wrong("POST")),
            ("GET", "/device", Ok(R::DevicePage)),
            ("HEAD", "/device", Ok(R::DevicePage)),
            ("POST", "/device", wrong("GET, HEAD")),
            ("POST", "/device/lookup", Ok(R::DeviceLookup)),
            ("POST", "/device/decide", Ok(R::DeviceDecide)),
            ("GET", "/device/decide", wrong("POST")),
            ("GET", "/logout", Ok(R::Logout)),
            ("POST", "/logout", Ok(R::Logout)),
            ("GET", "/avatars/u1.svg", Ok(R::Avatar("u1".into()))),
            ("GET", "/logos/c1.png", Ok(R::AppLogo("c1".into()))),
            ("GET", "/locale/de", Ok(R::SetLocale("de".into()))),
            ("GET", "/brand.css", Ok(R::BrandCss)),
            ("GET", "/logo", Ok(R::TenantLogo)),
            ("GET", "/avatars/.svg", Err(Unrouted::NoSuchPath)),
            ("GET", "/avatars/u1.png", Err(Unrouted::NoSuchPath)),
            ("GET", "/login/github", Ok(R::SocialStart("github".into()))),
            ("GET", "/login/entra/callback", Ok(R::SocialCallback("entra".into()))),
            ("POST", "/login/github", wrong("GET")),
            ("GET", "/api/social", Ok(R::SocialLinks)),
            ("DELETE", "/api/social/github", Ok(R::SocialUnlink("github".into()))),
            ("POST", "/api/social/github", Ok(R::SocialLink("github".into()))),
            ("POST", "/login/github/confirm", Ok(R::SocialConfirm("github".into()))),
            ("GET", "/login/github/confirm", wrong("POST")),
            ("GET", "/", Err(Unrouted::NoSuchPath)),
            ("GET", "/nope", Err(Unrouted::NoSuchPath)),
        ];
        for (method, path, expected) in cases {
            assert_eq!(&tenant(&m(method), path), expected, "{method} {path}");
        }
    }

    #[test]
    fn global_routes() {
        assert!(matches!(global(&Method::GET, "/healthz"), Some(Ok(Route::Healthz))));
        assert!(matches!(global(&Method::HEAD, "/readyz"), Some(Ok(Route::Readyz))));
        assert!(global(&Method::GET, "/metrics").is_none(), "the metrics have a listener of their own");
        assert_eq!(
            global(&Method::POST, "/readyz").map(|r| r.err()),
            Some(Some(Unrouted::WrongMethod("GET, HEAD".into())))
        );
        assert!(global(&Method::GET, "/token").is_none());
    }
}
