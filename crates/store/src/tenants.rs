//! `tenants` table.

use super::sql::{ConnExt, Row, params};

use super::{AttestationPolicy, Reader, Registration, StoreError, TenantId, Text, WriteTx, cluster};
use crate::Timestamp;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantRow {
    pub id: TenantId,
    pub slug: String,
    pub name: String,
    pub base_url: String,
    pub rp_id: String,
    pub registration: Registration,
    pub created_at: Timestamp,
    /// How its pages look (`latchkey tenant brand`).
    pub brand: Brand,
    /// Which authenticators may register (`tenant update --attestation-policy`).
    pub attestation: Attestation,
}

/// A tenant's attestation policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attestation {
    pub policy: AttestationPolicy,
    /// Lower-case AAGUIDs (`xxxxxxxx-xxxx-…`): under `verified`, the only ones accepted; empty for
    /// any the metadata lists.
    pub allowed_aaguids: Vec<String>,
}

/// A tenant's brand: each part `None` until set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Brand {
    /// The name its pages show, instead of the tenant's name.
    pub display_name: Option<String>,
    /// `#rrggbb`, the accent of buttons and links.
    pub accent_color: Option<String>,
    /// The pages' language when the browser asks for none shipped (a catalogue's tag).
    pub default_locale: Option<String>,
    /// Hex SHA-256 of its logo (in `tenant_logos`), if it has one.
    pub logo_sha: Option<String>,
}

pub struct NewTenant<'a> {
    pub slug: &'a str,
    pub name: &'a str,
    pub base_url: &'a str,
    pub rp_id: &'a str,
    pub registration: Registration,
    pub created_at: Timestamp,
}

const COLUMNS: &str = "id, slug, name, base_url, rp_id, registration, created_at, display_name, accent_color, \
                       default_locale, logo_sha, attestation_policy, allowed_aaguids";

fn from_row(r: &Row<'_>) -> Result<TenantRow, StoreError> {
    Ok(TenantRow {
        id: r.get(0)?,
        slug: r.get(1)?,
        name: r.get(2)?,
        base_url: r.get(3)?,
        rp_id: r.get(4)?,
        registration: r.get::<_, Text<Registration>>(5)?.0,
        created_at: r.get(6)?,
        brand: Brand {
            display_name: r.get(7)?,
            accent_color: r.get(8)?,
            default_locale: r.get(9)?,
            logo_sha: r.get(10)?,
        },
        attestation: Attestation {
            policy: r.get::<_, Text<AttestationPolicy>>(11)?.0,
            allowed_aaguids: r.get::<_, String>(12)?.split(',').filter(|a| !a.is_empty()).map(str::to_owned).collect(),
        },
    })
}

pub fn insert(tx: &WriteTx<'_>, t: &NewTenant<'_>) -> Result<TenantId, StoreError> {
    let id = TenantId(super::insert_returning_id(
        tx.conn(),
        "INSERT INTO tenants (slug, name, base_url, rp_id, registration, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
        params![t.slug, t.name, t.base_url, t.rp_id, Text(t.registration), t.created_at],
    )?);
    cluster::changed(tx.conn(), id)?;
    Ok(id)
}

pub fn by_slug(tx: &impl Reader, slug: &str) -> Result<Option<TenantRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM tenants WHERE slug = ?1");
    tx.conn().query_opt(&sql, params![slug], from_row)
}

pub fn by_id(tx: &impl Reader, id: TenantId) -> Result<Option<TenantRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM tenants WHERE id = ?1");
    tx.conn().query_opt(&sql, params![id], from_row)
}

pub fn by_base_url(tx: &impl Reader, base_url: &str) -> Result<Option<TenantRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM tenants WHERE base_url = ?1");
    tx.conn().query_opt(&sql, params![base_url], from_row)
}

pub fn list(tx: &impl Reader) -> Result<Vec<TenantRow>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM tenants ORDER BY slug");
    let rows = tx.conn().query_all(&sql, params![], from_row)?;
    Ok(rows)
}

pub fn count(tx: &impl Reader) -> Result<u64, StoreError> {
    let n: i64 = tx.conn().query_one("SELECT count(*) FROM tenants", params![], |r| r.get(0))?;
    Ok(n.max(0) as u64)
}

