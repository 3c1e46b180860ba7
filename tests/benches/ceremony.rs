//! Benchmark: complete passkey sign-in ceremonies (auth/start + authenticator + auth/finish)
//! against an in-process daemon built with the release profile, over real HTTP on loopback and
//! a real SQLite file (WAL, synchronous=FULL: the finish's commit is durable; the start's
//! challenge commits without an fsync of its own when its batch holds nothing else).
//!
//! Run: `cargo bench -p latchkey-tests --bench ceremony`. Prints figures; asserts nothing about
//! speed. The timed sign-ins go through `common/lean_async.rs` (one kept-alive connection per
//! client, every client on one event-loop thread: a client that leaves the cores to the server);
//! set-up goes through the tests' usual client.
//! With `BENCH_PEER_WEBAUTHN=http://127.0.0.1:PORT` (bench/peers/simplewebauthn.mjs, which
//! speaks the same four calls) the same authenticator and clients then run against that peer.
//!
//! With `BENCH_BACKEND=postgres BENCH_NODES=1|2|3` (the `PG*` variables pointing at a server, e.g.
//! inside `pg_virtualenv`) the sign-ins (1 and 16 clients, username-first) run instead against
//! that many release `latchkeyd` processes on one new database (see `common/nodes.rs`; run
//! `cargo build --release --workspace --bins` first): ceremony k starts on node k mod N and
//! finishes on the next node, so with several nodes every sign-in crosses nodes.

#[path = "../e2e/authenticator.rs"]
mod authenticator;
#[path = "common/ceiling.rs"]
mod ceiling;
#[path = "common/child.rs"]
mod child;
#[path = "common/lean.rs"]
mod lean;
#[path = "common/lean_async.rs"]
mod lean_async;
#[path = "common/meter.rs"]
mod meter;
#[path = "common/nodes.rs"]
mod nodes;
#[path = "../e2e/support.rs"]
mod support;

use std::time::{Duration, Instant};

use authenticator::{Soft, Tamper};
use serde_json::json;
use support::{Site, TestDaemon, admin_raw, admin_request};

fn setup_user(d: &TestDaemon, site: &Site, email: &str) -> Soft {
    let body = serde_json::to_vec(&json!({"email": email, "name": "Bench User"})).unwrap();
    let (status, inv) = admin_raw(
        &d.socket,
        &admin_request("POST", "/admin/v1/tenants/bench/users/invite", Some("application/json"), &body),
    );
    assert_eq!(status, 201, "{inv}");
    let token = inv["invite_url"].as_str().unwrap().rsplit('/').next().unwrap().to_owned();
    let mut soft = Soft::new(&site.origin);
    let r = site.register(&mut soft, email, Some(&token), None, &Tamper::default());
    assert_eq!(r.status, 201, "{}", r.body);
    soft
}

/// One timed sign-in through the event-loop client: auth/start, the authenticator, auth/finish.
async fn ceremony(
    http: &mut lean_async::AsyncLean,
    path: &str,
    origin: &str,
    soft: &mut Soft,
    username: Option<&str>,
) -> Duration {
    let started = Instant::now();
    let origin = [("Origin", origin)];
    let body = match username {
        Some(u) => json!({"username": u}),
        None => json!({}),
    };
    let start =
        http.post(&format!("{path}/auth/start"), "application/json", body.to_string().as_bytes(), &origin).await;
    assert_eq!(start.status, 200, "auth/start: {}", start.text());
    let options: serde_json::Value = serde_json::from_slice(&start.body).unwrap();
    let assertion = soft.get(&options, &Tamper::default());
    let body = json!({"assertion": assertion, "challenge": options["challenge"]}).to_string();
    let r = http.post(&format!("{path}/auth/finish"), "application/json", body.as_bytes(), &origin).await;
    assert_eq!(r.status, 200, "auth/finish: {}", r.text());
    started.elapsed()
}

/// Every user signs in `per` times, all users at once (by e-mail address, or by passkey alone
/// without `username_first`): one task and kept-alive connection per user, every one of them on
/// one event-loop thread (`common/lean_async.rs`); every ceremony's duration. Sixteen blocking
/// client threads instead took 10% more CPU per sign-in from the two cores (three interleaved
/// runs: 327–384 µs against 292–311, and 4,491–5,153 sign-ins/s against 5,425–5,582).
fn concurrently(site: &Site, users: &mut Vec<(String, Soft)>, per: usize, username_first: bool) -> Vec<Duration> {
    let (authority, path) = lean::split(&site.base);
    let done = lean_async::clients(&authority, std::mem::take(users), |(email, mut soft), mut http| {
        let (path, origin) = (path.clone(), site.origin.clone());
        async move {
            let mut samples = Vec::with_capacity(per);
            for _ in 0..per {
                let username = username_first.then_some(email.as_str());
                samples.push(ceremony(&mut http, &path, &origin, &mut soft, username).await);
            }
            (email, soft, samples)
        }
    });
    let mut all = Vec::with_capacity(per * done.len());
    for (email, soft, samples) in done {
        users.push((email, soft));
        all.extend(samples);
    }
    all
}

