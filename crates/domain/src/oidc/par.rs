//! Pushed authorization requests (RFC 9126): an application POSTs its authorization request to
//! `{base_url}/par` with its client authentication and gets a `request_uri` (single use, 60 s),
//! with which the browser goes to `/authorize`. The parameters then come from the pushed request
//! only, never from the browser's URL, so they cannot be read or changed on the way; and
//! `--require-par` apps are refused any other request.
//!
//! A pushed request is checked here as far as it can be without a user: the client, the redirect
//! URI, the response type, the scopes and PKCE, each refused in the endpoint's answer. The rest
//! (`prompt`, `max_age`, `claims`…) is checked by `/authorize` as for any request, which answers
//! by redirecting to the (already checked) redirect URI.

use serde::Serialize;

use super::authorize::{user_scopes, valid_challenge};
use super::clients::{self, Presented, redirect_allowed};
use super::error::{OAuthCode, OAuthError};
use crate::crypto::{random_token, sha256};
use crate::params::Params;
use crate::registry::TenantRuntime;
use crate::state::State;
use crate::store::{self, AppType};

/// What a `request_uri` of ours starts with (RFC 9126 §2.2).
pub const REQUEST_URI_PREFIX: &str = "urn:ietf:params:oauth:request_uri:";
/// How long a pushed request waits for its `/authorize` (RFC 9126 suggests 5 to 600 s).
pub const LIFETIME_SECS: i64 = 60;
/// At most this many parameters, and bytes of them, in a pushed request.
const MAX_PARAMS: usize = 32;
const MAX_BYTES: usize = 16 * 1024;

/// The answer of `POST /par` (201).
#[derive(Debug, Serialize)]
pub struct Pushed {
    pub request_uri: String,
    pub expires_in: i64,
}

