//! Client applications: creation rules (redirect URIs, origins, scopes by type), Client ID and
//! secret generation. Secrets are returned once and stored only as SHA-256 hashes.

use latchkey::admin::{App, AppCreated, AppType, CreateApp, SecretRotated, SigningAlg, TokenAuth, UpdateApp};
use latchkey::codes;

use crate::clock::Timestamp;
use crate::clock::date;
use crate::crypto::{random_bytes, random_token, sha256};
use crate::error::Error;
use crate::store::apps::AppRow;
use crate::store::{self, Db, Reader, TenantId};
use crate::tenants::require;
use crate::urls;

/// Scopes every app may request; extra API scopes (e.g. `users:invite`) are granted per app.
pub const OIDC_SCOPES: &[&str] = &["openid", "profile", "email", "offline_access"];
/// API scopes this daemon knows about: `users:invite` (bulk invitations, m2m), `credentials`
/// (the credentials API with a user's token), `introspect` (a resource server that may
/// introspect tokens issued to other applications), `scim` (the SCIM endpoint, m2m).
pub const API_SCOPES: &[&str] = &["users:invite", "credentials", "introspect", "scim"];

pub fn to_wire(row: &AppRow) -> App {
    App {
        client_id: row.client_id.clone(),
        name: row.name.clone(),
        app_type: row.app_type,
        confidential: row.confidential(),
        redirect_uris: row.redirect_uris.clone(),
        post_logout_redirect_uris: row.post_logout_redirect_uris.clone(),
        cors_origins: row.cors_origins.clone(),
        scopes: row.scopes.clone(),
        created: date(row.created_at),
        device_flow: row.device_flow,
        require_acr: row.require_acr.clone(),
        consent: if row.consent_explicit { "explicit" } else { "implicit" }.to_owned(),
        backchannel_logout_uri: row.backchannel_logout_uri.clone(),
        backchannel_logout_session_required: row.backchannel_logout_session_required,
        logo_sha256: row.logo_sha.clone(),
        signing_alg: row.signing_alg,
        require_par: row.require_par,
        require_dpop: row.require_dpop,
        token_auth: row.token_auth,
        jwks_kids: row
            .jwks
            .as_deref()
            .and_then(|j| crate::oidc::client_assertion::check_jwks(j).ok())
            .unwrap_or_default(),
        jwks_uri: row.jwks_uri.clone(),
    }
}

/// A logo as sent (base64 of a PNG), checked ([`crate::logo`]). Returns the bytes and their
/// hex SHA-256.
pub fn logo(base64_png: &str) -> Result<(Vec<u8>, String), Error> {
    let logo = crate::logo::check(base64_png, crate::logo::Formats::Png)?;
    Ok((logo.bytes, logo.sha))
}

fn bad(code: &'static str, message: String) -> Error {
    Error::invalid(code, message)
}

/// Validates a creation request into the row to store (without id and secret).
pub fn validate(req: &CreateApp) -> Result<AppRow, Error> {
    check(req, Purpose::Create)
}

/// What a request is checked for. An existing native app may be left with no way to sign in
/// (device flow turned off, no redirect URI yet): it keeps its client ID until one is added,
/// where refusing would leave deleting it as the only way to turn device flow off. A new app
/// must be usable.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Purpose {
    Create,
    Update,
}

