//! Benchmark: token endpoint throughput against an in-process daemon built with the release
//! profile, over real HTTP on loopback, with a real SQLite file: client-credentials grants (one
//! RS256 signature, no database write) and authorization-code exchanges (ID + access token
//! signatures, code consumed and refresh token stored in one durable commit), then refreshes (16
//! clients, each refresh token rotated once: the same signatures and commit). Prints the machine's
//! single-core RSA-2048 signing rate from `openssl speed` in the same run, as the ceiling. Client
//! credentials are then measured per signing algorithm (RS256, ES256, EdDSA apps side by side, in
//! alternating rounds) with the ratios to RS256, and with and without DPoP proofs (the cost of a bound
//! grant).
//!
//! `BENCH_PHASE=dpop` runs only the DPoP phase: client credentials with and without a proof.
//!
//! Run: `cargo bench -p latchkey-tests --bench tokens`; the daemon signs with aws-lc unless
//! `LATCHKEY_SIGNING_RSA_ENGINE=ifma-pairs` (as bench/run sets) asks for the pair signer. With
//! `BENCH_PEER_OIDC=http://127.0.0.1:PORT` (bench/peers/oidc-provider.mjs) the same clients then
//! exchange node-oidc-provider's codes for its ID, access and refresh tokens.
//!
//! After Latchkey's 16-client exchanges the same clients send the same requests, in rounds beside
//! the same ceiling, to a bare RS256 server (`common/bare.rs`: the daemon's HTTP stack and
//! signing library and nothing else), which shows how much of the ceiling is reachable at all.
//! `BENCH_BARE_SERVE=1` only starts that server, prints `bare token server ready on http://…`
//! and serves until killed (bench/run drives it with wrk beside Latchkey's client credentials).
//!
//! With `BENCH_BACKEND=postgres BENCH_NODES=1|2|3` (the `PG*` variables pointing at a server, e.g.
//! inside `pg_virtualenv`) the client-credentials grants (1 and 4 clients), code exchanges and
//! refreshes (1 and 16 clients, each code issued by one node and exchanged at the next, and each
//! refresh token rotated at the node after the one that issued it) run instead against
//! that many release `latchkeyd` processes on one new database (see `common/nodes.rs`; run
//! `cargo build --release --workspace --bins` first), each request sent to the next node in turn.

#[path = "../e2e/authenticator.rs"]
mod authenticator;
#[path = "common/bare.rs"]
mod bare;
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
#[path = "../e2e/oidc_support.rs"]
mod oidc_support;
#[path = "../e2e/support.rs"]
mod support;

use std::time::{Duration, Instant};

use authenticator::{Soft, Tamper};
use oidc_support::{App, Pkce, authorize_url, get, location_params, param, pkce, token};
use serde_json::json;
use support::{Site, TestDaemon, admin_raw, admin_request};

fn admin(d: &TestDaemon, path: &str, body: serde_json::Value) -> serde_json::Value {
    let (status, v) = admin_raw(
        &d.socket,
        &admin_request("POST", path, Some("application/json"), &serde_json::to_vec(&body).unwrap()),
    );
    assert!(status == 201 || status == 200, "{path}: {v}");
    v
}

fn report(label: &str, n: usize, wall: Duration, mut samples: Vec<Duration>) {
    samples.sort();
    let pct = |p: f64| samples[((samples.len() as f64 - 1.0) * p) as usize].as_secs_f64() * 1e3;
    println!(
        "{label:<46} {n:>6} in {:>6.2} s = {:>7.0}/s   p50 {:>5.2} ms  p99 {:>5.2} ms",
        wall.as_secs_f64(),
        n as f64 / wall.as_secs_f64(),
        pct(0.5),
        pct(0.99)
    );
}

