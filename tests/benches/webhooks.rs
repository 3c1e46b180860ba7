//! Benchmark: a burst of webhook events while the receiver is down, then the backlog's delivery.
//!
//! A release `latchkeyd` (SQLite, default settings, rate limits off) with one subscription to
//! `token.*` at a loopback port where nothing listens. `BENCH_EVENTS` token requests (default
//! 100,000; each an audited `token.authorization_code` failure, the cheapest audited request)
//! come from 4 clients; the daemon's resident memory is sampled every 100 ms throughout. Then
//! the receiver starts (keep-alive HTTP/1.1, answers 200 at once, checks every signature with
//! HMAC-SHA256 as the Standard Webhooks specification defines it) and the bench waits until
//! every event has arrived: each once, in order.
//!
//! Prints the burst rate, the backlog queued, the wait for the head's retry, the delivery rate,
//! and peak RSS (VmHWM) for the whole run.
//!
//! `BENCH_NO_WEBHOOK=1` runs the same burst with no subscription, for the memory the burst
//! itself costs (the SQLite page cache, connections, the audit queue).
//!
//! Run: `cargo build --release --workspace --bins && cargo bench -p latchkey-tests --bench webhooks`.

#[path = "../e2e/authenticator.rs"]
mod authenticator;
#[path = "common/child.rs"]
mod child;
#[path = "../e2e/support.rs"]
mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use child::{Daemon, DataDir, Http, create_app, free_port};
use serde_json::json;

const CLIENTS: usize = 4;

/// What the receiver saw: deliveries, signature failures, ids out of order or repeated.
#[derive(Default)]
struct Seen {
    count: AtomicU64,
    bad_signatures: AtomicU64,
    out_of_order: AtomicU64,
    last_id: Mutex<i64>,
}

fn receive(listener: TcpListener, key: Vec<u8>, seen: Arc<Seen>) {
    let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &key);
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let (key, seen) = (key.clone(), seen.clone());
        std::thread::spawn(move || {
            let mut reader = BufReader::new(&stream);
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let (mut len, mut id, mut ts, mut sig) = (0usize, String::new(), String::new(), String::new());
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 {
                        return;
                    }
                    let h = h.trim_end();
                    if h.is_empty() {
                        break;
                    }
                    if let Some((k, v)) = h.split_once(':') {
                        let v = v.trim().to_owned();
                        match k.to_ascii_lowercase().as_str() {
                            "content-length" => len = v.parse().unwrap_or(0),
                            "webhook-id" => id = v,
                            "webhook-timestamp" => ts = v,
                            "webhook-signature" => sig = v,
                            _ => {}
                        }
                    }
                }
                let mut body = vec![0; len];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                let mut signed = format!("{id}.{ts}.").into_bytes();
                signed.extend_from_slice(&body);
                let want = format!(
                    "v1,{}",
                    base64::engine::general_purpose::STANDARD.encode(aws_lc_rs::hmac::sign(&key, &signed).as_ref())
                );
                if sig != want {
                    seen.bad_signatures.fetch_add(1, Ordering::Relaxed);
                }
                let n: i64 = id.trim_start_matches("msg_").parse().unwrap_or(-1);
                {
                    let mut last = seen.last_id.lock().unwrap();
                    if n <= *last {
                        seen.out_of_order.fetch_add(1, Ordering::Relaxed);
                    }
                    *last = n;
                }
                seen.count.fetch_add(1, Ordering::Relaxed);
                let mut s = &stream;
                if s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").is_err() {
                    return;
                }
            }
        });
    }
}