fn check(req: &CreateApp, purpose: Purpose) -> Result<AppRow, Error> {
    let name = req.name.trim();
    if name.is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err(bad(codes::INVALID_INPUT, "name must be 1-100 printable characters".into()));
    }
    let mut redirect_uris = vec![];
    for uri in &req.redirect_uris {
        let uri = urls::redirect_uri(uri).map_err(|m| bad(codes::INVALID_REDIRECT_URI, m))?;
        if !redirect_uris.contains(&uri) {
            redirect_uris.push(uri);
        }
    }
    let mut logout_uris = vec![];
    for uri in &req.post_logout_redirect_uris {
        let uri = urls::redirect_uri(uri).map_err(|m| bad(codes::INVALID_REDIRECT_URI, format!("post-logout: {m}")))?;
        if !logout_uris.contains(&uri) {
            logout_uris.push(uri);
        }
    }
    let mut origins = vec![];
    for o in &req.cors_origins {
        let o = urls::origin(o).map_err(|m| bad(codes::INVALID_ORIGIN, m))?;
        if !origins.contains(&o) {
            origins.push(o);
        }
    }
    let mut scopes = vec![];
    for s in &req.scopes {
        if !OIDC_SCOPES.contains(&s.as_str()) && !API_SCOPES.contains(&s.as_str()) {
            return Err(bad(
                codes::INVALID_SCOPE,
                format!("unknown scope {s:?}; known scopes: {}", [OIDC_SCOPES, API_SCOPES].concat().join(", ")),
            ));
        }
        if !scopes.contains(s) {
            scopes.push(s.clone());
        }
    }
    match req.app_type {
        AppType::M2m if !redirect_uris.is_empty() || !logout_uris.is_empty() => {
            return Err(bad(
                codes::INVALID_REDIRECT_URI,
                "an m2m app uses the client credentials grant and has no redirect URIs".into(),
            ));
        }
        AppType::M2m => {}
        // A device-flow app (a CLI, a TV) may have no browser redirect at all.
        AppType::Native if redirect_uris.is_empty() && (req.device_flow || purpose == Purpose::Update) => {}
        _ if redirect_uris.is_empty() => {
            return Err(bad(
                codes::INVALID_REDIRECT_URI,
                format!(
                    "a {} app needs at least one --redirect-uri (its Login Redirect URL, e.g. https://app.example.com/oidc-callback)",
                    req.app_type.as_str()
                ),
            ));
        }
        _ => {}
    }
    if req.device_flow && req.app_type != AppType::Native {
        return Err(bad(
            codes::DEVICE_FLOW_NOT_NATIVE,
            format!(
                "the device authorization grant (--device-flow) is for native apps only, not {} apps: \
                 a CLI or device is a public client (--type native)",
                req.app_type.as_str()
            ),
        ));
    }
    let require_acr = match req.require_acr.as_deref() {
        None | Some("none") => None,
        Some(acr @ ("phr" | "phrh")) => Some(acr.to_owned()),
        Some(other) => {
            return Err(bad(
                codes::INVALID_INPUT,
                format!(
                    "require_acr must be phr (a passkey, not a social sign-in) or phrh (a device-bound passkey \
                     or security key), not {:?}",
                    other.chars().take(32).collect::<String>()
                ),
            ));
        }
    };
    let consent_explicit = match req.consent.as_deref() {
        None | Some("implicit") => false,
        Some("explicit") => true,
        Some(other) => {
            return Err(bad(
                codes::INVALID_INPUT,
                format!(
                    "consent must be implicit (a first-party app: no consent page) or explicit (the user is asked), \
                     not {:?}",
                    other.chars().take(32).collect::<String>()
                ),
            ));
        }
    };
    let backchannel_logout_uri = match req.backchannel_logout_uri.as_deref() {
        None | Some("none") => None,
        Some(uri) => Some(backchannel_uri(uri).map_err(|m| bad(codes::INVALID_REDIRECT_URI, m))?),
    };
    if req.backchannel_logout_session_required && backchannel_logout_uri.is_none() {
        return Err(bad(
            codes::INVALID_INPUT,
            "backchannel_logout_session_required needs a backchannel_logout_uri (--backchannel-logout-uri)".into(),
        ));
    }
    let signing_alg = match req.signing_alg.as_deref() {
        None => SigningAlg::RS256,
        Some(a) => SigningAlg::parse(a).ok_or_else(|| {
            bad(
                codes::INVALID_INPUT,
                format!("signing_alg must be RS256, ES256 or EdDSA, not {:?}", a.chars().take(32).collect::<String>()),
            )
        })?,
    };
    if req.require_par && req.app_type == AppType::M2m {
        return Err(bad(
            codes::INVALID_INPUT,
            "an m2m app makes no authorization requests, so it has none to push (no --require-par)".into(),
        ));
    }
    let (token_auth, jwks, jwks_uri) = token_auth(req)?;
    if backchannel_logout_uri.is_some() && req.app_type == AppType::M2m {
        return Err(bad(
            codes::INVALID_REDIRECT_URI,
            "an m2m app signs no user in, so it has no sessions to be told the end of (no back-channel logout)".into(),
        ));
    }
    Ok(AppRow {
        client_id: String::new(),
        name: name.to_owned(),
        app_type: req.app_type,
        secret_hash: None,
        redirect_uris,
        post_logout_redirect_uris: logout_uris,
        cors_origins: origins,
        scopes,
        created_at: 0,
        device_flow: req.device_flow,
        require_acr,
        consent_explicit,
        backchannel_logout_uri,
        backchannel_logout_session_required: req.backchannel_logout_session_required,
        logo_sha: None,
        signing_alg,
        require_par: req.require_par,
        require_dpop: req.require_dpop,
        token_auth,
        jwks,
        jwks_uri,
    })
}

