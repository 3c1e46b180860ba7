//! OAuth clients (the tenant's applications): exact redirect URI matching and client
//! authentication (`client_secret_basic`, `client_secret_post`, `private_key_jwt` verified by
//! [`super::client_assertion`], `none` for public clients).

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use super::error::OAuthError;
use crate::crypto::{constant_time_eq, sha256};
use crate::params::Params;
use crate::store::apps::AppRow;
use crate::store::{self, AppType, Db, Reader, TenantId};

/// `redirect_uri` equals a registered Login Redirect URL character for character. The one
/// exception (RFC 8252 §7.3): a native app's loopback redirect may use any port. Only the port:
/// the rest is compared as written, not as a URL parser would normalise it (`http://127.1`,
/// `HTTP://`, `/x/../cb` are other strings, so refused).
pub fn redirect_allowed(app: &AppRow, uri: &str) -> bool {
    if app.redirect_uris.iter().any(|r| r == uri) {
        return true;
    }
    if app.app_type != AppType::Native {
        return false;
    }
    let Some(asked) = loopback_without_port(uri) else { return false };
    app.redirect_uris.iter().any(|r| loopback_without_port(r) == Some(asked))
}

/// A loopback redirect URI (`http://127.0.0.1` or `http://[::1]`, then an optional port, then a
/// path or query, no fragment) split around its port: (scheme and host, the rest).
fn loopback_without_port(uri: &str) -> Option<(&str, &str)> {
    if uri.contains('#') {
        return None;
    }
    let host = ["http://127.0.0.1", "http://[::1]"].into_iter().find(|h| uri.starts_with(h))?;
    let after = &uri[host.len()..];
    let rest = match after.strip_prefix(':') {
        Some(port_and_rest) => {
            let digits = port_and_rest.bytes().take_while(u8::is_ascii_digit).count();
            port_and_rest[..digits].parse::<u16>().ok()?;
            &port_and_rest[digits..]
        }
        None => after,
    };
    (rest.is_empty() || rest.starts_with('/') || rest.starts_with('?')).then_some((host, rest))
}

/// How the client presented itself at the token, revocation, introspection or PAR endpoint.
#[derive(Debug)]
pub struct Presented {
    pub client_id: String,
    pub secret: Option<String>,
    pub basic: bool,
    /// A JWT bearer client assertion (`private_key_jwt`).
    pub assertion: Option<String>,
    /// Set only by [`super::client_assertion::verify`], once the assertion checked out.
    assertion_verified: bool,
}

impl Presented {
    pub(super) fn authenticated_by_assertion(self) -> Presented {
        Presented { assertion_verified: true, ..self }
    }
}

/// The Client ID an assertion names (`iss`), read without verifying it: which application's keys
/// verify it.
fn assertion_issuer(assertion: &str) -> Option<String> {
    let payload = assertion.split('.').nth(1)?;
    let bytes = crate::crypto::b64url_decode(payload)?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    v.get("iss")?.as_str().map(str::to_owned)
}

fn form_decode(s: &str) -> String {
    url::form_urlencoded::parse(format!("x={s}").as_bytes()).next().map(|(_, v)| v.into_owned()).unwrap_or_default()
}

