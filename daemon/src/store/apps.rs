//! `applications` table: OIDC clients of a tenant.

use rusqlite::{OptionalExtension, Row, params};

use super::{AppType, Reader, StoreError, TenantId, Text, WriteTx, json_list, to_json_list};
use crate::clock::Timestamp;

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
}

const COLUMNS: &str = "client_id, name, app_type, secret_hash, redirect_uris, post_logout_redirect_uris, cors_origins, scopes, created_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<(AppRow, [String; 4])> {
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

pub fn insert(tx: &WriteTx<'_>, tenant: TenantId, app: &AppRow) -> Result<(), StoreError> {
    tx.conn_mut().execute(
        &format!("INSERT INTO applications (tenant_id, {COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"),
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
        ],
    )?;
    Ok(())
}

pub fn get(tx: &impl Reader, tenant: TenantId, client_id: &str) -> Result<Option<AppRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM applications WHERE tenant_id = ?1 AND client_id = ?2");
    tx.conn().query_row(&sql, params![tenant, client_id], from_row).optional()?.map(decode).transpose()
}

pub fn list(tx: &impl Reader, tenant: TenantId) -> Result<Vec<AppRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM applications WHERE tenant_id = ?1 ORDER BY created_at, name");
    let mut stmt = tx.conn().prepare(&sql)?;
    let rows = stmt.query_map([tenant], from_row)?.collect::<Result<Vec<_>, _>>()?;
    rows.into_iter().map(decode).collect()
}

pub fn delete(tx: &WriteTx<'_>, tenant: TenantId, client_id: &str) -> Result<bool, StoreError> {
    let n = tx
        .conn_mut()
        .execute("DELETE FROM applications WHERE tenant_id = ?1 AND client_id = ?2", params![tenant, client_id])?;
    Ok(n == 1)
}

pub fn set_secret_hash(tx: &WriteTx<'_>, tenant: TenantId, client_id: &str, hash: &[u8]) -> Result<bool, StoreError> {
    let n = tx.conn_mut().execute(
        "UPDATE applications SET secret_hash = ?3 WHERE tenant_id = ?1 AND client_id = ?2",
        params![tenant, client_id, hash],
    )?;
    Ok(n == 1)
}

/// Replaces the lists of an application (redirects, origins, scopes).
pub fn update_lists(tx: &WriteTx<'_>, tenant: TenantId, app: &AppRow) -> Result<(), StoreError> {
    tx.conn_mut().execute(
        "UPDATE applications SET redirect_uris = ?3, post_logout_redirect_uris = ?4, cors_origins = ?5, scopes = ?6
         WHERE tenant_id = ?1 AND client_id = ?2",
        params![
            tenant,
            app.client_id,
            to_json_list(&app.redirect_uris),
            to_json_list(&app.post_logout_redirect_uris),
            to_json_list(&app.cors_origins),
            to_json_list(&app.scopes)
        ],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Registration;
    use crate::store::tenants::{self, NewTenant};
    use crate::store::testing::temp_db;

    fn tenant(tx: &WriteTx<'_>, slug: &str) -> TenantId {
        let url = format!("http://localhost/{slug}");
        tenants::insert(
            tx,
            &NewTenant {
                slug,
                name: slug,
                base_url: &url,
                rp_id: "localhost",
                registration: Registration::Invite,
                created_at: 1,
            },
        )
        .unwrap()
    }

    #[test]
    fn apps_are_isolated_per_tenant() {
        let t = temp_db();
        t.db.write_blocking(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            let app = AppRow {
                client_id: "same".into(),
                name: "x".into(),
                app_type: AppType::Web,
                secret_hash: Some(vec![1; 32]),
                redirect_uris: vec!["https://x/cb".into()],
                post_logout_redirect_uris: vec![],
                cors_origins: vec![],
                scopes: vec![],
                created_at: 1,
            };
            insert(tx, a, &app)?;
            assert!(get(tx, b, "same")?.is_none());
            assert_eq!(get(tx, a, "same")?.unwrap().redirect_uris, vec!["https://x/cb".to_owned()]);
            assert!(!delete(tx, b, "same")?);
            assert!(insert(tx, a, &app).unwrap_err().is_unique_violation());
            Ok::<_, StoreError>(())
        })
        .unwrap();
    }
}
