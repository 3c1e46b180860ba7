//! Benchmark: a rolling restart of three `latchkeyd` nodes on one PostgreSQL database under a
//! steady mixed load, with each node drained through `/readyz` before it stops (SPEC §9). The
//! question it answers: does any request fail while every node is restarted in turn?
//!
//! - Three release nodes (`common/nodes.rs`) with the default `server.drain` (5 s on PostgreSQL;
//!   `LATCHKEY_SERVER_DRAIN=0s` runs the same restarts without a drain, for comparison).
//! - A balancer in the bench: it checks every node's `/readyz` every 100 ms and sends each request
//!   to the next node that answered 200. It never retries a request. When it takes a node out it
//!   drops the clients' kept-alive connections to it, as HAProxy's `on-marked-down
//!   shutdown-sessions` does (a connection in use finishes first).
//! - `BENCH_CLIENTS` client threads (default 8), each looping over a passkey sign-in (start and
//!   finish on two nodes), a client-credentials grant, and an authorization code from
//!   `/authorize` exchanged and its refresh token rotated (three more nodes).
//! - An admin thread rotating another app's secret through a node's admin socket every 300 ms.
//! - After a warm-up, each node in turn gets SIGTERM (its drain, then its exit is awaited) and is
//!   started again; the next waits until it answers `/readyz` and the load has run 3 s more.
//!
//! Prints the requests, failures (any non-2xx answer or transport error, with the first few),
//! throughput per second (lowest, median, highest) and p50/p99 for the whole run and while a
//! node was stopping or starting. Run inside `pg_virtualenv`, after
//! `cargo build --release --workspace --bins`:
//! `BENCH_BACKEND=postgres cargo bench -p latchkey-tests --bench rolling`.

#[path = "../e2e/authenticator.rs"]
mod authenticator;
#[path = "common/child.rs"]
mod child;
#[path = "common/nodes.rs"]
mod nodes;
#[path = "../e2e/support.rs"]
mod support;

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use authenticator::Soft;
use serde_json::json;

/// How often the balancer checks each node.
const PROBE_EVERY: Duration = Duration::from_millis(100);

/// The bench's load balancer: which nodes answered `/readyz` 200 at the last check.
struct Balancer {
    up: Vec<AtomicBool>,
    /// Bumped each time a node is taken out: clients then drop their connections to it.
    outs: Vec<AtomicUsize>,
    next: AtomicUsize,
    urls: Vec<String>,
}

impl Balancer {
    fn new(urls: &[String]) -> Balancer {
        Balancer {
            up: urls.iter().map(|_| AtomicBool::new(true)).collect(),
            outs: urls.iter().map(|_| AtomicUsize::new(0)).collect(),
            next: AtomicUsize::new(0),
            urls: urls.to_vec(),
        }
    }

    /// The next node in service, round robin; `None` when none is.
    fn pick(&self) -> Option<usize> {
        let n = self.up.len();
        (0..n).map(|_| self.next.fetch_add(1, Ordering::Relaxed) % n).find(|&i| self.up[i].load(Ordering::Acquire))
    }

    /// Checks every node every [`PROBE_EVERY`] until `stop`.
    fn probe(&self, stop: &AtomicBool) {
        let http = child::Http::new(Duration::from_millis(500));
        while !stop.load(Ordering::Relaxed) {
            for (i, url) in self.urls.iter().enumerate() {
                let ready = http.get(&format!("{url}/readyz"), &[]).is_ok_and(|r| r.status == 200);
                if self.up[i].swap(ready, Ordering::AcqRel) && !ready {
                    self.outs[i].fetch_add(1, Ordering::AcqRel);
                }
            }
            std::thread::sleep(PROBE_EVERY);
        }
    }
}

/// One client's connections, one pool per node, renewed when the balancer takes the node out.
struct Conns<'a> {
    balancer: &'a Balancer,
    pools: Vec<(usize, child::Http)>,
}

