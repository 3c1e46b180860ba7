//! Every admin call, parsed in one place from the method and the path under `/admin/v1`. A path
//! that exists with another method is a 405 with `Allow`.

use hyper::Method;
use latchkey::admin::PREFIX;

use crate::http::route::by_method;

/// One admin call. Strings are percent-decoded path segments: tenant slug first, then the
/// application's Client ID, the key id, the user's e-mail, the role name or the credential id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdminRoute {
    Status,
    TenantList,
    TenantCreate,
    TenantShow(String),
    TenantUpdate(String),
    TenantBrand(String),
    TenantDelete(String),
    AppList(String),
    AppCreate(String),
    AppShow(String, String),
    AppUpdate(String, String),
    AppDelete(String, String),
    AppRotateSecret(String, String),
    KeyList(String),
    KeyRotate(String),
    KeyRetire(String, String),
    UserList(String),
    UserInvite(String),
    UserImport(String),
    UserReinvite(String),
    UserShow(String, String),
    UserDelete(String, String),
    UserDisable(String, String),
    UserEnable(String, String),
    UserRecover(String, String),
    UserCredentials(String, String),
    UserCredentialRevoke(String, String, String),
    RoleList(String),
    RoleCreate(String),
    RoleDelete(String, String),
    RoleAssign(String, String),
    RoleUnassign(String, String),
    SocialList(String),
    SocialEnable(String),
    SocialDisable(String, String),
    Audit(String),
    /// The whole trail: every tenant's events and the daemon-wide ones (`?tenant=` filters).
    AuditAll,
    Export(String),
    Apply,
    Backup,
    /// A tenant's SCIM endpoint: `latchkey scim status`.
    ScimStatus(String),
    /// `latchkey scim enable|rotate-token|disable`.
    ScimSet(String, ScimChange),
    /// A tenant's webhooks (`latchkey webhook list|add`).
    WebhookList(String),
    WebhookCreate(String),
    /// `latchkey webhook remove`: the tenant and the subscription's id.
    WebhookDelete(String, String),
    /// `latchkey webhook deliveries` (`?webhook=ID&failed=true&limit=N`).
    WebhookDeliveries(String),
    /// `latchkey webhook redeliver`: the tenant and the delivery's id.
    WebhookRedeliver(String, String),
    /// The FIDO metadata in force (`latchkey mds status`).
    MdsStatus,
    /// A FIDO metadata BLOB to verify and take (`latchkey mds import`).
    MdsImport,
}

/// What `POST /admin/v1/tenants/{slug}/scim/{change}` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScimChange {
    Enable,
    RotateToken,
    Disable,
}

/// Why an admin request has no route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdminUnrouted {
    NotFound,
    /// A path segment is not valid percent-encoded UTF-8.
    BadEncoding(String),
    /// The path exists; these methods are allowed on it.
    WrongMethod(String),
}

impl AdminRoute {
    /// The tenant the call is about, for the audit trail.
    pub fn tenant(&self) -> Option<&str> {
        use AdminRoute as A;
        match self {
            A::Status
            | A::TenantList
            | A::TenantCreate
            | A::Apply
            | A::Backup
            | A::AuditAll
            | A::MdsStatus
            | A::MdsImport => None,
            A::TenantShow(t)
            | A::TenantUpdate(t)
            | A::TenantBrand(t)
            | A::TenantDelete(t)
            | A::AppList(t)
            | A::AppCreate(t)
            | A::AppShow(t, _)
            | A::AppUpdate(t, _)
            | A::AppDelete(t, _)
            | A::AppRotateSecret(t, _)
            | A::KeyList(t)
            | A::KeyRotate(t)
            | A::KeyRetire(t, _)
            | A::UserList(t)
            | A::UserInvite(t)
            | A::UserImport(t)
            | A::UserReinvite(t)
            | A::UserShow(t, _)
            | A::UserDelete(t, _)
            | A::UserDisable(t, _)
            | A::UserEnable(t, _)
            | A::UserRecover(t, _)
            | A::UserCredentials(t, _)
            | A::UserCredentialRevoke(t, _, _)
            | A::RoleList(t)
            | A::RoleCreate(t)
            | A::RoleDelete(t, _)
            | A::RoleAssign(t, _)
            | A::RoleUnassign(t, _)
            | A::SocialList(t)
            | A::SocialEnable(t)
            | A::SocialDisable(t, _)
            | A::Audit(t)
            | A::Export(t)
            | A::ScimStatus(t)
            | A::ScimSet(t, _)
            | A::WebhookList(t)
            | A::WebhookCreate(t)
            | A::WebhookDelete(t, _)
            | A::WebhookDeliveries(t)
            | A::WebhookRedeliver(t, _) => Some(t),
        }
    }
}

