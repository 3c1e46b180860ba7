//! Crash trials: the real `latchkeyd` binary is killed with SIGKILL at a random moment while a
//! random mix of workloads runs against it (CLI import, API bulk import, passkey sign-ins,
//! refresh-token rotations, revocations and user disables), then:
//!
//! 1. before restart, the SQLite file is opened read-only: `PRAGMA integrity_check` is `ok`,
//!    `PRAGMA foreign_key_check` is empty, and the rows the code always writes together are all
//!    there (see [`invariants`]);
//! 2. the daemon restarts on the same files and every write it acknowledged is still there:
//!    invited users (with their invite links) of every acknowledged import batch, the counter
//!    and session of every acknowledged sign-in, every acknowledged rotation, revocation and
//!    disable; nothing it did not acknowledge was half-applied (an import batch is all or nothing,
//!    untouched tokens are still live); a sign-in started just before the kill finishes after
//!    the restart (its challenge is still there);
//! 3. the daemon stops cleanly on SIGTERM and never logged a panic.
//!
//! Every trial starts from a copy of one template database (tenant, apps, users with passkeys,
//! refresh-token families) made once per run. Choices (workloads, sizes, kill delay) come from a
//! seeded generator; the seed is printed and `SEED=… TRIALS=…` replays them (`ONLY_TRIAL=k` runs
//! trial k alone), up to the timing of the kill. Prints `crash trials: N passed, M failed`; exits
//! 1 on any failure and keeps the failed trials' directories.
//!
//! Run: `bash scripts/crash-trials.sh` (builds the release binaries, then
//! `cargo bench -p latchkey-tests --bench crash_trials`). The test script runs 20 trials on the
//! debug binaries (`TRIALS=20 cargo test -p latchkey-tests --bench crash_trials`).

#[path = "../e2e/authenticator.rs"]
mod authenticator;
#[path = "common/child.rs"]
mod child;
#[path = "../e2e/support.rs"]
mod support;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use authenticator::Soft;
use child::{Client, Daemon, DataDir, Http, Rng, Tenant, admin_call, admin_try, url_token};
// How the daemon keys stored tokens (time prefix and SHA-256), so that a token is found as it would be.
use latchkey_domain::ordered::token_key;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};
use support::bin;

const SLUG: &str = "crash";
const SIGNIN_USERS: usize = 4;
const ROTATION_FAMILIES: usize = 8;
const REVOCATION_FAMILIES: usize = 300;
const VICTIMS: usize = 16;
/// Rows per write transaction of the admin import (daemon/src/admin/import.rs).
const CLI_BATCH: usize = 2_000;

// ---------------------------------------------------------------------------------------------
// The template: one tenant with everything the workloads need, made once per run.

struct Victim {
    email: String,
    cookie: String,
    token: String,
}

struct Fixture {
    template: DataDir,
    tenant: Tenant,
    web: Client,
    m2m: Client,
    /// E-mails of the sign-in users; their authenticators live beside the fixture.
    signin: Vec<String>,
    rotation: Vec<String>,
    revocation: Vec<String>,
    victims: Vec<Victim>,
}

fn build_template(dir: &Path, port: u16) -> (Fixture, Vec<(String, Soft)>) {
    let data = DataDir::new(dir, port);
    let mut d = Daemon::start(&data, &dir.join("daemon.log")).unwrap_or_else(|e| panic!("{e}"));
    let sock = data.socket();
    let (status, t) = admin_call(&sock, "POST", "/admin/v1/tenants", Some(&json!({"slug": SLUG})));
    assert_eq!(status, 201, "tenant create: {t}");
    let tenant = Tenant { slug: SLUG.into(), base: t["base_url"].as_str().unwrap().to_owned(), origin: data.origin() };
    let web = child::create_app(&sock, SLUG, "web", "web");
    let m2m = child::create_app(&sock, SLUG, "importer", "m2m");
    let http = Http::new(Duration::from_secs(10));
    let register = |email: &str| -> (Soft, String) {
        let token = child::invite(&sock, SLUG, email);
        let mut soft = Soft::new(&tenant.origin);
        let r = tenant.register(&http, &mut soft, email, &token).unwrap();
        assert_eq!(r.status, 201, "register {email}: {}", r.body);
        (soft, r.session_cookie().expect("session cookie"))
    };
    let softs: Vec<(String, Soft)> = (0..SIGNIN_USERS)
        .map(|i| {
            let email = format!("signin{i}@crash.test");
            (email.clone(), register(&email).0)
        })
        .collect();
    let (_, oidc_cookie) = register("oidc@crash.test");
    let family = |cookie: &str| tenant.new_family(&http, &web, cookie).unwrap();
    let rotation: Vec<String> = (0..ROTATION_FAMILIES).map(|_| family(&oidc_cookie)).collect();
    let revocation: Vec<String> = (0..REVOCATION_FAMILIES).map(|_| family(&oidc_cookie)).collect();
    let victims: Vec<Victim> = (0..VICTIMS)
        .map(|i| {
            let email = format!("victim{i}@crash.test");
            let (_, cookie) = register(&email);
            let token = family(&cookie);
            Victim { email, cookie, token }
        })
        .collect();
    assert_eq!(d.stop(), Some(0), "template daemon did not stop cleanly: {}", d.log_text());
    let signin = softs.iter().map(|(e, _)| e.clone()).collect();
    (Fixture { template: data, tenant, web, m2m, signin, rotation, revocation, victims }, softs)
}

