//! Benchmark: one node's cost per request on PostgreSQL beside SQLite, measured the same way on
//! both (SPEC §9: "a node's cost per request on PostgreSQL stays within 1.5× its cost on
//! SQLite"). The same release `latchkeyd` binary runs as a child process, configured alike
//! (`common/nodes.rs`), on a new SQLite file and then on a new PostgreSQL database, in
//! alternating rounds; the same client threads (`common/child.rs`, one kept-alive connection
//! each) send the same requests:
//!
//! - client-credentials grants (1 and 16 clients);
//! - authorization-code exchanges (codes from `/authorize` beforehand, not timed) and then each
//!   refresh token rotated once (1 and 16 clients);
//! - complete passkey sign-ins, `/auth/start` and `/auth/finish` (1 and 16 clients).
//!
//! Each phase prints its throughput, p50 and p99, and the CPU it cost per request: the node's
//! (`/proc/<pid>/stat`, user + system) and, on PostgreSQL, the server's (every `postgres` process
//! of the machine: run it alone). On PostgreSQL also, per request: statements (from
//! `pg_stat_statements` when the server preloads it: `pg_virtualenv -o
//! shared_preload_libraries=pg_stat_statements`), write transactions (transaction ids handed
//! out: each commits with a WAL flush, before group commit merges flushes) and WAL bytes (the
//! WAL position's advance). Run it alone on the server: the last two are the server's. The last lines give, per phase, the median over the rounds of PostgreSQL ÷
//! SQLite for node CPU per request, throughput and p99.
//!
//! Run inside `pg_virtualenv` (the `PG*` variables), after `cargo build --release --workspace
//! --bins`: `cargo bench -p latchkey-tests --bench backends`. Under `scripts/with-pgbouncer.sh`
//! the PostgreSQL node reaches its database through PgBouncer in transaction mode
//! (`pooler = "transaction"`; `POOL=10` gives PgBouncer the node's 10 server connections), and
//! PgBouncer's CPU is counted apart from the server's. `BENCH_ROUNDS` (default 2) and
//! `BENCH_SCALE` (default 1: about a minute per backend and round) size it.

#[path = "../e2e/authenticator.rs"]
mod authenticator;
#[path = "common/child.rs"]
mod child;
#[path = "common/nodes.rs"]
mod nodes;
#[path = "../e2e/support.rs"]
mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use authenticator::Soft;

/// CPU time (user + system) of process `pid` so far.
fn cpu_of(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(") ").map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_micros((ticks(11) + ticks(12)) * 1_000_000 / hz)
}

/// CPU time of every `postgres` process on the machine (the test cluster's server), and of every
/// `pgbouncer` process (the pooler in front of it, when there is one).
fn server_cpu() -> (Duration, Duration) {
    let (mut server, mut pooler) = (Duration::ZERO, Duration::ZERO);
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        match comm.trim() {
            "postgres" => server += cpu_of(pid),
            "pgbouncer" => pooler += cpu_of(pid),
            _ => {}
        }
    }
    (server, pooler)
}

/// One phase's figures.
#[derive(Clone, Copy, Default)]
struct Figures {
    per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
    node_cpu_ms: f64,
    server_cpu_ms: f64,
    /// PgBouncer's CPU per request, when the node reaches the server through it.
    pooler_cpu_ms: f64,
    /// PostgreSQL, per request: statements (`None` without pg_stat_statements), write
    /// transactions, WAL bytes.
    statements: Option<f64>,
    writes: f64,
    wal_bytes: f64,
}

/// The PostgreSQL server's counters: statements run in one database, write transactions and WAL
/// bytes (the server's). All three move as statements end, with no reporting delay.
struct Counters {
    client: postgres::Client,
    database: String,
    statements: bool,
}

impl Counters {
    /// Reads from the `postgres` database, so that its own statements and commits are not
    /// counted with the node's.
    fn open(database: &str) -> Counters {
        let mut client = support::pg_connect("postgres");
        let statements = client.batch_execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements").is_ok()
            && client.query_one("SELECT count(*) FROM pg_stat_statements", &[]).is_ok();
        Counters { client, database: database.to_owned(), statements }
    }

    /// (statements, write transactions, WAL bytes) so far.
    fn read(&mut self) -> (f64, f64, f64) {
        let statements = if self.statements {
            let r = self.client.query_one(
                "SELECT coalesce(sum(calls), 0)::float8 FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid \
                 WHERE d.datname = $1",
                &[&self.database],
            );
            r.map(|r| r.get::<_, f64>(0)).unwrap_or(0.0)
        } else {
            0.0
        };
        // A transaction gets an id only when it writes; reads never do.
        let (writes, wal): (f64, f64) = self
            .client
            .query_one(
                "SELECT pg_snapshot_xmax(pg_current_snapshot())::text::float8, \
                 pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8",
                &[],
            )
            .map(|r| (r.get(0), r.get(1)))
            .unwrap_or((0.0, 0.0));
        (statements, writes, wal)
    }
}