fn report(label: &str, mut samples: Vec<Duration>, wall: Duration) {
    samples.sort();
    let pct = |p: f64| samples[((samples.len() as f64 - 1.0) * p) as usize].as_secs_f64() * 1e3;
    println!(
        "{label:<44} {:>6} ceremonies in {:>6.2} s = {:>7.0}/s   p50 {:>5.2} ms  p99 {:>5.2} ms",
        samples.len(),
        wall.as_secs_f64(),
        samples.len() as f64 / wall.as_secs_f64(),
        pct(0.5),
        pct(0.99)
    );
}

/// Rounds of the 16-client sign-ins, each followed by its ceiling (`common/ceiling.rs`).
const ROUNDS: usize = 4;

fn main() {
    let n: usize = std::env::var("BENCH_CEREMONIES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    if let Some(count) = nodes::postgres_nodes() {
        return on_postgres(count, n);
    }
    let d = TestDaemon::start_with(|f| f.limits.ceremony_rate_per_minute = Some(0));
    let (status, t) = admin_raw(
        &d.socket,
        &admin_request("POST", "/admin/v1/tenants", Some("application/json"), br#"{"slug":"bench"}"#),
    );
    assert_eq!(status, 201, "{t}");
    let site = Site { d: &d, slug: "bench".into(), base: format!("{}/bench", d.base), origin: d.base.clone() };
    println!(
        "latchkey sign-in ceremony benchmark: {} cores, release build, loopback HTTP, SQLite WAL synchronous=FULL",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    );

    let mut one = vec![("seq@bench.test".to_owned(), setup_user(&d, &site, "seq@bench.test"))];
    concurrently(&site, &mut one, 20, true);
    let wall = Instant::now();
    let samples = concurrently(&site, &mut one, n, true);
    report("1 client, username-first", samples, wall.elapsed());

    let wall = Instant::now();
    let samples = concurrently(&site, &mut one, n, false);
    report("1 client, username-less (discoverable)", samples, wall.elapsed());

    for clients in [4usize, 16] {
        let mut users: Vec<(String, Soft)> = (0..clients)
            .map(|i| {
                let email = format!("c{clients}-{i}@bench.test");
                let soft = setup_user(&d, &site, &email);
                (email, soft)
            })
            .collect();
        // The goal's ratio is taken at 16 clients, in rounds interleaved with its ceiling.
        let rounds = if clients == 16 { ROUNDS } else { 1 };
        let mut ceiling = ceiling::Rounds::new(ceiling::Ceiling::P256VerifiesOneCore, rounds);
        let before = meter::writer_counts(&d);
        let mut cpu = meter::Meter::read(&d);
        let (samples, wall) =
            ceiling.run(&mut cpu, &d, |_| concurrently(&site, &mut users, n / clients / rounds, true));
        let count = samples.len();
        report(&format!("{clients} concurrent clients, username-first"), samples, wall);
        // CPU per ceremony moves less than the rate with the machine's other tenants: compare
        // builds by it.
        cpu.report_since(&d, count);
        let meter::WriterCounts { writes, commits, unsynced } = meter::writer_counts(&d) - before;
        println!(
            "{:<44} {writes:>6} writes in {commits} commits = {:.1} per commit ({unsynced} of them without fsync)",
            "  group commit",
            writes as f64 / commits.max(1) as f64
        );
        ceiling.report();
    }

    let mut http = lean::Lean::new(&lean::split(&site.base).0);
    let (start_path, body) = (format!("{}/auth/start", lean::split(&site.base).1), br#"{"username":"seq@bench.test"}"#);
    let wall = Instant::now();
    let starts: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            let r = http.post(&start_path, "application/json", body, &[("Origin", site.origin.as_str())]);
            assert_eq!(r.status, 200, "auth/start: {}", r.text());
            t.elapsed()
        })
        .collect();
    report("auth/start alone (1 client)", starts, wall.elapsed());

    if let Ok(peer) = std::env::var("BENCH_PEER_WEBAUTHN") {
        peer_runs(&d, &peer, n);
    }
}