/// The stored secret hash of a private_key_jwt app: of a random secret nobody is shown. This
/// release never compares it (the app authenticates with its assertions only); a node of an
/// earlier release, which knows no private_key_jwt, refuses the app instead of taking an app
/// without a secret for a public client.
pub fn unknown_secret_hash() -> Result<Vec<u8>, Error> {
    Ok(sha256(random_token()?.as_bytes()).to_vec())
}

/// How the app authenticates, and its keys for `private_key_jwt`.
fn token_auth(req: &CreateApp) -> Result<(TokenAuth, Option<String>, Option<String>), Error> {
    let auth = match req.token_auth.as_deref() {
        None => TokenAuth::Secret,
        Some(a) => TokenAuth::parse(a)
            .ok_or_else(|| bad(codes::INVALID_INPUT, "token_auth must be secret or private_key_jwt".into()))?,
    };
    if auth == TokenAuth::Secret {
        if req.jwks.is_some() || req.jwks_uri.is_some() {
            return Err(bad(
                codes::INVALID_INPUT,
                "--jwks and --jwks-uri register the keys of a --token-auth private_key_jwt app".into(),
            ));
        }
        return Ok((auth, None, None));
    }
    if !req.app_type.is_confidential() {
        return Err(bad(
            codes::INVALID_INPUT,
            format!(
                "a {} app is a public client and authenticates with nothing: private_key_jwt is for web and m2m \
                 apps",
                req.app_type.as_str()
            ),
        ));
    }
    match (req.jwks.as_deref(), req.jwks_uri.as_deref()) {
        (Some(jwks), None) => {
            crate::oidc::client_assertion::check_jwks(jwks.trim())
                .map_err(|why| bad(codes::INVALID_INPUT, format!("--jwks: {why}")))?;
            Ok((auth, Some(jwks.trim().to_owned()), None))
        }
        (None, Some(uri)) => {
            let url = crate::social::callable_url(uri.trim()).map_err(|why| bad(codes::INVALID_INPUT, why))?;
            if !url.username().is_empty() || url.password().is_some() || url.fragment().is_some() || uri.len() > 2048 {
                return Err(bad(codes::INVALID_INPUT, "--jwks-uri takes no user name, password or fragment".into()));
            }
            Ok((auth, None, Some(url.as_str().to_owned())))
        }
        _ => Err(bad(
            codes::INVALID_INPUT,
            "a private_key_jwt app needs its public keys: --jwks FILE (a JWK Set) or --jwks-uri URL, one of them"
                .into(),
        )),
    }
}

/// A back-channel logout URI (Back-Channel Logout 1.0 §2.2): absolute, https (plain http only on
/// this machine, for development), no fragment, no user name.
fn backchannel_uri(text: &str) -> Result<String, String> {
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) || text.len() > 2048 {
        return Err(format!("{text:?}: a back-channel logout URI has no spaces or control characters"));
    }
    let url = crate::social::callable_url(text)
        .map_err(|_| format!("{text:?}: a back-channel logout URI is https (plain http only on loopback)"))?;
    if url.fragment().is_some() || !url.username().is_empty() {
        return Err(format!("{text:?}: a back-channel logout URI has no fragment or user name"));
    }
    Ok(text.to_owned())
}

