//! Benchmark: SCIM user creations through one client, as a directory's first provisioning cycle
//! sends them: for each user a `GET /Users?filter=userName eq "…"` (is it there?) and then a
//! `POST /Users`, one after the other, over one keep-alive connection, against a fresh
//! release-build `latchkeyd --dev` (SQLite). Prints the wall-clock time, the rate and the daemon's
//! peak resident memory.
//!
//! Run: `cargo build --release --workspace --bins && cargo bench -p latchkey-tests --bench scim`.
//! `BENCH_USERS=N` sets how many (default 10,000).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn main() {
    let users: usize = std::env::var("BENCH_USERS").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let bins = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release");
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = Command::new(bins.join("latchkeyd"))
        .args(["--dev", "--listen", &format!("127.0.0.1:{port}"), "--data-dir"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start latchkeyd (cargo build --release --workspace --bins first)");
    let sock = dir.path().join("admin.sock");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !sock.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    let out = Command::new(bins.join("latchkey"))
        .args(["scim", "enable", "--tenant", "dev", "-q"])
        .env("LATCHKEY_ADMIN_SOCKET", &sock)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let token = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let auth = format!("Bearer {token}");
    let base = format!("http://127.0.0.1:{port}/dev/scim/v2");
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();

    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    for i in 0..users {
        let t = Instant::now();
        let name = format!("user{i:06}@bench.test");
        let found = agent
            .get(&format!("{base}/Users?filter=userName%20eq%20%22{name}%22"))
            .header("Authorization", &auth)
            .call()
            .unwrap();
        assert_eq!(found.status(), 200);
        let body = serde_json::json!({
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
            "userName": name,
            "externalId": format!("ext-{i}"),
            "name": {"givenName": "Bench", "familyName": format!("User {i}")},
            "emails": [{"primary": true, "type": "work", "value": name}],
            "active": true,
        });
        let created = agent
            .post(&format!("{base}/Users"))
            .header("Authorization", &auth)
            .header("Content-Type", "application/scim+json")
            .send(serde_json::to_vec(&body).unwrap())
            .unwrap();
        assert_eq!(created.status(), 201);
        slowest = slowest.max(t.elapsed());
    }
    let took = started.elapsed();
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
    let hwm = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1024.0;
    println!(
        "scim: {users} users (filter lookup + create each) in {:.2} s = {:.0} users/s; slowest pair {:.1} ms; daemon peak RSS {hwm:.1} MiB",
        took.as_secs_f64(),
        users as f64 / took.as_secs_f64(),
        slowest.as_secs_f64() * 1000.0
    );
    let _ = child.kill();
    let _ = child.wait();
}
