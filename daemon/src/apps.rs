//! Client applications: creation rules (redirect URIs, origins, scopes by type), Client ID and
//! secret generation. Secrets are returned once and stored only as SHA-256 hashes.

use latchkey::admin::{App, AppCreated, AppType, CreateApp, SecretRotated};
use latchkey::codes;

use crate::State;
use crate::clock::date;
use crate::crypto::{random_bytes, random_token, sha256};
use crate::error::Error;
use crate::store;
use crate::store::apps::AppRow;
use crate::tenants::require;
use crate::urls;

/// Scopes every app may request; extra API scopes (e.g. `users:invite`) are granted per app.
pub const OIDC_SCOPES: &[&str] = &["openid", "profile", "email", "offline_access"];
/// API scopes this daemon knows about: `users:invite` (bulk invitations, m2m), `credentials`
/// (the credentials API with a user's token), `introspect` (a resource server that may
/// introspect tokens issued to other applications).
pub const API_SCOPES: &[&str] = &["users:invite", "credentials", "introspect"];

pub fn to_wire(row: &AppRow) -> App {
    App {
        client_id: row.client_id.clone(),
        name: row.name.clone(),
        app_type: row.app_type,
        confidential: row.secret_hash.is_some(),
        redirect_uris: row.redirect_uris.clone(),
        post_logout_redirect_uris: row.post_logout_redirect_uris.clone(),
        cors_origins: row.cors_origins.clone(),
        scopes: row.scopes.clone(),
        created: date(row.created_at),
    }
}

fn bad(code: &'static str, message: String) -> Error {
    Error::invalid(code, message)
}

/// Validates a creation request into the row to store (without id and secret).
pub fn validate(req: &CreateApp) -> Result<AppRow, Error> {
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
    })
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

pub async fn create(state: &State, slug: String, req: CreateApp) -> Result<AppCreated, Error> {
    let mut row = validate(&req)?;
    row.client_id = new_client_id()?;
    row.created_at = state.clock.now();
    let secret = if req.app_type.is_confidential() { Some(random_token()?) } else { None };
    row.secret_hash = secret.as_ref().map(|s| sha256(s.as_bytes()).to_vec());
    let stored = row.clone();
    state
        .db
        .write(move |tx| -> Result<(), Error> {
            let tenant = require(tx, &slug)?;
            store::apps::insert(tx, tenant.id, &stored)?;
            Ok(())
        })
        .await?;
    Ok(AppCreated { app: to_wire(&row), client_secret: secret })
}

pub async fn list(state: &State, slug: String) -> Result<Vec<App>, Error> {
    state
        .db
        .read(move |tx| -> Result<_, Error> {
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

pub async fn show(state: &State, slug: String, client_id: String) -> Result<App, Error> {
    state
        .db
        .read(move |tx| -> Result<_, Error> {
            let tenant = require(tx, &slug)?;
            let row = store::apps::get(tx, tenant.id, &client_id)?.ok_or_else(|| app_not_found(&client_id, &slug))?;
            Ok(to_wire(&row))
        })
        .await
}

pub async fn delete(state: &State, slug: String, client_id: String) -> Result<(), Error> {
    state
        .db
        .write(move |tx| -> Result<_, Error> {
            let tenant = require(tx, &slug)?;
            if !store::apps::delete(tx, tenant.id, &client_id)? {
                return Err(app_not_found(&client_id, &slug));
            }
            Ok(())
        })
        .await
}

pub async fn rotate_secret(state: &State, slug: String, client_id: String) -> Result<SecretRotated, Error> {
    let secret = random_token()?;
    let hash = sha256(secret.as_bytes());
    let id = client_id.clone();
    state
        .db
        .write(move |tx| -> Result<_, Error> {
            let tenant = require(tx, &slug)?;
            let row = store::apps::get(tx, tenant.id, &id)?.ok_or_else(|| app_not_found(&id, &slug))?;
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
    Ok(SecretRotated { client_id, client_secret: secret })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(t: AppType, redirects: &[&str]) -> CreateApp {
        CreateApp {
            name: "App".into(),
            app_type: t,
            redirect_uris: redirects.iter().map(|s| s.to_string()).collect(),
            post_logout_redirect_uris: vec![],
            cors_origins: vec![],
            scopes: vec![],
        }
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
}