fn parallel<T: Send>(clients: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|i| {
                s.spawn({
                    let w = &work;
                    move || w(i)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Each client's codes exchanged one after another over its own kept-alive connection, every
/// client at once on one event-loop thread (`common/lean_async.rs`; the same client for Latchkey,
/// the bare server and the peer); each answer must be 200 and contain `expect`. Every exchange's
/// duration.
fn exchanges(base: &str, app: &App, verifier: &str, codes: Vec<Vec<String>>, expect: &'static str) -> Vec<Duration> {
    let bodies = codes.iter().map(|c| c.iter().map(|code| exchange_form(app, verifier, code)).collect()).collect();
    posts(base, app, bodies, expect, false).into_iter().flatten().map(|(took, _)| took).collect()
}

fn exchange_form(app: &App, verifier: &str, code: &str) -> String {
    oidc_support::query(&[
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", app.redirect.as_str()),
        ("code_verifier", verifier),
    ])
}

/// Each client's form bodies sent to `{base}/token` one after another on one connection (the
/// clients on one event-loop thread); every answer must be a 200 holding `expect`. The time of
/// each, and its body where `keep`.
fn posts(
    base: &str,
    app: &App,
    bodies: Vec<Vec<String>>,
    expect: &'static str,
    keep: bool,
) -> Vec<Vec<(Duration, Option<String>)>> {
    let requests = bodies.into_iter().map(|b| b.into_iter().map(|body| (body, None)).collect()).collect();
    posts_with(base, app, requests, expect, keep)
}

/// [`posts`] where each request may carry a `DPoP` proof.
fn posts_with(
    base: &str,
    app: &App,
    requests: Vec<Vec<(String, Option<String>)>>,
    expect: &'static str,
    keep: bool,
) -> Vec<Vec<(Duration, Option<String>)>> {
    let (authority, path) = lean::split(base);
    let path = format!("{path}/token");
    let basic = oidc_support::basic_auth(&app.client_id, app.secret.as_deref().unwrap_or_default());
    lean_async::clients(&authority, requests, |mine, mut http| {
        let (path, basic) = (path.clone(), basic.clone());
        async move {
            let mut samples = Vec::with_capacity(mine.len());
            for (body, proof) in &mine {
                let t = Instant::now();
                let form = "application/x-www-form-urlencoded";
                let mut headers = vec![("Authorization", basic.as_str())];
                if let Some(p) = proof {
                    headers.push(("DPoP", p.as_str()));
                }
                let r = http.post(&path, form, body.as_bytes(), &headers).await;
                let took = t.elapsed();
                let text = r.text();
                assert!(r.status == 200 && text.contains(expect), "{text}");
                samples.push((took, keep.then_some(text)));
            }
            samples
        }
    })
}

fn openssl_rsa2048() -> String {
    let out = std::process::Command::new("openssl").args(["speed", "-seconds", "3", "rsa2048"]).output();
    match out {
        Ok(o) => String::from_utf8_lossy(&o.stdout)
            .lines()
            .find(|l| l.trim_start().starts_with("rsa 2048"))
            .map(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                // rsa 2048 bits <sign s> <verify s> <sign/s> <verify/s>
                format!(
                    "{} signs/s, {} verifies/s (openssl speed rsa2048, one core)",
                    cols[cols.len() - 2],
                    cols[cols.len() - 1]
                )
            })
            .unwrap_or_else(|| "openssl printed no rsa2048 line".into()),
        Err(e) => format!("openssl not available: {e}"),
    }
}

/// Client credentials for an app of each signing algorithm (the tenant given an ES256 and an
/// EdDSA key), 16 clients each with a request in flight on one event-loop thread, in rounds whose
/// order alternates (the machine is shared and noisy); prints each algorithm's rate and the
/// median of the rounds' ES256 ÷ RS256 and EdDSA ÷ RS256 ratios.
fn by_algorithm(d: &TestDaemon, site: &Site, n: usize) {
    const ALGS: [&str; 3] = ["RS256", "ES256", "EdDSA"];
    for alg in &ALGS[1..] {
        admin(d, "/admin/v1/tenants/bench/keys/rotate", json!({"alg": alg}));
    }
    let apps: Vec<App> = ALGS
        .iter()
        .map(|alg| {
            let a = admin(
                d,
                "/admin/v1/tenants/bench/apps",
                json!({"name": format!("m2m {alg}"), "type": "m2m", "signing_alg": alg}),
            );
            App {
                client_id: a["client_id"].as_str().unwrap().into(),
                secret: a["client_secret"].as_str().map(Into::into),
                redirect: String::new(),
            }
        })
        .collect();
    let clients = 16;
    // Rounds long enough to measure ES256 and EdDSA (tens of thousands a second): 8× the grants
    // of the other phases, at least 16,000.
    let per_client = (n * 8).max(16_000) / clients;
    let run = |app: &App, per_client: usize| {
        let bodies = (0..clients).map(|_| vec!["grant_type=client_credentials".to_owned(); per_client]).collect();
        let wall = Instant::now();
        let samples: Vec<Duration> =
            posts(&site.base, app, bodies, "access_token", false).into_iter().flatten().map(|(d, _)| d).collect();
        (wall.elapsed(), samples)
    };
    for app in &apps {
        run(app, 20);
    }
    let mut rates = [vec![], vec![], vec![]];
    for round in 0..ROUNDS {
        let order: [usize; 3] = if round % 2 == 0 { [0, 1, 2] } else { [2, 1, 0] };
        for i in order {
            let (wall, samples) = run(&apps[i], per_client);
            rates[i].push(samples.len() as f64 / wall.as_secs_f64());
            if round == ROUNDS - 1 {
                report(&format!("client_credentials {}, {clients} clients", ALGS[i]), samples.len(), wall, samples);
            }
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for i in 1..3 {
        let ratios: Vec<f64> = rates[i].iter().zip(&rates[0]).map(|(a, r)| a / r).collect();
        println!(
            "client_credentials {} ÷ RS256, median of {ROUNDS} rounds: {:.2}× ({:.0}/s against {:.0}/s)",
            ALGS[i],
            median(ratios),
            median(rates[i].clone()),
            median(rates[0].clone())
        );
    }
}

/// Client credentials with and without a DPoP proof (ES256 client keys; proofs made before each
/// round is timed), for an RS256 and an ES256 app, 16 clients, in alternating rounds; prints the
/// cost of a bound grant against an unbound one (the unbound rate ÷ the bound rate, median of the
/// rounds): the proof's verification and its `jti` recorded in one durable write.
fn dpop_cost(d: &TestDaemon, site: &Site, n: usize) {
    let (_, keys) = admin_raw(&d.socket, &admin_request("GET", "/admin/v1/tenants/bench/keys", None, b""));
    if !keys.to_string().contains("ES256") {
        admin(d, "/admin/v1/tenants/bench/keys/rotate", json!({"alg": "ES256"}));
    }
    let apps: Vec<(&str, App)> = ["RS256", "ES256"]
        .into_iter()
        .map(|alg| {
            let a = admin(
                d,
                "/admin/v1/tenants/bench/apps",
                json!({"name": format!("dpop {alg}"), "type": "m2m", "signing_alg": alg}),
            );
            let app = App {
                client_id: a["client_id"].as_str().unwrap().into(),
                secret: a["client_secret"].as_str().map(Into::into),
                redirect: String::new(),
            };
            (alg, app)
        })
        .collect();
    let key = oidc_support::holder(latchkey::admin::SigningAlg::ES256);
    let htu = format!("{}/token", site.base);
    // A daemon in service, past its first minute (when proofs are written down: `dpop::spend`).
    d.clock.advance(61);
    let clients = 16;
    let per_client = (n * 4).max(8_000) / clients;
    let run = |app: &App, bound: bool, per_client: usize| {
        let requests: Vec<Vec<(String, Option<String>)>> = (0..clients)
            .map(|_| {
                (0..per_client)
                    .map(|_| {
                        let proof = bound.then(|| key.proof(d, "POST", &htu, json!({})));
                        ("grant_type=client_credentials".to_owned(), proof)
                    })
                    .collect()
            })
            .collect();
        let expect = if bound { "\"DPoP\"" } else { "\"Bearer\"" };
        let wall = Instant::now();
        let samples: Vec<Duration> =
            posts_with(&site.base, app, requests, expect, false).into_iter().flatten().map(|(d, _)| d).collect();
        (wall.elapsed(), samples)
    };
    for (_, app) in &apps {
        run(app, false, 20);
        run(app, true, 20);
    }
    for (alg, app) in &apps {
        let mut rates = [vec![], vec![]];
        for round in 0..ROUNDS {
            let order = if round % 2 == 0 { [false, true] } else { [true, false] };
            for bound in order {
                let (wall, samples) = run(app, bound, per_client);
                rates[usize::from(bound)].push(samples.len() as f64 / wall.as_secs_f64());
                if round == ROUNDS - 1 {
                    let label = format!(
                        "client_credentials {alg}, {}, {clients} clients",
                        if bound { "DPoP" } else { "Bearer" }
                    );
                    report(&label, samples.len(), wall, samples);
                }
            }
        }
        let costs: Vec<f64> = rates[0].iter().zip(&rates[1]).map(|(plain, bound)| plain / bound).collect();
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        println!(
            "client_credentials {alg}: a DPoP-bound grant costs {:.2}× an unbound one, median of {ROUNDS} rounds ({:.0}/s bound, {:.0}/s unbound)",
            median(costs),
            median(rates[1].clone()),
            median(rates[0].clone())
        );
    }
}

/// Rounds of the 16-client exchanges, each followed by its ceiling (`common/ceiling.rs`).
const ROUNDS: usize = 4;

fn main() {
    if std::env::var_os("BENCH_BARE_SERVE").is_some() {
        let server = bare::Bare::start();
        println!("bare token server ready on {}", server.base());
        std::io::Write::flush(&mut std::io::stdout()).ok();
        loop {
            std::thread::park();
        }
    }
    let n: usize = std::env::var("BENCH_GRANTS").ok().and_then(|v| v.parse().ok()).unwrap_or(2000);
    if let Some(count) = nodes::postgres_nodes() {
        return on_postgres(count, n);
    }
    // The daemon processes of the PostgreSQL runs read LATCHKEY_SIGNING_RSA_ENGINE themselves;
    // this in-process one is given it (bench/run sets "ifma-pairs").
    let engine = std::env::var("LATCHKEY_SIGNING_RSA_ENGINE").ok();
    let d = TestDaemon::start_with(|f| {
        f.limits.ceremony_rate_per_minute = Some(0);
        f.limits.token_rate_per_minute = Some(0);
        f.signing.rsa_engine = engine.clone();
    });
    admin(&d, "/admin/v1/tenants", json!({"slug": "bench"}));
    let site = Site { d: &d, slug: "bench".into(), base: format!("{}/bench", d.base), origin: d.base.clone() };
    println!(
        "latchkey token endpoint benchmark: {} cores, release build, loopback HTTP, SQLite WAL synchronous=FULL",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    );
    println!("RSA-2048 ceiling: {}", openssl_rsa2048());
    let (_, status) = admin_raw(&d.socket, &admin_request("GET", "/admin/v1/status", None, b""));
    println!("signing: rsa_engine = {}", status["rsa_engine"]);

    let m2m =
        admin(&d, "/admin/v1/tenants/bench/apps", json!({"name": "m2m", "type": "m2m", "scopes": ["users:invite"]}));
    let m2m = App {
        client_id: m2m["client_id"].as_str().unwrap().into(),
        secret: m2m["client_secret"].as_str().map(Into::into),
        redirect: String::new(),
    };
    if std::env::var("BENCH_PHASE").as_deref() == Ok("dpop") {
        return dpop_cost(&d, &site, n);
    }
    let grant = || {
        let t = Instant::now();
        let r = token(&site, &m2m, &[("grant_type", "client_credentials")]);
        assert_eq!(r.status, 200, "{}", r.body);
        t.elapsed()
    };
    for _ in 0..50 {
        grant();
    }
    for clients in [1usize, 4] {
        let wall = Instant::now();
        let samples: Vec<Duration> = parallel(clients, |_| (0..n / clients).map(|_| grant()).collect::<Vec<_>>())
            .into_iter()
            .flatten()
            .collect();
        report(&format!("client_credentials, {clients} client(s)"), samples.len(), wall.elapsed(), samples);
    }
    by_algorithm(&d, &site, n);
    dpop_cost(&d, &site, n);

    // Authorization codes: a signed-in browser session gets a code straight from /authorize.
    let web = admin(
        &d,
        "/admin/v1/tenants/bench/apps",
        json!({"name": "web", "type": "web", "redirect_uris": ["https://app.example.com/oidc-callback"]}),
    );
    let web = App {
        client_id: web["client_id"].as_str().unwrap().into(),
        secret: web["client_secret"].as_str().map(Into::into),
        redirect: "https://app.example.com/oidc-callback".into(),
    };
    let inv = admin(&d, "/admin/v1/tenants/bench/users/invite", json!({"email": "ada@bench.test", "name": "Ada"}));
    let invite = inv["invite_url"].as_str().unwrap().rsplit('/').next().unwrap().to_owned();
    let mut soft = Soft::new(&site.origin);
    let reg = site.register(&mut soft, "ada@bench.test", Some(&invite), None, &Tamper::default());
    let cookie = reg.session_cookie().unwrap();
    let p: Pkce = pkce();
    let minted = std::cell::RefCell::new(Vec::new());
    let code = || {
        let t = Instant::now();
        let r = get(&authorize_url(&site, &web, &p, &[]), Some(&cookie));
        minted.borrow_mut().push(t.elapsed());
        param(&location_params(&r), "code").unwrap().to_owned()
    };
    let mut latchkey16 = None;
    for clients in [1usize, 4, 16] {
        let wall = Instant::now();
        let codes: Vec<Vec<String>> = (0..clients).map(|_| (0..n / clients).map(|_| code()).collect()).collect();
        if clients == 1 {
            // The codes are issued one after another on a new connection each (not a goal's
            // figure; the exchanges below are): a signed-in browser's /authorize.
            let samples = std::mem::take(&mut *minted.borrow_mut());
            report("authorize → code (signed in), 1 client", samples.len(), wall.elapsed(), samples);
        }
        // The goal's ratio is taken at 16 clients, in rounds interleaved with its ceiling.
        let rounds = if clients == 16 { ROUNDS } else { 1 };
        let mut ceiling = ceiling::Rounds::new(ceiling::Ceiling::RsaSignsAllCores, rounds);
        let mut meter = meter::Meter::read(&d);
        let (samples, wall) = ceiling.run(&mut meter, &d, |round| {
            let mine = codes
                .iter()
                .map(|c| c.chunks(c.len().div_ceil(rounds).max(1)).nth(round).unwrap_or_default().to_vec())
                .collect();
            exchanges(&site.base, &web, &p.verifier, mine, "access_token")
        });
        let requests = samples.len();
        report(&format!("authorization_code exchange, {clients} client(s)"), requests, wall, samples);
        meter.report_since(&d, requests);
        ceiling.report();
        if clients == 16 {
            latchkey16 = ceiling.median();
        }
    }
    bare_exchanges(&d, &web, &p.verifier, n, latchkey16);

    // Refreshes from 16 clients: each refresh token (from exchanges not timed) rotated once.
    let clients = 16;
    let forms = (0..clients).map(|_| (0..n / clients).map(|_| exchange_form(&web, &p.verifier, &code())).collect());
    let issued = posts(&site.base, &web, forms.collect(), "refresh_token", true);
    let forms = issued
        .into_iter()
        .map(|mine| {
            let refresh = |body: Option<String>| {
                let v: serde_json::Value = serde_json::from_str(&body.unwrap_or_default()).unwrap();
                let token = v["refresh_token"].as_str().unwrap().to_owned();
                oidc_support::query(&[("grant_type", "refresh_token"), ("refresh_token", token.as_str())])
            };
            mine.into_iter().map(|(_, body)| refresh(body)).collect()
        })
        .collect();
    let meter = meter::Meter::read(&d);
    let wall = Instant::now();
    let samples: Vec<Duration> =
        posts(&site.base, &web, forms, "refresh_token", false).into_iter().flatten().map(|(took, _)| took).collect();
    let requests = samples.len();
    report(&format!("refresh_token grant, {clients} client(s)"), requests, wall.elapsed(), samples);
    meter.report_since(&d, requests);

    if let Ok(peer) = std::env::var("BENCH_PEER_OIDC") {
        let site = Site { d: &d, slug: String::new(), base: peer.clone(), origin: peer.clone() };
        let app = App {
            client_id: "bench-web".into(),
            secret: Some("bench-web-secret-bench-web-secret".into()),
            redirect: "https://app.example.com/oidc-callback".into(),
        };
        for clients in [1usize, 4, 16] {
            let codes: Vec<Vec<String>> = (0..clients)
                .map(|_| {
                    let r = get(&format!("{peer}/bench/mint-codes?n={}&challenge={}", n / clients, p.challenge), None);
                    assert_eq!(r.status, 200, "{}", r.body);
                    serde_json::from_str(&r.body).unwrap()
                })
                .collect();
            let wall = Instant::now();
            let samples = exchanges(&site.base, &app, &p.verifier, codes, "refresh_token");
            let label = format!("peer node-oidc-provider: code exchange, {clients} client(s)");
            report(&label, samples.len(), wall.elapsed(), samples);
        }
    }
}

/// The 16-client exchanges' requests sent to the bare server instead (it ignores the codes), in
/// rounds beside the same ceiling; then Latchkey's median ratio over the bare server's.
fn bare_exchanges(d: &TestDaemon, web: &App, verifier: &str, n: usize, latchkey: Option<f64>) {
    let server = bare::Bare::start();
    let base = format!("{}/bare", server.base());
    let clients = 16;
    let per_round = (n / clients).div_ceil(ROUNDS).max(1);
    let code = "unused-by-the-bare-server";
    let mut ceiling = ceiling::Rounds::new(ceiling::Ceiling::RsaSignsAllCores, ROUNDS);
    let mut meter = meter::Meter::read(d);
    let (samples, wall) = ceiling.run(&mut meter, d, |_| {
        exchanges(&base, web, verifier, vec![vec![code.to_owned(); per_round]; clients], "id_token")
    });
    let requests = samples.len();
    report("bare RS256 server: code exchange, 16 client(s)", requests, wall, samples);
    meter.report_since(d, requests);
    ceiling.report();
    if let (Some(ours), Some(bare)) = (latchkey, ceiling.median()) {
        println!("    Latchkey's 16-client exchanges ÷ the bare server's, by their median ratios: {:.2}", ours / bare);
    }
}

/// Client-credentials grants against `count` release `latchkeyd` processes on one PostgreSQL
/// database, round robin.
fn on_postgres(count: usize, n: usize) {
    let nodes = nodes::Nodes::start(count);
    let socket = nodes.socket();
    support::cli(&socket, &["tenant", "create", "bench", "-o", "json"]).ok();
    let m2m = child::create_app(&socket, "bench", "m2m", "m2m");
    println!(
        "latchkey token endpoint benchmark: {} cores, release build, loopback HTTP, PostgreSQL: {count} latchkeyd \
         process(es) on database {}, round robin",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        nodes.database()
    );
    let grant = |http: &child::Http| {
        let t = Instant::now();
        let node = nodes.pick();
        let r = http
            .post_form(&nodes.url(node, "/bench/token"), &m2m, &[("grant_type", "client_credentials")])
            .expect("token");
        assert_eq!(r.status, 200, "node {}: {}", node % nodes.len() + 1, r.body);
        t.elapsed()
    };
    let http = child::Http::new(Duration::from_secs(30));
    for _ in 0..50 * count {
        grant(&http);
    }
    for clients in [1usize, 4] {
        let wall = Instant::now();
        let samples: Vec<Duration> = parallel(clients, |_| {
            let http = child::Http::new(Duration::from_secs(30));
            (0..n / clients).map(|_| grant(&http)).collect::<Vec<_>>()
        })
        .into_iter()
        .flatten()
        .collect();
        report(&format!("client_credentials, {clients} client(s)"), samples.len(), wall.elapsed(), samples);
    }

    // Authorization codes from /authorize for a signed-in browser (not timed), each code issued
    // by one node and exchanged at the next.
    let web = child::create_app(&socket, "bench", "web", "web");
    let tenant = |node: usize| child::Tenant {
        slug: "bench".into(),
        base: nodes.url(node, "/bench"),
        origin: nodes.public.clone(),
    };
    let email = "ada@bench.test";
    let invite = child::invite(&socket, "bench", email);
    let mut soft = Soft::new(&nodes.public);
    let r = tenant(0).register(&http, &mut soft, email, &invite).expect("register");
    assert_eq!(r.status, 201, "{}", r.body);
    let cookie = r.session_cookie().expect("session cookie");
    for clients in [1usize, 16] {
        let codes: Vec<Vec<(usize, String, String)>> = (0..clients)
            .map(|_| {
                (0..n / clients)
                    .map(|_| {
                        let node = nodes.pick();
                        let (code, verifier) = tenant(node).code(&http, &web, &cookie).expect("code");
                        (node + 1, code, verifier)
                    })
                    .collect()
            })
            .collect();
        let wall = Instant::now();
        let done: Vec<Vec<(Duration, usize, String)>> = parallel(clients, |i| {
            let http = child::Http::new(Duration::from_secs(30));
            let exchange = |(node, code, verifier): &(usize, String, String)| {
                let t = Instant::now();
                let r = tenant(*node).exchange(&http, &web, code, verifier).expect("token");
                let took = t.elapsed();
                assert_eq!(r.status, 200, "node {}: {}", node % nodes.len() + 1, r.body);
                let refresh = r.json()["refresh_token"].as_str().expect("a refresh token").to_owned();
                (took, node + 1, refresh)
            };
            codes[i].iter().map(exchange).collect::<Vec<_>>()
        });
        let samples: Vec<Duration> = done.iter().flatten().map(|(took, ..)| *took).collect();
        report(&format!("authorization_code exchange, {clients} client(s)"), samples.len(), wall.elapsed(), samples);

        // Each refresh token rotated once, at the node after the one that issued it.
        let wall = Instant::now();
        let samples: Vec<Duration> = parallel(clients, |i| {
            let http = child::Http::new(Duration::from_secs(30));
            let rotate = |(_, node, token): &(Duration, usize, String)| {
                let t = Instant::now();
                let r = tenant(*node).refresh(&http, &web, token).expect("token");
                assert_eq!(r.status, 200, "node {}: {}", node % nodes.len() + 1, r.body);
                t.elapsed()
            };
            done[i].iter().map(rotate).collect::<Vec<_>>()
        })
        .into_iter()
        .flatten()
        .collect();
        report(&format!("refresh_token grant, {clients} client(s)"), samples.len(), wall.elapsed(), samples);
    }
}