/// Deletes the tenant and, by cascade, everything it owns. Returns whether it existed.
pub fn delete(tx: &WriteTx<'_>, id: TenantId) -> Result<bool, StoreError> {
    // Journaled first: the change names the tenant by the slug its row still holds.
    cluster::changed(tx.conn(), id)?;
    Ok(tx.conn().execute("DELETE FROM tenants WHERE id = ?1", params![id])? == 1)
}

pub fn update(tx: &WriteTx<'_>, id: TenantId, name: &str, registration: Registration) -> Result<(), StoreError> {
    tx.conn().execute(
        "UPDATE tenants SET name = ?2, registration = ?3 WHERE id = ?1",
        params![id, name, Text(registration)],
    )?;
    cluster::changed(tx.conn(), id)
}

/// Replaces a tenant's attestation policy; every node applies it at once (the change journal).
pub fn set_attestation(tx: &WriteTx<'_>, id: TenantId, a: &Attestation) -> Result<(), StoreError> {
    tx.conn().execute(
        "UPDATE tenants SET attestation_policy = ?2, allowed_aaguids = ?3 WHERE id = ?1",
        params![id, Text(a.policy), a.allowed_aaguids.join(",")],
    )?;
    cluster::changed(tx.conn(), id)
}

/// Replaces a tenant's brand; every node serves it at once (the change journal). A changed
/// `logo_sha` goes with [`put_logo`] in the same transaction.
pub fn set_brand(tx: &WriteTx<'_>, id: TenantId, b: &Brand) -> Result<(), StoreError> {
    tx.conn().execute(
        "UPDATE tenants SET display_name = ?2, accent_color = ?3, default_locale = ?4, logo_sha = ?5 WHERE id = ?1",
        params![id, b.display_name, b.accent_color, b.default_locale, b.logo_sha],
    )?;
    cluster::changed(tx.conn(), id)
}

/// Stores (`Some((content_type, bytes))`) or removes a tenant's logo.
pub fn put_logo(tx: &WriteTx<'_>, id: TenantId, logo: Option<(&str, &[u8])>) -> Result<(), StoreError> {
    let c = tx.conn();
    c.execute("DELETE FROM tenant_logos WHERE tenant_id = ?1", params![id])?;
    if let Some((content_type, bytes)) = logo {
        c.execute(
            "INSERT INTO tenant_logos (tenant_id, content_type, bytes) VALUES (?1, ?2, ?3)",
            params![id, content_type, bytes],
        )?;
    }
    Ok(())
}

/// A tenant's logo.
pub fn logo(tx: &impl Reader, id: TenantId) -> Result<Option<super::apps::StoredLogo>, StoreError> {
    tx.conn().query_opt(
        "SELECT l.content_type, l.bytes, t.logo_sha FROM tenant_logos l JOIN tenants t ON t.id = l.tenant_id
         WHERE l.tenant_id = ?1",
        params![id],
        |r| {
            Ok(super::apps::StoredLogo {
                content_type: r.get(0)?,
                bytes: r.get(1)?,
                sha: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
            })
        },
    )
}

/// Moves a tenant to a new base URL (its issuer) and RP ID.
pub fn set_url(tx: &WriteTx<'_>, id: TenantId, base_url: &str, rp_id: &str) -> Result<(), StoreError> {
    tx.conn().execute("UPDATE tenants SET base_url = ?2, rp_id = ?3 WHERE id = ?1", params![id, base_url, rp_id])?;
    cluster::changed(tx.conn(), id)
}

/// Keeps `base_url`, a URL the tenant had, answering until `until`; again for a URL kept before.
pub fn keep_old_url(tx: &WriteTx<'_>, id: TenantId, base_url: &str, until: Timestamp) -> Result<(), StoreError> {
    tx.conn().execute(
        "INSERT INTO tenant_old_urls (base_url, tenant_id, until) VALUES (?1, ?2, ?3)
         ON CONFLICT (base_url) DO UPDATE SET tenant_id = excluded.tenant_id, until = excluded.until",
        params![base_url, id, until],
    )?;
    cluster::changed(tx.conn(), id)
}

