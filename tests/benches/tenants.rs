//! Benchmark: a daemon with 10,000 tenants. Fills a database with 10,000 tenants, each with its
//! own sealed signing key (one generated RSA key sealed for every tenant: generating 10,000 keys
//! would take a quarter of an hour and measures nothing of the daemon), then starts the
//! release-build `latchkeyd` on it and prints: start to ready, resident memory after start and
//! after serving 100 tenants, the first and a later request to the first and the 10,000th tenant,
//! and tenant creation times over the admin socket (the first one right after the start, with the
//! spare signing key the previous run kept).
//!
//! Run: `cargo build --release --workspace --bins && cargo bench -p latchkey-tests --bench tenants`.
//! Prints figures; asserts nothing about speed.

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
                tenants::insert_with_key(tx, &kek, &v, &key, 2048, 1)?;
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