/// Decodes `%XX` escapes of a path segment (e-mail addresses travel in paths). Strict where the
/// `percent-encoding` crate is lenient: a `%` not followed by two hex digits is refused rather
/// than kept, and so is a decoding that is not UTF-8.
fn percent_decode(seg: &str) -> Result<String, AdminUnrouted> {
    let bad = || AdminUnrouted::BadEncoding(seg.to_owned());
    let escapes_ok = seg
        .match_indices('%')
        .all(|(i, _)| seg.as_bytes().get(i + 1..i + 3).is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)));
    if !escapes_ok {
        return Err(bad());
    }
    percent_encoding::percent_decode_str(seg).decode_utf8().map(|s| s.into_owned()).map_err(|_| bad())
}

const GET: &[Method] = &[Method::GET];
const POST: &[Method] = &[Method::POST];
const DELETE: &[Method] = &[Method::DELETE];
const PATCH: &[Method] = &[Method::PATCH];
const PUT: &[Method] = &[Method::PUT];

fn pick(method: &Method, table: &[(&[Method], AdminRoute)]) -> Result<AdminRoute, AdminUnrouted> {
    by_method(method, table).map_err(AdminUnrouted::WrongMethod)
}

/// Routes an admin request by its method and path.
pub fn parse(method: &Method, path: &str) -> Result<AdminRoute, AdminUnrouted> {
    use AdminRoute as A;
    let rest =
        path.strip_prefix(PREFIX).filter(|r| r.is_empty() || r.starts_with('/')).ok_or(AdminUnrouted::NotFound)?;
    let segs: Vec<String> = rest.split('/').filter(|s| !s.is_empty()).map(percent_decode).collect::<Result<_, _>>()?;
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let s = |x: &str| x.to_owned();
    let m = method;
    match segs.as_slice() {
        ["status"] => pick(m, &[(GET, A::Status)]),
        ["backup"] => pick(m, &[(POST, A::Backup)]),
        ["audit"] => pick(m, &[(GET, A::AuditAll)]),
        ["apply"] => pick(m, &[(POST, A::Apply)]),
        ["mds"] => pick(m, &[(GET, A::MdsStatus), (POST, A::MdsImport)]),
        ["tenants"] => pick(m, &[(GET, A::TenantList), (POST, A::TenantCreate)]),
        ["tenants", t] => {
            pick(m, &[(GET, A::TenantShow(s(t))), (PATCH, A::TenantUpdate(s(t))), (DELETE, A::TenantDelete(s(t)))])
        }
        ["tenants", t, "brand"] => pick(m, &[(PUT, A::TenantBrand(s(t)))]),
        ["tenants", t, "export"] => pick(m, &[(GET, A::Export(s(t)))]),
        ["tenants", t, "scim"] => pick(m, &[(GET, A::ScimStatus(s(t)))]),
        ["tenants", t, "scim", "enable"] => pick(m, &[(POST, A::ScimSet(s(t), ScimChange::Enable))]),
        ["tenants", t, "scim", "rotate-token"] => pick(m, &[(POST, A::ScimSet(s(t), ScimChange::RotateToken))]),
        ["tenants", t, "scim", "disable"] => pick(m, &[(POST, A::ScimSet(s(t), ScimChange::Disable))]),
        ["tenants", t, "webhooks"] => pick(m, &[(GET, A::WebhookList(s(t))), (POST, A::WebhookCreate(s(t)))]),
        ["tenants", t, "webhooks", "deliveries"] => pick(m, &[(GET, A::WebhookDeliveries(s(t)))]),
        ["tenants", t, "webhooks", "deliveries", id, "redeliver"] => {
            pick(m, &[(POST, A::WebhookRedeliver(s(t), s(id)))])
        }
        ["tenants", t, "webhooks", id] => pick(m, &[(DELETE, A::WebhookDelete(s(t), s(id)))]),
        ["tenants", t, "audit"] => pick(m, &[(GET, A::Audit(s(t)))]),
        ["tenants", t, "apps"] => pick(m, &[(GET, A::AppList(s(t))), (POST, A::AppCreate(s(t)))]),
        ["tenants", t, "apps", id] => pick(
            m,
            &[(GET, A::AppShow(s(t), s(id))), (PATCH, A::AppUpdate(s(t), s(id))), (DELETE, A::AppDelete(s(t), s(id)))],
        ),
        ["tenants", t, "apps", id, "rotate-secret"] => pick(m, &[(POST, A::AppRotateSecret(s(t), s(id)))]),
        ["tenants", t, "keys"] => pick(m, &[(GET, A::KeyList(s(t)))]),
        ["tenants", t, "keys", "rotate"] => pick(m, &[(POST, A::KeyRotate(s(t)))]),
        ["tenants", t, "keys", kid, "retire"] => pick(m, &[(POST, A::KeyRetire(s(t), s(kid)))]),
        ["tenants", t, "users"] => pick(m, &[(GET, A::UserList(s(t)))]),
        ["tenants", t, "users", "invite"] => pick(m, &[(POST, A::UserInvite(s(t)))]),
        ["tenants", t, "users", "import"] => pick(m, &[(POST, A::UserImport(s(t)))]),
        ["tenants", t, "users", "reinvite"] => pick(m, &[(POST, A::UserReinvite(s(t)))]),
        ["tenants", t, "users", e] => pick(m, &[(GET, A::UserShow(s(t), s(e))), (DELETE, A::UserDelete(s(t), s(e)))]),
        ["tenants", t, "users", e, "disable"] => pick(m, &[(POST, A::UserDisable(s(t), s(e)))]),
        ["tenants", t, "users", e, "enable"] => pick(m, &[(POST, A::UserEnable(s(t), s(e)))]),
        ["tenants", t, "users", e, "recover"] => pick(m, &[(POST, A::UserRecover(s(t), s(e)))]),
        ["tenants", t, "users", e, "credentials"] => pick(m, &[(GET, A::UserCredentials(s(t), s(e)))]),
        ["tenants", t, "users", e, "credentials", id] => {
            pick(m, &[(DELETE, A::UserCredentialRevoke(s(t), s(e), s(id)))])
        }
        ["tenants", t, "social"] => pick(m, &[(GET, A::SocialList(s(t))), (POST, A::SocialEnable(s(t)))]),
        ["tenants", t, "social", p] => pick(m, &[(DELETE, A::SocialDisable(s(t), s(p)))]),
        ["tenants", t, "roles"] => pick(m, &[(GET, A::RoleList(s(t))), (POST, A::RoleCreate(s(t)))]),
        ["tenants", t, "roles", r] => pick(m, &[(DELETE, A::RoleDelete(s(t), s(r)))]),
        ["tenants", t, "roles", r, "assign"] => pick(m, &[(POST, A::RoleAssign(s(t), s(r)))]),
        ["tenants", t, "roles", r, "unassign"] => pick(m, &[(POST, A::RoleUnassign(s(t), s(r)))]),
        _ => Err(AdminUnrouted::NotFound),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AdminRoute as A;

    #[test]
    fn admin_route_table() {
        let m = |s: &str| Method::from_bytes(s.as_bytes()).unwrap();
        let wrong = |allow: &str| Err(AdminUnrouted::WrongMethod(allow.to_owned()));
        let t = || "acme".to_owned();
        let cases: Vec<(&str, &str, Result<AdminRoute, AdminUnrouted>)> = vec![
            ("GET", "/admin/v1/status", Ok(A::Status)),
            ("POST", "/admin/v1/status", wrong("GET")),
            ("GET", "/admin/v1/tenants", Ok(A::TenantList)),
            ("POST", "/admin/v1/tenants", Ok(A::TenantCreate)),
            ("PUT", "/admin/v1/tenants", wrong("GET, POST")),
            ("GET", "/admin/v1/tenants/acme", Ok(A::TenantShow(t()))),
            ("DELETE", "/admin/v1/tenants/acme", Ok(A::TenantDelete(t()))),
            ("PATCH", "/admin/v1/tenants/acme", Ok(A::TenantUpdate(t()))),
            ("PUT", "/admin/v1/tenants/acme/brand", Ok(A::TenantBrand(t()))),
            ("GET", "/admin/v1/mds", Ok(A::MdsStatus)),
            ("GET", "/admin/v1/tenants/acme/webhooks", Ok(A::WebhookList(t()))),
            ("POST", "/admin/v1/tenants/acme/webhooks", Ok(A::WebhookCreate(t()))),
            ("DELETE", "/admin/v1/tenants/acme/webhooks/7", Ok(A::WebhookDelete(t(), "7".into()))),
            ("GET", "/admin/v1/tenants/acme/webhooks/deliveries", Ok(A::WebhookDeliveries(t()))),
            ("DELETE", "/admin/v1/tenants/acme/webhooks/deliveries", wrong("GET")),
            (
                "POST",
                "/admin/v1/tenants/acme/webhooks/deliveries/9/redeliver",
                Ok(A::WebhookRedeliver(t(), "9".into())),
            ),
            ("POST", "/admin/v1/mds", Ok(A::MdsImport)),
            ("GET", "/admin/v1/tenants/acme/apps", Ok(A::AppList(t()))),
            ("POST", "/admin/v1/tenants/acme/apps", Ok(A::AppCreate(t()))),
            ("GET", "/admin/v1/tenants/acme/apps/c1", Ok(A::AppShow(t(), "c1".into()))),
            ("DELETE", "/admin/v1/tenants/acme/apps/c1", Ok(A::AppDelete(t(), "c1".into()))),
            ("PATCH", "/admin/v1/tenants/acme/apps/c1", Ok(A::AppUpdate(t(), "c1".into()))),
            ("PUT", "/admin/v1/tenants/acme/apps/c1", wrong("GET, PATCH, DELETE")),
            ("POST", "/admin/v1/tenants/acme/apps/c1/rotate-secret", Ok(A::AppRotateSecret(t(), "c1".into()))),
            ("GET", "/admin/v1/tenants/acme/keys", Ok(A::KeyList(t()))),
            ("POST", "/admin/v1/tenants/acme/keys/rotate", Ok(A::KeyRotate(t()))),
            ("POST", "/admin/v1/tenants/acme/keys/k1/retire", Ok(A::KeyRetire(t(), "k1".into()))),
            ("GET", "/admin/v1/tenants/acme/users", Ok(A::UserList(t()))),
            ("POST", "/admin/v1/tenants/acme/users/invite", Ok(A::UserInvite(t()))),
            ("POST", "/admin/v1/tenants/acme/users/import", Ok(A::UserImport(t()))),
            ("POST", "/admin/v1/tenants/acme/users/reinvite", Ok(A::UserReinvite(t()))),
            ("GET", "/admin/v1/tenants/acme/users/reinvite", wrong("POST")),
            ("GET", "/admin/v1/tenants/acme/users/ada%40example.com", Ok(A::UserShow(t(), "ada@example.com".into()))),
            ("DELETE", "/admin/v1/tenants/acme/users/a@b.c", Ok(A::UserDelete(t(), "a@b.c".into()))),
            ("POST", "/admin/v1/tenants/acme/users/a@b.c/disable", Ok(A::UserDisable(t(), "a@b.c".into()))),
            ("POST", "/admin/v1/tenants/acme/users/a@b.c/enable", Ok(A::UserEnable(t(), "a@b.c".into()))),
            ("POST", "/admin/v1/tenants/acme/users/a@b.c/recover", Ok(A::UserRecover(t(), "a@b.c".into()))),
            ("GET", "/admin/v1/tenants/acme/users/a@b.c/credentials", Ok(A::UserCredentials(t(), "a@b.c".into()))),
            (
                "DELETE",
                "/admin/v1/tenants/acme/users/a@b.c/credentials/x",
                Ok(A::UserCredentialRevoke(t(), "a@b.c".into(), "x".into())),
            ),
            ("GET", "/admin/v1/tenants/acme/roles", Ok(A::RoleList(t()))),
            ("POST", "/admin/v1/tenants/acme/roles", Ok(A::RoleCreate(t()))),
            ("DELETE", "/admin/v1/tenants/acme/roles/admin", Ok(A::RoleDelete(t(), "admin".into()))),
            ("POST", "/admin/v1/tenants/acme/roles/admin/assign", Ok(A::RoleAssign(t(), "admin".into()))),
            ("POST", "/admin/v1/tenants/acme/roles/admin/unassign", Ok(A::RoleUnassign(t(), "admin".into()))),
            ("GET", "/admin/v1/tenants/acme/audit", Ok(A::Audit(t()))),
            ("GET", "/admin/v1/audit", Ok(A::AuditAll)),
            ("GET", "/admin/v1/tenants/acme/social", Ok(A::SocialList(t()))),
            ("POST", "/admin/v1/tenants/acme/social", Ok(A::SocialEnable(t()))),
            ("DELETE", "/admin/v1/tenants/acme/social/github", Ok(A::SocialDisable(t(), "github".into()))),
            ("GET", "/admin/v1/tenants/acme/social/github", wrong("DELETE")),
            ("GET", "/admin/v1/tenants/acme/export", Ok(A::Export(t()))),
            ("POST", "/admin/v1/apply", Ok(A::Apply)),
            ("POST", "/admin/v1/backup", Ok(A::Backup)),
            ("GET", "/admin/v1/tenants/acme/nope", Err(AdminUnrouted::NotFound)),
            ("GET", "/admin/v1x/status", Err(AdminUnrouted::NotFound)),
            ("GET", "/status", Err(AdminUnrouted::NotFound)),
            ("GET", "/admin/v1/tenants/%zz", Err(AdminUnrouted::BadEncoding("%zz".into()))),
            ("GET", "/admin/v1/tenants/%ff", Err(AdminUnrouted::BadEncoding("%ff".into()))),
        ];
        for (method, path, expected) in cases {
            assert_eq!(parse(&m(method), path), expected, "{method} {path}");
        }
        assert_eq!(parse(&Method::GET, "/admin/v1/tenants/acme/apps/c1").unwrap().tenant(), Some("acme"));
    }
}
