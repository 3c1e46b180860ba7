//! Webhooks over real HTTP: stand-in receivers on loopback record every delivery, and the
//! Standard Webhooks reference library (PyPI `standardwebhooks`, installed by scripts/test.sh)
//! verifies each one's signature as a receiver would. Receivers that are down, answer 503 or
//! hang, and a daemon killed with SIGKILL, lose and reorder nothing.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::receiver::{Answer, Hit, Receiver};
use crate::support::*;

/// One delivery as received: its three Standard Webhooks headers and its body.
#[derive(Clone, Debug)]
struct Got {
    id: String,
    timestamp: String,
    signature: String,
    body: String,
}

impl Got {
    fn of(h: &Hit) -> Got {
        Got {
            id: h.header("webhook-id").to_owned(),
            timestamp: h.header("webhook-timestamp").to_owned(),
            signature: h.header("webhook-signature").to_owned(),
            body: h.text(),
        }
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap()
    }
    /// The delivery's number: `webhook-id` is `msg_{n}`.
    fn n(&self) -> i64 {
        self.id.strip_prefix("msg_").unwrap().parse().unwrap()
    }
}

/// The deliveries `rx` has answered 2xx.
fn received(rx: &Receiver) -> Vec<Got> {
    rx.hits().iter().map(Got::of).collect()
}

/// Waits (up to `secs` seconds) until `rx` has answered `n` deliveries 2xx; returns them all.
fn wait_got(rx: &Receiver, n: usize, secs: u64) -> Vec<Got> {
    rx.wait_for(n, secs).iter().map(Got::of).collect()
}

fn url(port: u16) -> String {
    format!("http://127.0.0.1:{port}/hook")
}