/// Reads client credentials from the `Authorization` header's Basic credentials or the form;
/// using both is an error.
pub fn presented(authorization: Option<&str>, form: &Params) -> Result<Presented, OAuthError> {
    let client_id = form.owned("client_id")?;
    let client_secret = form.owned("client_secret")?;
    if let Some(assertion) = form.owned("client_assertion")? {
        if form.get("client_assertion_type")? != Some(super::client_assertion::ASSERTION_TYPE) {
            return Err(OAuthError::invalid_request(format!(
                "client_assertion_type must be {}",
                super::client_assertion::ASSERTION_TYPE
            )));
        }
        let basic = authorization.and_then(|a| a.get(..6)).is_some_and(|s| s.eq_ignore_ascii_case("basic "));
        if client_secret.is_some() || basic {
            return Err(OAuthError::invalid_request("use one client authentication method, not two"));
        }
        let named = assertion_issuer(&assertion)
            .ok_or_else(|| OAuthError::invalid_client("the client assertion is not a JWT with an iss"))?;
        if client_id.as_ref().is_some_and(|c| *c != named) {
            return Err(OAuthError::invalid_client("client_id differs from the client assertion's iss"));
        }
        if named.is_empty() || crate::params::has_control(&named) || named.len() > 64 {
            return Err(OAuthError::invalid_client("the client assertion's iss is not a Client ID"));
        }
        return Ok(Presented {
            client_id: named,
            secret: None,
            basic: false,
            assertion: Some(assertion),
            assertion_verified: false,
        });
    }
    // The scheme's name is case-insensitive (RFC 7235 §2.1): `basic` is Basic too.
    let basic = authorization
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("basic"))
        .map(|(_, credentials)| credentials);
    match basic {
        Some(b64) => {
            if client_secret.is_some() {
                return Err(OAuthError::invalid_request("use one client authentication method, not two"));
            }
            let raw =
                STANDARD.decode(b64.trim()).map_err(|_| OAuthError::invalid_client("malformed Basic credentials"))?;
            let text = String::from_utf8(raw).map_err(|_| OAuthError::invalid_client("malformed Basic credentials"))?;
            let (id, secret) =
                text.split_once(':').ok_or_else(|| OAuthError::invalid_client("malformed Basic credentials"))?;
            let (id, secret) = (form_decode(id), form_decode(secret));
            if crate::params::has_control(&id) {
                return Err(crate::params::ParamError::Control("client_id".into()).into());
            }
            if client_id.is_some_and(|f| f != id) {
                return Err(OAuthError::invalid_request("client_id differs from the authenticated client"));
            }
            Ok(Presented {
                client_id: id,
                secret: Some(secret),
                basic: true,
                assertion: None,
                assertion_verified: false,
            })
        }
        None => {
            let id = client_id.ok_or_else(|| OAuthError::invalid_client("client authentication is required"))?;
            Ok(Presented {
                client_id: id,
                secret: client_secret,
                basic: false,
                assertion: None,
                assertion_verified: false,
            })
        }
    }
}

/// One answer for an unknown client and a wrong secret, so that Client IDs cannot be probed.
/// (The same for a signed client assertion, whatever failed: the daemon's log says what.)
pub(super) const AUTH_FAILED: &str =
    "client authentication failed: check the Client ID and its secret or signed client assertion";

/// Authenticates the client: confidential clients by secret (compared as SHA-256, in constant
/// time), public clients by id alone and never with a secret.
pub fn authenticate(tx: &impl Reader, tenant: TenantId, p: &Presented) -> Result<AppRow, OAuthError> {
    let app = store::apps::get(tx, tenant, &p.client_id)?.ok_or_else(|| OAuthError::invalid_client(AUTH_FAILED))?;
    check(&app, p)?;
    Ok(app)
}

/// [`authenticate`] for the client-credentials grant, which writes nothing: the application
/// comes from the store's in-memory copy when it is current ([`Db::app_for_grant`]).
pub async fn authenticate_for_grant(db: &Db, tenant: TenantId, p: &Presented) -> Result<Arc<AppRow>, OAuthError> {
    let app = db.app_for_grant(tenant, &p.client_id).await?.ok_or_else(|| OAuthError::invalid_client(AUTH_FAILED))?;
    check(&app, p)?;
    Ok(app)
}

