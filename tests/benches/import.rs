//! Benchmark: bulk invitations of 10,000, 100,000 and 1,000,000 CSV rows through the CLI
//! (`latchkey user import --links-out`), and 10,000 and 100,000 through the API
//! (`POST {api_url}/v1/users/invite`, multipart sent by curl), each against a fresh release-build
//! `latchkeyd` process in its default configuration (as an operator runs it; only the token rate
//! limit is off) whose peak resident memory (VmHWM) is read from /proc afterwards.
//!
//! Run: `cargo build --release --workspace --bins && cargo bench -p latchkey-tests --bench import`.
//!
//! Besides time and VmHWM it prints the bytes the daemon wrote (`write_bytes` of /proc/PID/io:
//! database, WAL and the spilled upload), a figure that does not depend on what else the machine
//! is doing. Options, all environment variables:
//! - `BENCH_SIZES=10000,1000000`: the sizes to run (default 10,000, 100,000 and 1,000,000);
//! - `BENCH_PATHS=cli` or `api`: one path only (default both);
//! - `BENCH_SHUFFLE=1`: the rows' addresses in no order (by default in order);
//! - `BENCH_BASELINE=DIR`: a directory holding the `latchkeyd` and `latchkey` of another build
//!   (an older commit's `target/release`, copied); every measurement then runs with those too,
//!   right after this build's, so that a before/after comparison shares the machine's load.

#[path = "../e2e/authenticator.rs"]
mod authenticator;
#[path = "../e2e/support.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::bin;