fn main() {
    let events: u64 = std::env::var("BENCH_EVENTS").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::new(dir.path(), free_port());
    let daemon = Daemon::start(&data, &dir.path().join("daemon.log")).expect("start latchkeyd");
    let (status, body) = daemon.admin("POST", "/admin/v1/tenants", Some(&json!({"slug": "acme"})));
    assert_eq!(status, 201, "{body}");
    let receiver_port = free_port();
    let with_hook = std::env::var("BENCH_NO_WEBHOOK").is_err();
    let secret = if with_hook {
        let (status, hook) = daemon.admin(
            "POST",
            "/admin/v1/tenants/acme/webhooks",
            Some(&json!({"url": format!("http://127.0.0.1:{receiver_port}/hook"), "events": ["token.*"]})),
        );
        assert_eq!(status, 201, "{hook}");
        hook["secret"].as_str().unwrap().to_owned()
    } else {
        "whsec_".to_owned()
    };
    let key = base64::engine::general_purpose::STANDARD.decode(secret.trim_start_matches("whsec_")).unwrap();
    let app = create_app(&data.socket(), "acme", "web", "web");
    let token_url = format!("{}/acme/token", data.origin());

    // RSS, sampled throughout.
    let done = Arc::new(AtomicBool::new(false));
    let peak_rss = Arc::new(AtomicU64::new(0));
    let pid = daemon.pid();
    let sampler = {
        let (done, peak) = (done.clone(), peak_rss.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
                let rss = status
                    .lines()
                    .find_map(|l| l.strip_prefix("VmRSS:"))
                    .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
                    .unwrap_or(0);
                peak.fetch_max(rss, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let (rss_before, _) = daemon.memory_kib();

    // The burst.
    let started = Instant::now();
    let sent = Arc::new(AtomicU64::new(0));
    std::thread::scope(|s| {
        for _ in 0..CLIENTS {
            let (sent, app, url) = (sent.clone(), app.clone(), token_url.clone());
            s.spawn(move || {
                let http = Http::new(Duration::from_secs(30));
                while sent.fetch_add(1, Ordering::Relaxed) < events {
                    let r = http
                        .post_form(
                            &url,
                            &app,
                            &[
                                ("grant_type", "authorization_code"),
                                ("code", "no-such-code"),
                                ("redirect_uri", child::REDIRECT),
                                ("code_verifier", "v".repeat(43).as_str()),
                            ],
                        )
                        .unwrap();
                    assert_eq!(r.status, 400, "{}", r.body);
                }
            });
        }
    });
    let burst = started.elapsed();
    if !with_hook {
        std::thread::sleep(Duration::from_secs(2));
        done.store(true, Ordering::Relaxed);
        sampler.join().unwrap();
        let (rss, hwm) = daemon.memory_kib();
        println!(
            "webhooks: no subscription: burst of {events} in {:.2} s = {:.0} events/s; daemon RSS {:.1} MiB before, \
             {:.1} MiB after, peak sampled {:.1} MiB, VmHWM {:.1} MiB",
            burst.as_secs_f64(),
            events as f64 / burst.as_secs_f64(),
            rss_before as f64 / 1024.0,
            rss as f64 / 1024.0,
            peak_rss.load(Ordering::Relaxed) as f64 / 1024.0,
            hwm as f64 / 1024.0
        );
        return;
    }
    // Everything queued: the audit writer has written every event and its delivery.
    let db = data.open_ro();
    let queued = || -> u64 {
        db.query_row("SELECT count(*) FROM outbox WHERE webhook_id IS NOT NULL", [], |r| r.get::<_, i64>(0)).unwrap()
            as u64
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while queued() < events && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let backlog = queued();
    let (rss_backlog, _) = daemon.memory_kib();
    assert_eq!(backlog, events, "every event queued");

    // The receiver comes up; the head's retry is due within its backoff.
    let seen = Arc::new(Seen::default());
    let listener = TcpListener::bind(("127.0.0.1", receiver_port)).unwrap();
    let up_at = Instant::now();
    {
        let seen = seen.clone();
        std::thread::spawn(move || receive(listener, key, seen));
    }
    let deadline = Instant::now() + Duration::from_secs(3600);
    while seen.count.load(Ordering::Relaxed) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let first_after = up_at.elapsed();
    let draining = Instant::now();
    while seen.count.load(Ordering::Relaxed) < events && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let drain = draining.elapsed();
    std::thread::sleep(Duration::from_millis(500));
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    let (_, hwm) = daemon.memory_kib();
    let got = seen.count.load(Ordering::Relaxed);
    let mib = |kib: u64| kib as f64 / 1024.0;
    println!(
        "webhooks: burst of {events} audited token requests from {CLIENTS} clients in {:.2} s = {:.0} events/s, \
         receiver down; {backlog} deliveries queued",
        burst.as_secs_f64(),
        events as f64 / burst.as_secs_f64()
    );
    println!(
        "webhooks: receiver up; first delivery after {:.1} s (the head's backoff), then {got} delivered in {:.2} s = \
         {:.0}/s; {} bad signatures, {} out of order or repeated",
        first_after.as_secs_f64(),
        drain.as_secs_f64(),
        got as f64 / drain.as_secs_f64(),
        seen.bad_signatures.load(Ordering::Relaxed),
        seen.out_of_order.load(Ordering::Relaxed),
    );
    println!(
        "webhooks: daemon RSS {:.1} MiB before, {:.1} MiB with the backlog queued, peak sampled {:.1} MiB, VmHWM {:.1} MiB",
        mib(rss_before),
        mib(rss_backlog),
        mib(peak_rss.load(Ordering::Relaxed)),
        mib(hwm)
    );
    let ok = got == events
        && seen.bad_signatures.load(Ordering::Relaxed) == 0
        && seen.out_of_order.load(Ordering::Relaxed) == 0;
    if !ok {
        eprintln!("webhooks: FAILED: not every event arrived once, in order, signed");
        std::process::exit(1);
    }
}
