//! Applications held in memory for the client-credentials grant on SQLite. That grant writes
//! nothing: the lookup of the client was its only database work, a read transaction with its
//! shared-memory locks (about 4% of a grant's time beside the RSA signature, measured side by
//! side under wrk).
//!
//! Correctness rests on an epoch counter, not on expiry. The writer connection's update hook
//! makes the epoch odd as soon as a write touches `applications` or `tenants` (a deleted tenant
//! takes its applications with it), inside that write's transaction; once the batch has
//! committed or rolled back, the writer makes it even again, one step further. An entry is used
//! only while the epoch is the even value it was read under, and a read is remembered only if the
//! epoch was even and the same before and after it: such a read saw no change begin or end, so
//! it holds what the database holds until the epoch moves. Any change to any application or
//! tenant therefore empties the cache at once, before its commit.
//!
//! One daemon owns a SQLite file (the lock file), so every change goes through this writer. On
//! PostgreSQL other nodes change applications too: there is no cache, every grant reads.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use super::TenantId;
use super::apps::AppRow;

/// Beyond this many applications the cache starts again empty (a bound on memory for daemons
/// with very many machine clients; they are read again on their next grant).
const MAX_ENTRIES: usize = 4096;

/// By Client ID: the tenant, the epoch the row was read under, the row.
type Entries = HashMap<String, (TenantId, u64, Arc<AppRow>)>;

#[derive(Debug, Default)]
pub(super) struct AppCache {
    epoch: Arc<AtomicU64>,
    entries: RwLock<Entries>,
}

/// The writer's side of the epoch.
#[derive(Debug, Clone)]
pub(super) struct Epoch(Arc<AtomicU64>);

impl Epoch {
    /// A write is touching applications or tenants (called by the update hook, on the writer
    /// thread, before its commit).
    pub(super) fn changing(&self) {
        let e = self.0.load(Ordering::SeqCst);
        if e.is_multiple_of(2) {
            self.0.store(e + 1, Ordering::SeqCst);
        }
    }

    /// The batch (or transaction) has committed or rolled back.
    pub(super) fn settled(&self) {
        let e = self.0.load(Ordering::SeqCst);
        if !e.is_multiple_of(2) {
            self.0.store(e + 1, Ordering::SeqCst);
        }
    }
}

impl AppCache {
    pub(super) fn epoch_handle(&self) -> Epoch {
        Epoch(self.epoch.clone())
    }

    /// The epoch to pass to [`AppCache::remember`] after reading from the database.
    pub(super) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    pub(super) fn get(&self, tenant: TenantId, client_id: &str) -> Option<Arc<AppRow>> {
        let now = self.epoch();
        let entries = self.entries.read().unwrap_or_else(|p| p.into_inner());
        let (owner, seen, app) = entries.get(client_id)?;
        (*owner == tenant && now.is_multiple_of(2) && *seen == now).then(|| app.clone())
    }

    /// Keeps `app`, read from the database after [`AppCache::epoch`] returned `seen`, if no
    /// change to applications or tenants began or ended meanwhile.
    pub(super) fn remember(&self, seen: u64, tenant: TenantId, app: AppRow) -> Arc<AppRow> {
        let app = Arc::new(app);
        if seen.is_multiple_of(2) && self.epoch() == seen {
            let mut entries = self.entries.write().unwrap_or_else(|p| p.into_inner());
            if entries.len() >= MAX_ENTRIES || entries.values().next().is_some_and(|(_, e, _)| *e != seen) {
                // Full, or holding entries of an earlier epoch (all stale): start again.
                entries.clear();
            }
            entries.insert(app.client_id.clone(), (tenant, seen, app.clone()));
        }
        app
    }
}

#[cfg(test)]
mod tests {
    use super::super::apps::{self, AppRow};
    use super::super::sql::params;
    use super::super::testing::{temp_db, tenant};
    use super::super::{AppType, Engine, Reader, StoreError, TenantId};
    use super::*;

    fn m2m(client_id: &str, hash: &[u8]) -> AppRow {
        AppRow {
            client_id: client_id.into(),
            name: client_id.into(),
            app_type: AppType::M2m,
            secret_hash: Some(hash.to_vec()),
            redirect_uris: vec![],
            post_logout_redirect_uris: vec![],
            cors_origins: vec![],
            scopes: vec![],
            created_at: 1,
            device_flow: false,
        }
    }

    #[test]
    fn only_reads_that_saw_no_change_begin_or_end_are_kept() {
        let cache = AppCache::default();
        let epoch = cache.epoch_handle();
        let t = TenantId(1);
        let seen = cache.epoch();
        cache.remember(seen, t, m2m("a", b"1"));
        assert!(cache.get(t, "a").is_some());
        assert!(cache.get(TenantId(2), "a").is_none(), "another tenant's app");

        epoch.changing();
        assert!(cache.get(t, "a").is_none(), "a change has begun: nothing is served from memory");
        let during = cache.epoch();
        cache.remember(during, t, m2m("b", b"2"));
        assert!(cache.get(t, "b").is_none(), "read while a change was under way");
        epoch.changing();
        epoch.settled();
        assert!(cache.get(t, "a").is_none() && cache.get(t, "b").is_none(), "both from before the change");
        cache.remember(during, t, m2m("c", b"3"));
        assert!(cache.get(t, "c").is_none(), "read across the change's end");
        cache.remember(cache.epoch(), t, m2m("d", b"4"));
        assert!(cache.get(t, "d").is_some());
        epoch.settled();
        assert!(cache.get(t, "d").is_some(), "settling twice moves nothing");
    }

    #[test]
    fn every_write_to_applications_or_tenants_reaches_the_grant() {
        let db = temp_db();
        let sqlite = match &*db.db.0 {
            Engine::Sqlite(s) => s,
            _ => unreachable!("temp_db is SQLite"),
        };
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let t = db.write(|tx| tenant(tx, "acme"));
        db.write(|tx| apps::insert(tx, t, &m2m("c1", b"old")).unwrap());
        let grant = |id: &str| rt.block_on(db.db.app_for_grant(t, id)).unwrap();
        assert_eq!(grant("c1").unwrap().secret_hash.as_deref(), Some(&b"old"[..]));
        assert!(sqlite.apps.get(t, "c1").is_some(), "kept in memory");

        // A change through the writer thread (a batch), then through write_blocking.
        rt.block_on(db.db.write(move |tx| apps::set_secret_hash(tx, t, "c1", b"new"))).unwrap();
        assert_eq!(grant("c1").unwrap().secret_hash.as_deref(), Some(&b"new"[..]));
        db.write(|tx| apps::delete(tx, t, "c1").unwrap());
        assert!(grant("c1").is_none());

        // A rolled-back change still moves the epoch; the row is read again and is unchanged.
        db.write(|tx| apps::insert(tx, t, &m2m("c2", b"x")).unwrap());
        assert!(grant("c2").is_some());
        let failed: Result<(), StoreError> = rt.block_on(db.db.write(move |tx| {
            apps::set_secret_hash(tx, t, "c2", b"y")?;
            Err(StoreError::Corrupt("refused".into()))
        }));
        assert!(failed.is_err());
        assert!(sqlite.apps.get(t, "c2").is_none());
        assert_eq!(grant("c2").unwrap().secret_hash.as_deref(), Some(&b"x"[..]));

        // Deleting the tenant deletes its applications (ON DELETE CASCADE).
        db.write(|tx| tx.conn().execute("DELETE FROM tenants WHERE id = ?1", params![t]).unwrap());
        assert!(grant("c2").is_none());
    }
}