/// Stops an old URL answering (a tenant moved back to it).
pub fn forget_old_url(tx: &WriteTx<'_>, base_url: &str) -> Result<(), StoreError> {
    tx.conn().execute("DELETE FROM tenant_old_urls WHERE base_url = ?1", params![base_url])?;
    Ok(())
}

/// The tenant an old URL still answers for, if any, whatever its time.
pub fn old_url_owner(tx: &impl Reader, base_url: &str) -> Result<Option<TenantId>, StoreError> {
    tx.conn().query_opt("SELECT tenant_id FROM tenant_old_urls WHERE base_url = ?1", params![base_url], |r| r.get(0))
}

/// Every old URL with its tenant and end, oldest end first.
pub fn old_urls(tx: &impl Reader) -> Result<Vec<(TenantId, String, Timestamp)>, StoreError> {
    tx.conn().query_all(
        "SELECT tenant_id, base_url, until FROM tenant_old_urls ORDER BY until, base_url",
        params![],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

/// One tenant's old URLs with their ends.
pub fn old_urls_of(tx: &impl Reader, id: TenantId) -> Result<Vec<(String, Timestamp)>, StoreError> {
    tx.conn().query_all(
        "SELECT base_url, until FROM tenant_old_urls WHERE tenant_id = ?1 ORDER BY until, base_url",
        params![id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Removes the old URLs whose time is up; returns their tenants (to reload).
pub fn sweep_old_urls(tx: &WriteTx<'_>, now: Timestamp) -> Result<Vec<TenantId>, StoreError> {
    let gone: Vec<TenantId> =
        tx.conn().query_all("SELECT DISTINCT tenant_id FROM tenant_old_urls WHERE until <= ?1", params![now], |r| {
            r.get(0)
        })?;
    tx.conn().execute("DELETE FROM tenant_old_urls WHERE until <= ?1", params![now])?;
    for id in &gone {
        cluster::changed(tx.conn(), *id)?;
    }
    Ok(gone)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{app_row, assert_corrupt, force, temp_db, tenant, user};
    use crate::{apps, users};

    #[test]
    fn insert_and_look_up() {
        let t = temp_db();
        let id = t.write(|tx| {
            insert(
                tx,
                &NewTenant {
                    slug: "acme",
                    name: "Acme",
                    base_url: "https://acme.example",
                    rp_id: "acme.example",
                    registration: Registration::Open,
                    created_at: 5,
                },
            )
            .unwrap()
        });
        let want = TenantRow {
            id,
            slug: "acme".into(),
            name: "Acme".into(),
            base_url: "https://acme.example".into(),
            rp_id: "acme.example".into(),
            registration: Registration::Open,
            created_at: 5,
            brand: Default::default(),
            attestation: Default::default(),
        };
        t.read(|tx| {
            assert_eq!(by_slug(tx, "acme").unwrap(), Some(want.clone()));
            assert_eq!(by_base_url(tx, "https://acme.example").unwrap(), Some(want.clone()));
            assert_eq!(by_slug(tx, "other").unwrap(), None);
            assert_eq!(by_base_url(tx, "https://acme.example/").unwrap(), None);
            let stored: String = tx
                .conn()
                .query_one("SELECT registration FROM tenants WHERE id = ?1", params![id], |r| r.get(0))
                .unwrap();
            assert_eq!(stored, "open");
        });
    }

    #[test]
    fn slug_and_base_url_are_unique() {
        let t = temp_db();
        t.write(|tx| {
            tenant(tx, "a");
            let dup_slug = NewTenant {
                slug: "a",
                name: "x",
                base_url: "http://elsewhere/a",
                rp_id: "elsewhere",
                registration: Registration::Invite,
                created_at: 1,
            };
            assert!(insert(tx, &dup_slug).unwrap_err().is_unique_violation());
            let dup_url = NewTenant { slug: "b", base_url: "http://localhost/a", ..dup_slug };
            assert!(insert(tx, &dup_url).unwrap_err().is_unique_violation());
            assert_eq!(count(tx).unwrap(), 1);
        });
    }

    #[test]
    fn list_count_and_update() {
        let t = temp_db();
        let (b, a) = t.write(|tx| (tenant(tx, "b"), tenant(tx, "a")));
        t.read(|tx| {
            assert_eq!(list(tx).unwrap().iter().map(|r| r.slug.as_str()).collect::<Vec<_>>(), ["a", "b"]);
            assert_eq!(count(tx).unwrap(), 2);
        });
        t.write(|tx| update(tx, a, "Renamed", Registration::Open).unwrap());
        t.read(|tx| {
            let row = by_slug(tx, "a").unwrap().unwrap();
            assert_eq!((row.name.as_str(), row.registration), ("Renamed", Registration::Open));
            // Only the named tenant changed.
            let other = by_slug(tx, "b").unwrap().unwrap();
            assert_eq!((other.id, other.name.as_str(), other.registration), (b, "b", Registration::Invite));
        });
        t.write(|tx| update(tx, a, "Renamed", Registration::Invite).unwrap());
        assert_eq!(t.read(|tx| by_slug(tx, "a").unwrap().unwrap().registration), Registration::Invite);
    }

    #[test]
    fn delete_takes_what_the_tenant_owns_and_nothing_else() {
        let t = temp_db();
        let (a, b) = t.write(|tx| {
            let a = tenant(tx, "a");
            let b = tenant(tx, "b");
            for id in [a, b] {
                user(tx, id, "ada@example.com");
                apps::insert(tx, id, &app_row("c")).unwrap();
            }
            (a, b)
        });
        t.write(|tx| {
            assert!(delete(tx, a).unwrap());
            assert!(!delete(tx, a).unwrap());
        });
        t.read(|tx| {
            assert!(by_slug(tx, "a").unwrap().is_none());
            assert!(users::by_email(tx, a, "ada@example.com").unwrap().is_none());
            assert!(apps::get(tx, a, "c").unwrap().is_none());
            let n: i64 = tx.conn().query_one("SELECT count(*) FROM users", params![], |r| r.get(0)).unwrap();
            assert_eq!(n, 1);
            assert!(by_slug(tx, "b").unwrap().is_some());
            assert!(users::by_email(tx, b, "ada@example.com").unwrap().is_some());
            assert!(apps::get(tx, b, "c").unwrap().is_some());
            assert_eq!(count(tx).unwrap(), 1);
        });
    }

    #[test]
    fn unknown_registration_is_corrupt() {
        let t = temp_db();
        t.write(|tx| {
            tenant(tx, "a");
            force(tx, "UPDATE tenants SET registration = 'closed'");
        });
        t.read(|tx| {
            assert_corrupt(by_slug(tx, "a"), "tenants.registration");
            assert_corrupt(list(tx), "tenants.registration");
        });
    }

    #[test]
    fn a_moved_tenant_keeps_its_old_url_until_its_time() {
        let t = temp_db();
        let (a, b) = t.write(|tx| (tenant(tx, "a"), tenant(tx, "b")));
        t.write(|tx| {
            set_url(tx, a, "http://localhost:9000/a", "localhost").unwrap();
            keep_old_url(tx, a, "http://localhost/a", 100).unwrap();
            keep_old_url(tx, b, "http://localhost/old-b", 50).unwrap();
        });
        t.read(|tx| {
            let row = by_slug(tx, "a").unwrap().unwrap();
            assert_eq!((row.base_url.as_str(), row.rp_id.as_str()), ("http://localhost:9000/a", "localhost"));
            assert_eq!(old_url_owner(tx, "http://localhost/a").unwrap(), Some(a));
            assert_eq!(old_urls_of(tx, a).unwrap(), [("http://localhost/a".to_owned(), 100)]);
            assert_eq!(old_urls(tx).unwrap().len(), 2);
        });
        // Kept again: one row, the new end.
        t.write(|tx| keep_old_url(tx, a, "http://localhost/a", 200).unwrap());
        assert_eq!(t.read(|tx| old_urls_of(tx, a).unwrap()), [("http://localhost/a".to_owned(), 200)]);
        assert_eq!(t.write(|tx| sweep_old_urls(tx, 60).unwrap()), [b]);
        t.read(|tx| {
            assert_eq!(old_url_owner(tx, "http://localhost/old-b").unwrap(), None);
            assert_eq!(old_url_owner(tx, "http://localhost/a").unwrap(), Some(a));
        });
        t.write(|tx| forget_old_url(tx, "http://localhost/a").unwrap());
        assert!(t.read(|tx| old_urls(tx).unwrap()).is_empty());
    }
}