// ---------------------------------------------------------------------------------------------
// Workloads. Each runs on its own thread until the daemon dies (a transport error) or the trial
// ends, and returns what the daemon acknowledged.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Workload {
    CliImport,
    ApiImport,
    SignIn,
    Rotate,
    Revoke,
}

const ALL: [Workload; 5] =
    [Workload::CliImport, Workload::ApiImport, Workload::SignIn, Workload::Rotate, Workload::Revoke];

impl Workload {
    fn name(self) -> &'static str {
        match self {
            Workload::CliImport => "cli-import",
            Workload::ApiImport => "api-import",
            Workload::SignIn => "sign-in",
            Workload::Rotate => "rotate",
            Workload::Revoke => "revoke",
        }
    }
}

/// One import file: every e-mail in it, and the (e-mail, invite URL) pairs acknowledged.
#[derive(Default)]
struct ImportFile {
    emails: Vec<String>,
    acked: Vec<(String, String)>,
    /// The whole file was acknowledged (CLI exit 0, API 200).
    complete: bool,
}

struct SignIn {
    user: usize,
    counter: u32,
    cookie: String,
}

#[derive(Default, Clone)]
struct Chain {
    /// tokens[0] is the family's token at the start; each later one was acknowledged by /token.
    tokens: Vec<String>,
    /// A rotation was sent (or being sent) when the daemon died: its outcome is unknown.
    in_flight: bool,
}

#[derive(Default)]
struct Revocations {
    /// Indexes into the fixture's revocation tokens acknowledged revoked.
    revoked: Vec<usize>,
    /// Indexes of victims acknowledged disabled.
    disabled: Vec<usize>,
    /// The one request (token or victim) without an answer when the daemon died.
    in_flight_token: Option<usize>,
    in_flight_victim: Option<usize>,
    /// How far each list was attempted: later entries were never sent.
    tokens_tried: usize,
    victims_tried: usize,
}

