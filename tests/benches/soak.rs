//! Soak: a mixed load against one release `latchkeyd` process for `SOAK_SECONDS` (default 600)
//! from `SOAK_THREADS` clients (default 4): passkey sign-ins, client-credentials grants,
//! authorization-code exchanges followed by refresh rotations and a revocation, small bulk
//! invitations (API multipart and the CLI), and admin calls (list users, create and delete an
//! app). The daemon's resident memory (VmRSS, VmHWM from /proc) is sampled every 10 s.
//!
//! Prints operations, errors and latency per kind, and RSS at start / max / end. Every operation
//! expects success, so any non-2xx answer (302 for /authorize), transport error, failed CLI run or
//! daemon panic is an unexpected error: the bench then exits 1.
//!
//! Run: `cargo build --release --workspace --bins && cargo bench -p latchkey-tests --bench soak`.

#[path = "../e2e/authenticator.rs"]
mod authenticator;
#[path = "common/child.rs"]
mod child;
#[path = "../e2e/support.rs"]
mod support;

use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use authenticator::Soft;
use child::{Client, Daemon, DataDir, Http, Rng, Tenant, admin_try};
use serde_json::json;
use support::bin;

const SLUG: &str = "soak";
/// Imports go to their own tenant, so that the user list the admin calls read stays small.
const BULK: &str = "bulk";
/// Each client imports at most this often (rows accumulate for the whole run).
const IMPORT_EVERY: Duration = Duration::from_secs(2);
const IMPORT_ROWS: usize = 20;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    SignIn,
    ClientCredentials,
    CodeRefresh,
    ImportApi,
    ImportCli,
    AdminListUsers,
    AdminApp,
}

const KINDS: [Kind; 7] = [
    Kind::SignIn,
    Kind::ClientCredentials,
    Kind::CodeRefresh,
    Kind::ImportApi,
    Kind::ImportCli,
    Kind::AdminListUsers,
    Kind::AdminApp,
];

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::SignIn => "passkey sign-in",
            Kind::ClientCredentials => "client_credentials grant",
            Kind::CodeRefresh => "code + 2 refreshes + revoke",
            Kind::ImportApi => "import, API (20 rows)",
            Kind::ImportCli => "import, CLI (20 rows)",
            Kind::AdminListUsers => "admin: list users",
            Kind::AdminApp => "admin: create+delete app",
        }
    }
    /// Relative frequency of the kinds that are not paced.
    fn weight(self) -> u64 {
        match self {
            Kind::SignIn => 35,
            Kind::ClientCredentials => 30,
            Kind::CodeRefresh => 20,
            Kind::AdminListUsers => 10,
            Kind::AdminApp => 5,
            Kind::ImportApi | Kind::ImportCli => 0,
        }
    }
}

#[derive(Default)]
struct Stats {
    ops: u64,
    errors: u64,
    micros: Vec<u32>,
    examples: Vec<String>,
}

struct Shared {
    tenant: Tenant,
    bulk: Tenant,
    web: Client,
    cc: Client,
    importer: Client,
    socket: std::path::PathBuf,
    dir: std::path::PathBuf,
}

/// One client's session: a user with a passkey and the browser session it signed in with.
struct Client0 {
    email: String,
    soft: Soft,
    cookie: String,
}

