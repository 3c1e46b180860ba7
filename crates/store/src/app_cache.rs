//! Applications held in memory for the client-credentials grant. That grant writes nothing:
//! the lookup of the client was its only database work (on SQLite a read transaction with its
//! shared-memory locks, a few percent of a grant's time beside the RSA signature; on PostgreSQL
//! three round trips, which halved the grants one node served).
//!
//! Correctness rests on a version counter, not on expiry. The counter holds a generation and,
//! above it, the number of changes under way. A write transaction that touches applications or
//! tenants (a deleted tenant takes its applications with it) begins a change inside the
//! transaction, before its commit; once it has committed or rolled back, it ends the change, one
//! generation further. An entry is used only while no change is under way and the counter holds
//! the value the entry was read under, and a read is remembered only if the counter was the same,
//! with no change under way, before and after it: such a read saw no change begin or end, so it
//! holds what the database holds until the counter moves. Any change to any application or
//! tenant therefore empties the cache at once, before its commit.
//!
//! On SQLite one daemon owns the file (the lock file), so every change goes through its writer
//! thread, whose update hook begins the change ([`Epoch`]). On PostgreSQL each write is a
//! transaction of its own, several at a time: the store marks its changes to applications and
//! tenants ([`super::cluster::changed`]), each transaction begins and ends its change
//! ([`Changes`]), and the changes of other nodes move the counter as the change listener applies
//! them ([`Changes::moved`]), before the node reports them applied. The cache is used there only
//! while the listener is current (see `Db::app_for_grant`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use super::TenantId;
use super::apps::AppRow;

/// Beyond this many applications the cache starts again empty (a bound on memory for daemons
/// with very many machine clients; they are read again on their next grant).
const MAX_ENTRIES: usize = 4096;

/// One change under way, in the counter's upper 16 bits; the generation is the lower 48.
const UNDER_WAY: u64 = 1 << 48;

/// By Client ID: the tenant, the counter the row was read under, the row.
type Entries = HashMap<String, (TenantId, u64, Arc<AppRow>)>;

#[derive(Debug, Default)]
struct Counter {
    value: AtomicU64,
    /// SQLite's writer thread has begun a change in its current batch.
    writer_changing: AtomicBool,
}

impl Counter {
    fn begin(&self) {
        self.value.fetch_add(UNDER_WAY + 1, Ordering::SeqCst);
    }

    /// One change fewer under way, one generation further.
    fn end(&self) {
        self.value.fetch_sub(UNDER_WAY - 1, Ordering::SeqCst);
    }
}

fn quiet(value: u64) -> bool {
    value < UNDER_WAY
}

#[derive(Debug, Default)]
pub(super) struct AppCache {
    counter: Arc<Counter>,
    entries: RwLock<Entries>,
}

/// SQLite's writer thread's side of the counter: one change per batch at most.
#[derive(Debug, Clone)]
pub(super) struct Epoch(Arc<Counter>);

impl Epoch {
    /// A write is touching applications or tenants (called by the update hook, on the writer
    /// thread, before its commit).
    pub(super) fn changing(&self) {
        if !self.0.writer_changing.swap(true, Ordering::SeqCst) {
            self.0.begin();
        }
    }

    /// The batch (or transaction) has committed or rolled back.
    pub(super) fn settled(&self) {
        if self.0.writer_changing.swap(false, Ordering::SeqCst) {
            self.0.end();
        }
    }
}

/// PostgreSQL's side of the counter, shared by concurrent transactions.
#[derive(Debug, Clone)]
pub struct Changes(Arc<Counter>);

impl Changes {
    /// A transaction is about to change applications or tenants; [`Change::drop`] ends it.
    pub fn begin(&self) -> Change {
        self.0.begin();
        Change(self.0.clone())
    }

    /// Other nodes have committed changes that this node is about to apply.
    pub fn moved(&self) {
        self.0.value.fetch_add(1, Ordering::SeqCst);
    }
}

/// A change under way; it ends when dropped (after its transaction's commit or rollback).
#[derive(Debug)]
pub struct Change(Arc<Counter>);

impl Drop for Change {
    fn drop(&mut self) {
        self.0.end();
    }
}

impl AppCache {
    pub(super) fn epoch_handle(&self) -> Epoch {
        Epoch(self.counter.clone())
    }

    pub fn changes(&self) -> Changes {
        Changes(self.counter.clone())
    }

    /// The value to pass to [`AppCache::remember`] after reading from the database.
    pub(super) fn epoch(&self) -> u64 {
        self.counter.value.load(Ordering::SeqCst)
    }

