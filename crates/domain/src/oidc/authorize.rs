//! `GET {base_url}/authorize` (OIDC Core §3.1.2) and its continuation after the hosted login page.
//!
//! The client and redirect URI are checked first: until both are known good, errors are shown as
//! a page and never redirected. After that, errors go back to the client with `error` and `state`.

use serde::{Deserialize, Serialize};
use url::form_urlencoded;

use super::clients::redirect_allowed;
use super::error::{OAuthCode, OAuthError};
use crate::clock::Timestamp;
use crate::crypto::random_token;
use crate::ordered::{new_token, token_key};
use crate::params::Params;
use crate::registry::TenantRuntime;
use crate::sessions;
use crate::state::State;
use crate::store::apps::AppRow;
use crate::store::oidc::CodeRow;
use crate::store::sessions::SessionRow;
use crate::store::users::UserRow;
use crate::store::{self, AppType, Reader, TenantId, WriteTx};

/// Scopes a user may grant an application at `/authorize`.
pub const USER_SCOPES: &[&str] = &["openid", "profile", "email", "offline_access", CREDENTIALS_SCOPE];
/// The scope of the credentials API; granted only to apps configured with it.
pub const CREDENTIALS_SCOPE: &str = "credentials";

/// A validated authorization request, kept while the user signs in.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct AuthorizationRequest {
    pub client_id: String,
    pub client_name: String,
    pub redirect_uri: String,
    pub scope: String,
    pub state: Option<String>,
    pub nonce: Option<String>,
    pub code_challenge: Option<String>,
    pub prompt_login: bool,
    pub max_age: Option<i64>,
    pub login_hint: Option<String>,
    /// With prompt=login: the session the browser had when asking, which does not count.
    #[serde(default)]
    pub stale_session: Option<i64>,
    /// The `claims` parameter, what of it is served here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claims: Option<super::claims::Requested>,
    /// `prompt=select_account`: a signed-in user is asked whether to continue as themselves.
    #[serde(default)]
    pub select_account: bool,
    /// The `acr` the sign-in must reach (step-up): `phrh` from `acr_values=phrh` or an essential
    /// `acr` claim (a device-bound passkey), or the app's `--require-acr` (`phr`: any passkey).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_acr: Option<String>,
    /// The app asks its users for consent (`--consent explicit`).
    #[serde(default)]
    pub consent_explicit: bool,
    /// `prompt=consent`: ask even when the user allowed the app before.
    #[serde(default)]
    pub prompt_consent: bool,
    /// The user (public id) who allowed this very request on the consent page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consented_by: Option<String>,
    /// The app has a back-channel logout URI: the session it signs into records it.
    #[serde(default)]
    pub backchannel: bool,
    /// `ui_locales`: the languages the application asks the pages to speak, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui_locales: Option<String>,
    /// The hash of the app's logo, which the consent page shows, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo_sha: Option<String>,
}

/// Whether the request must show the consent page before a code goes back: asked for
/// (`prompt=consent`), or an app that asks its users and this user has not allowed it every scope
/// of the request. Allowed on the page for this request, it never asks twice.
fn needs_consent(
    tx: &impl Reader,
    tenant: TenantId,
    request: &AuthorizationRequest,
    user: &UserRow,
) -> Result<bool, OAuthError> {
    if request.consented_by.as_deref() == Some(user.public_id.as_str()) {
        return Ok(false);
    }
    if request.prompt_consent {
        return Ok(true);
    }
    if !request.consent_explicit {
        return Ok(false);
    }
    let allowed = store::consents::scopes(tx, tenant, user.id, &request.client_id)?.unwrap_or_default();
    Ok(super::tokens::scopes(&request.scope).any(|s| !allowed.iter().any(|a| a == s)))
}

#[derive(Debug)]
pub enum Outcome {
    /// Unknown client or redirect URI: a page saying so, HTTP 400, no redirect.
    InvalidRedirect(String),
    /// Send the browser back to the client (with a code or an error).
    Redirect(String),
    /// Show the hosted login page for this pending request.
    Login { request_id: String, request: Box<AuthorizationRequest> },
    /// `prompt=select_account` with a signed-in user: continue as them, or use another account.
    SelectAccount { request_id: String, request: Box<AuthorizationRequest>, name: String, email: String },
    /// The consent page: allow the app what it asks for, or deny.
    Consent { request_id: String, request: Box<AuthorizationRequest>, email: String },
}