struct Daemon {
    child: Child,
    dir: tempfile::TempDir,
    base: String,
    /// Where this build's `latchkeyd` and `latchkey` are.
    bins: PathBuf,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Daemon {
    fn start(bins: &Path) -> Daemon {
        let dir = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(bins.join("latchkeyd"))
            .args(["--dev", "--listen", &format!("127.0.0.1:{port}"), "--data-dir"])
            .arg(dir.path())
            .env("LATCHKEY_LIMITS_TOKEN_RATE_PER_MINUTE", "0")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start latchkeyd");
        let sock = dir.path().join("admin.sock");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !sock.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let d = Daemon { child, dir, base: format!("http://localhost:{port}/dev"), bins: bins.to_owned() };
        d.cli(&["status"]);
        d
    }

    fn cli(&self, args: &[&str]) -> String {
        let out = Command::new(self.bins.join("latchkey"))
            .args(args)
            .env("LATCHKEY_ADMIN_SOCKET", self.dir.path().join("admin.sock"))
            .output()
            .unwrap();
        assert!(out.status.success(), "latchkey {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Peak resident set size of the daemon process, in MiB.
    fn peak_rss_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|kb| kb.parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
            .unwrap_or(f64::NAN)
    }

    /// Bytes the daemon has caused to be written to storage so far, in MiB.
    fn written_mib(&self) -> f64 {
        let io = std::fs::read_to_string(format!("/proc/{}/io", self.child.id())).unwrap_or_default();
        io.lines()
            .find_map(|l| l.strip_prefix("write_bytes:"))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .map(|b| b / (1024.0 * 1024.0))
            .unwrap_or(f64::NAN)
    }

    fn report(&self, label: &str, rows: usize, secs: f64) {
        println!(
            "{:<10} {:>8} {:>9.2} {:>10.0} {:>12.1} MiB {:>12.0} MiB",
            label,
            rows,
            secs,
            rows as f64 / secs,
            self.peak_rss_mib(),
            self.written_mib()
        );
    }
}

fn csv(path: &Path, rows: usize) {
    // With BENCH_SHUFFLE=1 the addresses come in no order (row k holds user k·2,654,435,761 mod n, a
    // permutation), as in a real export; by default in order, as the figures of earlier releases.
    let shuffle = shuffled();
    let mut text = String::with_capacity(rows * 40 + 16);
    text.push_str("email,name\n");
    for k in 0..rows {
        let i = if shuffle { (k as u64 * 2_654_435_761 % rows as u64) as usize } else { k };
        text.push_str(&format!("user{i:06}@bench.example.com,User Number {i}\n"));
    }
    std::fs::write(path, text).unwrap();
}

fn shuffled() -> bool {
    std::env::var("BENCH_SHUFFLE").is_ok_and(|v| v == "1")
}

fn list(var: &str) -> Option<Vec<String>> {
    std::env::var(var).ok().map(|v| v.split(',').map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect())
}

fn main() {
    let sizes: Vec<usize> = list("BENCH_SIZES")
        .map(|v| v.iter().map(|s| s.replace('_', "").parse().expect("BENCH_SIZES: numbers")).collect())
        .unwrap_or_else(|| vec![10_000, 100_000, 1_000_000]);
    let paths = list("BENCH_PATHS").unwrap_or_else(|| vec!["cli".into(), "api".into()]);
    let ours = bin("latchkeyd").parent().unwrap().to_owned();
    let mut builds = vec![("", ours)];
    if let Ok(dir) = std::env::var("BENCH_BASELINE") {
        builds.push(("-base", PathBuf::from(dir)));
    }
    println!("latchkey bulk-invite benchmark: release latchkeyd process, SQLite WAL synchronous=FULL, loopback");
    println!(
        "{:<10} {:>8} {:>9} {:>10} {:>16} {:>16}",
        "path", "rows", "seconds", "rows/s", "daemon peak RSS", "daemon written"
    );
    // A shuffled file's rows are labelled `cli-shuf`, `api-shuf`.
    let order = if shuffled() { "-shuf" } else { "" };
    for rows in sizes {
        for (suffix, bins) in &builds {
            if paths.iter().any(|p| p == "cli") {
                cli_import(bins, &format!("cli{order}{suffix}"), rows);
            }
            // The API answers with every link in one JSON document: a million is not its use.
            if paths.iter().any(|p| p == "api") && rows <= 100_000 {
                api_import(bins, &format!("api{order}{suffix}"), rows);
            }
        }
    }
}

/// Through the CLI, the links to a file.
fn cli_import(bins: &Path, label: &str, rows: usize) {
    let d = Daemon::start(bins);
    let file = d.dir.path().join("users.csv");
    let links = d.dir.path().join("links.csv");
    csv(&file, rows);
    let t = Instant::now();
    d.cli(&["user", "import", "--tenant", "dev", file.to_str().unwrap(), "-q", "--links-out", links.to_str().unwrap()]);
    let secs = t.elapsed().as_secs_f64();
    let saved = std::fs::read_to_string(&links).unwrap().lines().count() - 1;
    assert_eq!(saved, rows);
    d.report(label, rows, secs);
}

/// Through the API, with a client-credentials token.
fn api_import(bins: &Path, label: &str, rows: usize) {
    let d = Daemon::start(bins);
    let file = d.dir.path().join("users.csv");
    csv(&file, rows);
    let app: serde_json::Value = serde_json::from_str(&d.cli(&[
        "app",
        "create",
        "--tenant",
        "dev",
        "--name",
        "importer",
        "--type",
        "m2m",
        "--scope",
        "users:invite",
        "-o",
        "json",
    ]))
    .unwrap();
    let token = Command::new("curl")
        .args([
            "-sS",
            "-u",
            &format!("{}:{}", app["client_id"].as_str().unwrap(), app["client_secret"].as_str().unwrap()),
        ])
        .args(["-d", "grant_type=client_credentials", &format!("{}/token", d.base)])
        .output()
        .unwrap();
    let token: serde_json::Value = serde_json::from_slice(&token.stdout).unwrap();
    let t = Instant::now();
    let out = Command::new("curl")
        .args(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-H"])
        .arg(format!("Authorization: Bearer {}", token["access_token"].as_str().unwrap()))
        .args(["-F", &format!("file=@{};type=text/csv", file.display()), &format!("{}/api/v1/users/invite", d.base)])
        .output()
        .unwrap();
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "200", "{}", String::from_utf8_lossy(&out.stderr));
    d.report(label, rows, secs);
}