impl<'a> Conns<'a> {
    fn new(balancer: &'a Balancer) -> Conns<'a> {
        Conns {
            balancer,
            pools: balancer.urls.iter().map(|_| (0, child::Http::new(Duration::from_secs(30)))).collect(),
        }
    }

    /// A node in service and this client's connection pool to it (a handle: pools are shared).
    fn pick(&mut self) -> Result<(usize, child::Http), String> {
        let i = self.balancer.pick().ok_or("no node in service")?;
        let outs = self.balancer.outs[i].load(Ordering::Acquire);
        if self.pools[i].0 != outs {
            self.pools[i] = (outs, child::Http::new(Duration::from_secs(30)));
        }
        Ok((i, self.pools[i].1.clone()))
    }
}

/// Every request's outcome, stamped with when it ended.
#[derive(Default)]
struct Log {
    done: Vec<(Instant, Duration)>,
    failed: Vec<(Instant, String)>,
}

impl Log {
    /// Records one request: `Ok` with a 2xx status, or a failure.
    fn record(&mut self, what: &str, node: usize, started: Instant, r: Result<u16, String>) -> bool {
        let now = Instant::now();
        match r {
            Ok(status) if (200..300).contains(&status) || status == 302 => {
                self.done.push((now, now - started));
                true
            }
            Ok(status) => {
                self.failed.push((now, format!("{what} on node {}: {status}", node + 1)));
                false
            }
            Err(e) => {
                self.failed.push((now, format!("{what} on node {}: {e}", node + 1)));
                false
            }
        }
    }
}

/// One user's loop: sign-in, client credentials, code → exchange → refresh, until `stop`.
struct Client<'a> {
    conns: Conns<'a>,
    nodes: &'a nodes::Nodes,
    soft: Soft,
    email: String,
    cookie: String,
    web: &'a child::Client,
    m2m: &'a child::Client,
}

impl Client<'_> {
    fn tenant(&self, node: usize) -> child::Tenant {
        child::Tenant { slug: "bench".into(), base: self.nodes.url(node, "/bench"), origin: self.nodes.public.clone() }
    }

    fn run(&mut self, stop: &AtomicBool, log: &mut Log) {
        while !stop.load(Ordering::Relaxed) {
            self.round(log);
        }
    }

    fn round(&mut self, log: &mut Log) {
        let failed = |log: &mut Log, what: &str, e: String| log.failed.push((Instant::now(), format!("{what}: {e}")));
        // A passkey sign-in, started on one node and finished on the next in service.
        let t = Instant::now();
        let options = match self.conns.pick() {
            Ok((a, http)) => {
                let r = self.tenant(a).auth_start(&http, &self.email);
                let ok = r.as_ref().map(|_| 200).map_err(Clone::clone);
                if !log.record("auth/start", a, t, ok) {
                    return;
                }
                r.unwrap_or_default()
            }
            Err(e) => return failed(log, "auth/start", e),
        };
        let t = Instant::now();
        match self.conns.pick() {
            Ok((b, http)) => {
                let tenant = self.tenant(b);
                let r = tenant.auth_finish(&http, &mut self.soft, &options).map(|r| r.status);
                log.record("auth/finish", b, t, r);
            }
            Err(e) => failed(log, "auth/finish", e),
        }
        // A client-credentials grant.
        let t = Instant::now();
        match self.conns.pick() {
            Ok((c, http)) => {
                let r = self.tenant(c).client_credentials(&http, self.m2m).map(|r| r.status);
                log.record("client_credentials", c, t, r);
            }
            Err(e) => failed(log, "client_credentials", e),
        }
        // A code from /authorize, exchanged on the next node, its refresh token rotated on the next.
        let t = Instant::now();
        let (code, verifier) = match self.conns.pick() {
            Ok((d, http)) => match self.tenant(d).code(&http, self.web, &self.cookie) {
                Ok(c) => {
                    log.record("authorize", d, t, Ok(302));
                    c
                }
                Err(e) => return failed(log, &format!("authorize on node {}", d + 1), e),
            },
            Err(e) => return failed(log, "authorize", e),
        };
        let t = Instant::now();
        let refresh = match self.conns.pick() {
            Ok((e, http)) => {
                let r = self.tenant(e).exchange(&http, self.web, &code, &verifier);
                if !log.record("code exchange", e, t, r.as_ref().map(|r| r.status).map_err(Clone::clone)) {
                    return;
                }
                r.map(|r| r.json()["refresh_token"].as_str().unwrap_or_default().to_owned()).unwrap_or_default()
            }
            Err(e) => return failed(log, "code exchange", e),
        };
        let t = Instant::now();
        match self.conns.pick() {
            Ok((f, http)) => {
                let r = self.tenant(f).refresh(&http, self.web, &refresh).map(|r| r.status);
                log.record("refresh", f, t, r);
            }
            Err(e) => failed(log, "refresh", e),
        }
    }
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 - 1.0) * p) as usize].as_secs_f64() * 1e3
}