/// The same ceremonies against SimpleWebAuthn in its wrapper (registration needs no invite there).
fn peer_runs(d: &TestDaemon, peer: &str, n: usize) {
    let site = Site { d, slug: "bench".into(), base: format!("{peer}/bench"), origin: peer.to_owned() };
    let enrol = |email: &str| {
        let mut soft = Soft::new(&site.origin);
        let r = site.register(&mut soft, email, None, None, &Tamper::default());
        assert_eq!(r.status, 201, "{}", r.body);
        soft
    };
    let mut one = vec![("seq@bench.test".to_owned(), enrol("seq@bench.test"))];
    concurrently(&site, &mut one, 20, true);
    let wall = Instant::now();
    let samples = concurrently(&site, &mut one, n, true);
    report("peer simplewebauthn: 1 client, username-first", samples, wall.elapsed());
    let clients = 16;
    let mut users: Vec<(String, Soft)> = (0..clients)
        .map(|i| {
            let email = format!("c{i}@bench.test");
            let soft = enrol(&email);
            (email, soft)
        })
        .collect();
    let wall = Instant::now();
    let samples = concurrently(&site, &mut users, n / clients, true);
    report("peer simplewebauthn: 16 concurrent clients", samples, wall.elapsed());
}

/// Sign-ins against `count` release `latchkeyd` processes on one PostgreSQL database.
fn on_postgres(count: usize, n: usize) {
    let nodes = nodes::Nodes::start(count);
    let socket = nodes.socket();
    support::cli(&socket, &["tenant", "create", "bench", "-o", "json"]).ok();
    println!(
        "latchkey sign-in ceremony benchmark: {} cores, release build, loopback HTTP, PostgreSQL: {count} latchkeyd \
         process(es) on database {}, round robin",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        nodes.database()
    );
    let http = child::Http::new(Duration::from_secs(30));
    // Registered through node 1 (not timed).
    let enrol = |email: &str| {
        let token = child::invite(&socket, "bench", email);
        let tenant = child::Tenant { slug: "bench".into(), base: nodes.url(0, "/bench"), origin: nodes.public.clone() };
        let mut soft = Soft::new(&nodes.public);
        let r = tenant.register(&http, &mut soft, email, &token).expect("register");
        assert_eq!(r.status, 201, "{}", r.body);
        soft
    };
    // Started on the next node, finished on the one after it.
    let sign_in = |http: &child::Http, soft: &mut Soft, email: &str| {
        let t = Instant::now();
        let node = nodes.pick();
        let origin = [("Origin", nodes.public.as_str())];
        let start = http
            .post_json(&nodes.url(node, "/bench/auth/start"), &json!({"username": email}), &origin)
            .expect("auth/start");
        assert_eq!(start.status, 200, "auth/start on node {}: {}", node % nodes.len() + 1, start.body);
        let options = start.json();
        let assertion = soft.get(&options, &Tamper::default());
        let body = json!({"assertion": assertion, "challenge": options["challenge"]});
        let r = http.post_json(&nodes.url(node + 1, "/bench/auth/finish"), &body, &origin).expect("auth/finish");
        assert_eq!(r.status, 200, "auth/finish on node {}: {}", (node + 1) % nodes.len() + 1, r.body);
        t.elapsed()
    };

    let mut soft = enrol("seq@bench.test");
    for _ in 0..20 {
        sign_in(&http, &mut soft, "seq@bench.test");
    }
    let wall = Instant::now();
    let samples: Vec<Duration> = (0..n).map(|_| sign_in(&http, &mut soft, "seq@bench.test")).collect();
    report("1 client, username-first", samples, wall.elapsed());

    let clients = 16;
    let users: Vec<(String, Soft)> = (0..clients)
        .map(|i| {
            let email = format!("c{clients}-{i}@bench.test");
            let soft = enrol(&email);
            (email, soft)
        })
        .collect();
    let wall = Instant::now();
    let samples: Vec<Duration> = std::thread::scope(|s| {
        let handles: Vec<_> = users
            .into_iter()
            .map(|(email, mut soft)| {
                let sign_in = &sign_in;
                s.spawn(move || {
                    let http = child::Http::new(Duration::from_secs(30));
                    (0..n / clients).map(|_| sign_in(&http, &mut soft, &email)).collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    report(&format!("{clients} concurrent clients, username-first"), samples, wall.elapsed());
}
