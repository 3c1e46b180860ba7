//! `applications` table: OIDC clients of a tenant.

use super::sql::{ConnExt, Row, params};

use super::{AppType, Reader, SigningAlg, StoreError, TenantId, Text, TokenAuth, WriteTx, json_list, to_json_list};
use crate::Timestamp;

#[derive(Debug, Clone)]
pub struct AppRow {
    pub client_id: String,
    pub name: String,
    pub app_type: AppType,
    pub secret_hash: Option<Vec<u8>>,
    pub redirect_uris: Vec<String>,
    pub post_logout_redirect_uris: Vec<String>,
    pub cors_origins: Vec<String>,
    pub scopes: Vec<String>,
    pub created_at: Timestamp,
    /// A `native` app that may use the device authorization grant (RFC 8628).
    pub device_flow: bool,
    /// The `acr` every sign-in to the app must reach (`phr` or `phrh`), if any.
    pub require_acr: Option<String>,
    /// Whether the user is asked to allow the app what it asks for (`consent` `explicit`): a
    /// third-party app. First-party apps (`implicit`, the default) ask nothing.
    pub consent_explicit: bool,
    /// Where a logout token is posted when a session in which the app received an ID token ends
    /// (Back-Channel Logout 1.0), and whether the token must carry `sid`.
    pub backchannel_logout_uri: Option<String>,
    pub backchannel_logout_session_required: bool,
    /// Hex SHA-256 of the app's logo (in `app_logos`), if it has one.
    pub logo_sha: Option<String>,
    /// The algorithm of its ID, access and logout tokens (RS256 unless `--signing-alg`).
    pub signing_alg: SigningAlg,
    /// Its authorization requests must be pushed first (RFC 9126, `--require-par`).
    pub require_par: bool,
    /// Its token requests must carry a DPoP proof (RFC 9449, `--require-dpop`).
    pub require_dpop: bool,
    /// How it authenticates; a `private_key_jwt` app has no secret but `jwks` (a JWK Set's JSON)
    /// or `jwks_uri`.
    pub token_auth: TokenAuth,
    pub jwks: Option<String>,
    pub jwks_uri: Option<String>,
}

impl AppRow {
    /// Whether the app authenticates (a secret or a signed JWT): a confidential client.
    pub fn confidential(&self) -> bool {
        self.secret_hash.is_some() || self.token_auth == TokenAuth::PrivateKeyJwt
    }
}

const COLUMNS: &str = "client_id, name, app_type, secret_hash, redirect_uris, post_logout_redirect_uris, cors_origins, scopes, created_at, device_flow, require_acr, consent, backchannel_logout_uri, backchannel_logout_session_required, logo_sha, signing_alg, require_par, token_auth, jwks, jwks_uri, require_dpop";

fn from_row(r: &Row<'_>) -> Result<(AppRow, [String; 4]), StoreError> {
    Ok((
        AppRow {
            client_id: r.get(0)?,
            name: r.get(1)?,
            app_type: r.get::<_, Text<AppType>>(2)?.0,
            secret_hash: r.get(3)?,
            redirect_uris: vec![],
            post_logout_redirect_uris: vec![],
            cors_origins: vec![],
            scopes: vec![],
            created_at: r.get(8)?,
            device_flow: r.get(9)?,
            require_acr: r.get(10)?,
            consent_explicit: r.get::<_, String>(11)? == "explicit",
            backchannel_logout_uri: r.get(12)?,
            backchannel_logout_session_required: r.get(13)?,
            logo_sha: r.get(14)?,
            signing_alg: r.get::<_, Text<SigningAlg>>(15)?.0,
            require_par: r.get(16)?,
            token_auth: r.get::<_, Text<TokenAuth>>(17)?.0,
            jwks: r.get(18)?,
            jwks_uri: r.get(19)?,
            require_dpop: r.get(20)?,
        },
        [r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?],
    ))
}

fn decode((mut app, lists): (AppRow, [String; 4])) -> Result<AppRow, StoreError> {
    let [redirects, logouts, origins, scopes] = lists;
    app.redirect_uris = json_list(&redirects)?;
    app.post_logout_redirect_uris = json_list(&logouts)?;
    app.cors_origins = json_list(&origins)?;
    app.scopes = json_list(&scopes)?;
    Ok(app)
}