/// A Client ID: 24 random alphanumeric characters (~142 bits). Alphanumeric so that it never
/// starts with `-` (which command lines read as an option) and survives any copy-paste.
pub fn new_client_id() -> Result<String, Error> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut id = String::with_capacity(24);
    while id.len() < 24 {
        for b in random_bytes::<32>()? {
            // 248 = 4 × 62: rejecting larger bytes keeps every character equally likely.
            if b < 248 && id.len() < 24 {
                id.push(ALPHABET[usize::from(b % 62)] as char);
            }
        }
    }
    Ok(id)
}

/// An app may sign with an algorithm only when its tenant has a current key of it.
pub fn ensure_key_for(tx: &impl Reader, tenant: TenantId, slug: &str, alg: SigningAlg) -> Result<(), Error> {
    if alg == SigningAlg::RS256 || store::keys::has_current(tx, tenant, alg)? {
        return Ok(());
    }
    Err(Error::conflict(
        codes::SIGNING_KEY_MISSING,
        format!("tenant {slug} has no {alg} signing key; run `latchkey key rotate --tenant {slug} --alg {alg}` first"),
    ))
}

/// App names are unique per tenant (`apply` matches apps by name): refuses `name` when another
/// application than `except` has it.
pub fn ensure_name_free(tx: &impl Reader, tenant: TenantId, name: &str, except: Option<&str>) -> Result<(), Error> {
    match store::apps::id_by_name(tx, tenant, name)? {
        Some(other) if except != Some(other.as_str()) => Err(name_taken(name, &other)),
        _ => Ok(()),
    }
}

fn name_taken(name: &str, other: &str) -> Error {
    Error::conflict(
        codes::APP_NAME_TAKEN,
        format!("the tenant already has an application named {name:?} ({other}); app names are unique per tenant"),
    )
}

/// A write that hit the unique index on (tenant, name) — a concurrent create or rename won the
/// race after [`ensure_name_free`] looked — becomes the same conflict.
fn name_conflict(name: &str) -> impl Fn(store::StoreError) -> Error + '_ {
    move |e| if e.is_unique_violation() { name_taken(name, "just created") } else { e.into() }
}

pub async fn create(db: &Db, now: Timestamp, slug: String, req: CreateApp) -> Result<AppCreated, Error> {
    let mut row = validate(&req)?;
    row.client_id = new_client_id()?;
    row.created_at = now;
    // A private_key_jwt app signs its assertions instead: it gets no secret.
    let secret = if req.app_type.is_confidential() && row.token_auth == TokenAuth::Secret {
        Some(random_token()?)
    } else {
        None
    };
    row.secret_hash = secret.as_ref().map(|s| sha256(s.as_bytes()).to_vec());
    if row.token_auth == TokenAuth::PrivateKeyJwt {
        row.secret_hash = Some(unknown_secret_hash()?);
    }
    let logo = req.logo_png.as_deref().map(logo).transpose()?;
    row.logo_sha = logo.as_ref().map(|(_, sha)| sha.clone());
    let stored = row.clone();
    db.write(move |tx| -> Result<(), Error> {
        crate::store::cluster::admin_lock(tx)?;
        let tenant = require(tx, &slug)?;
        ensure_key_for(tx, tenant.id, &slug, stored.signing_alg)?;
        ensure_name_free(tx, tenant.id, &stored.name, None)?;
        store::apps::insert(tx, tenant.id, &stored).map_err(name_conflict(&stored.name))?;
        if let Some((bytes, _)) = &logo {
            store::apps::put_logo(tx, tenant.id, &stored.client_id, Some(("image/png", bytes)))?;
        }
        Ok(())
    })
    .await?;
    db.wait_published().await;
    Ok(AppCreated { app: to_wire(&row), client_secret: secret })
}

pub async fn list(db: &Db, slug: String) -> Result<Vec<App>, Error> {
    db.read(move |tx| -> Result<_, Error> {
        let tenant = require(tx, &slug)?;
        Ok(store::apps::list(tx, tenant.id)?.iter().map(to_wire).collect())
    })
    .await
}