/// Appends parameters to a redirect URI that may already carry a query.
pub fn with_query(uri: &str, pairs: &[(&str, &str)]) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        q.append_pair(k, v);
    }
    let sep = if uri.contains('?') { '&' } else { '?' };
    format!("{uri}{sep}{}", q.finish())
}

fn error_redirect(
    tenant: &TenantRuntime,
    redirect_uri: &str,
    state: Option<&str>,
    error: OAuthCode,
    description: &str,
) -> Outcome {
    Outcome::Redirect(error_location(tenant, redirect_uri, state, error, description))
}

/// Where an error goes back to the application (RFC 6749 §4.1.2.1, with `iss`).
fn error_location(
    tenant: &TenantRuntime,
    redirect_uri: &str,
    state: Option<&str>,
    error: OAuthCode,
    description: &str,
) -> String {
    let mut pairs = vec![("error", error.as_str()), ("error_description", description)];
    if let Some(s) = state {
        pairs.push(("state", s));
    }
    pairs.push(("iss", tenant.base_url.as_str()));
    with_query(redirect_uri, &pairs)
}

/// A PKCE S256 challenge: the base64url SHA-256 of a verifier, 43 characters.
pub(super) fn valid_challenge(c: &str) -> bool {
    c.len() == 43 && c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The scopes a user may grant `app` out of a request's `scope` (default `openid`), without
/// repeats; `Err` says which one is not available. Shared by `/authorize` and
/// `/device_authorization`.
pub fn user_scopes<'a>(app: &AppRow, scope: Option<&'a str>) -> Result<Vec<&'a str>, String> {
    let mut scopes: Vec<&str> = vec![];
    for s in super::tokens::scopes(scope.unwrap_or("openid")) {
        if !USER_SCOPES.contains(&s) {
            return Err(format!("scope {s:?} is not available"));
        }
        // offline_access only for apps configured with it (Core §11 lets the OP ignore it):
        // the others' grants end with the browser session, and the answer's scope says so.
        if s == super::issue::OFFLINE_ACCESS && !app.scopes.iter().any(|g| g == s) {
            continue;
        }
        // API scopes of a user's token only where the operator granted them to the app.
        if s == CREDENTIALS_SCOPE && !app.scopes.iter().any(|g| g == s) {
            return Err(
                "scope \"credentials\" is not granted to this application (latchkey app create --scope credentials)"
                    .into(),
            );
        }
        if !scopes.contains(&s) {
            scopes.push(s);
        }
    }
    Ok(scopes)
}

/// The `acr` of a sign-in with a device-bound passkey (OpenID EAP ACR Values).
pub const PHRH: &str = "phrh";

/// Whether a session reaches the `acr` `required`: `phrh` needs a device-bound passkey (`amr`
/// `hwk`), `phr` any passkey (not a social sign-in).
fn reaches(s: &SessionRow, required: &str) -> bool {
    let acr = serde_json::from_str::<Vec<String>>(&s.amr).ok().and_then(|amr| super::tokens::acr_of(&amr));
    match required {
        PHRH => acr == Some(PHRH),
        _ => acr.is_some(),
    }
}

/// The `prompt` values of Core §3.1.2.1; any other is refused.
const PROMPTS: [&str; 4] = ["none", "login", "consent", "select_account"];