fn consent_text(app: &AppRow) -> &'static str {
    if app.consent_explicit { "explicit" } else { "implicit" }
}

pub fn insert(tx: &WriteTx<'_>, tenant: TenantId, app: &AppRow) -> Result<(), StoreError> {
    tx.conn().execute(
        &format!(
            "INSERT INTO applications (tenant_id, {COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)"
        ),
        params![
            tenant,
            app.client_id,
            app.name,
            Text(app.app_type),
            app.secret_hash,
            to_json_list(&app.redirect_uris),
            to_json_list(&app.post_logout_redirect_uris),
            to_json_list(&app.cors_origins),
            to_json_list(&app.scopes),
            app.created_at,
            app.device_flow,
            app.require_acr,
            consent_text(app),
            app.backchannel_logout_uri,
            app.backchannel_logout_session_required,
            app.logo_sha,
            Text(app.signing_alg),
            app.require_par,
            Text(app.token_auth),
            app.jwks,
            app.jwks_uri,
            app.require_dpop,
        ],
    )?;
    super::cluster::changed(tx.conn(), tenant)
}

pub fn get(tx: &impl Reader, tenant: TenantId, client_id: &str) -> Result<Option<AppRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM applications WHERE tenant_id = ?1 AND client_id = ?2");
    tx.conn().query_opt(&sql, params![tenant, client_id], from_row)?.map(decode).transpose()
}

pub fn list(tx: &impl Reader, tenant: TenantId) -> Result<Vec<AppRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM applications WHERE tenant_id = ?1 ORDER BY created_at, name");
    let rows = tx.conn().query_all(&sql, params![tenant], from_row)?;
    rows.into_iter().map(decode).collect()
}

pub fn delete(tx: &WriteTx<'_>, tenant: TenantId, client_id: &str) -> Result<bool, StoreError> {
    let n = tx
        .conn()
        .execute("DELETE FROM applications WHERE tenant_id = ?1 AND client_id = ?2", params![tenant, client_id])?;
    if n == 1 {
        // What the app was allowed, was told of, or had still to be told goes with it.
        super::consents::delete_for_app(tx, tenant, client_id)?;
        for table in ["session_apps", "outbox", "app_logos"] {
            tx.conn().execute(
                &format!("DELETE FROM {table} WHERE tenant_id = ?1 AND client_id = ?2"),
                params![tenant, client_id],
            )?;
        }
        super::cluster::changed(tx.conn(), tenant)?;
    }
    Ok(n == 1)
}

/// Stores (`Some((content_type, bytes))`) or removes the logo of an application; its row's
/// `logo_sha` is written by [`insert`] or [`update`] in the same transaction.
pub fn put_logo(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    client_id: &str,
    logo: Option<(&str, &[u8])>,
) -> Result<(), StoreError> {
    let c = tx.conn();
    match logo {
        Some((content_type, bytes)) => c.execute(
            "INSERT INTO app_logos (tenant_id, client_id, content_type, bytes) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (tenant_id, client_id) DO UPDATE SET content_type = excluded.content_type, bytes = excluded.bytes",
            params![tenant, client_id, content_type, bytes],
        )?,
        None => c.execute("DELETE FROM app_logos WHERE tenant_id = ?1 AND client_id = ?2", params![tenant, client_id])?,
    };
    Ok(())
}

/// A stored logo (an application's or a tenant's) with the hash its owner's row records, which
/// names its version in the pages' URLs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredLogo {
    pub content_type: String,
    pub bytes: Vec<u8>,
    pub sha: String,
}

/// An application's logo.
pub fn logo(tx: &impl Reader, tenant: TenantId, client_id: &str) -> Result<Option<StoredLogo>, StoreError> {
    tx.conn().query_opt(
        "SELECT l.content_type, l.bytes, a.logo_sha FROM app_logos l
         JOIN applications a ON a.tenant_id = l.tenant_id AND a.client_id = l.client_id
         WHERE l.tenant_id = ?1 AND l.client_id = ?2",
        params![tenant, client_id],
        |r| {
            Ok(StoredLogo {
                content_type: r.get(0)?,
                bytes: r.get(1)?,
                sha: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
            })
        },
    )
}