fn app_not_found(client_id: &str, slug: &str) -> Error {
    Error::not_found(
        codes::APP_NOT_FOUND,
        format!("no application {client_id:?} in tenant {slug:?}; `latchkey app list --tenant {slug}` shows them"),
    )
}

pub async fn show(db: &Db, slug: String, client_id: String) -> Result<App, Error> {
    db.read(move |tx| -> Result<_, Error> {
        let tenant = require(tx, &slug)?;
        let row = store::apps::get(tx, tenant.id, &client_id)?.ok_or_else(|| app_not_found(&client_id, &slug))?;
        Ok(to_wire(&row))
    })
    .await
}

pub async fn delete(db: &Db, slug: String, client_id: String) -> Result<(), Error> {
    db.write(move |tx| -> Result<_, Error> {
        crate::store::cluster::admin_lock(tx)?;
        let tenant = require(tx, &slug)?;
        if !store::apps::delete(tx, tenant.id, &client_id)? {
            return Err(app_not_found(&client_id, &slug));
        }
        Ok(())
    })
    .await?;
    db.wait_published().await;
    Ok(())
}

/// Edits one list: removals first (each must be present, compared in the form `normalise` stores),
/// then additions (already present: nothing to do). Validation of what is added is left to
/// [`validate`], which sees the whole new list.
fn edit_list(
    current: &[String],
    add: &[String],
    remove: &[String],
    what: &str,
    normalise: impl Fn(&str) -> Option<String>,
) -> Result<Vec<String>, Error> {
    let mut out = current.to_vec();
    for r in remove {
        let key = normalise(r).unwrap_or_else(|| r.clone());
        match out.iter().position(|x| *x == key || x == r) {
            Some(i) => {
                out.remove(i);
            }
            None => {
                let have = if current.is_empty() { "none".to_owned() } else { current.join(", ") };
                return Err(bad(
                    codes::VALUE_NOT_PRESENT,
                    format!("the application has no {what} {r:?}, so it cannot be removed (it has: {have})"),
                ));
            }
        }
    }
    for a in add {
        let key = normalise(a).unwrap_or_else(|| a.clone());
        if !out.contains(&key) {
            out.push(a.clone());
        }
    }
    Ok(out)
}

/// The row `req` makes of `cur`, validated exactly as a new app of the same type would be.
pub fn updated(cur: &AppRow, req: &UpdateApp) -> Result<AppRow, Error> {
    let exact = |s: &str| Some(s.to_owned());
    let create = CreateApp {
        name: req.name.clone().unwrap_or_else(|| cur.name.clone()),
        app_type: cur.app_type,
        redirect_uris: edit_list(
            &cur.redirect_uris,
            &req.add_redirect_uris,
            &req.remove_redirect_uris,
            "redirect URI",
            exact,
        )?,
        post_logout_redirect_uris: edit_list(
            &cur.post_logout_redirect_uris,
            &req.add_post_logout_redirect_uris,
            &req.remove_post_logout_redirect_uris,
            "post-logout redirect URI",
            exact,
        )?,
        cors_origins: edit_list(
            &cur.cors_origins,
            &req.add_cors_origins,
            &req.remove_cors_origins,
            "CORS origin",
            |o| urls::origin(o).ok(),
        )?,
        scopes: edit_list(&cur.scopes, &req.add_scopes, &req.remove_scopes, "scope", exact)?,
        device_flow: req.device_flow.unwrap_or(cur.device_flow),
        require_acr: req.require_acr.clone().or_else(|| cur.require_acr.clone()),
        consent: req
            .consent
            .clone()
            .or_else(|| Some(if cur.consent_explicit { "explicit" } else { "implicit" }.into())),
        backchannel_logout_uri: req.backchannel_logout_uri.clone().or_else(|| cur.backchannel_logout_uri.clone()),
        // Removing the URI (`none`) turns the session requirement off with it.
        backchannel_logout_session_required: req.backchannel_logout_session_required.unwrap_or(
            cur.backchannel_logout_session_required && req.backchannel_logout_uri.as_deref() != Some("none"),
        ),
        logo_png: None,
        signing_alg: Some(req.signing_alg.clone().unwrap_or_else(|| cur.signing_alg.as_str().to_owned())),
        require_par: req.require_par.unwrap_or(cur.require_par),
        require_dpop: req.require_dpop.unwrap_or(cur.require_dpop),
        // The way it authenticates stays; a private_key_jwt app's keys may be replaced.
        token_auth: Some(cur.token_auth.as_str().to_owned()),
        jwks: match (&req.jwks, &req.jwks_uri) {
            (Some(j), _) => Some(j.clone()),
            (None, Some(_)) => None,
            (None, None) => cur.jwks.clone(),
        },
        jwks_uri: match (&req.jwks, &req.jwks_uri) {
            (_, Some(u)) => Some(u.clone()),
            (Some(_), None) => None,
            (None, None) => cur.jwks_uri.clone(),
        },
    };
    let mut row = check(&create, Purpose::Update)?;
    row.client_id = cur.client_id.clone();
    row.secret_hash = cur.secret_hash.clone();
    row.created_at = cur.created_at;
    row.logo_sha = cur.logo_sha.clone();
    Ok(row)
}