/// Validates the request; returns the outcome to render.
pub async fn authorize(
    state: &State,
    tenant: &std::sync::Arc<TenantRuntime>,
    params: Params,
    session_token: Option<String>,
) -> Result<Outcome, OAuthError> {
    let now = state.clock.now();
    // A `request_uri` names a pushed request (RFC 9126), whose parameters are the only ones read.
    let (params, pushed) = match super::par::resolve(state, tenant, params).await? {
        super::par::Resolved::Plain(p) => (p, false),
        super::par::Resolved::Pushed(p) => (p, true),
        super::par::Resolved::Refused(why) => return Ok(Outcome::InvalidRedirect(why)),
    };
    let (client_id, redirect_uri) = match (params.get("client_id"), params.get("redirect_uri")) {
        (Ok(Some(c)), Ok(Some(r))) => (c.to_owned(), r.to_owned()),
        (Ok(None), _) => return Ok(Outcome::InvalidRedirect("The request names no application (client_id).".into())),
        (_, Ok(None)) => return Ok(Outcome::InvalidRedirect("The request has no redirect_uri.".into())),
        (Err(e), _) | (_, Err(e)) => return Ok(Outcome::InvalidRedirect(format!("The request is malformed: {e}."))),
    };
    let t = tenant.id;
    let cid = client_id.clone();
    let app = state.db.read(move |tx| store::apps::get(tx, t, &cid)).await?;
    let Some(app) = app else {
        return Ok(Outcome::InvalidRedirect("The application is unknown to this sign-in service.".into()));
    };
    if !redirect_allowed(&app, &redirect_uri) {
        return Ok(Outcome::InvalidRedirect(
            "The redirect_uri is not one of the application's registered Login Redirect URLs.".into(),
        ));
    }

    // From here on, errors go back to the application.
    let state_param = params.get("state").ok().flatten().map(str::to_owned);
    let fail = |error: OAuthCode, description: &str| {
        Ok(error_redirect(tenant, &redirect_uri, state_param.as_deref(), error, description))
    };
    // Every parameter read below is readable (not repeated, no control character), or the
    // request goes back refused, naming the first that is not.
    const READ: [&str; 15] = [
        "response_type",
        "scope",
        "nonce",
        "code_challenge",
        "code_challenge_method",
        "prompt",
        "max_age",
        "login_hint",
        "state",
        "response_mode",
        "request",
        "request_uri",
        "id_token_hint",
        "claims",
        "acr_values",
    ];
    if let Some(e) = READ.iter().find_map(|name| params.get(name).err()) {
        return fail(OAuthCode::InvalidRequest, &e.to_string());
    }
    let one = |name: &str| params.get(name).ok().flatten();
    let (response_type, scope, nonce, challenge, method, prompt, max_age, login_hint) = (
        one("response_type"),
        one("scope"),
        one("nonce"),
        one("code_challenge"),
        one("code_challenge_method"),
        one("prompt"),
        one("max_age"),
        one("login_hint"),
    );
    if app.app_type == AppType::M2m {
        return fail(
            OAuthCode::UnauthorizedClient,
            "a machine-to-machine application uses the client credentials grant",
        );
    }
    if app.require_par && !pushed {
        return fail(
            OAuthCode::InvalidRequest,
            "this application must push its authorization requests (POST /par, RFC 9126) and send the request_uri",
        );
    }
    match response_type {
        Some("code") => {}
        None => return fail(OAuthCode::InvalidRequest, "response_type is required"),
        Some(_) => return fail(OAuthCode::UnsupportedResponseType, "only response_type=code is supported"),
    }
    // What discovery says is not supported is refused, not ignored: a client that asked for the
    // code in a fragment or a form post, or sent its parameters in a request object, would
    // otherwise look for an answer where none comes.
    if !matches!(one("response_mode"), None | Some("query")) {
        return fail(OAuthCode::InvalidRequest, "response_mode must be query (the only one supported)");
    }
    if one("request").is_some() {
        return fail(OAuthCode::RequestNotSupported, "request objects are not supported; send the parameters as such");
    }
    // A request_uri of ours was resolved above; any other names a request object elsewhere.
    if one("request_uri").is_some() {
        return fail(
            OAuthCode::RequestUriNotSupported,
            "request_uri is supported for pushed requests only (POST /par); send the parameters as such",
        );
    }
    // Bounded, since a pending request keeps them for the ten minutes of a sign-in.
    for (name, value, max) in
        [("state", state_param.as_deref(), 2048), ("nonce", nonce, 2048), ("login_hint", login_hint, 320)]
    {
        if value.is_some_and(|v| v.len() > max) {
            return fail(OAuthCode::InvalidRequest, &format!("{name} is longer than {max} bytes"));
        }
    }
    let scopes = match user_scopes(&app, scope) {
        Ok(s) => s,
        Err(why) => return fail(OAuthCode::InvalidScope, &why),
    };
    match (challenge, method) {
        (Some(c), Some("S256")) if valid_challenge(c) => {}
        (Some(_), Some("S256")) => {
            return fail(OAuthCode::InvalidRequest, "code_challenge must be the base64url SHA-256 of the verifier");
        }
        (Some(_), None | Some("plain")) => {
            return fail(OAuthCode::InvalidRequest, "PKCE method plain is not accepted; use S256");
        }
        (Some(_), Some(_)) => return fail(OAuthCode::InvalidRequest, "unknown code_challenge_method; use S256"),
        (None, Some(_)) => return fail(OAuthCode::InvalidRequest, "code_challenge_method without code_challenge"),
        (None, None) if !app.confidential() => {
            return fail(OAuthCode::InvalidRequest, "PKCE (code_challenge with S256) is required for this application");
        }
        (None, None) => {}
    }
    let prompts: Vec<&str> = prompt.unwrap_or("").split(' ').filter(|p| !p.is_empty()).collect();
    if let Some(unknown) = prompts.iter().find(|p| !PROMPTS.contains(p)) {
        let unknown: String = unknown.chars().take(32).collect();
        return fail(
            OAuthCode::InvalidRequest,
            &format!("unknown prompt value {unknown:?}; the values are none, login, consent and select_account"),
        );
    }
    let prompt_none = prompts.contains(&"none");
    let prompt_login = prompts.contains(&"login");
    let select_account = prompts.contains(&"select_account");
    if prompt_none && prompts.len() > 1 {
        return fail(OAuthCode::InvalidRequest, "prompt=none cannot be combined with other values");
    }
    let max_age = match max_age.map(str::parse::<i64>) {
        None => None,
        Some(Ok(v)) if v >= 0 => Some(v),
        Some(_) => return fail(OAuthCode::InvalidRequest, "max_age must be a non-negative number of seconds"),
    };
    // Step-up when `phrh` is acceptable and `phr` is not: `acr_values` (a list of acceptable
    // values, Core §3.1.2.1) or an essential `acr` claim's values.
    let only_phrh = |values: &[&str]| values.contains(&PHRH) && !values.contains(&"phr");
    let asks_phrh = one("acr_values").is_some_and(|v| only_phrh(&v.split(' ').collect::<Vec<_>>()))
        || one("claims").is_some_and(|c| {
            let values = super::claims::essential_acr(c);
            only_phrh(&values.iter().map(String::as_str).collect::<Vec<_>>())
        });
    // The stronger of the request's and the application's.
    let require_acr = match (asks_phrh, app.require_acr.as_deref()) {
        (true, _) | (_, Some(PHRH)) => Some(PHRH.to_owned()),
        (false, other) => other.map(str::to_owned),
    };
    let claims = match one("claims").map(super::claims::Requested::parse) {
        None => None,
        Some(Ok(c)) => c,
        Some(Err(why)) => return fail(OAuthCode::InvalidRequest, &why),
    };
    // An ID token this tenant issued (expired ones too, within a session's lifetime), naming the
    // user the application expects: a session of anyone else is not used (Core §3.1.2.1).
    let hinted = match one("id_token_hint") {
        None => None,
        Some(hint) => {
            let session_ttl = state.config.tokens.session.as_secs() as i64;
            match super::tokens::verify_id_hint(tenant, hint, now, None, session_ttl) {
                Ok(h) => Some(h.sub),
                Err(_) => {
                    return fail(OAuthCode::InvalidRequest, "id_token_hint is not a valid ID token of this issuer");
                }
            }
        }
    };

    let request = AuthorizationRequest {
        client_id: app.client_id.clone(),
        client_name: app.name.clone(),
        redirect_uri: redirect_uri.clone(),
        scope: scopes.join(" "),
        state: state_param.clone(),
        nonce: nonce.map(str::to_owned),
        code_challenge: challenge.map(str::to_owned),
        prompt_login,
        max_age,
        login_hint: login_hint.map(str::to_owned),
        stale_session: None,
        claims,
        select_account,
        require_acr,
        consent_explicit: app.consent_explicit,
        prompt_consent: prompts.contains(&"consent"),
        consented_by: None,
        backchannel: app.backchannel_logout_uri.is_some(),
        logo_sha: app.logo_sha.clone(),
        ui_locales: one("ui_locales").map(|v| v.chars().take(128).collect()),
    };
    let request_id = random_token()?;
    let code = new_token()?;
    let code_ttl = state.config.tokens.authorization_code.as_secs() as i64;
    let tenant2 = tenant.clone();
    // A code (or a pending request) is worth only a retry, as a ceremony's challenge is: lost in
    // a power cut, the client's exchange fails and the user, still signed in, is sent back here.
    // Its exchange commits durably, and that fsync makes the code durable with it.
    state
        .db
        .write_unsynced(move |tx| -> Result<Outcome, OAuthError> {
            let session = match &session_token {
                Some(token) => sessions::lookup(tx, t, token, now)?,
                None => None,
            };
            let (prompt_login, max_age) = (request.prompt_login, request.max_age);
            // max_age=0 asks for a sign-in now, whatever the session's age (in whole seconds,
            // a session begun this second would otherwise count as 0 seconds old).
            let required = request.require_acr.clone();
            let fresh = |s: &SessionRow| {
                !prompt_login
                    && max_age.is_none_or(|m| m > 0 && now - s.auth_time <= m)
                    && required.as_deref().is_none_or(|r| reaches(s, r))
            };
            let hinted_user = |u: &UserRow| hinted.as_ref().is_none_or(|sub| *sub == u.public_id);
            let mut request = request;
            if request.prompt_login {
                request.stale_session = session.as_ref().map(|(s, _)| s.id);
            }
            match session {
                Some((s, user)) if fresh(&s) && hinted_user(&user) && !request.select_account => {
                    if !needs_consent(tx, t, &request, &user)? {
                        return Ok(Outcome::Redirect(issue_code(
                            tx, &tenant2, &request, &s, &user, &code, now, code_ttl,
                        )?));
                    }
                    if prompt_none {
                        return Ok(error_redirect(
                            &tenant2,
                            &request.redirect_uri,
                            request.state.as_deref(),
                            OAuthCode::ConsentRequired,
                            "the user has not allowed this application what it asks for",
                        ));
                    }
                    let json = serde_json::to_string(&request).map_err(OAuthError::server_error)?;
                    store::oidc::insert_request(tx, t, &request_id, &json, now, now + 600)?;
                    Ok(Outcome::Consent { request_id, request: Box::new(request), email: user.email })
                }
                Some((s, user)) if request.select_account && fresh(&s) && hinted_user(&user) => {
                    let json = serde_json::to_string(&request).map_err(OAuthError::server_error)?;
                    store::oidc::insert_request(tx, t, &request_id, &json, now, now + 600)?;
                    let (name, email) = (user.name.clone(), user.email.clone());
                    Ok(Outcome::SelectAccount { request_id, request: Box::new(request), name, email })
                }
                _ if prompt_none => Ok(error_redirect(
                    &tenant2,
                    &request.redirect_uri,
                    request.state.as_deref(),
                    OAuthCode::LoginRequired,
                    "the user is not signed in",
                )),
                _ => {
                    let json = serde_json::to_string(&request).map_err(OAuthError::server_error)?;
                    // Ten minutes to sign in.
                    store::oidc::insert_request(tx, t, &request_id, &json, now, now + 600)?;
                    Ok(Outcome::Login { request_id, request: Box::new(request) })
                }
            }
        })
        .await
}