fn main() {
    if nodes::postgres_nodes().is_none() {
        println!("rolling restart: skipped (BENCH_BACKEND=postgres inside pg_virtualenv runs it)");
        return;
    }
    let clients: usize = std::env::var("BENCH_CLIENTS").ok().and_then(|v| v.parse().ok()).unwrap_or(8);
    // The nodes read LATCHKEY_SERVER_DRAIN too: `LATCHKEY_SERVER_DRAIN=0s` shows the same restart
    // without a drain.
    let drain = std::env::var("LATCHKEY_SERVER_DRAIN").unwrap_or_else(|_| "5s (the default)".into());
    let mut nodes = nodes::Nodes::start(3);
    let socket = nodes.socket();
    support::cli(&socket, &["tenant", "create", "bench", "-o", "json"]).ok();
    let web = child::create_app(&socket, "bench", "web", "web");
    let m2m = child::create_app(&socket, "bench", "m2m", "m2m");
    let rotated = child::create_app(&socket, "bench", "rotated", "m2m");
    println!(
        "rolling restart of 3 latchkeyd nodes on PostgreSQL database {} ({} cores, release build, loopback HTTP): \
         {clients} clients, server.drain {drain}, balancer checks /readyz every {} ms and never retries",
        nodes.database(),
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        PROBE_EVERY.as_millis()
    );
    // Users registered through node 1 (not timed), each with its browser session.
    let setup = child::Http::new(Duration::from_secs(30));
    let users: Vec<(String, Soft, String)> = (0..clients)
        .map(|i| {
            let email = format!("u{i}@bench.test");
            let invite = child::invite(&socket, "bench", &email);
            let mut soft = Soft::new(&nodes.public);
            let tenant =
                child::Tenant { slug: "bench".into(), base: nodes.url(0, "/bench"), origin: nodes.public.clone() };
            let r = tenant.register(&setup, &mut soft, &email, &invite).expect("register");
            assert_eq!(r.status, 201, "{}", r.body);
            let cookie = r.session_cookie().expect("session cookie");
            (email, soft, cookie)
        })
        .collect();

    // The nodes are restarted here while the load borrows `nodes`; dropped before it.
    let mut daemons = std::mem::take(&mut nodes.daemons);
    let balancer = Balancer::new(&nodes.urls);
    let stop = AtomicBool::new(false);
    let admin_log = Mutex::new(Log::default());
    let began = Instant::now();
    let mut windows: Vec<(Instant, Instant, usize)> = vec![];
    let mut exits: Vec<String> = vec![];
    let logs: Vec<Log> = std::thread::scope(|s| {
        s.spawn(|| balancer.probe(&stop));
        let handles: Vec<_> = users
            .into_iter()
            .map(|(email, soft, cookie)| {
                let (balancer, nodes, web, m2m, stop) = (&balancer, &nodes, &web, &m2m, &stop);
                s.spawn(move || {
                    let mut log = Log::default();
                    let mut c = Client { conns: Conns::new(balancer), nodes, soft, email, cookie, web, m2m };
                    c.run(stop, &mut log);
                    log
                })
            })
            .collect();
        // Admin changes through a node in service: another app's secret, every 300 ms.
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                let t = Instant::now();
                let (node, result, body) = match balancer.pick() {
                    Some(i) => {
                        let path = format!("/admin/v1/tenants/bench/apps/{}/rotate-secret", rotated.id);
                        let (status, body) = child::admin_try(&nodes.socket_of(i), "POST", &path, None);
                        (i, if status == 0 { Err("admin socket: no answer".into()) } else { Ok(status) }, body)
                    }
                    None => (0, Err("no node in service".into()), json!(null)),
                };
                let mut log = admin_log.lock().unwrap();
                if !log.record("rotate-secret", node, t, result.clone()) {
                    eprintln!("admin change failed: {result:?} {body}");
                }
                drop(log);
                std::thread::sleep(Duration::from_millis(300));
            }
        });

        std::thread::sleep(Duration::from_secs(5));
        for (i, daemon) in daemons.iter_mut().enumerate() {
            let from = Instant::now();
            let code = daemon.stop();
            let stopped = from.elapsed();
            let restarted =
                child::Daemon::start(&daemon.data, &daemon.log).unwrap_or_else(|e| panic!("node {}: {e}", i + 1));
            *daemon = restarted;
            let ready = from.elapsed();
            windows.push((from, Instant::now(), i));
            exits.push(format!(
                "node {}: SIGTERM → exit {code:?} after {:.2} s, ready again {:.2} s after the SIGTERM",
                i + 1,
                stopped.as_secs_f64(),
                ready.as_secs_f64()
            ));
            std::thread::sleep(Duration::from_secs(3));
        }
        std::thread::sleep(Duration::from_secs(2));
        stop.store(true, Ordering::Relaxed);
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let wall = began.elapsed();

    let mut done: Vec<(Instant, Duration)> = vec![];
    let mut failed: Vec<(Instant, String)> = vec![];
    for log in logs.into_iter().chain([admin_log.into_inner().unwrap()]) {
        done.extend(log.done);
        failed.extend(log.failed);
    }
    failed.sort_by_key(|(at, _)| *at);
    for line in &exits {
        println!("  {line}");
    }
    let total = done.len() + failed.len();
    let mut all: Vec<Duration> = done.iter().map(|(_, d)| *d).collect();
    all.sort();
    let during = |at: Instant| windows.iter().any(|(from, to, _)| at >= *from && at <= *to);
    let mut restarting: Vec<Duration> = done.iter().filter(|(at, _)| during(*at)).map(|(_, d)| *d).collect();
    restarting.sort();
    let seconds = wall.as_secs() as usize + 1;
    let mut per_second = vec![0usize; seconds];
    for (at, _) in &done {
        per_second[(*at - began).as_secs() as usize] += 1;
    }
    // The last, partial second says nothing.
    let mut rates: Vec<usize> = per_second[..seconds.saturating_sub(1)].to_vec();
    rates.sort_unstable();
    println!(
        "requests {total} in {:.1} s: {} succeeded, {} FAILED; per second: lowest {}, median {}, highest {}",
        wall.as_secs_f64(),
        done.len(),
        failed.len(),
        rates.first().copied().unwrap_or(0),
        rates.get(rates.len() / 2).copied().unwrap_or(0),
        rates.last().copied().unwrap_or(0)
    );
    println!(
        "latency: whole run p50 {:.2} ms p99 {:.2} ms; while a node was stopping or starting ({} requests) p50 {:.2} ms p99 {:.2} ms",
        pct(&all, 0.5),
        pct(&all, 0.99),
        restarting.len(),
        pct(&restarting, 0.5),
        pct(&restarting, 0.99)
    );
    println!("per second: {per_second:?}");
    for (at, what) in failed.iter().take(10) {
        println!("  failed at {:.2} s: {what}", (*at - began).as_secs_f64());
    }
    drop(daemons);
}