/// The presented credentials against the application of their Client ID.
fn check(app: &AppRow, p: &Presented) -> Result<(), OAuthError> {
    // A private_key_jwt app authenticates with a verified assertion, and only with one; an
    // assertion authenticates no other app.
    if app.token_auth == crate::store::TokenAuth::PrivateKeyJwt {
        return if p.assertion_verified && p.secret.is_none() {
            Ok(())
        } else {
            tracing::info!(client_id = %app.client_id, "a private_key_jwt application sent no verified assertion");
            Err(OAuthError::invalid_client(AUTH_FAILED))
        };
    }
    if p.assertion.is_some() {
        return Err(OAuthError::invalid_client(AUTH_FAILED));
    }
    match (&app.secret_hash, &p.secret) {
        (Some(hash), Some(secret)) if constant_time_eq(hash, &sha256(secret.as_bytes())) => Ok(()),
        (Some(_), _) => Err(OAuthError::invalid_client(AUTH_FAILED)),
        (None, None) => Ok(()),
        (None, Some(_)) => Err(OAuthError::invalid_client(AUTH_FAILED)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(kind: AppType, uris: &[&str]) -> AppRow {
        AppRow {
            client_id: "c".into(),
            name: "n".into(),
            app_type: kind,
            secret_hash: None,
            redirect_uris: uris.iter().map(|s| s.to_string()).collect(),
            post_logout_redirect_uris: vec![],
            cors_origins: vec![],
            scopes: vec![],
            created_at: 0,
            device_flow: false,
            require_acr: None,
            consent_explicit: false,
            backchannel_logout_uri: None,
            backchannel_logout_session_required: false,
            logo_sha: None,
            signing_alg: crate::store::SigningAlg::RS256,
            require_par: false,
            require_dpop: false,
            token_auth: crate::store::TokenAuth::Secret,
            jwks: None,
            jwks_uri: None,
        }
    }

    #[test]
    fn exact_match_only() {
        let a = app(AppType::Web, &["https://app.example.com/oidc-callback"]);
        assert!(redirect_allowed(&a, "https://app.example.com/oidc-callback"));
        for bad in [
            "https://app.example.com/oidc-callback/",
            "https://app.example.com/OIDC-callback",
            "https://app.example.com/",
            "https://app.example.com/oidc-callback?x=1",
            "https://app.example.com/oidc-callback#x",
            "https://app.example.com:443/oidc-callback",
            "https://user@app.example.com/oidc-callback",
            "https://app.example.com.evil.com/oidc-callback",
        ] {
            assert!(!redirect_allowed(&a, bad), "{bad}");
        }
    }

    #[test]
    fn the_basic_scheme_is_matched_in_any_case() {
        let form = Params::parse(b"grant_type=client_credentials");
        for scheme in ["Basic", "basic", "BASIC"] {
            // "id:secret"
            let p = presented(Some(&format!("{scheme} aWQ6c2VjcmV0")), &form).unwrap();
            assert_eq!((p.client_id.as_str(), p.secret.as_deref(), p.basic), ("id", Some("secret"), true), "{scheme}");
        }
        assert!(presented(Some("Bearer aWQ6c2VjcmV0"), &form).is_err(), "another scheme is no client authentication");
    }

    #[test]
    fn native_loopback_port_is_free() {
        let a = app(AppType::Native, &["http://127.0.0.1/callback"]);
        assert!(redirect_allowed(&a, "http://127.0.0.1:51234/callback"));
        assert!(!redirect_allowed(&a, "http://127.0.0.1:51234/other"));
        assert!(!redirect_allowed(&a, "http://localhost:51234/callback"));
        // Only the port may differ: no spelling of the host, scheme or path a parser would
        // normalise to the registered one.
        for other in [
            "http://127.1:5555/callback",
            "http://0x7f.0.0.1:5555/callback",
            "HTTP://127.0.0.1:5555/callback",
            "http://127.0.0.1:5555/x/../callback",
            "http://127.0.0.1:5555/./callback",
            "http://127.0.0.1:5555/callback#f",
            "http://127.0.0.1:99999/callback",
            "http://127.0.0.1:/callback",
            "http://127.0.0.1.evil.example:5555/callback",
            "http://127.0.0.2:5555/callback",
        ] {
            assert!(!redirect_allowed(&a, other), "{other}");
        }
        assert!(redirect_allowed(&a, "http://127.0.0.1/callback"), "the registered one, without a port");
        let v6 = app(AppType::Native, &["http://[::1]:8080/cb?x=1"]);
        assert!(redirect_allowed(&v6, "http://[::1]:1234/cb?x=1"));
        assert!(redirect_allowed(&v6, "http://[::1]/cb?x=1"));
        assert!(!redirect_allowed(&v6, "http://[0:0:0:0:0:0:0:1]:1234/cb?x=1"));
        assert!(!redirect_allowed(&v6, "http://[::1]:1234/cb?x=2"));
        let w = app(AppType::Web, &["http://127.0.0.1/callback"]);
        assert!(!redirect_allowed(&w, "http://127.0.0.1:51234/callback"));
    }
}