/// The node under load and what every phase needs.
struct Bench {
    nodes: nodes::Nodes,
    postgres: bool,
    web: child::Client,
    m2m: child::Client,
    /// Per client: its e-mail, authenticator and browser session.
    users: Vec<(String, Soft, String)>,
    /// PostgreSQL's counters; `None` on SQLite.
    counters: Option<std::sync::Mutex<Counters>>,
}

impl Bench {
    fn start(postgres: bool, clients: usize) -> Bench {
        let nodes = if postgres { nodes::Nodes::start(1) } else { nodes::Nodes::sqlite() };
        let socket = nodes.socket();
        support::cli(&socket, &["tenant", "create", "bench", "-o", "json"]).ok();
        let web = child::create_app(&socket, "bench", "web", "web");
        let m2m = child::create_app(&socket, "bench", "m2m", "m2m");
        let http = child::Http::new(Duration::from_secs(30));
        let tenant = child::Tenant { slug: "bench".into(), base: nodes.url(0, "/bench"), origin: nodes.public.clone() };
        let users = (0..clients)
            .map(|i| {
                let email = format!("u{i}@bench.test");
                let invite = child::invite(&socket, "bench", &email);
                let mut soft = Soft::new(&nodes.public);
                let r = tenant.register(&http, &mut soft, &email, &invite).expect("register");
                assert_eq!(r.status, 201, "{}", r.body);
                let cookie = r.session_cookie().expect("session cookie");
                (email, soft, cookie)
            })
            .collect();
        let counters = postgres.then(|| std::sync::Mutex::new(Counters::open(nodes.database())));
        Bench { nodes, postgres, web, m2m, users, counters }
    }

    fn tenant(&self) -> child::Tenant {
        child::Tenant { slug: "bench".into(), base: self.nodes.url(0, "/bench"), origin: self.nodes.public.clone() }
    }