/// Changes an application's name and lists in one transaction; refused whole on any error.
pub async fn update(db: &Db, slug: String, client_id: String, req: UpdateApp) -> Result<App, Error> {
    let app = db
        .write(move |tx| -> Result<_, Error> {
            crate::store::cluster::admin_lock(tx)?;
            let tenant = require(tx, &slug)?;
            let cur = store::apps::get(tx, tenant.id, &client_id)?.ok_or_else(|| app_not_found(&client_id, &slug))?;
            let mut row = updated(&cur, &req)?;
            if row.signing_alg != cur.signing_alg {
                ensure_key_for(tx, tenant.id, &slug, row.signing_alg)?;
            }
            let logo = match (req.logo_png.as_deref(), req.remove_logo) {
                (Some(_), true) => {
                    return Err(bad(codes::INVALID_INPUT, "give a new logo or remove it, not both".into()));
                }
                (Some(png), false) => Some(Some(logo(png)?)),
                (None, true) => Some(None),
                (None, false) => None,
            };
            if let Some(new) = &logo {
                row.logo_sha = new.as_ref().map(|(_, sha)| sha.clone());
            }
            ensure_name_free(tx, tenant.id, &row.name, Some(&row.client_id))?;
            store::apps::update(tx, tenant.id, &row).map_err(name_conflict(&row.name))?;
            if let Some(new) = &logo {
                let image = new.as_ref().map(|(bytes, _)| ("image/png", bytes.as_slice()));
                store::apps::put_logo(tx, tenant.id, &row.client_id, image)?;
            }
            Ok(to_wire(&row))
        })
        .await?;
    db.wait_published().await;
    Ok(app)
}

pub async fn rotate_secret(db: &Db, slug: String, client_id: String) -> Result<SecretRotated, Error> {
    let secret = random_token()?;
    let hash = sha256(secret.as_bytes());
    let id = client_id.clone();
    db.write(move |tx| -> Result<_, Error> {
        crate::store::cluster::admin_lock(tx)?;
        let tenant = require(tx, &slug)?;
        let row = store::apps::get(tx, tenant.id, &id)?.ok_or_else(|| app_not_found(&id, &slug))?;
        if row.token_auth == TokenAuth::PrivateKeyJwt {
            return Err(Error::invalid(
                codes::NOT_CONFIDENTIAL,
                format!(
                    "application {id:?} authenticates with a signed JWT (private_key_jwt) and has no secret; replace \
                     its keys with `latchkey app update --jwks FILE` or --jwks-uri"
                ),
            ));
        }
        if row.secret_hash.is_none() {
            return Err(Error::invalid(
                codes::NOT_CONFIDENTIAL,
                format!("application {id:?} is a public ({}) client and has no secret", row.app_type.as_str()),
            ));
        }
        store::apps::set_secret_hash(tx, tenant.id, &id, &hash)?;
        Ok::<_, Error>(())
    })
    .await?;
    // On PostgreSQL the old secret stops working on every node before the new one is shown.
    db.wait_published().await;
    Ok(SecretRotated { client_id, client_secret: secret })
}