#[derive(Default)]
struct Log {
    cli: Vec<ImportFile>,
    api: Vec<ImportFile>,
    signins: Vec<SignIn>,
    chains: Vec<Chain>,
    revocations: Revocations,
    /// Refusals or failures while the daemon was up: each one fails the trial.
    anomalies: Vec<String>,
    /// Operations acknowledged, per workload, for the trial's line.
    counts: Vec<(&'static str, usize)>,
}

fn csv_rows(emails: &[String]) -> String {
    let mut s = String::with_capacity(emails.len() * 40 + 16);
    s.push_str("email,name\n");
    for (i, e) in emails.iter().enumerate() {
        s.push_str(&format!("{e},Imported User {i}\n"));
    }
    s
}

/// `latchkey user import --links-out` of few-thousand-row files, one after another.
fn cli_import(data: &DataDir, dir: &Path, trial: usize, mut rng: Rng, killed: &AtomicBool) -> Log {
    let mut log = Log::default();
    for k in 0.. {
        let n = rng.range(2_000, 5_000) as usize;
        let emails: Vec<String> = (0..n).map(|i| format!("c{trial}-{k}-{i}@imp.test")).collect();
        let file = dir.join(format!("cli-{k}.csv"));
        let links = dir.join(format!("cli-{k}-links.csv"));
        std::fs::write(&file, csv_rows(&emails)).unwrap();
        let out = Command::new(bin("latchkey"))
            .args(["user", "import", "--tenant", SLUG])
            .arg(&file)
            .arg("--links-out")
            .arg(&links)
            .args(["-q", "-o", "json"])
            .env("LATCHKEY_ADMIN_SOCKET", data.socket())
            .output()
            .unwrap();
        let mut f = ImportFile { emails, ..Default::default() };
        if out.status.success() {
            let summary: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            for i in summary["invited"].as_array().into_iter().flatten() {
                f.acked.push((i["email"].as_str().unwrap_or("").into(), i["invite_url"].as_str().unwrap_or("").into()));
            }
            f.complete = true;
            if f.acked.len() != n {
                log.anomalies.push(format!("cli import {k}: exit 0 but {} of {n} rows invited", f.acked.len()));
            }
        } else {
            // The batches whose progress line arrived are in the links file (written as they come).
            let text = std::fs::read_to_string(&links).unwrap_or_default();
            for line in text.lines().skip(1) {
                let cols: Vec<&str> = line.split(',').collect();
                if cols.len() == 3 && cols[2].contains("/invite/") {
                    f.acked.push((cols[0].to_owned(), cols[2].to_owned()));
                }
            }
            if !killed.load(Ordering::SeqCst) {
                log.anomalies.push(format!(
                    "cli import {k} failed before the kill (exit {:?}): {}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
        let done = !out.status.success() || killed.load(Ordering::SeqCst);
        log.cli.push(f);
        if done {
            break;
        }
    }
    let rows: usize = log.cli.iter().map(|f| f.acked.len()).sum();
    log.counts.push(("cli rows", rows));
    log
}

/// `POST /api/v1/users/invite` (multipart) with a client-credentials token, a few hundred rows each.
fn api_import(fx: &Fixture, trial: usize, mut rng: Rng, killed: &AtomicBool) -> Log {
    let mut log = Log::default();
    let http = Http::new(Duration::from_secs(30));
    let mut k = 0;
    'outer: while !killed.load(Ordering::SeqCst) {
        let token = match fx.tenant.client_credentials(&http, &fx.m2m) {
            Ok(r) if r.status == 200 => r.json()["access_token"].as_str().unwrap_or("").to_owned(),
            Ok(r) => {
                log.anomalies.push(format!("client_credentials refused: {} {}", r.status, r.body));
                break;
            }
            Err(_) => break,
        };
        for _ in 0..5 {
            let n = rng.range(100, 1_500) as usize;
            let emails: Vec<String> = (0..n).map(|i| format!("a{trial}-{k}-{i}@api.test")).collect();
            k += 1;
            let csv = csv_rows(&emails);
            let mut f = ImportFile { emails, ..Default::default() };
            match http.post_file(&fx.tenant.url("/api/v1/users/invite"), &token, &csv) {
                Ok(r) if r.status == 200 => {
                    let body = r.json();
                    for i in body["invited"].as_array().into_iter().flatten() {
                        f.acked.push((
                            i["email"].as_str().unwrap_or("").into(),
                            i["invite_url"].as_str().unwrap_or("").into(),
                        ));
                    }
                    f.complete = true;
                    if f.acked.len() != n {
                        log.anomalies.push(format!("api import: 200 but {} of {n} rows invited", f.acked.len()));
                    }
                    log.api.push(f);
                }
                Ok(r) => {
                    log.anomalies.push(format!("api import refused: {} {}", r.status, r.body));
                    log.api.push(f);
                    break 'outer;
                }
                Err(_) => {
                    log.api.push(f);
                    break 'outer;
                }
            }
            if killed.load(Ordering::SeqCst) {
                break 'outer;
            }
        }
    }
    log.counts.push(("api rows", log.api.iter().map(|f| f.acked.len()).sum()));
    log
}

/// Username-first passkey sign-ins, round robin over the sign-in users.
fn sign_ins(fx: &Fixture, softs: &mut [(String, Soft)], killed: &AtomicBool) -> Log {
    let mut log = Log::default();
    let http = Http::new(Duration::from_secs(10));
    for i in 0.. {
        if killed.load(Ordering::SeqCst) {
            break;
        }
        let u = i % softs.len();
        let (email, soft) = &mut softs[u];
        match fx.tenant.sign_in(&http, soft, email) {
            Ok(r) if r.status == 200 => {
                let counter = soft.credentials[0].counter;
                match r.session_cookie() {
                    Some(cookie) => log.signins.push(SignIn { user: u, counter, cookie }),
                    None => log.anomalies.push("auth/finish 200 without a session cookie".into()),
                }
            }
            Ok(r) => {
                log.anomalies.push(format!("sign-in refused: {} {}", r.status, r.body));
                break;
            }
            Err(e) if e.starts_with("start ") => {
                log.anomalies.push(format!("auth/start refused: {e}"));
                break;
            }
            Err(_) => break,
        }
    }
    log.counts.push(("sign-ins", log.signins.len()));
    log
}

/// Refresh-token rotations, round robin over the rotation families.
fn rotations(fx: &Fixture, killed: &AtomicBool) -> Log {
    let mut log = Log::default();
    let http = Http::new(Duration::from_secs(10));
    let mut chains: Vec<Chain> =
        fx.rotation.iter().map(|t| Chain { tokens: vec![t.clone()], in_flight: false }).collect();
    let mut acked = 0;
    for i in 0.. {
        if killed.load(Ordering::SeqCst) {
            break;
        }
        let c = &mut chains[i % ROTATION_FAMILIES];
        let last = c.tokens.last().unwrap().clone();
        match fx.tenant.refresh(&http, &fx.web, &last) {
            Ok(r) if r.status == 200 => match r.json()["refresh_token"].as_str() {
                Some(t) => {
                    c.tokens.push(t.to_owned());
                    acked += 1;
                }
                None => {
                    log.anomalies.push(format!("refresh 200 without a refresh token: {}", r.body));
                    break;
                }
            },
            Ok(r) => {
                log.anomalies.push(format!("refresh refused: {} {}", r.status, short(&r.body)));
                break;
            }
            Err(_) => {
                c.in_flight = true;
                break;
            }
        }
    }
    log.chains = chains;
    log.counts.push(("rotations", acked));
    log
}

/// `POST /revoke` of refresh tokens, and now and then an admin disable of a victim user.
fn revocations(fx: &Fixture, socket: &Path, mut rng: Rng, killed: &AtomicBool) -> Log {
    let mut log = Log::default();
    let http = Http::new(Duration::from_secs(10));
    let r = &mut log.revocations;
    while !killed.load(Ordering::SeqCst) {
        let disable = rng.chance(0.1) && r.victims_tried < fx.victims.len();
        if disable {
            let v = r.victims_tried;
            r.victims_tried += 1;
            let path = format!("/admin/v1/tenants/{SLUG}/users/{}/disable", fx.victims[v].email);
            let (status, body) = admin_try(socket, "POST", &path, None);
            match status {
                200 => r.disabled.push(v),
                0 => {
                    r.in_flight_victim = Some(v);
                    break;
                }
                s => {
                    log.anomalies.push(format!("disable refused: {s} {body}"));
                    break;
                }
            }
        } else {
            if r.tokens_tried >= fx.revocation.len() {
                break;
            }
            let t = r.tokens_tried;
            r.tokens_tried += 1;
            match fx.tenant.revoke(&http, &fx.web, &fx.revocation[t]) {
                Ok(x) if x.status == 200 => r.revoked.push(t),
                Ok(x) => {
                    log.anomalies.push(format!("revoke refused: {} {}", x.status, x.body));
                    break;
                }
                Err(_) => {
                    r.in_flight_token = Some(t);
                    break;
                }
            }
        }
    }
    let n = r.revoked.len() + r.disabled.len();
    log.counts.push(("revocations", n));
    log
}

// ---------------------------------------------------------------------------------------------
// Checks.

/// What the code always writes together, and what the schema cannot say by itself.
fn invariants(db: &Connection) -> Vec<String> {
    let mut bad = vec![];
    let integrity: Vec<String> = db
        .prepare("PRAGMA integrity_check")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    if integrity != ["ok"] {
        bad.push(format!("integrity_check: {integrity:?}"));
    }
    let fk: Vec<String> = db
        .prepare("PRAGMA foreign_key_check")
        .unwrap()
        .query_map([], |r| {
            Ok(format!("{}:{:?}->{}", r.get::<_, String>(0)?, r.get::<_, Option<i64>>(1)?, r.get::<_, String>(2)?))
        })
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    if !fk.is_empty() {
        bad.push(format!("foreign_key_check: {} rows, e.g. {:?}", fk.len(), &fk[..fk.len().min(5)]));
    }
    let checks: &[(&str, &str)] = &[
        (
            "an active user without a credential (registration writes both)",
            "SELECT email FROM users u WHERE status = 'active'
               AND NOT EXISTS (SELECT 1 FROM credentials c WHERE c.user_id = u.id)",
        ),
        (
            "an invited user without an invitation (invite and import write both)",
            "SELECT email FROM users u WHERE status = 'invited'
               AND NOT EXISTS (SELECT 1 FROM invites i WHERE i.user_id = u.id AND i.purpose = 'invite')",
        ),
        (
            "two unused links of one purpose for one user (a new one withdraws the old)",
            "SELECT user_id || '/' || purpose FROM invites WHERE used_at IS NULL
               GROUP BY user_id, purpose HAVING count(*) > 1",
        ),
        (
            "a row of another tenant than its user",
            "SELECT 'invite ' || x.id FROM invites x JOIN users u ON u.id = x.user_id WHERE x.tenant_id != u.tenant_id
             UNION ALL SELECT 'credential ' || x.id FROM credentials x JOIN users u ON u.id = x.user_id WHERE x.tenant_id != u.tenant_id
             UNION ALL SELECT 'session ' || x.id FROM sessions x JOIN users u ON u.id = x.user_id WHERE x.tenant_id != u.tenant_id
             UNION ALL SELECT 'refresh ' || x.id FROM refresh_tokens x JOIN users u ON u.id = x.user_id WHERE x.tenant_id != u.tenant_id",
        ),
        (
            "a refresh-token family without exactly one unrotated token, partly revoked, or mixing users or clients",
            "SELECT family FROM refresh_tokens GROUP BY tenant_id, family
             HAVING sum(used_at IS NULL) != 1
                 OR sum(revoked_at IS NOT NULL) NOT IN (0, count(*))
                 OR count(DISTINCT user_id) != 1 OR count(DISTINCT client_id) != 1
                 OR count(DISTINCT coalesce(session_id, -1)) != 1",
        ),
        (
            "a used authorization code without the refresh token its exchange wrote",
            "SELECT hex(code_hash) FROM authorization_codes c WHERE used_at IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.code_hash = c.code_hash)",
        ),
        (
            "a refresh token from a code that is not marked used",
            "SELECT id FROM refresh_tokens r WHERE code_hash IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM authorization_codes c WHERE c.code_hash = r.code_hash AND c.used_at IS NOT NULL)",
        ),
        (
            "a disabled user with a session or a live refresh token (disable ends both)",
            "SELECT email FROM users u WHERE status = 'disabled'
               AND (EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = u.id)
                 OR EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.user_id = u.id AND r.revoked_at IS NULL))",
        ),
        (
            "a session of a user who is not active",
            "SELECT s.id FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.status != 'active'",
        ),
        (
            // The column is the counter sign-ins check and raise; the passkey keeps the one it was
            // registered with.
            "a credential whose sign_count is below the counter it was registered with",
            "SELECT id FROM credentials WHERE json_extract(passkey, '$.cred.counter') > sign_count",
        ),
        ("a user whose email_norm is not its lowercased e-mail", "SELECT email FROM users WHERE email_norm != lower(trim(email))"),
        (
            "an active user whose e-mail is not verified (registration by invitation sets both)",
            "SELECT email FROM users WHERE status = 'active' AND email_verified = 0",
        ),
    ];
    for (what, sql) in checks {
        let rows: Vec<String> = db
            .prepare(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .query_map([], |r| r.get::<_, String>(0).or_else(|_| r.get::<_, i64>(0).map(|i| i.to_string())))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        if !rows.is_empty() {
            bad.push(format!("{what}: {} rows, e.g. {:?}", rows.len(), &rows[..rows.len().min(5)]));
        }
    }
    bad
}

/// Row counts of the tables the workloads write.
fn counts(db: &Connection) -> Vec<(String, i64)> {
    ["users", "invites", "credentials", "sessions", "refresh_tokens", "authorization_codes", "user_roles"]
        .iter()
        .map(|t| (t.to_string(), db.query_row(&format!("SELECT count(*) FROM {t}"), [], |r| r.get(0)).unwrap()))
        .collect()
}

struct Refresh {
    used: bool,
    revoked: bool,
    family: String,
}

fn refresh_row(db: &Connection, token: &str) -> Option<Refresh> {
    db.query_row(
        "SELECT used_at IS NOT NULL, revoked_at IS NOT NULL, family FROM refresh_tokens WHERE token_hash = ?1",
        params![token_key(token)],
        |r| Ok(Refresh { used: r.get(0)?, revoked: r.get(1)?, family: r.get(2)? }),
    )
    .optional()
    .unwrap()
}

fn live_in_family(db: &Connection, family: &str) -> i64 {
    db.query_row(
        "SELECT count(*) FROM refresh_tokens WHERE family = ?1 AND used_at IS NULL AND revoked_at IS NULL",
        params![family],
        |r| r.get(0),
    )
    .unwrap()
}

/// Every acknowledged write is present after the restart; nothing unacknowledged is half there.
fn verify(fx: &Fixture, log: &Log, db: &Connection, tenant: &Tenant, rng: &mut Rng) -> Vec<String> {
    let mut bad = vec![];
    let http = Http::new(Duration::from_secs(10));
    let tenant_id: i64 = db.query_row("SELECT id FROM tenants WHERE slug = ?1", [SLUG], |r| r.get(0)).unwrap();
    let mut by_email = db.prepare("SELECT status FROM users WHERE tenant_id = ?1 AND email_norm = lower(?2)").unwrap();
    let mut user_status = |email: &str| -> Option<String> {
        by_email.query_row(params![tenant_id, email], |r| r.get(0)).optional().unwrap()
    };
    let invite_unused = |url: &str| -> bool {
        db.query_row(
            "SELECT count(*) FROM invites WHERE token_hash = ?1 AND purpose = 'invite' AND used_at IS NULL",
            params![token_key(url_token(url))],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
            == 1
    };

    // Imports: each acknowledged invitation exists with its link; batches are all or nothing.
    for (kind, files, unit) in [("cli import", &log.cli, CLI_BATCH), ("api import", &log.api, usize::MAX)] {
        for (k, f) in files.iter().enumerate() {
            let mut lost = vec![];
            for (email, url) in &f.acked {
                if user_status(email).as_deref() != Some("invited") || !invite_unused(url) {
                    lost.push(email.clone());
                }
            }
            if !lost.is_empty() {
                bad.push(format!(
                    "{kind} {k}: {} acknowledged invitation(s) lost or without their link, e.g. {:?}",
                    lost.len(),
                    &lost[..lost.len().min(3)]
                ));
            }
            let present = f.emails.iter().filter(|e| user_status(e).is_some()).count();
            let total = f.emails.len();
            let whole = if unit == usize::MAX {
                present == 0 || present == total
            } else {
                present.is_multiple_of(unit) || present == total
            };
            if !whole {
                bad.push(format!("{kind} {k}: {present} of {total} rows present: a batch was half written"));
            }
            if present < f.acked.len() {
                bad.push(format!("{kind} {k}: {present} rows present but {} acknowledged", f.acked.len()));
            }
        }
    }

    // Sign-ins: the counter persisted and the session works.
    let mut max_counter: HashMap<usize, u32> = HashMap::new();
    for s in &log.signins {
        let m = max_counter.entry(s.user).or_default();
        *m = (*m).max(s.counter);
        let stored: i64 = db
            .query_row(
                "SELECT count(*) FROM sessions WHERE token_hash = ?1",
                params![token_key(s.cookie.trim_start_matches("latchkey_session="))],
                |r| r.get(0),
            )
            .unwrap();
        if stored != 1 {
            bad.push(format!("sign-in of user {} (counter {}): acknowledged session lost", s.user, s.counter));
        }
    }
    for (user, counter) in &max_counter {
        let email = &fx.signin[*user];
        let stored: i64 = db
            .query_row(
                "SELECT max(c.sign_count) FROM credentials c JOIN users u ON u.id = c.user_id WHERE u.email_norm = ?1",
                params![email],
                |r| r.get(0),
            )
            .unwrap();
        if stored < *counter as i64 {
            bad.push(format!("{email}: sign-in with counter {counter} acknowledged, stored counter {stored}"));
        }
    }
    for s in log.signins.iter().rev().take(5) {
        match tenant.session_works(&http, &s.cookie) {
            Ok(true) => {}
            other => bad.push(format!("acknowledged session of user {} refused after restart: {other:?}", s.user)),
        }
    }

    // Rotations: each acknowledged rotation persisted; the chain's head still refreshes.
    for (i, c) in log.chains.iter().enumerate() {
        let n = c.tokens.len();
        for (j, t) in c.tokens.iter().enumerate() {
            let Some(row) = refresh_row(db, t) else {
                bad.push(format!("rotation family {i}: acknowledged token {j} of {n} is missing"));
                continue;
            };
            if row.revoked {
                bad.push(format!("rotation family {i}: token {j} revoked though never reused"));
            }
            if j + 1 < n && !row.used {
                bad.push(format!("rotation family {i}: acknowledged rotation of token {j} lost (token unused again)"));
            }
            if j + 1 == n {
                if row.used && !c.in_flight {
                    bad.push(format!("rotation family {i}: last token used though no rotation was in flight"));
                }
                if row.used && live_in_family(db, &row.family) != 1 {
                    bad.push(format!("rotation family {i}: in-flight rotation committed without a live successor"));
                }
                if !row.used {
                    match tenant.refresh(&http, &fx.web, t) {
                        Ok(r) if r.status == 200 => {}
                        other => bad.push(format!(
                            "rotation family {i}: head token refused after restart: {:?}",
                            other.map(|r| (r.status, short(&r.body)))
                        )),
                    }
                }
            }
        }
    }

    // Revocations: acknowledged ones hold; untouched tokens and users are untouched.
    let r = &log.revocations;
    let mut sample: Vec<usize> = r.revoked.clone();
    if sample.len() > 12 {
        let last = *sample.last().unwrap();
        let mut picked = vec![last];
        for _ in 0..11 {
            picked.push(sample[rng.range(0, sample.len() as u64 - 1) as usize]);
        }
        sample = picked;
    }
    for &t in &r.revoked {
        match refresh_row(db, &fx.revocation[t]) {
            Some(row) if row.revoked => {}
            _ => bad.push(format!("acknowledged revocation of token {t} lost")),
        }
    }
    for &t in &sample {
        let token = &fx.revocation[t];
        refused_everywhere(&mut bad, &http, tenant, fx, token, &format!("revoked token {t}"));
    }
    for t in r.tokens_tried..fx.revocation.len() {
        match refresh_row(db, &fx.revocation[t]) {
            Some(row) if !row.revoked && !row.used => {}
            _ => {
                bad.push(format!("token {t} was never revoked but is not live"));
                break;
            }
        }
    }
    for &v in &r.disabled {
        let victim = &fx.victims[v];
        if user_status(&victim.email).as_deref() != Some("disabled") {
            bad.push(format!("acknowledged disable of {} lost: {:?}", victim.email, user_status(&victim.email)));
        }
        refused_everywhere(&mut bad, &http, tenant, fx, &victim.token, &format!("token of disabled {}", victim.email));
        if !matches!(tenant.session_works(&http, &victim.cookie), Ok(false)) {
            bad.push(format!("session of disabled {} still works after restart", victim.email));
        }
    }
    for v in r.victims_tried..fx.victims.len() {
        if user_status(&fx.victims[v].email).as_deref() != Some("active") {
            bad.push(format!("{} was never disabled but is not active", fx.victims[v].email));
        }
    }
    bad
}

/// A refresh token that must be dead: /token says invalid_grant, /introspect says inactive.
fn refused_everywhere(bad: &mut Vec<String>, http: &Http, tenant: &Tenant, fx: &Fixture, token: &str, what: &str) {
    match tenant.refresh(http, &fx.web, token) {
        Ok(r) if r.status == 400 && r.json()["error"] == "invalid_grant" => {}
        other => {
            bad.push(format!("{what}: refresh after restart answered {:?}", other.map(|r| (r.status, short(&r.body)))))
        }
    }
    match tenant.introspect(http, &fx.web, token) {
        Ok(r) if r.status == 200 && r.json()["active"] == false => {}
        other => {
            bad.push(format!("{what}: introspection after restart {:?}", other.map(|r| (r.status, short(&r.body)))))
        }
    }
}

/// The start of a reply body, for a failure message.
fn short(body: &str) -> String {
    body.chars().take(160).collect()
}

fn panics(log: &str) -> Option<String> {
    log.lines().find(|l| l.contains("panicked")).map(str::to_owned)
}

// ---------------------------------------------------------------------------------------------

struct Outcome {
    failures: Vec<String>,
    line: String,
}

fn run_trial(fx: &Fixture, softs: &mut Vec<(String, Soft)>, root: &Path, trial: usize, seed: u64) -> Outcome {
    let mut rng = Rng::new(seed);
    let dir = root.join(format!("trial-{trial:03}"));
    let data = fx.template.copy_to(&dir);
    let mut failures = vec![];

    let mut workloads: Vec<Workload> = ALL.iter().copied().filter(|_| rng.chance(0.5)).collect();
    if workloads.is_empty() {
        workloads.push(ALL[rng.range(0, ALL.len() as u64 - 1) as usize]);
    }
    let delay = Duration::from_millis(rng.range(5, 400));
    let seeds: Vec<u64> = (0..ALL.len()).map(|_| rng.next_u64()).collect();
    let names: Vec<&str> = workloads.iter().map(|w| w.name()).collect();
    let mut line = format!("seed {seed:#018x} [{}] kill at {} ms", names.join(","), delay.as_millis());

    let mut daemon = match Daemon::start(&data, &dir.join("daemon-1.log")) {
        Ok(d) => d,
        Err(e) => {
            return Outcome { failures: vec![format!("start: {e}")], line };
        }
    };
    let killed = AtomicBool::new(false);
    let http = Http::new(Duration::from_secs(10));
    let mut pending = None;
    let logs: Vec<Log> = std::thread::scope(|s| {
        let (killed, data, dir) = (&killed, &data, &dir);
        let mut softs = Some(&mut *softs);
        let mut handles = vec![];
        for (i, w) in workloads.iter().enumerate() {
            let seed = seeds[i];
            handles.push(match w {
                Workload::CliImport => s.spawn(move || cli_import(data, dir, trial, Rng::new(seed), killed)),
                Workload::ApiImport => s.spawn(move || api_import(fx, trial, Rng::new(seed), killed)),
                Workload::SignIn => {
                    let softs = softs.take().unwrap();
                    s.spawn(move || sign_ins(fx, softs, killed))
                }
                Workload::Rotate => s.spawn(move || rotations(fx, killed)),
                Workload::Revoke => s.spawn(move || revocations(fx, &data.socket(), Rng::new(seed), killed)),
            });
        }
        std::thread::sleep(delay);
        // A sign-in started just before the kill, to be finished after the restart: its challenge
        // must still be there (the start's commit does not wait for an fsync of its own, but a
        // killed process loses nothing it wrote).
        pending = Some(fx.tenant.auth_start(&http, &fx.signin[0]));
        killed.store(true, Ordering::SeqCst);
        daemon.kill();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut log = Log::default();
    for l in logs {
        log.cli.extend(l.cli);
        log.api.extend(l.api);
        log.signins.extend(l.signins);
        if !l.chains.is_empty() {
            log.chains = l.chains;
        }
        if l.revocations.tokens_tried + l.revocations.victims_tried > 0 {
            log.revocations = l.revocations;
        }
        log.anomalies.extend(l.anomalies);
        log.counts.extend(l.counts);
    }
    failures.extend(log.anomalies.iter().map(|a| format!("during the workload: {a}")));
    let acked: Vec<String> = log.counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    line.push_str(&format!(": acked {}", acked.join(", ")));
    if let Some(p) = panics(&daemon.log_text()) {
        failures.push(format!("daemon panicked before the kill: {p}"));
    }
    drop(daemon);

    // Before restart: the file as the kill left it.
    let before = {
        let db = data.open_ro();
        failures.extend(invariants(&db).into_iter().map(|f| format!("after kill: {f}")));
        counts(&db)
    };

    // Restart on the same files.
    let mut daemon = match Daemon::start(&data, &dir.join("daemon-2.log")) {
        Ok(d) => d,
        Err(e) => {
            failures.push(format!("restart: {e}"));
            return Outcome { failures, line };
        }
    };
    let db = data.open_ro();
    let after = counts(&db);
    if before != after {
        failures.push(format!("restart changed the rows: before {before:?}, after {after:?}"));
    }
    failures.extend(verify(fx, &log, &db, &fx.tenant, &mut rng));
    failures.extend(invariants(&db).into_iter().map(|f| format!("after restart and checks: {f}")));
    drop(db);
    match pending {
        Some(Ok(options)) => match fx.tenant.auth_finish(&http, &mut softs[0].1, &options) {
            Ok(r) if r.status == 200 => {}
            Ok(r) => failures.push(format!("a sign-in started before the kill: finish {} {}", r.status, r.body)),
            Err(e) => failures.push(format!("a sign-in started before the kill: finish: {e}")),
        },
        Some(Err(e)) => failures.push(format!("auth/start before the kill: {e}")),
        None => failures.push("no auth/start before the kill".into()),
    }
    match daemon.stop() {
        Some(0) => {}
        code => failures.push(format!("restarted daemon did not stop cleanly on SIGTERM: {code:?}")),
    }
    if let Some(p) = panics(&daemon.log_text()) {
        failures.push(format!("restarted daemon panicked: {p}"));
    }
    if failures.is_empty() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Outcome { failures, line }
}

fn main() {
    let trials: usize = std::env::var("TRIALS").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    let seed: u64 = std::env::var("SEED")
        .ok()
        .and_then(|v| {
            let v = v.trim();
            match v.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16).ok(),
                None => v.parse().ok(),
            }
        })
        .unwrap_or_else(child::clock_seed);
    let only: Option<usize> = std::env::var("ONLY_TRIAL").ok().and_then(|v| v.parse().ok());
    let started = Instant::now();
    let root = std::env::temp_dir().join(format!("latchkey-crash-{seed:016x}"));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    println!(
        "crash trials: SEED={seed:#x} TRIALS={trials} (replay: SEED={seed:#x} TRIALS={trials}; one trial: ONLY_TRIAL=k)"
    );
    println!("directory {}", root.display());

    let port = child::free_port();
    let (fx, mut softs) = build_template(&root.join("template"), port);
    println!("template ready in {:.1} s", started.elapsed().as_secs_f64());

    let mut master = Rng::new(seed);
    let (mut passed, mut failed) = (0usize, 0usize);
    for trial in 0..trials {
        let trial_seed = master.next_u64();
        if only.is_some_and(|o| o != trial) {
            continue;
        }
        let t = Instant::now();
        let outcome = run_trial(&fx, &mut softs, &root, trial, trial_seed);
        let status = if outcome.failures.is_empty() { "ok" } else { "FAILED" };
        println!("trial {trial:>3}: {} ({:.1} s) {status}", outcome.line, t.elapsed().as_secs_f64());
        if outcome.failures.is_empty() {
            passed += 1;
        } else {
            failed += 1;
            for f in &outcome.failures {
                println!("    - {f}");
            }
            println!("    files kept in {}", root.join(format!("trial-{trial:03}")).display());
        }
    }
    println!("wall time {:.1} s, SEED={seed:#x}", started.elapsed().as_secs_f64());
    println!("crash trials: {passed} passed, {failed} failed");
    if failed == 0 {
        let _ = std::fs::remove_dir_all(&root);
    } else {
        std::process::exit(1);
    }
}