    /// Runs `work(client, i)` `n / clients` times on each of `clients` threads at once; every
    /// call returns whether its answer was right. The figures, with CPU per call.
    fn measure(&self, clients: usize, n: usize, work: impl Fn(usize, usize, &child::Http) -> bool + Sync) -> Figures {
        let pid = self.nodes.daemons[0].pid();
        let before = self.counters.as_ref().map(|c| c.lock().unwrap().read());
        let (node0, (server0, pooler0)) = (cpu_of(pid), server_cpu());
        let wall = Instant::now();
        let mut samples: Vec<Duration> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..clients)
                .map(|c| {
                    let work = &work;
                    s.spawn(move || {
                        let http = child::Http::new(Duration::from_secs(30));
                        (0..n / clients)
                            .map(|i| {
                                let t = Instant::now();
                                assert!(work(c, i, &http), "a request was refused");
                                t.elapsed()
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        let wall = wall.elapsed();
        let node = cpu_of(pid) - node0;
        let (server1, pooler1) = server_cpu();
        let (server, pooler) =
            if self.postgres { (server1 - server0, pooler1 - pooler0) } else { (Duration::ZERO, Duration::ZERO) };
        let count = samples.len() as f64;
        let mut statements = None;
        let (mut writes, mut wal_bytes) = (0.0, 0.0);
        if let (Some(c), Some((s0, c0, w0))) = (&self.counters, before) {
            let mut c = c.lock().unwrap();
            let (s1, c1, w1) = c.read();
            statements = c.statements.then(|| (s1 - s0) / count);
            writes = (c1 - c0) / count;
            wal_bytes = (w1 - w0) / count;
        }
        samples.sort();
        let pct = |p: f64| samples[((samples.len() as f64 - 1.0) * p) as usize].as_secs_f64() * 1e3;
        Figures {
            statements,
            writes,
            wal_bytes,
            per_second: count / wall.as_secs_f64(),
            p50_ms: pct(0.5),
            p99_ms: pct(0.99),
            node_cpu_ms: node.as_secs_f64() * 1e3 / count,
            server_cpu_ms: server.as_secs_f64() * 1e3 / count,
            pooler_cpu_ms: pooler.as_secs_f64() * 1e3 / count,
        }
    }

    /// Every phase once: (name, figures).
    fn phases(&mut self, scale: usize) -> Vec<(String, Figures)> {
        let mut out = vec![];
        let tenant = self.tenant();
        let (web, m2m) = (self.web.clone(), self.m2m.clone());
        // Warm-up with every client at once, so that pools and caches are as full as they get.
        let clients = self.users.len();
        self.measure(clients, 50 * clients, |_, _, http| {
            tenant.client_credentials(http, &m2m).is_ok_and(|r| r.status == 200)
        });
        for clients in [1, 16] {
            let f = self.measure(clients, 1000 * scale, |_, _, http| {
                tenant.client_credentials(http, &m2m).is_ok_and(|r| r.status == 200)
            });
            out.push((format!("client_credentials, {clients} client(s)"), f));
        }
        for clients in [1, 16] {
            let n = 400 * scale;
            let http = child::Http::new(Duration::from_secs(30));
            let codes: Vec<Vec<(String, String)>> = (0..clients)
                .map(|c| (0..n / clients).map(|_| tenant.code(&http, &web, &self.users[c].2).expect("code")).collect())
                .collect();
            let refresh: Vec<Vec<std::sync::Mutex<String>>> =
                codes.iter().map(|c| c.iter().map(|_| std::sync::Mutex::default()).collect()).collect();
            let f = self.measure(clients, n, |c, i, http| {
                let (code, verifier) = &codes[c][i];
                let Ok(r) = tenant.exchange(http, &web, code, verifier) else { return false };
                *refresh[c][i].lock().unwrap() = r.json()["refresh_token"].as_str().unwrap_or_default().to_owned();
                r.status == 200
            });
            out.push((format!("code exchange, {clients} client(s)"), f));
            let f = self.measure(clients, n, |c, i, http| {
                let token = refresh[c][i].lock().unwrap().clone();
                tenant.refresh(http, &web, &token).is_ok_and(|r| r.status == 200)
            });
            out.push((format!("refresh, {clients} client(s)"), f));
        }
        for clients in [1, 16] {
            let n = 300 * scale;
            // Each client signs in as its own user (the authenticators' counters move on).
            let users: Vec<std::sync::Mutex<(String, Soft, String)>> =
                std::mem::take(&mut self.users).into_iter().map(std::sync::Mutex::new).collect();
            let f = self.measure(clients, n, |c, _, http| {
                let mut user = users[c].lock().unwrap();
                let (email, soft, _) = &mut *user;
                tenant.sign_in(http, soft, email).is_ok_and(|r| r.status == 200)
            });
            self.users = users.into_iter().map(|u| u.into_inner().unwrap()).collect();
            out.push((format!("sign-in, {clients} client(s)"), f));
        }
        out
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn main() {
    if std::env::var_os("PGHOST").is_none() && std::env::var_os("PGDATABASE").is_none() {
        println!("backends: skipped (run inside pg_virtualenv: it compares SQLite with PostgreSQL)");
        return;
    }
    let var = |k: &str, d: usize| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let (rounds, scale) = (var("BENCH_ROUNDS", 2), var("BENCH_SCALE", 1));
    println!(
        "one latchkeyd node on SQLite beside PostgreSQL ({} cores, release build, loopback HTTP, the same child-process \
         harness): {rounds} alternating round(s)",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    );
    let bouncer = support::pg_bouncer().is_some();
    let mut all: BTreeMap<(String, bool), Vec<Figures>> = BTreeMap::new();
    let mut order: Vec<String> = vec![];
    for round in 1..=rounds {
        for postgres in [false, true] {
            let mut bench = Bench::start(postgres, 16);
            let backend = match (postgres, bouncer) {
                (false, _) => "SQLite",
                (true, false) => "PostgreSQL",
                (true, true) => "PgBouncer",
            };
            for (name, f) in bench.phases(scale) {
                println!(
                    "round {round} {backend:<10} {name:<28} {:>7.0}/s  p50 {:>6.2} ms  p99 {:>6.2} ms  node CPU {:>5.3} ms/req{}",
                    f.per_second,
                    f.p50_ms,
                    f.p99_ms,
                    f.node_cpu_ms,
                    if postgres {
                        format!(
                            "  server CPU {:>5.3} ms/req{}  statements {}  writes {:.2}  WAL {:.0} B",
                            f.server_cpu_ms,
                            if bouncer {
                                format!("  PgBouncer CPU {:>5.3} ms/req", f.pooler_cpu_ms)
                            } else {
                                String::new()
                            },
                            f.statements.map_or("-".to_owned(), |s| format!("{s:.2}")),
                            f.writes,
                            f.wal_bytes
                        )
                    } else {
                        String::new()
                    }
                );
                if !order.contains(&name) {
                    order.push(name.clone());
                }
                all.entry((name, postgres)).or_default().push(f);
            }
        }
    }
    let through = if bouncer { " through PgBouncer (transaction mode)" } else { "" };
    println!("\nPostgreSQL{through} ÷ SQLite, median over the rounds (node CPU per request; throughput; p99):");
    for name in &order {
        let of = |pg: bool, f: fn(&Figures) -> f64| median(all[&(name.clone(), pg)].iter().map(f).collect());
        let ratio = |f: fn(&Figures) -> f64| of(true, f) / of(false, f).max(f64::EPSILON);
        println!(
            "  {name:<28} node CPU/req {:>5.2}×  ({:.3} vs {:.3} ms; server {:.3} ms{})   throughput {:>5.2}×   p99 {:>5.2}× ({:.1} vs {:.1} ms)",
            ratio(|f| f.node_cpu_ms),
            of(true, |f| f.node_cpu_ms),
            of(false, |f| f.node_cpu_ms),
            of(true, |f| f.server_cpu_ms),
            if through.is_empty() {
                String::new()
            } else {
                format!(", PgBouncer {:.3} ms", of(true, |f| f.pooler_cpu_ms))
            },
            ratio(|f| f.per_second),
            ratio(|f| f.p99_ms),
            of(true, |f| f.p99_ms),
            of(false, |f| f.p99_ms),
        );
    }
}
