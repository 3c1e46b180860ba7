//! Benchmark: a connection flood against a release-build `latchkeyd` process. Opens 20,000
//! connections (as many as the file-descriptor limit allows) that send nothing or half a request
//! line, holds them, then drops them, and prints the daemon's resident memory (VmRSS from /proc)
//! idle, during the flood and after it, with `latchkey_connections_refused_total`.
//!
//! Run: `cargo build --release --workspace --bins && cargo bench -p latchkey-tests --bench flood`
//! (`FLOOD_CONNECTIONS` changes the count). Prints figures; asserts nothing about speed.

#[path = "../e2e/authenticator.rs"]
mod authenticator;
#[path = "../e2e/support.rs"]
mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::bin;

struct Daemon {
    child: Child,
    _dir: tempfile::TempDir,
    port: u16,
    metrics_port: u16,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Daemon {
    fn start() -> Daemon {
        let dir = tempfile::tempdir().unwrap();
        let free = || std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let (port, metrics_port) = (free(), free());
        let child = Command::new(bin("latchkeyd"))
            .args(["--dev", "--listen", &format!("127.0.0.1:{port}"), "--data-dir"])
            .arg(dir.path())
            .env("LATCHKEY_SERVER_METRICS_LISTEN", format!("127.0.0.1:{metrics_port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start latchkeyd");
        let d = Daemon { child, _dir: dir, port, metrics_port };
        let deadline = Instant::now() + Duration::from_secs(30);
        while d.get("/healthz").is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        d
    }

    fn status_field(&self, field: &str) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|kb| kb.parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
            .unwrap_or(f64::NAN)
    }

    fn rss_mib(&self) -> f64 {
        self.status_field("VmRSS:")
    }

    /// A GET on a fresh connection: the body, or None when refused or closed.
    fn get(&self, path: &str) -> Option<String> {
        self.get_at(self.port, path)
    }

    fn get_at(&self, port: u16, path: &str) -> Option<String> {
        let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        write!(s, "GET {path} HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n").ok()?;
        let mut out = String::new();
        s.read_to_string(&mut out).ok()?;
        out.starts_with("HTTP/1.1 200").then_some(out)
    }

    fn refused_total(&self) -> String {
        self.get_at(self.metrics_port, "/metrics")
            .and_then(|m| m.lines().find(|l| l.starts_with("latchkey_connections_refused_total")).map(str::to_owned))
            .unwrap_or_else(|| "latchkey_connections_refused_total ?".into())
    }
}

/// Raises this process's open-file limit to its hard limit; returns the new soft limit.
fn raise_nofile() -> u64 {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit write to and read from the struct we own.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
        lim.rlim_cur = lim.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
    }
    lim.rlim_cur
}

fn main() {
    let wanted: usize = std::env::var("FLOOD_CONNECTIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    let limit = raise_nofile() as usize;
    let n = wanted.min(limit.saturating_sub(200));
    let d = Daemon::start();
    assert!(d.get("/healthz").is_some(), "the daemon did not start");
    let idle = d.rss_mib();

    let started = Instant::now();
    let mut held = Vec::with_capacity(n);
    let mut failed = 0usize;
    for i in 0..n {
        match TcpStream::connect(("127.0.0.1", d.port)) {
            Ok(mut s) => {
                // Every other connection sends half a request line and stalls (slowloris).
                if i % 2 == 1 {
                    let _ = s.write_all(b"GET /healthz HTTP/1.1\r\nHost: local");
                }
                held.push(s);
            }
            Err(_) => failed += 1,
        }
    }
    let opened = started.elapsed();
    std::thread::sleep(Duration::from_secs(2));
    let during = d.rss_mib();
    let served_during = d.get("/healthz").is_some();
    let peak = d.status_field("VmHWM:");
    drop(held);
    // Connections the daemon accepted end at once (closed by us) or at the header timeout.
    std::thread::sleep(Duration::from_secs(12));
    let after = d.rss_mib();
    let served_after = d.get("/healthz").is_some();

    println!("connection flood against latchkeyd (release), {n} connections (open-file limit {limit})");
    println!("  opened in {:.2} s, {failed} connects failed", opened.as_secs_f64());
    println!("  RSS idle          {idle:>7.1} MiB");
    println!("  RSS during flood  {during:>7.1} MiB   (peak VmHWM {peak:.1} MiB)");
    println!("  RSS 12 s after    {after:>7.1} MiB");
    println!("  /healthz during the flood: {}", if served_during { "served" } else { "refused (capacity full)" });
    println!("  /healthz after the flood:  {}", if served_after { "served" } else { "NOT SERVED" });
    println!("  {}", d.refused_total());
}
