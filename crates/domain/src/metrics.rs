//! Prometheus text metrics: requests by route and status, a latency histogram per route,
//! ceremonies and grants by outcome, requests per tenant, build information and the process's
//! own figures (resident memory, open files, start time) read from `/proc/self`. Labels are
//! fixed route names and tenant slugs, so the series count stays bounded.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Duration;

const BUCKETS: [f64; 10] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0];

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

#[derive(Default)]
struct Inner {
    requests: BTreeMap<(&'static str, u16), u64>,
    latency: BTreeMap<&'static str, Histogram>,
    /// (kind, outcome code) of WebAuthn ceremonies: registration / login.
    ceremonies: BTreeMap<(&'static str, String), u64>,
    /// (grant type, outcome code) at the token endpoint.
    grants: BTreeMap<(String, String), u64>,
    /// Requests routed to each tenant, by slug.
    tenants: BTreeMap<String, u64>,
    /// (kind, outcome) of outbox delivery attempts: back-channel logouts delivered, retried, failed.
    deliveries: BTreeMap<(&'static str, &'static str), u64>,
}

/// What `/metrics` shows beside the counters kept here, read by the caller from their owners.
#[derive(Clone, Copy)]
pub struct Readings<'a> {
    pub db: &'a crate::store::WriteStats,
    pub health: &'a crate::store::Health,
    /// Requests the per-address limits let through uncounted.
    pub untracked: u64,
    /// Token signatures made two at once, and one at a time.
    pub signatures: (u64, u64),
    /// Tenants queued for their first signing key on this node.
    pub keys_queued: usize,
}

pub struct Metrics {
    inner: Mutex<Inner>,
    /// Public connections closed at accept because `server.max_connections` were open.
    refused_connections: std::sync::atomic::AtomicU64,
    /// When the process started, in seconds since the epoch.
    started_at: f64,
    /// Outbox rows waiting and failed, as the delivery loop last counted them.
    outbox: (std::sync::atomic::AtomicI64, std::sync::atomic::AtomicI64),
}

impl Default for Metrics {
    fn default() -> Metrics {
        let started_at =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0);
        Metrics {
            inner: Mutex::default(),
            refused_connections: Default::default(),
            started_at,
            outbox: Default::default(),
        }
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Metrics {
    pub fn observe(&self, route: &'static str, status: u16, elapsed: Duration) {
        let secs = elapsed.as_secs_f64();
        let mut g = match self.inner.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        *g.requests.entry((route, status)).or_default() += 1;
        let h = g.latency.entry(route).or_default();
        for (i, b) in BUCKETS.iter().enumerate() {
            if secs <= *b {
                h.counts[i] += 1;
            }
        }
        h.sum += secs;
        h.count += 1;
    }

    /// Counts a connection closed at accept for want of capacity.
    pub fn connection_refused(&self) {
        self.refused_connections.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Counts a finished ceremony; `outcome` is `success` or an error code (a small fixed set).
    pub fn ceremony(&self, kind: &'static str, outcome: &str) {
        let mut g = self.lock();
        *g.ceremonies.entry((kind, outcome.to_owned())).or_default() += 1;
    }

    /// Counts a token request; `grant` is one of a fixed set (the caller maps unknown grant types
    /// to `other`, which bounds the series).
    pub fn grant(&self, grant: &'static str, outcome: &str) {
        let mut g = self.lock();
        *g.grants.entry((grant.to_owned(), outcome.to_owned())).or_default() += 1;
    }

    /// Counts an outbox delivery attempt: `delivered`, `retried` (to be tried again) or `failed`.
    pub fn delivery(&self, kind: &'static str, outcome: &'static str) {
        *self.lock().deliveries.entry((kind, outcome)).or_default() += 1;
    }

    /// The outbox's rows waiting and failed, as last counted.
    pub fn outbox_rows(&self, pending: i64, failed: i64) {
        self.outbox.0.store(pending, std::sync::atomic::Ordering::Relaxed);
        self.outbox.1.store(failed, std::sync::atomic::Ordering::Relaxed);
    }

    /// Counts a request routed to a tenant.
    pub fn tenant_request(&self, slug: &str) {
        let mut g = self.lock();
        match g.tenants.get_mut(slug) {
            Some(n) => *n += 1,
            None => {
                g.tenants.insert(slug.to_owned(), 1);
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        match self.inner.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    pub fn render(&self, others: &Readings<'_>) -> String {
        let Readings { db, health, untracked, signatures: (paired, alone), keys_queued } = *others;
        let g = match self.inner.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let mut out = String::new();
        process_metrics(&mut out, self.started_at);
        out.push_str("# HELP latchkey_connections_refused_total Connections closed at accept: server.max_connections were open.\n");
        out.push_str("# TYPE latchkey_connections_refused_total counter\n");
        let refused = self.refused_connections.load(std::sync::atomic::Ordering::Relaxed);
        let _ = writeln!(out, "latchkey_connections_refused_total {refused}");
        let backend = health.backend;
        out.push_str("# HELP latchkey_database_info The database backend: sqlite or postgres.\n");
        out.push_str("# TYPE latchkey_database_info gauge\n");
        let _ = writeln!(out, "latchkey_database_info{{backend=\"{backend}\"}} 1");
        out.push_str("# HELP latchkey_database_up 1 when the database answered this scrape's query, else 0.\n");
        out.push_str("# TYPE latchkey_database_up gauge\n");
        let _ = writeln!(out, "latchkey_database_up {}", u8::from(health.up.is_none()));
        out.push_str("# HELP latchkey_database_ping_seconds How long this scrape's query to the database took.\n");
        out.push_str("# TYPE latchkey_database_ping_seconds gauge\n");
        let _ = writeln!(out, "latchkey_database_ping_seconds {:.6}", health.ping.as_secs_f64());
        if let Some(age) = health.listener_age {
            out.push_str("# HELP latchkey_cluster_listener_age_seconds Since this node last read and applied the other nodes' changes.\n");
            out.push_str("# TYPE latchkey_cluster_listener_age_seconds gauge\n");
            let _ = writeln!(out, "latchkey_cluster_listener_age_seconds {}", age.as_secs());
        }
        out.push_str("# HELP latchkey_db_pool_connections Connections of the database pool by state.\n");
        out.push_str("# TYPE latchkey_db_pool_connections gauge\n");
        let in_use = health.pool_open.saturating_sub(health.pool_idle);
        let _ = writeln!(out, "latchkey_db_pool_connections{{state=\"idle\"}} {}", health.pool_idle);
        let _ = writeln!(out, "latchkey_db_pool_connections{{state=\"in_use\"}} {in_use}");
        // Group commit: writes per commit is the mean batch size. On PostgreSQL every write is
        // its own transaction (the server groups the WAL flushes), so both count alike.
        out.push_str("# HELP latchkey_db_writes_total Write transactions run through the database writer.\n");
        out.push_str("# TYPE latchkey_db_writes_total counter\n");
        let _ = writeln!(out, "latchkey_db_writes_total {}", db.writes.load(std::sync::atomic::Ordering::Relaxed));
        out.push_str("# HELP latchkey_db_commits_total Commits of the database writer (one fsync each, except the unsynced ones).\n");
        out.push_str("# TYPE latchkey_db_commits_total counter\n");
        let _ = writeln!(out, "latchkey_db_commits_total {}", db.commits.load(std::sync::atomic::Ordering::Relaxed));
        out.push_str(
            "# HELP latchkey_db_unsynced_commits_total Commits of the database writer without an fsync (only ceremony challenges, authorization codes and pending authorization requests in them).\n",
        );
        out.push_str("# TYPE latchkey_db_unsynced_commits_total counter\n");
        let unsynced = db.unsynced_commits.load(std::sync::atomic::Ordering::Relaxed);
        let _ = writeln!(out, "latchkey_db_unsynced_commits_total {unsynced}");
        out.push_str("# HELP latchkey_token_signatures_total Token signatures by how they were made: two at once with AVX-512 IFMA (vector_pair), or one at a time with aws-lc (single).\n");
        out.push_str("# TYPE latchkey_token_signatures_total counter\n");
        let _ = writeln!(out, "latchkey_token_signatures_total{{method=\"vector_pair\"}} {paired}");
        let _ = writeln!(out, "latchkey_token_signatures_total{{method=\"single\"}} {alone}");
        out.push_str("# HELP latchkey_signing_keys_queued Tenants waiting on this node for their first signing key, made in the background.\n");
        out.push_str("# TYPE latchkey_signing_keys_queued gauge\n");
        let _ = writeln!(out, "latchkey_signing_keys_queued {keys_queued}");
        out.push_str("# HELP latchkey_rate_limit_untracked_total Requests let through uncounted by the per-address limits because they were tracking as many callers as they hold in one minute.\n");
        out.push_str("# TYPE latchkey_rate_limit_untracked_total counter\n");
        let _ = writeln!(out, "latchkey_rate_limit_untracked_total {untracked}");
        out.push_str("# HELP latchkey_audit_events_lost_total Audit events that could not be written, by why: the queue was full, the database refused the event on its own, or it could not be reached.\n");
        out.push_str("# TYPE latchkey_audit_events_lost_total counter\n");
        for (reason, n) in crate::audit::lost() {
            let _ = writeln!(out, "latchkey_audit_events_lost_total{{reason=\"{reason}\"}} {n}");
        }
        out.push_str("# HELP latchkey_outbox_deliveries_total Deliveries from the outbox (back-channel logout tokens, webhooks) by kind and outcome: delivered, retried (tried again later) or failed (given up).\n");
        out.push_str("# TYPE latchkey_outbox_deliveries_total counter\n");
        for ((kind, outcome), n) in &g.deliveries {
            let _ = writeln!(out, "latchkey_outbox_deliveries_total{{kind=\"{kind}\",outcome=\"{outcome}\"}} {n}");
        }
        out.push_str(
            "# HELP latchkey_outbox_rows Rows of the outbox, waiting or failed, as the delivery loop last counted.\n",
        );
        out.push_str("# TYPE latchkey_outbox_rows gauge\n");
        let pending = self.outbox.0.load(std::sync::atomic::Ordering::Relaxed);
        let failed = self.outbox.1.load(std::sync::atomic::Ordering::Relaxed);
        let _ = writeln!(out, "latchkey_outbox_rows{{state=\"pending\"}} {pending}");
        let _ = writeln!(out, "latchkey_outbox_rows{{state=\"failed\"}} {failed}");
        out.push_str("# HELP latchkey_http_requests_total HTTP requests by route and status.\n");
        out.push_str("# TYPE latchkey_http_requests_total counter\n");
        for ((route, status), n) in &g.requests {
            let _ = writeln!(out, "latchkey_http_requests_total{{route=\"{route}\",status=\"{status}\"}} {n}");
        }
        out.push_str("# HELP latchkey_http_request_duration_seconds Request latency by route.\n");
        out.push_str("# TYPE latchkey_http_request_duration_seconds histogram\n");
        for (route, h) in &g.latency {
            for (i, b) in BUCKETS.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "latchkey_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{b}\"}} {}",
                    h.counts[i]
                );
            }
            let _ = writeln!(
                out,
                "latchkey_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(out, "latchkey_http_request_duration_seconds_sum{{route=\"{route}\"}} {}", h.sum);
            let _ = writeln!(out, "latchkey_http_request_duration_seconds_count{{route=\"{route}\"}} {}", h.count);
        }
        out.push_str("# HELP latchkey_ceremonies_total WebAuthn ceremonies finished, by kind and outcome.\n");
        out.push_str("# TYPE latchkey_ceremonies_total counter\n");
        for ((kind, outcome), n) in &g.ceremonies {
            let _ = writeln!(out, "latchkey_ceremonies_total{{kind=\"{kind}\",outcome=\"{outcome}\"}} {n}");
        }
        out.push_str("# HELP latchkey_token_grants_total Token endpoint requests, by grant type and outcome.\n");
        out.push_str("# TYPE latchkey_token_grants_total counter\n");
        for ((grant, outcome), n) in &g.grants {
            let _ = writeln!(out, "latchkey_token_grants_total{{grant=\"{grant}\",outcome=\"{outcome}\"}} {n}");
        }
        out.push_str("# HELP latchkey_tenant_requests_total Requests routed to each tenant.\n");
        out.push_str("# TYPE latchkey_tenant_requests_total counter\n");
        for (tenant, n) in &g.tenants {
            let _ = writeln!(out, "latchkey_tenant_requests_total{{tenant=\"{tenant}\"}} {n}");
        }
        out
    }
}

/// Build information and the standard `process_*` series (Linux `/proc/self`; absent elsewhere).
fn process_metrics(out: &mut String, started_at: f64) {
    out.push_str("# HELP latchkey_build_info The running build; the value is always 1.\n");
    out.push_str("# TYPE latchkey_build_info gauge\n");
    let _ = writeln!(out, "latchkey_build_info{{version=\"{}\"}} 1", env!("CARGO_PKG_VERSION"));
    out.push_str("# HELP process_start_time_seconds Start time of the process since the Unix epoch.\n");
    out.push_str("# TYPE process_start_time_seconds gauge\n");
    let _ = writeln!(out, "process_start_time_seconds {started_at:.3}");
    // statm: size resident shared ... in pages.
    let page = rustix::param::page_size() as u64;
    if let Some(rss) = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()))
    {
        out.push_str("# HELP process_resident_memory_bytes Resident memory size in bytes.\n");
        out.push_str("# TYPE process_resident_memory_bytes gauge\n");
        let _ = writeln!(out, "process_resident_memory_bytes {}", rss * page);
    }
    if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
        out.push_str("# HELP process_open_fds Number of open file descriptors.\n");
        out.push_str("# TYPE process_open_fds gauge\n");
        let _ = writeln!(out, "process_open_fds {}", fds.count());
    }
}