pub fn set_secret_hash(tx: &WriteTx<'_>, tenant: TenantId, client_id: &str, hash: &[u8]) -> Result<bool, StoreError> {
    let n = tx.conn().execute(
        "UPDATE applications SET secret_hash = ?3 WHERE tenant_id = ?1 AND client_id = ?2",
        params![tenant, client_id, hash],
    )?;
    if n == 1 {
        super::cluster::changed(tx.conn(), tenant)?;
    }
    Ok(n == 1)
}

/// The client id of the tenant's application named `name`, if there is one.
pub fn id_by_name(tx: &impl Reader, tenant: TenantId, name: &str) -> Result<Option<String>, StoreError> {
    tx.conn().query_opt(
        "SELECT client_id FROM applications WHERE tenant_id = ?1 AND name = ?2",
        params![tenant, name],
        |r| r.get(0),
    )
}

/// Replaces the name, the lists (redirects, origins, scopes), the device flow flag, the
/// required `acr`, the consent mode and the back-channel logout of an application; its type,
/// secret and creation time stay.
pub fn update(tx: &WriteTx<'_>, tenant: TenantId, app: &AppRow) -> Result<(), StoreError> {
    tx.conn().execute(
        "UPDATE applications SET name = ?3, redirect_uris = ?4, post_logout_redirect_uris = ?5, cors_origins = ?6,
         scopes = ?7, device_flow = ?8, require_acr = ?9, consent = ?10, backchannel_logout_uri = ?11,
         backchannel_logout_session_required = ?12, logo_sha = ?13, signing_alg = ?14, require_par = ?15,
         jwks = ?16, jwks_uri = ?17, require_dpop = ?18
         WHERE tenant_id = ?1 AND client_id = ?2",
        params![
            tenant,
            app.client_id,
            app.name,
            to_json_list(&app.redirect_uris),
            to_json_list(&app.post_logout_redirect_uris),
            to_json_list(&app.cors_origins),
            to_json_list(&app.scopes),
            app.device_flow,
            app.require_acr,
            consent_text(app),
            app.backchannel_logout_uri,
            app.backchannel_logout_session_required,
            app.logo_sha,
            Text(app.signing_alg),
            app.require_par,
            app.jwks,
            app.jwks_uri,
            app.require_dpop
        ],
    )?;
    super::cluster::changed(tx.conn(), tenant)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{app_row, assert_corrupt, force, temp_db, tenant};

    #[test]
    fn apps_are_isolated_per_tenant() {
        let t = temp_db();
        t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            let app = app_row("same");
            insert(tx, a, &app).unwrap();
            assert!(get(tx, b, "same").unwrap().is_none());
            assert!(list(tx, b).unwrap().is_empty());
            assert_eq!(get(tx, a, "same").unwrap().unwrap().redirect_uris, vec!["https://app.example/cb".to_owned()]);
            assert!(!delete(tx, b, "same").unwrap());
            assert!(!set_secret_hash(tx, b, "same", &[9; 32]).unwrap());
            let mut changed = app.clone();
            changed.scopes = vec!["openid".into()];
            update(tx, b, &changed).unwrap();
            assert!(insert(tx, a, &app).unwrap_err().is_unique_violation());
            // The same client id is free in another tenant, and the two rows stay apart.
            insert(tx, b, &changed).unwrap();
            let kept = get(tx, a, "same").unwrap().unwrap();
            assert_eq!(kept.secret_hash, Some(vec![1; 32]));
            assert!(kept.scopes.is_empty());
            assert_eq!(get(tx, b, "same").unwrap().unwrap().scopes, vec!["openid".to_owned()]);
        });
    }

    #[test]
    fn every_field_round_trips() {
        let t = temp_db();
        let a = t.write(|tx| tenant(tx, "a"));
        let app = AppRow {
            client_id: "spa1".into(),
            name: "Portal".into(),
            app_type: AppType::Spa,
            secret_hash: None,
            redirect_uris: vec!["https://p.example/cb".into(), "https://p.example/cb2".into()],
            post_logout_redirect_uris: vec!["https://p.example/bye".into()],
            cors_origins: vec!["https://p.example".into()],
            scopes: vec!["openid".into(), "email".into()],
            created_at: 42,
            device_flow: false,
            require_acr: None,
            consent_explicit: false,
            backchannel_logout_uri: None,
            backchannel_logout_session_required: false,
            logo_sha: None,
            signing_alg: SigningAlg::RS256,
            require_par: false,
            require_dpop: false,
            token_auth: TokenAuth::Secret,
            jwks: None,
            jwks_uri: None,
        };
        t.write(|tx| insert(tx, a, &app).unwrap());
        let got = t.read(|tx| get(tx, a, "spa1").unwrap().unwrap());
        assert_eq!(format!("{got:?}"), format!("{app:?}"));
        for (client_id, app_type) in [("w", AppType::Web), ("n", AppType::Native), ("m", AppType::M2m)] {
            let device_flow = app_type == AppType::Native;
            t.write(|tx| insert(tx, a, &AppRow { app_type, device_flow, ..app_row(client_id) }).unwrap());
            let got = t.read(|tx| get(tx, a, client_id).unwrap().unwrap());
            assert_eq!((got.app_type, got.device_flow), (app_type, device_flow));
        }
        let stored: String = t.read(|tx| {
            tx.conn()
                .query_one("SELECT app_type FROM applications WHERE client_id = 'm'", params![], |r| r.get(0))
                .unwrap()
        });
        assert_eq!(stored, "m2m");
    }

    #[test]
    fn list_is_by_creation_then_name() {
        let t = temp_db();
        let names = t.write(|tx| {
            let a = tenant(tx, "a");
            insert(tx, a, &AppRow { name: "b".into(), created_at: 2, ..app_row("1") }).unwrap();
            insert(tx, a, &AppRow { name: "z".into(), created_at: 1, ..app_row("2") }).unwrap();
            insert(tx, a, &AppRow { name: "a".into(), created_at: 2, ..app_row("3") }).unwrap();
            list(tx, a).unwrap().into_iter().map(|r| r.name).collect::<Vec<_>>()
        });
        assert_eq!(names, ["z", "a", "b"]);
    }

    #[test]
    fn secret_lists_and_delete() {
        let t = temp_db();
        t.write(|tx| {
            let a = tenant(tx, "a");
            insert(tx, a, &app_row("c")).unwrap();
            assert!(set_secret_hash(tx, a, "c", &[7; 32]).unwrap());
            assert!(!set_secret_hash(tx, a, "missing", &[7; 32]).unwrap());
            let mut app = app_row("c");
            app.redirect_uris = vec!["https://new.example/cb".into()];
            app.post_logout_redirect_uris = vec!["https://new.example/bye".into()];
            app.cors_origins = vec!["https://new.example".into()];
            app.scopes = vec!["users:invite".into()];
            app.name = "renamed".into();
            app.secret_hash = None;
            app.device_flow = true;
            update(tx, a, &app).unwrap();
            let got = get(tx, a, "c").unwrap().unwrap();
            assert_eq!(got.secret_hash, Some(vec![7; 32]));
            assert_eq!(got.redirect_uris, app.redirect_uris);
            assert_eq!(got.post_logout_redirect_uris, app.post_logout_redirect_uris);
            assert_eq!(got.cors_origins, app.cors_origins);
            assert_eq!(got.scopes, app.scopes);
            assert_eq!(got.name, "renamed");
            assert!(got.device_flow);
            assert_eq!(id_by_name(tx, a, "renamed").unwrap().as_deref(), Some("c"));
            assert_eq!(id_by_name(tx, a, "app c").unwrap(), None);
            assert!(delete(tx, a, "c").unwrap());
            assert!(!delete(tx, a, "c").unwrap());
            assert!(get(tx, a, "c").unwrap().is_none());
        });
    }

    #[test]
    fn unknown_type_or_broken_list_is_corrupt() {
        let t = temp_db();
        let a = t.write(|tx| {
            let a = tenant(tx, "a");
            insert(tx, a, &app_row("c")).unwrap();
            insert(tx, a, &app_row("d")).unwrap();
            force(tx, "UPDATE applications SET app_type = 'desktop' WHERE client_id = 'c'");
            force(tx, "UPDATE applications SET scopes = 'not json' WHERE client_id = 'd'");
            a
        });
        t.read(|tx| {
            assert_corrupt(get(tx, a, "c"), "applications.app_type");
            assert_corrupt(get(tx, a, "d"), "list column");
            assert_corrupt(list(tx, a), "");
        });
    }
}
