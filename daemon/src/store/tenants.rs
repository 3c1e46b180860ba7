//! `tenants` table.

use rusqlite::{OptionalExtension, Row, params};

use super::{Reader, Registration, StoreError, TenantId, Text, WriteTx};
use crate::clock::Timestamp;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantRow {
    pub id: TenantId,
    pub slug: String,
    pub name: String,
    pub base_url: String,
    pub rp_id: String,
    pub registration: Registration,
    pub created_at: Timestamp,
}

pub struct NewTenant<'a> {
    pub slug: &'a str,
    pub name: &'a str,
    pub base_url: &'a str,
    pub rp_id: &'a str,
    pub registration: Registration,
    pub created_at: Timestamp,
}

const COLUMNS: &str = "id, slug, name, base_url, rp_id, registration, created_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<TenantRow> {
    Ok(TenantRow {
        id: r.get(0)?,
        slug: r.get(1)?,
        name: r.get(2)?,
        base_url: r.get(3)?,
        rp_id: r.get(4)?,
        registration: r.get::<_, Text<Registration>>(5)?.0,
        created_at: r.get(6)?,
    })
}

pub fn insert(tx: &WriteTx<'_>, t: &NewTenant<'_>) -> Result<TenantId, StoreError> {
    tx.conn_mut().execute(
        "INSERT INTO tenants (slug, name, base_url, rp_id, registration, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![t.slug, t.name, t.base_url, t.rp_id, Text(t.registration), t.created_at],
    )?;
    Ok(TenantId(tx.conn_mut().last_insert_rowid()))
}

pub fn by_slug(tx: &impl Reader, slug: &str) -> Result<Option<TenantRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM tenants WHERE slug = ?1");
    Ok(tx.conn().query_row(&sql, [slug], from_row).optional()?)
}

pub fn by_base_url(tx: &impl Reader, base_url: &str) -> Result<Option<TenantRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM tenants WHERE base_url = ?1");
    Ok(tx.conn().query_row(&sql, [base_url], from_row).optional()?)
}

pub fn list(tx: &impl Reader) -> Result<Vec<TenantRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM tenants ORDER BY slug");
    let mut stmt = tx.conn().prepare(&sql)?;
    let rows = stmt.query_map([], from_row)?.collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

pub fn count(tx: &impl Reader) -> Result<u64, StoreError> {
    let n: i64 = tx.conn().query_row("SELECT count(*) FROM tenants", [], |r| r.get(0))?;
    Ok(n.max(0) as u64)
}

/// Deletes the tenant and, by cascade, everything it owns. Returns whether it existed.
pub fn delete(tx: &WriteTx<'_>, id: TenantId) -> Result<bool, StoreError> {
    Ok(tx.conn_mut().execute("DELETE FROM tenants WHERE id = ?1", [id])? == 1)
}

pub fn update(tx: &WriteTx<'_>, id: TenantId, name: &str, registration: Registration) -> Result<(), StoreError> {
    tx.conn_mut().execute(
        "UPDATE tenants SET name = ?2, registration = ?3 WHERE id = ?1",
        params![id, name, Text(registration)],
    )?;
    Ok(())
}