/// Creates a single-use code for `user` and returns the redirect that carries it.
#[allow(clippy::too_many_arguments)]
pub fn issue_code(
    tx: &WriteTx<'_>,
    tenant: &TenantRuntime,
    req: &AuthorizationRequest,
    session: &SessionRow,
    user: &UserRow,
    code: &str,
    now: Timestamp,
    ttl: i64,
) -> Result<String, OAuthError> {
    let row = CodeRow {
        client_id: req.client_id.clone(),
        user_id: user.id,
        session_id: Some(session.id),
        redirect_uri: req.redirect_uri.clone(),
        scope: req.scope.clone(),
        nonce: req.nonce.clone(),
        code_challenge: req.code_challenge.clone(),
        auth_time: session.auth_time,
        amr: session.amr.clone(),
        expires_at: now + ttl,
        used_at: None,
        access_jti: None,
        family: None,
        claims: req.claims.as_ref().and_then(super::claims::Requested::to_column),
    };
    store::oidc::insert_code(tx, tenant.id, &token_key(code), &row, now)?;
    // An app told of the session's end (back-channel logout) is told only of sessions it
    // received an ID token in.
    if req.backchannel && super::tokens::scopes(&req.scope).any(|s| s == "openid") {
        store::outbox::remember_recipient(tx, tenant.id, session.id, &req.client_id)?;
    }
    let mut pairs = vec![("code", code)];
    if let Some(s) = &req.state {
        pairs.push(("state", s));
    }
    pairs.push(("iss", &tenant.base_url));
    Ok(with_query(&req.redirect_uri, &pairs))
}