/// What `standardwebhooks` (Python) says of the deliveries, each under its subscription's secret:
/// `(verified, refusals)`.
fn verify(deliveries: &[(&str, &Got)]) -> (u64, Vec<Value>) {
    let python = repo_root().join("tests/py/.venv/bin/python");
    assert!(python.exists(), "standardwebhooks is not installed: run `bash scripts/test.sh`");
    let mut child = Command::new(python)
        .arg(repo_root().join("tests/py/verify_webhooks.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = String::new();
    for (secret, d) in deliveries {
        let line = json!({
            "secret": secret,
            "headers": {"webhook-id": d.id, "webhook-timestamp": d.timestamp, "webhook-signature": d.signature},
            "body": d.body,
        });
        input.push_str(&format!("{line}\n"));
    }
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out: Run = child.wait_with_output().unwrap().into();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    (v["verified"].as_u64().unwrap(), v["refused"].as_array().unwrap().clone())
}

/// Asserts that every delivery verifies under `secret`, and that a tampered one does not.
#[track_caller]
fn all_verify(secret: &str, got: &[Got]) {
    let mut tampered = got[0].clone();
    tampered.body = tampered.body.replace("success", "failure");
    let mut all: Vec<(&str, &Got)> = got.iter().map(|g| (secret, g)).collect();
    all.push((secret, &tampered));
    let (verified, refused) = verify(&all);
    assert_eq!(verified, got.len() as u64, "{refused:?}");
    assert_eq!(refused.len(), 1, "only the tampered copy is refused: {refused:?}");
    assert_eq!(refused[0]["index"], got.len(), "{refused:?}");
}

fn add(d: &TestDaemon, tenant: &str, url: &str, events: &[&str]) -> (i64, String) {
    let mut args = vec!["webhook", "add", "--tenant", tenant, "--url", url, "--events"];
    args.extend_from_slice(events);
    args.extend_from_slice(&["-o", "json"]);
    let w = d.cli(&args).ok().json();
    (w["id"].as_i64().unwrap(), w["secret"].as_str().unwrap().to_owned())
}

fn invite(d: &TestDaemon, tenant: &str, email: &str) {
    d.cli(&["user", "invite", "--tenant", tenant, "--email", email, "--name", "Someone", "-o", "json"]).ok();
}

fn deliveries(socket_cli: impl Fn(&[&str]) -> Run, tenant: &str) -> Vec<Value> {
    let v = socket_cli(&["webhook", "deliveries", "--tenant", tenant, "--limit", "10000", "-o", "json"]).ok().json();
    v.as_array().unwrap().clone()
}

/// Waits until `pred` holds of the tenant's deliveries (newest first).
fn wait_deliveries(d: &TestDaemon, tenant: &str, secs: u64, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let list = deliveries(|a| d.cli(a), tenant);
        if pred(&list) || Instant::now() > deadline {
            return list;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn types(got: &[Got]) -> Vec<String> {
    got.iter().map(|g| g.json()["type"].as_str().unwrap().to_owned()).collect()
}

fn subjects(got: &[Got]) -> Vec<String> {
    got.iter().map(|g| g.json()["data"]["subject"].as_str().unwrap_or("").to_owned()).collect()
}

#[track_caller]
fn in_order(got: &[Got]) {
    let ns: Vec<i64> = got.iter().map(Got::n).collect();
    let mut sorted = ns.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(ns, sorted, "each delivery once, in the order queued");
}

#[test]
fn matching_events_are_delivered_signed_in_order_and_verified_by_standardwebhooks() {
    let d = TestDaemon::start();
    d.tenant("acme");
    d.tenant("other");
    let users = Receiver::start();
    let tokens = Receiver::start();
    let (users_id, users_secret) = add(&d, "acme", &users.url("/hook"), &["user.*", "role.*"]);
    assert!(users_secret.starts_with("whsec_"), "{users_secret}");
    // A secret from a file (0600, as an operator keeps one), never on the command line.
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let file = d.dir.path().join("hook.secret");
    std::fs::write(&file, format!("{secret}\n")).unwrap();
    let f = file.to_str().unwrap();
    let w = d
        .cli(&[
            "webhook",
            "add",
            "--tenant",
            "acme",
            "--url",
            &tokens.url("/hook"),
            "--events",
            "token.*",
            "--secret-file",
            f,
        ])
        .ok();
    assert!(!w.stdout.contains(secret) && w.stdout.contains("Added webhook"), "{}", w.stdout);
    // Another tenant's events go to its own subscriptions only.
    let elsewhere = Receiver::start();
    add(&d, "other", &elsewhere.url("/hook"), &["*"]);

    for email in ["ada@acme.test", "bob@acme.test", "cy@acme.test"] {
        invite(&d, "acme", email);
    }
    d.cli(&["role", "create", "--tenant", "acme", "admin"]).ok();
    d.cli(&["role", "assign", "--tenant", "acme", "admin", "ada@acme.test", "bob@acme.test"]).ok();
    d.cli(&["user", "disable", "--tenant", "acme", "cy@acme.test"]).ok();
    invite(&d, "other", "eve@other.test");
    let site = Site { d: &d, slug: "acme".into(), base: format!("{}/acme", d.base), origin: d.base.clone() };
    let m2m = crate::oidc_support::app(&site, "m2m", &[]);
    let r = crate::oidc_support::token(&site, &m2m, &[("grant_type", "client_credentials")]);
    assert_eq!(r.status, 200, "{}", r.body);

    let got = wait_got(&users, 7, 15);
    assert_eq!(
        types(&got),
        ["user.invite", "user.invite", "user.invite", "role.create", "role.assign", "role.assign", "user.disable"],
        "the trail's order; app.create and token.* are not this subscription's"
    );
    assert_eq!(subjects(&got)[..3], ["ada@acme.test", "bob@acme.test", "cy@acme.test"]);
    let first = got[0].json();
    assert_eq!(first["data"]["tenant"], "acme");
    assert_eq!(first["data"]["outcome"], "success");
    assert!(first["timestamp"].as_str().unwrap().ends_with('Z'), "{first}");
    in_order(&got);
    all_verify(&users_secret, &got);
    // The other subscription, under the secret from the file.
    let got_tokens = wait_got(&tokens, 1, 15);
    assert_eq!(types(&got_tokens), ["token.client_credentials"]);
    all_verify(secret, &got_tokens);
    // Its own creation is its first event (`*`).
    let got_elsewhere = wait_got(&elsewhere, 2, 15);
    assert_eq!(types(&got_elsewhere), ["webhook.add", "user.invite"], "no acme event reaches another tenant's hook");
    assert_eq!(subjects(&got_elsewhere)[1], "eve@other.test");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(received(&users).len(), 7, "each delivered once");

    // Listed, delivered, with the answer.
    let list = d.cli(&["webhook", "list", "--tenant", "acme", "-o", "json"]).ok().json();
    assert_eq!(list.as_array().unwrap().len(), 2);
    assert_eq!(list[0]["id"], users_id);
    assert_eq!(list[0]["events"], json!(["user.*", "role.*"]));
    assert_eq!(list[0]["pending"], 0);
    assert!(list[0].get("secret").is_none(), "the secret is never listed: {list}");
    let sent = deliveries(|a| d.cli(a), "acme");
    assert_eq!(sent.len(), 8);
    assert!(sent.iter().all(|x| x["status"] == "delivered" && x["answer"] == "HTTP 200"), "{sent:?}");
    assert_eq!(sent.last().unwrap()["event"], "user.invite");
    // The trail shows the subscriptions, never their secrets.
    let trail = d.cli(&["audit", "--tenant", "acme", "--action", "webhook.*", "-o", "json"]).ok();
    assert!(trail.stdout.contains(&users.url("")) && !trail.stdout.contains("whsec_"), "{}", trail.stdout);
    assert!(d.metrics().contains("latchkey_outbox_deliveries_total{kind=\"webhook\",outcome=\"delivered\"} 10"));

    // Removed: nothing more is sent, and its deliveries go with it.
    d.cli(&["webhook", "remove", "--tenant", "acme", &users_id.to_string(), "--yes"]).ok();
    invite(&d, "acme", "dan@acme.test");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(received(&users).len(), 7);
    assert_eq!(deliveries(|a| d.cli(a), "acme").len(), 1);
}

#[test]
fn bad_webhooks_are_refused_and_nothing_is_stored() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let (id, _) = add(&d, "acme", "https://hooks.acme.test/in", &["user.*"]);
    let before = d.snapshot();
    let bad_secret = d.dir.path().join("bad.secret");
    std::fs::write(&bad_secret, "hunter2\n").unwrap();
    let short = d.dir.path().join("short.secret");
    std::fs::write(&short, "whsec_c2hvcnQ=\n").unwrap();
    let hook = |url: &str, events: &[&str], extra: &[&str]| {
        let mut a = vec!["webhook", "add", "--tenant", "acme", "--url", url, "--events"];
        a.extend_from_slice(events);
        a.extend_from_slice(extra);
        d.cli(&a)
    };
    let cases: Vec<(Run, &str)> = vec![
        (hook("http://hooks.acme.test/in", &["user.*"], &[]), "invalid_webhook"),
        (hook("ftp://hooks.acme.test/in", &["user.*"], &[]), "invalid_webhook"),
        (hook("https://u:hunter2@hooks.acme.test/in", &["user.*"], &[]), "invalid_webhook"),
        (hook("not a url", &["user.*"], &[]), "invalid_webhook"),
        (hook("https://hooks.acme.test/in", &["User.*"], &[]), "invalid_webhook"),
        (hook("https://hooks.acme.test/in", &["user.*,role.*"], &[]), "invalid_webhook"),
        (hook("https://hooks.acme.test/in", &["user.*"], &["--secret-file", bad_secret.to_str().unwrap()]), "whsec_"),
        (hook("https://hooks.acme.test/in", &["user.*"], &["--secret-file", short.to_str().unwrap()]), "24 to 64"),
        (hook("https://hooks.acme.test/in", &["user.*"], &["--secret-file", "/nonexistent/secret"]), "/nonexistent"),
        (
            d.cli(&["webhook", "add", "--tenant", "nope", "--url", "https://h.test/", "--events", "*"]),
            "tenant_not_found",
        ),
        (d.cli(&["webhook", "remove", "--tenant", "acme", &id.to_string()]), "--yes"),
        (d.cli(&["webhook", "remove", "--tenant", "acme", "999", "--yes"]), "webhook_not_found"),
        (d.cli(&["webhook", "deliveries", "--tenant", "acme", "999"]), "webhook_not_found"),
        (d.cli(&["webhook", "deliveries", "--tenant", "acme", "--limit", "0"]), "limit"),
        (d.cli(&["webhook", "redeliver", "--tenant", "acme", "999"]), "delivery_not_found"),
        (d.cli(&["webhook", "list", "--tenant", "nope"]), "tenant_not_found"),
    ];
    for (i, (r, want)) in cases.iter().enumerate() {
        assert_ne!(r.code, 0, "case {i} succeeded: {}", r.stdout);
        assert!(r.stderr.contains(want), "case {i}: {want:?} not in {}", r.stderr);
    }
    // No event list at all is clap's usage error.
    assert_eq!(d.cli(&["webhook", "add", "--tenant", "acme", "--url", "https://h.test/"]).code, 2);
    // Raw admin calls: a secret in the body that is not one, unknown fields, a non-numeric id.
    let raw = |method: &str, path: &str, body: &Value| {
        d.admin_raw(&admin_request(method, path, Some("application/json"), body.to_string().as_bytes()))
    };
    let p = "/admin/v1/tenants/acme/webhooks";
    let (s, b) = raw("POST", p, &json!({"url": "https://h.test/", "events": ["*"], "secret": "whsec_!!"}));
    assert_eq!((s, b["error"].as_str()), (400, Some("invalid_webhook")), "{b}");
    let (s, b) = raw("POST", p, &json!({"url": "https://h.test/", "events": []}));
    assert_eq!((s, b["error"].as_str()), (400, Some("invalid_webhook")), "{b}");
    let (s, b) = raw("DELETE", &format!("{p}/x1"), &json!({"confirm": true}));
    assert_eq!((s, b["error"].as_str()), (400, Some("invalid_input")), "{b}");
    let (s, b) = raw("POST", &format!("{p}/deliveries/1/redeliver"), &json!({}));
    assert_eq!((s, b["error"].as_str()), (404, Some("delivery_not_found")), "{b}");
    assert_eq!(d.snapshot(), before, "nothing stored by any refusal");
    // A password in a refused URL is neither echoed nor audited; the trail names the receiver's
    // origin only (it is itself sent to webhooks).
    assert!(cases.iter().all(|(r, _)| !r.stderr.contains("hunter2")));
    let trail = d.cli(&["audit", "--tenant", "acme", "-o", "json"]).ok().stdout;
    assert!(!trail.contains("hunter2"), "{trail}");
    assert!(trail.contains("\"https://hooks.acme.test\""), "{trail}");
    assert!(!trail.contains("hooks.acme.test/in"), "{trail}");
}

#[test]
fn a_receiver_down_for_a_minute_gets_every_event_afterwards_in_order() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let port = Receiver::down();
    let (_, secret) = add(&d, "acme", &url(port), &["user.*"]);
    for i in 0..5 {
        invite(&d, "acme", &format!("u{i}@acme.test"));
    }
    // The first attempt is refused (nothing listens): the head waits for its retry.
    let list = wait_deliveries(&d, "acme", 15, |l| l.iter().any(|x| x["answer"].is_string()));
    let retrying: Vec<&Value> = list.iter().filter(|x| x["status"] == "retrying").collect();
    assert_eq!(retrying.len(), 1, "only the head is tried: {list:?}");
    assert_eq!(retrying[0]["event"], "user.invite");
    assert!(retrying[0]["answer"].as_str().is_some_and(|a| a.contains("cannot connect")), "{list:?}");
    // A minute of the daemon's clock passes (retries at +5 s, +15 s, +35 s), events keep coming.
    let head_attempts = |l: &[Value]| l.iter().find(|x| x["status"] == "retrying").map(|x| x["attempts"].clone());
    for (attempt, (step, i)) in [(5, 5), (10, 6), (20, 7)].into_iter().enumerate() {
        d.clock.advance(step);
        invite(&d, "acme", &format!("u{i}@acme.test"));
        wait_deliveries(&d, "acme", 15, |l| head_attempts(l) == Some(json!(attempt + 2)));
        // The lease counts the attempt; its failure is recorded a moment later.
        std::thread::sleep(Duration::from_millis(500));
    }
    let list = deliveries(|a| d.cli(a), "acme");
    assert_eq!(list.len(), 8);
    let head = list.iter().find(|x| x["status"] == "retrying").unwrap();
    assert_eq!(head["attempts"], 4, "{list:?}");
    assert!(list.iter().all(|x| x["status"] != "failed" && x["status"] != "delivered"), "{list:?}");
    // One still being tried cannot be redelivered.
    let waiting = list[0]["id"].as_i64().unwrap().to_string();
    let r = d.cli(&["webhook", "redeliver", "--tenant", "acme", &waiting]);
    assert!(r.code == 1 && r.stderr.contains("delivery_pending"), "{}", r.stderr);
    // The receiver comes back; the next retry (+40 s) delivers the head and everything behind it.
    let back = Receiver::on(port);
    d.clock.advance(25);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(received(&back).is_empty(), "not before the retry is due: {list:?}");
    d.clock.advance(20);
    let got = wait_got(&back, 8, 15);
    assert_eq!(subjects(&got), (0..8).map(|i| format!("u{i}@acme.test")).collect::<Vec<_>>());
    in_order(&got);
    all_verify(&secret, &got);
    let list = deliveries(|a| d.cli(a), "acme");
    assert!(list.iter().all(|x| x["status"] == "delivered"), "{list:?}");
}

#[test]
fn a_hanging_receiver_delays_no_request_and_no_other_subscription() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let stuck = Receiver::start();
    stuck.answer(Answer::Hang);
    let fine = Receiver::start();
    let (_, stuck_secret) = add(&d, "acme", &stuck.url("/hook"), &["user.*"]);
    let (_, fine_secret) = add(&d, "acme", &fine.url("/hook"), &["user.*"]);
    let started = Instant::now();
    for i in 0..20 {
        invite(&d, "acme", &format!("u{i}@acme.test"));
    }
    let got = wait_got(&fine, 20, 10);
    assert_eq!(got.len(), 20, "the other subscription is not held up");
    in_order(&got);
    all_verify(&fine_secret, &got);
    eprintln!("20 invitations and their 20 deliveries elsewhere in {:?}", started.elapsed());
    assert!(received(&stuck).is_empty());
    // Its first delivery is held by the receiver.
    let deadline = Instant::now() + Duration::from_secs(15);
    while stuck.hung() == 0 {
        assert!(Instant::now() < deadline, "the hanging receiver was never called");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The stuck one answers again; its attempt gave up after the client's 10 s and is retried.
    stuck.answer(Answer::Ok);
    let timed_out =
        |l: &[Value]| l.iter().any(|x| x["answer"].as_str().is_some_and(|a| a.contains("no answer within 10 s")));
    let list = wait_deliveries(&d, "acme", 20, timed_out);
    assert!(timed_out(&list), "{list:?}");
    d.clock.advance(10);
    let got = wait_got(&stuck, 20, 15);
    assert_eq!(subjects(&got), (0..20).map(|i| format!("u{i}@acme.test")).collect::<Vec<_>>());
    all_verify(&stuck_secret, &got);
}

#[test]
fn a_failing_receiver_is_given_up_after_a_day_listed_and_redelivered() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let rx = Receiver::start();
    rx.answer(Answer::Status(503));
    let (id, _) = add(&d, "acme", &rx.url("/hook"), &["user.*"]);
    invite(&d, "acme", "ada@acme.test");
    invite(&d, "acme", "bob@acme.test");
    wait_deliveries(&d, "acme", 15, |l| l.iter().any(|x| x["answer"] == "HTTP 503"));
    // A day later the next attempt is the last; the one behind it, as old, fails after its first.
    d.clock.advance(25 * 3600);
    let list = wait_deliveries(&d, "acme", 15, |l| l.iter().all(|x| x["status"] == "failed"));
    assert!(list.iter().all(|x| x["status"] == "failed"), "{list:?}");
    let failed =
        d.cli(&["webhook", "deliveries", "--tenant", "acme", &id.to_string(), "--failed", "-o", "json"]).ok().json();
    assert_eq!(failed.as_array().unwrap().len(), 2);
    let table = d.cli(&["webhook", "deliveries", "--tenant", "acme", "--failed"]).ok().stdout;
    assert!(table.contains("failed") && table.contains("HTTP 503"), "{table}");
    let oldest = failed[1]["id"].as_i64().unwrap();
    // Sent again once the receiver is mended, with the same webhook-id.
    rx.answer(Answer::Ok);
    let again = d.cli(&["webhook", "redeliver", "--tenant", "acme", &oldest.to_string(), "-o", "json"]).ok().json();
    assert_eq!((again["status"].as_str(), again["attempts"].as_i64()), (Some("pending"), Some(0)));
    let got = wait_got(&rx, 1, 15);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].id, format!("msg_{oldest}"));
    assert_eq!(subjects(&got), ["ada@acme.test"]);
    // Once recorded as delivered it can be sent again.
    let delivered = |l: &[Value]| l.iter().any(|x| x["id"] == oldest && x["status"] == "delivered");
    let list = wait_deliveries(&d, "acme", 15, delivered);
    assert!(delivered(&list), "{list:?}");
    let r = d.cli(&["webhook", "redeliver", "--tenant", "acme", &oldest.to_string()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(wait_got(&rx, 2, 15).len(), 2);
}

#[test]
fn deliveries_waiting_for_a_receiver_survive_a_sigkill() {
    // The real binary, so that it can be killed with SIGKILL.
    let shared = tempfile::tempdir().unwrap();
    let _guard = store_guard(shared.path());
    let mut node = Node::start(shared.path(), None);
    let on = |node: &Node, args: &[&str]| cli(&node.socket(), args);
    on(&node, &["tenant", "create", "acme"]).ok();
    let rx_port = Receiver::down();
    let w =
        on(&node, &["webhook", "add", "--tenant", "acme", "--url", &url(rx_port), "--events", "user.*", "-o", "json"])
            .ok()
            .json();
    let secret = w["secret"].as_str().unwrap().to_owned();
    for i in 0..30 {
        on(&node, &["user", "invite", "--tenant", "acme", "--email", &format!("u{i}@acme.test"), "--name", "U"]).ok();
    }
    // Every invitation acknowledged is in the trail and queued; the head has been tried.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let list = deliveries(|a| on(&node, a), "acme");
        // The head's failure recorded: due again in 5 s, not leased.
        if list.len() == 30 && list.iter().any(|x| x["status"] == "retrying" && x["answer"].is_string()) {
            break;
        }
        assert!(Instant::now() < deadline, "{list:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    node.kill();
    let back = Receiver::on(rx_port);
    let node = Node::start(shared.path(), None);
    // The head's retry is due 5 s after its failure.
    let got = wait_got(&back, 30, 30);
    assert_eq!(subjects(&got), (0..30).map(|i| format!("u{i}@acme.test")).collect::<Vec<_>>(), "none lost");
    in_order(&got);
    all_verify(&secret, &got);
    let list = deliveries(|a| on(&node, a), "acme");
    assert!(list.iter().all(|x| x["status"] == "delivered"), "{list:?}");
}