    pub(super) fn get(&self, tenant: TenantId, client_id: &str) -> Option<Arc<AppRow>> {
        let now = self.epoch();
        let entries = self.entries.read().unwrap_or_else(|p| p.into_inner());
        let (owner, seen, app) = entries.get(client_id)?;
        (*owner == tenant && quiet(now) && *seen == now).then(|| app.clone())
    }

    /// Keeps `app`, read from the database after [`AppCache::epoch`] returned `seen`, if no
    /// change to applications or tenants was under way, began or ended meanwhile.
    pub(super) fn remember(&self, seen: u64, tenant: TenantId, app: AppRow) -> Arc<AppRow> {
        let app = Arc::new(app);
        if quiet(seen) && self.epoch() == seen {
            let mut entries = self.entries.write().unwrap_or_else(|p| p.into_inner());
            if entries.len() >= MAX_ENTRIES || entries.values().next().is_some_and(|(_, e, _)| *e != seen) {
                // Full, or holding entries of an earlier generation (all stale): start again.
                entries.clear();
            }
            entries.insert(app.client_id.clone(), (tenant, seen, app.clone()));
        }
        app
    }
}

#[cfg(test)]
mod tests {
    use super::super::apps;
    use super::super::sql::params;
    use super::super::testing::{m2m_app, temp_db, tenant};
    use super::super::{Engine, Reader, StoreError, TenantId};
    use super::*;

    #[test]
    fn only_reads_that_saw_no_change_begin_or_end_are_kept() {
        let cache = AppCache::default();
        let epoch = cache.epoch_handle();
        let t = TenantId(1);
        let seen = cache.epoch();
        cache.remember(seen, t, m2m_app("a", b"1"));
        assert!(cache.get(t, "a").is_some());
        assert!(cache.get(TenantId(2), "a").is_none(), "another tenant's app");

        epoch.changing();
        assert!(cache.get(t, "a").is_none(), "a change has begun: nothing is served from memory");
        let during = cache.epoch();
        cache.remember(during, t, m2m_app("b", b"2"));
        assert!(cache.get(t, "b").is_none(), "read while a change was under way");
        epoch.changing();
        epoch.settled();
        assert!(cache.get(t, "a").is_none() && cache.get(t, "b").is_none(), "both from before the change");
        cache.remember(during, t, m2m_app("c", b"3"));
        assert!(cache.get(t, "c").is_none(), "read across the change's end");
        cache.remember(cache.epoch(), t, m2m_app("d", b"4"));
        assert!(cache.get(t, "d").is_some());
        epoch.settled();
        assert!(cache.get(t, "d").is_some(), "settling twice moves nothing");
    }

    /// PostgreSQL: transactions change applications side by side. The cache stays unused until
    /// the last of them has ended, whatever order they end in.
    #[test]
    fn overlapping_changes_keep_the_cache_unused_until_the_last_ends() {
        let cache = AppCache::default();
        let changes = cache.changes();
        let t = TenantId(1);
        let first = changes.begin();
        let second = changes.begin();
        drop(first);
        let during = cache.epoch();
        cache.remember(during, t, m2m_app("a", b"1"));
        assert!(cache.get(t, "a").is_none(), "read while the second change was under way");
        drop(second);
        cache.remember(during, t, m2m_app("a", b"1"));
        assert!(cache.get(t, "a").is_none(), "read across the second change's end");
        cache.remember(cache.epoch(), t, m2m_app("a", b"1"));
        assert!(cache.get(t, "a").is_some());
        // Another node's change, applied by the listener.
        changes.moved();
        assert!(cache.get(t, "a").is_none(), "another node changed something");
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
        db.write(|tx| apps::insert(tx, t, &m2m_app("c1", b"old")).unwrap());
        let grant = |id: &str| rt.block_on(db.db.app_for_grant(t, id)).unwrap();
        assert_eq!(grant("c1").unwrap().secret_hash.as_deref(), Some(&b"old"[..]));
        assert!(sqlite.apps.get(t, "c1").is_some(), "kept in memory");

        // A change through the writer thread (a batch), then through write_blocking.
        rt.block_on(db.db.write(move |tx| apps::set_secret_hash(tx, t, "c1", b"new"))).unwrap();
        assert_eq!(grant("c1").unwrap().secret_hash.as_deref(), Some(&b"new"[..]));
        db.write(|tx| apps::delete(tx, t, "c1").unwrap());
        assert!(grant("c1").is_none());

        // A rolled-back change still moves the epoch; the row is read again and is unchanged.
        db.write(|tx| apps::insert(tx, t, &m2m_app("c2", b"x")).unwrap());
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
