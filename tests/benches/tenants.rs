//! Benchmark: a daemon with 10,000 tenants. Fills a database with 10,000 tenants, each with its
//! own sealed signing key (one generated RSA key sealed for every tenant: generating 10,000 keys
//! would take a quarter of an hour and measures nothing of the daemon), then starts the
//! release-build `latchkeyd` on it and prints: start to ready, resident memory after start and
//! after serving 100 tenants, the first and a later request to the first and the 10,000th tenant,
//! and tenant creation times over the admin socket (the first one right after the start, with the
//! spare signing key the previous run kept).
//!
//! Then, on a new data directory, 10,000 tenants by `latchkey apply` as an operator runs it: the
//! CLI's wall time and the daemon's peak memory; a restart right after (discovery of every
//! tenant, JWKS keys of tenants asked for, a first token, creations while the keys are made); a
//! kill in the middle of a second apply (all of it or none of it after the restart).
//!
//! Run: `cargo build --release --workspace --bins && cargo bench -p latchkey-tests --bench tenants`
//! (`BENCH_PHASE=serve` or `apply`: one part). Prints figures; asserts nothing about speed, only
//! that the killed apply left all or none of its tenants.

#[path = "../e2e/authenticator.rs"]
mod authenticator;
#[path = "common/child.rs"]
mod child;
#[path = "../e2e/support.rs"]
mod support;

use std::time::{Duration, Instant};

use child::{Daemon, DataDir, Http, free_port};
use latchkey::admin::CreateTenant;
use latchkey_domain::crypto::Kek;
use latchkey_domain::tenants;
use latchkey_store::Db;
use serde_json::json;

const TENANTS: usize = 10_000;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn percentile(samples: &mut [f64], p: f64) -> f64 {
    samples.sort_by(|a, b| a.total_cmp(b));
    samples[((samples.len() as f64 - 1.0) * p) as usize]
}

fn main() {
    // BENCH_PHASE=serve or apply runs one of the two; both by default.
    let phase = std::env::var("BENCH_PHASE").unwrap_or_default();
    if phase != "apply" {
        serve();
    }
    if phase != "serve" {
        apply();
    }
}