/// An application's logo (content type, bytes), for `GET /logos/{client_id}.png`.
pub async fn logo_of(db: &Db, tenant: TenantId, client_id: String) -> Result<Option<store::apps::StoredLogo>, Error> {
    Ok(db.read(move |tx| store::apps::logo(tx, tenant, &client_id)).await?)
}

/// Whether one of the tenant's applications lists `origin` among its CORS origins.
pub async fn lists_origin(db: &Db, tenant: TenantId, origin: String) -> Result<bool, Error> {
    let apps = db.read(move |tx| store::apps::list(tx, tenant)).await?;
    Ok(apps.iter().any(|a| a.cors_origins.contains(&origin)))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A valid request for an app of type `t`, everything else left at its default.
    pub(crate) fn app(t: AppType, redirects: &[&str]) -> CreateApp {
        CreateApp {
            name: "App".into(),
            app_type: t,
            redirect_uris: redirects.iter().map(|s| s.to_string()).collect(),
            post_logout_redirect_uris: vec![],
            cors_origins: vec![],
            scopes: vec![],
            device_flow: false,
            require_acr: None,
            consent: None,
            backchannel_logout_uri: None,
            backchannel_logout_session_required: false,
            logo_png: None,
            signing_alg: None,
            require_par: false,
            require_dpop: false,
            token_auth: None,
            jwks: None,
            jwks_uri: None,
        }
    }

    fn stored(t: AppType, redirects: &[&str]) -> AppRow {
        let mut row = validate(&app(t, redirects)).unwrap();
        row.client_id = "c1".into();
        row.secret_hash = Some(vec![1; 32]);
        row.created_at = 7;
        row
    }

    #[test]
    fn update_adds_removes_and_validates_like_create() {
        let cur = stored(AppType::Web, &["https://a.example/cb"]);
        let req = UpdateApp {
            name: Some("Renamed".into()),
            add_redirect_uris: vec!["https://a.example/cb2".into(), "https://a.example/cb".into()],
            add_cors_origins: vec!["https://a.example/".into()],
            add_scopes: vec!["credentials".into()],
            ..UpdateApp::default()
        };
        let row = updated(&cur, &req).unwrap();
        assert_eq!(row.name, "Renamed");
        assert_eq!(row.redirect_uris, ["https://a.example/cb", "https://a.example/cb2"], "adding a present one: no-op");
        assert_eq!(row.cors_origins, ["https://a.example"], "origins are stored in their serialised form");
        assert_eq!((row.client_id.as_str(), row.secret_hash.clone(), row.created_at), ("c1", Some(vec![1; 32]), 7));
        // Removing what is there (an origin in any spelling of it), then adding again, round-trips.
        let back = UpdateApp {
            remove_redirect_uris: vec!["https://a.example/cb2".into()],
            remove_cors_origins: vec!["https://a.example/".into()],
            remove_scopes: vec!["credentials".into()],
            ..UpdateApp::default()
        };
        let again = updated(&row, &back).unwrap();
        assert_eq!(again.redirect_uris, cur.redirect_uris);
        assert!(again.cors_origins.is_empty() && again.scopes.is_empty());

        let code = |req: UpdateApp| updated(&cur, &req).err().map(|e| e.code);
        let missing =
            UpdateApp { remove_redirect_uris: vec!["https://a.example/other".into()], ..UpdateApp::default() };
        assert_eq!(code(missing), Some(codes::VALUE_NOT_PRESENT));
        let last = UpdateApp { remove_redirect_uris: vec!["https://a.example/cb".into()], ..UpdateApp::default() };
        assert_eq!(code(last), Some(codes::INVALID_REDIRECT_URI), "a web app keeps at least one redirect URI");
        let wild = UpdateApp { add_redirect_uris: vec!["https://*.example/cb".into()], ..UpdateApp::default() };
        assert_eq!(code(wild), Some(codes::INVALID_REDIRECT_URI));
        let scope = UpdateApp { add_scopes: vec!["root".into()], ..UpdateApp::default() };
        assert_eq!(code(scope), Some(codes::INVALID_SCOPE));
        let name = UpdateApp { name: Some(" ".into()), ..UpdateApp::default() };
        assert_eq!(code(name), Some(codes::INVALID_INPUT));
        let m2m = stored(AppType::M2m, &[]);
        let redirect = UpdateApp { add_redirect_uris: vec!["https://a.example/cb".into()], ..UpdateApp::default() };
        assert_eq!(updated(&m2m, &redirect).err().map(|e| e.code), Some(codes::INVALID_REDIRECT_URI));
    }

    #[test]
    fn rules_by_type() {
        assert!(validate(&app(AppType::Web, &["https://a.example/oidc-callback"])).is_ok());
        assert_eq!(validate(&app(AppType::Web, &[])).err().map(|e| e.code), Some(codes::INVALID_REDIRECT_URI));
        assert!(validate(&app(AppType::M2m, &[])).is_ok());
        assert!(validate(&app(AppType::M2m, &["https://a.example/cb"])).is_err());
        assert_eq!(
            validate(&app(AppType::Spa, &["http://evil.example/cb"])).err().map(|e| e.code),
            Some(codes::INVALID_REDIRECT_URI)
        );
        let mut a = app(AppType::M2m, &[]);
        a.scopes = vec!["users:invite".into()];
        assert!(validate(&a).is_ok());
        a.scopes = vec!["root".into()];
        assert_eq!(validate(&a).err().map(|e| e.code), Some(codes::INVALID_SCOPE));
    }

    #[test]
    fn a_native_apps_device_flow_can_be_turned_off_without_a_redirect_uri() {
        let native = validate(&CreateApp { device_flow: true, ..app(AppType::Native, &[]) }).unwrap();
        let off = UpdateApp { device_flow: Some(false), ..UpdateApp::default() };
        let row = updated(&native, &off).unwrap();
        assert!(!row.device_flow && row.redirect_uris.is_empty());
        let web = validate(&app(AppType::Web, &["https://app.example.com/cb"])).unwrap();
        let none =
            UpdateApp { remove_redirect_uris: vec!["https://app.example.com/cb".into()], ..UpdateApp::default() };
        assert_eq!(
            updated(&web, &none).err().map(|e| e.code),
            Some(codes::INVALID_REDIRECT_URI),
            "web apps still need one"
        );
    }

    #[test]
    fn device_flow_is_for_native_apps_only() {
        let native = CreateApp { device_flow: true, ..app(AppType::Native, &[]) };
        assert!(validate(&native).unwrap().device_flow, "a device-flow native app needs no redirect URI");
        assert_eq!(validate(&app(AppType::Native, &[])).err().map(|e| e.code), Some(codes::INVALID_REDIRECT_URI));
        for t in [AppType::Web, AppType::Spa, AppType::M2m] {
            let redirects: &[&str] = if t == AppType::M2m { &[] } else { &["https://a.example/cb"] };
            let req = CreateApp { device_flow: true, ..app(t, redirects) };
            assert_eq!(validate(&req).err().map(|e| e.code), Some(codes::DEVICE_FLOW_NOT_NATIVE), "{t:?}");
        }
        let web = stored(AppType::Web, &["https://a.example/cb"]);
        let on = UpdateApp { device_flow: Some(true), ..UpdateApp::default() };
        assert_eq!(updated(&web, &on).err().map(|e| e.code), Some(codes::DEVICE_FLOW_NOT_NATIVE));
        let cli = stored(AppType::Native, &["http://127.0.0.1/cb"]);
        let row = updated(&cli, &on).unwrap();
        assert!(row.device_flow);
        let kept = updated(&row, &UpdateApp { name: Some("CLI".into()), ..UpdateApp::default() }).unwrap();
        assert!(kept.device_flow, "an update that does not name the flag keeps it");
        let off = UpdateApp { device_flow: Some(false), ..UpdateApp::default() };
        assert!(!updated(&row, &off).unwrap().device_flow);
    }
}