/// After the login page: the pending request, if the browser now has a fresh enough session.
pub enum Resumed {
    Redirect(String),
    /// Still not signed in (or not recently enough): show the login page again.
    Login(Box<AuthorizationRequest>),
    /// Signed in: the consent page asks before the code goes back.
    Consent {
        request: Box<AuthorizationRequest>,
        email: String,
    },
    /// The consent page's decision, acted on: send the browser `to` the app (a code, or
    /// `access_denied`), and record who decided what for which app.
    Decided {
        to: String,
        client_id: String,
        email: String,
        allowed: bool,
    },
    /// The app asks for an `acr` the user has no credential for: a page that says so, whose link
    /// takes the user back to the app with `access_denied` (`back_to`).
    StepUpUnavailable {
        client_name: String,
        required: String,
        back_to: String,
    },
    Expired,
}

/// A pending request as the browser comes back to it: the request, when it was made, and the
/// browser's live session (with its user), if any. `None`: gone or expired.
type Pending = (AuthorizationRequest, Timestamp, Option<(SessionRow, UserRow)>);

fn pending(
    tx: &WriteTx<'_>,
    tenant: store::TenantId,
    request_id: &str,
    session_token: Option<&str>,
    now: Timestamp,
) -> Result<Option<Pending>, OAuthError> {
    let Some((json, created)) = store::oidc::request(tx, tenant, request_id, now)? else { return Ok(None) };
    let request: AuthorizationRequest = serde_json::from_str(&json).map_err(OAuthError::server_error)?;
    let session = match session_token {
        Some(token) => sessions::lookup(tx, tenant, token, now)?,
        None => None,
    };
    Ok(Some((request, created, session)))
}