/// The stored name of a request_uri's random part: its SHA-256, hex.
fn id_of(token: &str) -> String {
    sha256(token.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

fn err(code: OAuthCode, description: impl Into<String>) -> OAuthError {
    OAuthError::new(code, description)
}

/// `POST /par`: authenticates the client, checks the request and stores it.
pub async fn push(
    state: &State,
    tenant: &TenantRuntime,
    client: Presented,
    form: Params,
) -> Result<Pushed, OAuthError> {
    let t = tenant.id;
    let app = state.db.read(move |tx| clients::authenticate(tx, t, &client)).await?;
    check(&app, &form)?;
    // Stored without the client's credentials (secret or assertion); with its Client ID, which
    // `/authorize` compares.
    const CREDENTIALS: [&str; 4] = ["client_secret", "client_assertion", "client_assertion_type", "client_id"];
    let mut kept: Vec<(String, String)> =
        form.pairs().iter().filter(|(k, _)| !CREDENTIALS.contains(&k.as_str())).cloned().collect();
    kept.push(("client_id".into(), app.client_id.clone()));
    let params = serde_json::to_string(&kept).map_err(OAuthError::server_error)?;
    let token = random_token()?;
    let (id, client_id) = (id_of(&token), app.client_id.clone());
    let expires_at = state.clock.now() + LIFETIME_SECS;
    state.db.write(move |tx| store::pushed::insert(tx, t, &id, &client_id, &params, expires_at)).await?;
    Ok(Pushed { request_uri: format!("{REQUEST_URI_PREFIX}{token}"), expires_in: LIFETIME_SECS })
}

/// What can be checked of a pushed request before a user is there.
fn check(app: &store::apps::AppRow, form: &Params) -> Result<(), OAuthError> {
    let request: Vec<&(String, String)> = form.pairs().iter().filter(|(k, _)| !k.starts_with("client_")).collect();
    if request.len() > MAX_PARAMS || request.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>() > MAX_BYTES {
        return Err(err(OAuthCode::InvalidRequest, format!("at most {MAX_PARAMS} parameters of {MAX_BYTES} bytes")));
    }
    if app.app_type == AppType::M2m {
        return Err(err(
            OAuthCode::UnauthorizedClient,
            "a machine-to-machine application uses the client credentials grant",
        ));
    }
    if form.has("request_uri") {
        return Err(err(OAuthCode::InvalidRequest, "a pushed request cannot itself name a request_uri"));
    }
    if form.has("request") {
        return Err(err(OAuthCode::RequestNotSupported, "request objects are not supported; push the parameters"));
    }
    let redirect =
        form.get("redirect_uri")?.ok_or_else(|| err(OAuthCode::InvalidRequest, "redirect_uri is required"))?;
    if !redirect_allowed(app, redirect) {
        return Err(err(
            OAuthCode::InvalidRequest,
            "the redirect_uri is not one of the application's registered Login Redirect URLs",
        ));
    }
    match form.get("response_type")? {
        Some("code") => {}
        None => return Err(err(OAuthCode::InvalidRequest, "response_type is required")),
        Some(_) => return Err(err(OAuthCode::UnsupportedResponseType, "only response_type=code is supported")),
    }
    user_scopes(app, form.get("scope")?).map_err(|why| err(OAuthCode::InvalidScope, why))?;
    match (form.get("code_challenge")?, form.get("code_challenge_method")?) {
        (Some(c), Some("S256")) if valid_challenge(c) => Ok(()),
        (Some(_), Some("S256")) => {
            Err(err(OAuthCode::InvalidRequest, "code_challenge must be the base64url SHA-256 of the verifier"))
        }
        (Some(_), _) => Err(err(OAuthCode::InvalidRequest, "code_challenge_method must be S256")),
        (None, Some(_)) => Err(err(OAuthCode::InvalidRequest, "code_challenge_method without code_challenge")),
        (None, None) if !app.confidential() => {
            Err(err(OAuthCode::InvalidRequest, "PKCE (code_challenge with S256) is required for this application"))
        }
        (None, None) => Ok(()),
    }
}

/// The parameters `/authorize` works from.
pub enum Resolved {
    /// No `request_uri`: the request's own parameters.
    Plain(Params),
    /// The pushed request the `request_uri` named, taken (it cannot be used again).
    Pushed(Params),
    /// A `request_uri` that names nothing usable: why, for the error page (there is no checked
    /// redirect URI to send an error to).
    Refused(String),
}

/// Resolves a `request_uri` of `/authorize` that is one of ours: the pushed request it names, if
/// it is this tenant's, unused, unexpired and pushed by the `client_id` the request names (RFC
/// 9126 §4). Any other `request_uri` (a request object's URL, which is not supported) is left to
/// `/authorize`, which answers `request_uri_not_supported`.
pub async fn resolve(state: &State, tenant: &TenantRuntime, params: Params) -> Result<Resolved, OAuthError> {
    let uri = match params.get("request_uri") {
        Ok(Some(u)) => u.to_owned(),
        Ok(None) => return Ok(Resolved::Plain(params)),
        Err(e) => return Ok(Resolved::Refused(format!("The request is malformed: {e}."))),
    };
    let Some(token) = uri.strip_prefix(REQUEST_URI_PREFIX) else { return Ok(Resolved::Plain(params)) };
    if token.is_empty() || token.len() > 64 {
        return Ok(Resolved::Refused("The request_uri is not one this sign-in service issued.".into()));
    }
    let client_id = match params.get("client_id") {
        Ok(Some(c)) => c.to_owned(),
        _ => return Ok(Resolved::Refused("The request names no application (client_id).".into())),
    };
    let (t, id, now) = (tenant.id, id_of(token), state.clock.now());
    // Taken only by the client that pushed it: another's attempt does not spend it.
    let taken = state.db.write(move |tx| store::pushed::take(tx, t, &id, &client_id, now)).await?;
    let Some(stored) = taken else {
        return Ok(Resolved::Refused(
            "The request_uri is unknown, was used already, has expired or was pushed by another application: the \
             application must push its request again."
                .into(),
        ));
    };
    let pairs: Vec<(String, String)> = serde_json::from_str(&stored).map_err(OAuthError::server_error)?;
    Ok(Resolved::Pushed(Params::from_pairs(pairs)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(kind: AppType, secret: bool) -> store::apps::AppRow {
        let redirects: &[&str] = if kind == AppType::M2m { &[] } else { &["https://app.example/cb"] };
        let mut a = crate::apps::validate(&crate::apps::tests::app(kind, redirects)).unwrap();
        a.secret_hash = secret.then(|| vec![1; 32]);
        a
    }

    fn form(extra: &str) -> Params {
        Params::parse(
            format!(
                "response_type=code&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&scope=openid&code_challenge={}&\
                 code_challenge_method=S256{extra}",
                "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
            )
            .as_bytes(),
        )
    }

    #[test]
    fn a_pushed_request_is_checked_before_it_is_stored() {
        let web = app(AppType::Web, true);
        assert!(check(&web, &form("")).is_ok());
        let code = |a: &store::apps::AppRow, f: &Params| check(a, f).unwrap_err().code;
        assert_eq!(code(&web, &form("&request_uri=urn%3Ax")), OAuthCode::InvalidRequest);
        assert_eq!(code(&web, &form("&request=eyJ")), OAuthCode::RequestNotSupported);
        assert_eq!(code(&web, &form("&scope=admin")), OAuthCode::InvalidRequest, "repeated");
        let other = Params::parse(b"response_type=code&redirect_uri=https%3A%2F%2Fevil.example%2Fcb");
        assert_eq!(code(&web, &other), OAuthCode::InvalidRequest);
        let token = Params::parse(b"response_type=token&redirect_uri=https%3A%2F%2Fapp.example%2Fcb");
        assert_eq!(code(&web, &token), OAuthCode::UnsupportedResponseType);
        let scope = Params::parse(b"response_type=code&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&scope=admin");
        assert_eq!(code(&web, &scope), OAuthCode::InvalidScope);
        let public = app(AppType::Spa, false);
        let bare = Params::parse(b"response_type=code&redirect_uri=https%3A%2F%2Fapp.example%2Fcb");
        assert_eq!(code(&public, &bare), OAuthCode::InvalidRequest, "PKCE for public clients");
        assert!(check(&web, &bare).is_ok(), "optional for confidential ones");
        assert_eq!(code(&app(AppType::M2m, true), &form("")), OAuthCode::UnauthorizedClient);
        let many: String = (0..40).map(|i| format!("&x{i}=1")).collect();
        assert_eq!(code(&web, &form(&many)), OAuthCode::InvalidRequest);
    }

    #[test]
    fn request_uris_are_stored_by_hash() {
        let id = id_of("abc");
        assert_eq!(id.len(), 64);
        assert_ne!(id, "abc");
    }
}