/// A daemon started on a database of 10,000 tenants: memory, first requests, creations.
fn serve() {
    let tmp = tempfile::tempdir().unwrap();
    let data = DataDir::new(&tmp.path().join("data"), free_port());
    let log = tmp.path().join("daemon.log");
    // A first start creates the database and the key-encryption key. It runs long enough to
    // generate its spare signing key (at idle priority), which its shutdown keeps beside the
    // database for the next start, as a daemon that has been serving for a while does.
    let mut d = Daemon::start(&data, &log).unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    d.stop();
    let kept = data.db().with_extension("db.spare-key").exists();

    let fill = Instant::now();
    let db = Db::open(&data.db()).unwrap();
    let kek = Kek::load(&data.kek()).unwrap();
    let key = latchkey_domain::oidc::keys::generate(2048).unwrap();
    let public_url = data.origin();
    for batch in 0..TENANTS / 1000 {
        db.write_blocking(|tx| -> Result<(), latchkey_domain::error::Error> {
            for i in batch * 1000..(batch + 1) * 1000 {
                let req = CreateTenant { slug: format!("t{i:05}"), ..CreateTenant::default() };
                let v = tenants::validate(&req, &public_url)?;
                tenants::insert_tenant(tx, &kek, &v, Some(&key), 2048, 1)?;
            }
            Ok(())
        })
        .unwrap();
    }
    drop(db);
    println!(
        "latchkey 10,000-tenant benchmark: {} cores, release build; {TENANTS} tenants stored in {:.1} s",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        fill.elapsed().as_secs_f64()
    );

    let started = Instant::now();
    let d = Daemon::start(&data, &log).unwrap();
    let ready = started.elapsed();
    let (rss_start, _) = d.memory_kib();
    println!("start to ready (/readyz 200, admin socket present): {:>8.1} ms", ms(ready));
    println!("resident memory after start:                       {:>8.1} MiB", rss_start as f64 / 1024.0);

    let http = Http::new(Duration::from_secs(5));
    let get = |slug: &str, what: &str| -> f64 {
        let t = Instant::now();
        let r = http.get(&format!("{}/{slug}/{what}", data.origin()), &[]).unwrap();
        assert_eq!(r.status, 200, "{slug}/{what}");
        ms(t.elapsed())
    };
    for slug in ["t00000", "t09999"] {
        let first = get(slug, ".well-known/jwks.json");
        let again = get(slug, ".well-known/jwks.json");
        let discovery = get(slug, ".well-known/openid-configuration");
        println!(
            "{slug}: first request (loads its keys) {first:>6.2} ms, JWKS again {again:>6.2} ms, discovery {discovery:>6.2} ms"
        );
    }
    let mut warm = Vec::new();
    for i in (0..TENANTS).step_by(TENANTS / 100) {
        let slug = format!("t{i:05}");
        get(&slug, ".well-known/jwks.json");
        warm.push(get(&slug, ".well-known/openid-configuration"));
    }
    let (rss_served, _) = d.memory_kib();
    println!(
        "100 tenants served: discovery p50 {:.2} ms p99 {:.2} ms; resident memory {:.1} MiB",
        percentile(&mut warm, 0.5),
        percentile(&mut warm, 0.99),
        rss_served as f64 / 1024.0
    );

    // Tenant creation as an operator does it: first the one right after the start (its key was
    // generated ahead while the daemon started), then one at a time with a pause between (the
    // spare key is replaced meanwhile); then back to back, where key generation sets the pace.
    let create = |slug: &str| -> f64 {
        let t = Instant::now();
        let (status, body) = d.admin("POST", "/admin/v1/tenants", Some(&json!({ "slug": slug })));
        assert_eq!(status, 201, "{body}");
        ms(t.elapsed())
    };
    let since_ready = started.elapsed() - ready;
    let first = create("new-first");
    println!(
        "first tenant created after the start: {first:.2} ms ({:.0} ms after ready; {})",
        since_ready.as_secs_f64() * 1e3,
        if kept { "with the spare key the last shutdown kept" } else { "no spare key kept: generated at the start" }
    );
    std::thread::sleep(Duration::from_millis(400));
    let mut spaced = Vec::new();
    for i in 0..40 {
        spaced.push(create(&format!("new{i}")));
        std::thread::sleep(Duration::from_millis(400));
    }
    let mut back_to_back: Vec<f64> = (0..20).map(|i| create(&format!("burst{i}"))).collect();
    println!(
        "tenant creation with {TENANTS} tenants: one at a time (40) p50 {:.2} ms p99 {:.2} ms max {:.2} ms; back to back p50 {:.1} ms p99 {:.1} ms",
        percentile(&mut spaced, 0.5),
        percentile(&mut spaced, 0.99),
        percentile(&mut spaced, 1.0),
        percentile(&mut back_to_back, 0.5),
        percentile(&mut back_to_back, 0.99)
    );
    let new_first = get("new39", ".well-known/jwks.json");
    println!("a new tenant is routed at once: its JWKS in {new_first:.2} ms");
}

/// `latchkey` (the CLI) with the daemon's admin socket.
fn cli(data: &DataDir, args: &[&str]) -> std::process::Output {
    std::process::Command::new(support::bin("latchkey"))
        .args(args)
        .env("LATCHKEY_ADMIN_SOCKET", data.socket())
        .output()
        .expect("run latchkey")
}