/// Back from the login page: a code for the signed-in user, unless something is still to ask.
pub async fn resume(
    state: &State,
    tenant: &std::sync::Arc<TenantRuntime>,
    request_id: String,
    session_token: Option<String>,
) -> Result<Resumed, OAuthError> {
    continue_request(state, tenant, request_id, session_token, None).await
}

/// The consent page's answer: allowed, the decision is remembered (an app that asks its users)
/// and the code goes back; denied, the app gets `access_denied`.
pub async fn consent(
    state: &State,
    tenant: &std::sync::Arc<TenantRuntime>,
    request_id: String,
    session_token: Option<String>,
    allow: bool,
) -> Result<Resumed, OAuthError> {
    continue_request(state, tenant, request_id, session_token, Some(allow)).await
}

async fn continue_request(
    state: &State,
    tenant: &std::sync::Arc<TenantRuntime>,
    request_id: String,
    session_token: Option<String>,
    decision: Option<bool>,
) -> Result<Resumed, OAuthError> {
    let now = state.clock.now();
    let t = tenant.id;
    let code = new_token()?;
    let code_ttl = state.config.tokens.authorization_code.as_secs() as i64;
    let tenant2 = tenant.clone();
    // Unsynced, as in `authorize`: the code and the request's deletion are worth only a retry.
    state
        .db
        .write_unsynced(move |tx| -> Result<Resumed, OAuthError> {
            let Some((mut request, created, session)) = pending(tx, t, &request_id, session_token.as_deref(), now)?
            else {
                return Ok(Resumed::Expired);
            };
            let Some((s, user)) = session else { return Ok(Resumed::Login(Box::new(request))) };
            // prompt=login asks for a sign-in made after the request, and "use another account"
            // (prompt=select_account) one other than the session it saw; max_age a recent one.
            let stale = request.stale_session == Some(s.id) || (request.prompt_login && s.auth_time < created);
            if stale || request.max_age.is_some_and(|m| now - s.auth_time > m) {
                return Ok(Resumed::Login(Box::new(request)));
            }
            // Step-up: a passkey (phr) or a device-bound one (phrh), which a user without one
            // cannot give.
            let unmet = request.require_acr.as_deref().filter(|required| !reaches(&s, required));
            if let Some(required) = unmet {
                let credentials = store::credentials::for_user(tx, t, user.id)?;
                if credentials.iter().any(|c| required != PHRH || !c.backup_eligible) {
                    return Ok(Resumed::Login(Box::new(request)));
                }
            }
            if unmet.is_none() {
                if decision == Some(true) {
                    if request.consent_explicit {
                        // What the user allowed before stays allowed.
                        let mut scopes =
                            store::consents::scopes(tx, t, user.id, &request.client_id)?.unwrap_or_default();
                        scopes.extend(super::tokens::scopes(&request.scope).map(str::to_owned));
                        store::consents::grant(tx, t, user.id, &request.client_id, &scopes, now)?;
                    }
                    request.consented_by = Some(user.public_id.clone());
                }
                if decision != Some(false) && needs_consent(tx, t, &request, &user)? {
                    return Ok(Resumed::Consent { request: Box::new(request), email: user.email });
                }
            }
            // Taken: a request resumed twice at once yields one answer.
            if !store::oidc::delete_request(tx, t, &request_id)? {
                return Ok(Resumed::Expired);
            }
            if let (None, Some(allowed)) = (unmet, decision) {
                let to = if allowed {
                    issue_code(tx, &tenant2, &request, &s, &user, &code, now, code_ttl)?
                } else {
                    error_location(
                        &tenant2,
                        &request.redirect_uri,
                        request.state.as_deref(),
                        OAuthCode::AccessDenied,
                        "the user did not allow the application what it asked for",
                    )
                };
                return Ok(Resumed::Decided { to, client_id: request.client_id, email: user.email, allowed });
            }
            if let Some(required) = unmet {
                let back_to = error_location(
                    &tenant2,
                    &request.redirect_uri,
                    request.state.as_deref(),
                    OAuthCode::AccessDenied,
                    if required == PHRH {
                        "the application asks for a sign-in with a device-bound passkey or security key (acr phrh), \
                         and this account has none"
                    } else {
                        "the application asks for a sign-in with a passkey (acr phr), and this account has none"
                    },
                );
                return Ok(Resumed::StepUpUnavailable {
                    client_name: request.client_name,
                    required: required.to_owned(),
                    back_to,
                });
            }
            Ok(Resumed::Redirect(issue_code(tx, &tenant2, &request, &s, &user, &code, now, code_ttl)?))
        })
        .await
}