fn op(sh: &Shared, http: &Http, me: &mut Client0, kind: Kind, rng: &mut Rng, seq: u64) -> Result<(), String> {
    let ok = |what: &str, r: Result<child::Reply, String>, want: u16| -> Result<child::Reply, String> {
        match r {
            Ok(r) if r.status == want => Ok(r),
            Ok(r) => Err(format!("{what}: {} {}", r.status, r.body.chars().take(200).collect::<String>())),
            Err(e) => Err(format!("{what}: {e}")),
        }
    };
    match kind {
        Kind::SignIn => {
            let r = ok("auth/finish", sh.tenant.sign_in(http, &mut me.soft, &me.email), 200)?;
            if let Some(c) = r.session_cookie() {
                me.cookie = c;
            }
        }
        Kind::ClientCredentials => {
            ok("token", sh.tenant.client_credentials(http, &sh.cc), 200)?;
        }
        Kind::CodeRefresh => {
            let (code, verifier) = sh.tenant.code(http, &sh.web, &me.cookie)?;
            let r = ok("code exchange", sh.tenant.exchange(http, &sh.web, &code, &verifier), 200)?;
            let mut token = r.json()["refresh_token"].as_str().ok_or("no refresh token")?.to_owned();
            for _ in 0..2 {
                let r = ok("refresh", sh.tenant.refresh(http, &sh.web, &token), 200)?;
                token = r.json()["refresh_token"].as_str().ok_or("no refresh token")?.to_owned();
            }
            ok("revoke", sh.tenant.revoke(http, &sh.web, &token), 200)?;
        }
        Kind::ImportApi => {
            let r = ok("token", sh.bulk.client_credentials(http, &sh.importer), 200)?;
            let bearer = r.json()["access_token"].as_str().unwrap_or("").to_owned();
            let csv = rows(&format!("api-{seq}-{}", rng.next_u64()));
            let r = ok("bulk invite", http.post_file(&sh.bulk.url("/api/v1/users/invite"), &bearer, &csv), 200)?;
            let n = r.json()["invited"].as_array().map_or(0, Vec::len);
            if n != IMPORT_ROWS {
                return Err(format!("bulk invite: {n} of {IMPORT_ROWS} invited"));
            }
        }
        Kind::ImportCli => {
            let file = sh.dir.join(format!("import-{seq}.csv"));
            std::fs::write(&file, rows(&format!("cli-{seq}-{}", rng.next_u64()))).map_err(|e| e.to_string())?;
            let out = Command::new(bin("latchkey"))
                .args(["user", "import", "--tenant", BULK])
                .arg(&file)
                .args(["-q", "-o", "json"])
                .env("LATCHKEY_ADMIN_SOCKET", &sh.socket)
                .output()
                .map_err(|e| e.to_string())?;
            let _ = std::fs::remove_file(&file);
            if !out.status.success() {
                return Err(format!(
                    "latchkey user import: {:?} {}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
        Kind::AdminListUsers => {
            let (status, body) = admin_try(&sh.socket, "GET", &format!("/admin/v1/tenants/{SLUG}/users"), None);
            if status != 200 || !body.is_array() {
                return Err(format!("list users: {status}"));
            }
        }
        Kind::AdminApp => {
            let body = json!({"name": format!("tmp-{seq}-{}", rng.next_u64()), "type": "m2m"});
            let (status, app) = admin_try(&sh.socket, "POST", &format!("/admin/v1/tenants/{SLUG}/apps"), Some(&body));
            if status != 201 {
                return Err(format!("app create: {status} {app}"));
            }
            let id = app["client_id"].as_str().unwrap_or("");
            let (status, body) = admin_try(
                &sh.socket,
                "DELETE",
                &format!("/admin/v1/tenants/{SLUG}/apps/{id}"),
                Some(&json!({"confirm": true})),
            );
            if !(200..300).contains(&status) {
                return Err(format!("app delete: {status} {body}"));
            }
        }
    }
    Ok(())
}

fn rows(prefix: &str) -> String {
    let mut s = String::from("email,name\n");
    for i in 0..IMPORT_ROWS {
        s.push_str(&format!("{prefix}-{i}@bulk.test,Soak User {i}\n"));
    }
    s
}

fn pick(rng: &mut Rng) -> Kind {
    let total: u64 = KINDS.iter().map(|k| k.weight()).sum();
    let mut x = rng.range(0, total - 1);
    for k in KINDS {
        if x < k.weight() {
            return k;
        }
        x -= k.weight();
    }
    Kind::SignIn
}

fn pct(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 - 1.0) * p) as usize] as f64 / 1000.0
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn main() {
    let seconds: u64 = std::env::var("SOAK_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(600);
    let threads: usize = std::env::var("SOAK_THREADS").ok().and_then(|v| v.parse().ok()).unwrap_or(4);
    let seed = child::clock_seed();
    let tmp = tempfile::tempdir().unwrap();
    let data = DataDir::new(tmp.path(), child::free_port());
    let mut daemon = Daemon::start(&data, &tmp.path().join("daemon.log")).unwrap_or_else(|e| panic!("{e}"));
    let socket = data.socket();
    let tenant = |slug: &str| {
        let (status, t) = admin_try(&socket, "POST", "/admin/v1/tenants", Some(&json!({"slug": slug})));
        assert_eq!(status, 201, "tenant create: {t}");
        Tenant { slug: slug.into(), base: t["base_url"].as_str().unwrap().to_owned(), origin: data.origin() }
    };
    let (main_tenant, bulk) = (tenant(SLUG), tenant(BULK));
    let sh = Shared {
        web: child::create_app(&socket, SLUG, "web", "web"),
        cc: child::create_app(&socket, SLUG, "machine", "m2m"),
        importer: child::create_app(&socket, BULK, "importer", "m2m"),
        tenant: main_tenant,
        bulk,
        socket: socket.clone(),
        dir: tmp.path().to_owned(),
    };
    let setup_http = Http::new(Duration::from_secs(10));
    let clients: Vec<Client0> = (0..threads)
        .map(|i| {
            let email = format!("client{i}@soak.test");
            let token = child::invite(&socket, SLUG, &email);
            let mut soft = Soft::new(&sh.tenant.origin);
            let r = sh.tenant.register(&setup_http, &mut soft, &email, &token).unwrap();
            assert_eq!(r.status, 201, "{}", r.body);
            Client0 { email, soft, cookie: r.session_cookie().unwrap() }
        })
        .collect();

    println!(
        "latchkey soak: {seconds} s, {threads} clients, release latchkeyd pid {} on {}, {} cores",
        daemon.pid(),
        data.origin(),
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    );
    let (rss_start, _) = daemon.memory_kib();
    let stats: Vec<Mutex<Stats>> = KINDS.iter().map(|_| Mutex::new(Stats::default())).collect();
    let samples: Mutex<Vec<(u64, u64, u64)>> = Mutex::new(vec![(0, rss_start, daemon.memory_kib().1)]);
    let done = AtomicBool::new(false);
    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds);
    std::thread::scope(|s| {
        let (sh, stats, done, samples, daemon) = (&sh, &stats, &done, &samples, &daemon);
        s.spawn(move || {
            let mut next = started + Duration::from_secs(10);
            while !done.load(Ordering::SeqCst) {
                if Instant::now() >= next {
                    let (rss, hwm) = daemon.memory_kib();
                    let t = started.elapsed().as_secs();
                    samples.lock().unwrap().push((t, rss, hwm));
                    if t % 60 < 10 {
                        println!("  t={t:>4} s  RSS {:>6.1} MiB  peak {:>6.1} MiB", mib(rss), mib(hwm));
                    }
                    next += Duration::from_secs(10);
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        });
        let handles: Vec<_> = clients
            .into_iter()
            .enumerate()
            .map(|(i, mut me)| {
                s.spawn(move || {
                    let mut rng = Rng::new(seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                    let http = Http::new(Duration::from_secs(30));
                    // Imports alternate API / CLI, each client on its own clock, staggered.
                    let mut next_import = Instant::now() + IMPORT_EVERY / (threads as u32) * (i as u32 + 1);
                    let mut seq = (i as u64) << 40;
                    while Instant::now() < deadline {
                        seq += 1;
                        let kind = if Instant::now() >= next_import {
                            next_import += IMPORT_EVERY;
                            if seq.is_multiple_of(2) { Kind::ImportApi } else { Kind::ImportCli }
                        } else {
                            pick(&mut rng)
                        };
                        let t = Instant::now();
                        let r = op(sh, &http, &mut me, kind, &mut rng, seq);
                        let us = t.elapsed().as_micros().min(u32::MAX as u128) as u32;
                        let idx = KINDS.iter().position(|k| *k == kind).unwrap();
                        let mut st = stats[idx].lock().unwrap();
                        st.ops += 1;
                        st.micros.push(us);
                        if let Err(e) = r {
                            st.errors += 1;
                            if st.examples.len() < 5 {
                                st.examples.push(e);
                            }
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        done.store(true, Ordering::SeqCst);
    });
    let wall = started.elapsed().as_secs_f64();
    let (rss_end, hwm) = daemon.memory_kib();
    let alive = daemon.child.try_wait().ok().flatten().is_none();
    let stop = daemon.stop();
    let log = daemon.log_text();
    let panics: Vec<&str> = log.lines().filter(|l| l.contains("panicked")).collect();
    let samples = samples.into_inner().unwrap();
    let rss_max = samples.iter().map(|s| s.1).max().unwrap_or(0).max(rss_end);

    println!();
    println!("{:<30} {:>9} {:>8} {:>8} {:>9} {:>9}", "operation", "ops", "ops/s", "errors", "p50 ms", "p99 ms");
    let mut unexpected = 0;
    for (k, st) in KINDS.iter().zip(&stats) {
        let mut st = st.lock().unwrap();
        st.micros.sort_unstable();
        println!(
            "{:<30} {:>9} {:>8.1} {:>8} {:>9.2} {:>9.2}",
            k.name(),
            st.ops,
            st.ops as f64 / wall,
            st.errors,
            pct(&st.micros, 0.5),
            pct(&st.micros, 0.99)
        );
        unexpected += st.errors;
        for e in &st.examples {
            println!("    error: {e}");
        }
    }
    let total: u64 = stats.iter().map(|s| s.lock().unwrap().ops).sum();
    println!("{:<30} {:>9} {:>8.1} {:>8}", "total", total, total as f64 / wall, unexpected);
    println!();
    println!(
        "daemon RSS: start {:.1} MiB, max {:.1} MiB, end {:.1} MiB (VmHWM {:.1} MiB); {} samples every 10 s",
        mib(rss_start),
        mib(rss_max),
        mib(rss_end),
        mib(hwm),
        samples.len()
    );
    let series: Vec<String> = samples.iter().map(|(t, rss, _)| format!("{t}s:{:.0}", mib(*rss))).collect();
    println!("RSS series (MiB): {}", series.join(" "));
    let db_size = std::fs::metadata(data.db()).map(|m| m.len()).unwrap_or(0)
        + std::fs::metadata(tmp.path().join("latchkey.db-wal")).map(|m| m.len()).unwrap_or(0);
    println!("database at the end: {:.1} MiB (with WAL)", db_size as f64 / 1048576.0);
    let mut problems = vec![];
    if !alive {
        problems.push("the daemon died during the soak".to_owned());
    }
    if stop != Some(0) {
        problems.push(format!("the daemon did not stop cleanly on SIGTERM: {stop:?}"));
    }
    for p in &panics {
        problems.push(format!("daemon panic: {p}"));
    }
    if unexpected > 0 {
        problems.push(format!("{unexpected} unexpected errors"));
    }
    if problems.is_empty() {
        println!("soak: ok, 0 unexpected errors");
    } else {
        for p in &problems {
            println!("soak: FAILED: {p}");
        }
        let keep = tmp.keep();
        println!("daemon files kept in {}", keep.display());
        std::process::exit(1);
    }
}