fn declared(path: &std::path::Path, prefix: &str) {
    let text: String = (0..TENANTS).map(|i| format!("[[tenant]]\nslug = \"{prefix}{i:05}\"\n\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// Counts in the database (read-only, beside the running daemon).
fn count(data: &DataDir, sql: &str) -> i64 {
    data.open_ro().query_row(sql, [], |r| r.get(0)).unwrap()
}

/// 10,000 tenants by `apply` as an operator runs it: the CLI against a release daemon in the
/// default configuration on a new data directory; then a restart right after, what it serves
/// while the tenants' keys are being made, and a kill in the middle of a second apply.
fn apply() {
    let tmp = tempfile::tempdir().unwrap();
    let data = DataDir::new(&tmp.path().join("data"), free_port());
    let log = tmp.path().join("daemon.log");
    let file = tmp.path().join("tenants.toml");
    declared(&file, "a");
    let mut d = Daemon::start(&data, &log).unwrap();
    let t = Instant::now();
    let out = cli(&data, &["apply", "-f", file.to_str().unwrap(), "-q"]);
    let wall = t.elapsed();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (_, peak) = d.memory_kib();
    let keyed = count(&data, "SELECT COUNT(*) FROM signing_keys");
    println!(
        "apply of {TENANTS} new tenants (CLI, default configuration): {:.1} s wall, daemon peak RSS {:.1} MiB; keys made by then {keyed}",
        wall.as_secs_f64(),
        peak as f64 / 1024.0
    );

    // A restart right after: everything served at once, keys made in the background, a tenant
    // asked for has its key first.
    d.stop();
    let started = Instant::now();
    let mut d = Daemon::start(&data, &log).unwrap();
    let ready = started.elapsed();
    let http = Http::new(Duration::from_secs(30));
    let t = Instant::now();
    for i in 0..TENANTS {
        let r = http.get(&format!("{}/a{i:05}/.well-known/openid-configuration", data.origin()), &[]).unwrap();
        assert_eq!(r.status, 200);
    }
    println!(
        "restart: ready in {:.2} s; discovery of all {TENANTS} tenants 200 in {:.1} s",
        ready.as_secs_f64(),
        t.elapsed().as_secs_f64()
    );
    // JWKS of 100 tenants across the range, polled as a verifier would: each asked for moves to
    // the front of the queue.
    let t = Instant::now();
    let mut waits = vec![];
    for i in (0..TENANTS).step_by(TENANTS / 100) {
        let asked = Instant::now();
        loop {
            let r = http.get(&format!("{}/a{i:05}/.well-known/jwks.json", data.origin()), &[]).unwrap();
            if r.json()["keys"].as_array().is_some_and(|k| !k.is_empty()) {
                break;
            }
            assert!(asked.elapsed() < Duration::from_secs(120), "no key for a{i:05}");
            std::thread::sleep(Duration::from_millis(20));
        }
        waits.push(ms(asked.elapsed()));
    }
    println!(
        "JWKS with an RS256 key, 100 tenants polled one after another: all within {:.1} s; each p50 {:.0} ms p99 {:.0} ms",
        t.elapsed().as_secs_f64(),
        percentile(&mut waits, 0.5),
        percentile(&mut waits, 0.99)
    );
    // A token for a tenant whose key has not been made: the request waits for that key.
    let slug = format!("a{:05}", TENANTS - 7);
    let client = child::create_app(&data.socket(), &slug, "m2m", "m2m");
    let t = Instant::now();
    let r = http
        .post_form(&format!("{}/{slug}/token", data.origin()), &client, &[("grant_type", "client_credentials")])
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    println!("first token of a tenant without its key yet (made on the spot): {:.0} ms", ms(t.elapsed()));

    // One at a time while the keys of the others are being made.
    let mut spaced = Vec::new();
    for i in 0..40 {
        let t = Instant::now();
        let (status, body) = d.admin("POST", "/admin/v1/tenants", Some(&json!({ "slug": format!("one{i}") })));
        assert_eq!(status, 201, "{body}");
        spaced.push(ms(t.elapsed()));
        std::thread::sleep(Duration::from_millis(250));
    }
    let made = count(&data, "SELECT COUNT(*) FROM signing_keys WHERE alg = 'RS256' AND state = 'current'");
    println!(
        "tenant creation one at a time (40, keys being made meanwhile): p50 {:.2} ms p99 {:.2} ms max {:.2} ms",
        percentile(&mut spaced, 0.5),
        percentile(&mut spaced, 0.99),
        percentile(&mut spaced, 1.0)
    );
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "keys made in the background: {made} of {} tenants {elapsed:.0} s after the restart ({:.0} a second on idle cores)",
        TENANTS + 40,
        made as f64 / elapsed
    );

    // Killed during a second apply: all of it or none, and no tenant half made.
    declared(&file, "b");
    let mut apply = std::process::Command::new(support::bin("latchkey"))
        .args(["apply", "-f", file.to_str().unwrap(), "-q"])
        .env("LATCHKEY_ADMIN_SOCKET", data.socket())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Within the apply's second (most of it the one transaction), somewhere.
    let delay = Duration::from_millis(150 + u64::from(std::process::id() % 700));
    std::thread::sleep(delay);
    d.kill();
    let finished = apply.wait().unwrap().success();
    let d = Daemon::start(&data, &log).unwrap();
    let b = count(&data, "SELECT COUNT(*) FROM tenants WHERE slug LIKE 'b%'");
    let doubled = count(
        &data,
        "SELECT COUNT(*) FROM (SELECT tenant_id FROM signing_keys WHERE state = 'current' GROUP BY tenant_id, alg HAVING COUNT(*) > 1)",
    );
    assert!(b == 0 || b == TENANTS as i64, "{b} of the killed apply's tenants");
    assert!(!finished || b == TENANTS as i64, "the CLI said done, but {b} tenants");
    assert_eq!(doubled, 0);
    println!(
        "daemon killed {:.1} s into a second apply: {b} of its {TENANTS} tenants after the restart (all or none), CLI {}",
        delay.as_secs_f64(),
        if finished { "had finished" } else { "had not finished" }
    );
    drop(d);
}