/// "Use another account" on the `prompt=select_account` page: the session the request saw no
/// longer counts for it, and the login page asks for a sign-in.
pub async fn another_account(
    state: &State,
    tenant: &std::sync::Arc<TenantRuntime>,
    request_id: String,
    session_token: Option<String>,
) -> Result<Resumed, OAuthError> {
    let now = state.clock.now();
    let t = tenant.id;
    state
        .db
        .write_unsynced(move |tx| -> Result<Resumed, OAuthError> {
            let Some((mut request, _, session)) = pending(tx, t, &request_id, session_token.as_deref(), now)? else {
                return Ok(Resumed::Expired);
            };
            if let Some((s, _)) = session {
                request.stale_session = Some(s.id);
                let json = serde_json::to_string(&request).map_err(OAuthError::server_error)?;
                if !store::oidc::update_request(tx, t, &request_id, &json)? {
                    return Ok(Resumed::Expired);
                }
            }
            Ok(Resumed::Login(Box::new(request)))
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_building_and_pkce_challenges() {
        assert_eq!(with_query("https://a/cb", &[("code", "x y"), ("state", "s")]), "https://a/cb?code=x+y&state=s");
        assert_eq!(with_query("https://a/cb?t=1", &[("code", "c")]), "https://a/cb?t=1&code=c");
        assert!(valid_challenge("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
        assert!(!valid_challenge("short"));
    }
}
