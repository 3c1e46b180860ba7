//! The device authorization grant (RFC 8628): `native` apps created with `--device-flow` ask
//! `/device_authorization` for a device code and a user code, the user approves on `/device`
//! (here through its JSON calls with a session of the software authenticator, in headless
//! Chromium with a virtual passkey, and for an outside client library), and the client polls
//! `/token` until it gets the tokens, once.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use crate::authenticator::Tamper;
use crate::oidc_support::{App, jwt_parts, query, token};
use crate::support::*;

const GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

/// A native app with the device flow; returns its client id.
fn device_app(site: &Site, name: &str, extra: &[&str]) -> App {
    let mut args = vec!["app", "create", "--tenant", &site.slug, "--name", name, "--type", "native", "--device-flow"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-o", "json"]);
    let a = site.d.cli(&args).ok().json();
    assert_eq!(a["device_flow"], true, "{a}");
    App { client_id: a["client_id"].as_str().unwrap().to_owned(), secret: None, redirect: String::new() }
}

fn form_post(site: &Site, path: &str, form: &[(&str, &str)]) -> Http {
    send_raw(
        "POST",
        &format!("{}{path}", site.base),
        Some("application/x-www-form-urlencoded"),
        query(form).into_bytes(),
        &[],
    )
}

/// `POST /device_authorization` for a public client.
fn request(site: &Site, client_id: &str, scope: Option<&str>) -> Http {
    let mut form = vec![("client_id", client_id)];
    if let Some(s) = scope {
        form.push(("scope", s));
    }
    form_post(site, "/device_authorization", &form)
}

fn requested(site: &Site, app: &App, scope: &str) -> Value {
    let r = request(site, &app.client_id, Some(scope));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("cache-control"), Some("no-store"));
    r.json()
}

fn poll(site: &Site, app: &App, device_code: &str) -> Http {
    token(site, app, &[("grant_type", GRANT), ("device_code", device_code)])
}

fn error(r: &Http) -> String {
    r.json()["error"].as_str().unwrap_or_else(|| panic!("no error: {} {}", r.status, r.body)).to_owned()
}

fn decide(site: &Site, user_code: &str, approve: bool, cookie: Option<&str>) -> Http {
    site.post("/device/decide", &json!({"user_code": user_code, "approve": approve}), cookie)
}

fn lookup(site: &Site, user_code: &str) -> Http {
    site.post("/device/lookup", &json!({ "user_code": user_code }), None)
}

/// A user with a passkey who has just signed in with it: their session cookie.
fn signed_in(site: &Site, email: &str) -> String {
    let (mut soft, _) = site.user_with_passkey(email);
    let r = site.sign_in(&mut soft, Some(email), &Tamper::default());
    assert_eq!(r.status, 200, "{}", r.body);
    r.session_cookie().unwrap()
}

fn audit_actions(d: &TestDaemon, slug: &str) -> Vec<String> {
    let events = d.cli(&["audit", "--tenant", slug, "-o", "json"]).ok().json();
    events.as_array().unwrap().iter().map(|e| format!("{} {}", e["action"].as_str().unwrap(), e["outcome"])).collect()
}

#[test]
fn request_poll_approve_tokens_once() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let app = device_app(&site, "acmectl", &["--scope", "offline_access"]);
    let cookie = signed_in(&site, "ada@acme.test");

    // Discovery names the endpoint and the grant.
    let doc = d.get("/acme/.well-known/openid-configuration").json();
    assert_eq!(doc["device_authorization_endpoint"], format!("{}/device_authorization", site.base));
    assert!(doc["grant_types_supported"].as_array().unwrap().iter().any(|g| g == GRANT));

    let started = requested(&site, &app, "openid email offline_access");
    let user_code = started["user_code"].as_str().unwrap().to_owned();
    assert_eq!(user_code.len(), 9, "{user_code}");
    assert_eq!(&user_code[4..5], "-");
    assert!(user_code.chars().filter(|c| *c != '-').all(|c| "BCDFGHJKLMNPQRSTVWXZ".contains(c)), "{user_code}");
    assert_eq!(started["verification_uri"], format!("{}/device", site.base));
    assert_eq!(started["verification_uri_complete"], format!("{}/device?user_code={user_code}", site.base));
    assert_eq!((started["expires_in"].as_i64(), started["interval"].as_i64()), (Some(600), Some(5)));
    let device_code = started["device_code"].as_str().unwrap().to_owned();
    // Both codes are stored hashed only.
    let sql = d.sql();
    assert_eq!(sql.i64("SELECT count(*) FROM device_codes"), 1);
    assert_eq!(sql.bytes("SELECT device_hash FROM device_codes").len(), 32);
    assert_eq!(sql.bytes("SELECT user_code_hash FROM device_codes").len(), 32);
    let dump = d.snapshot().0;
    assert!(!dump.contains(&device_code) && !dump.contains(&user_code.replace('-', "")), "codes in the clear");

    let first = poll(&site, &app, &device_code);
    assert_eq!((first.status, error(&first)), (400, "authorization_pending".into()), "{}", first.body);

    // The page's lookup: the app's name and the scopes, in any spelling of the code.
    let spelled = user_code.to_lowercase().replace('-', " ");
    let found = lookup(&site, &spelled);
    assert_eq!(found.status, 200, "{}", found.body);
    assert_eq!(
        found.json(),
        json!({"client_name": "acmectl", "scopes": ["openid", "email", "offline_access"], "user_code": user_code})
    );

    // Without a session: login_required; from another origin: refused.
    let anonymous = decide(&site, &user_code, true, None);
    assert_eq!((anonymous.status, error(&anonymous)), (401, "login_required".into()), "{}", anonymous.body);
    let foreign = send_json(
        "POST",
        &format!("{}/device/decide", site.base),
        &json!({"user_code": user_code, "approve": true}),
        &[("Origin", "https://evil.example"), ("Cookie", &cookie)],
    );
    assert_eq!((foreign.status, error(&foreign)), (403, "origin_not_allowed".into()), "{}", foreign.body);

    let approved = decide(&site, &user_code, true, Some(&cookie));
    assert_eq!(approved.status, 200, "{}", approved.body);
    assert_eq!(approved.json(), json!({"status": "approved"}));
    // The user code is single use.
    let again = decide(&site, &user_code, false, Some(&cookie));
    assert_eq!((again.status, error(&again)), (400, "invalid_user_code".into()));
    assert_eq!(error(&lookup(&site, &user_code)), "invalid_user_code");

    d.clock.advance(5);
    let tokens = poll(&site, &app, &device_code);
    assert_eq!(tokens.status, 200, "{}", tokens.body);
    let t = tokens.json();
    assert_eq!(t["token_type"], "Bearer");
    assert!(t["refresh_token"].is_string() && t["access_token"].is_string());
    assert_eq!(t["scope"], "openid email offline_access");
    let (_, id) = jwt_parts(t["id_token"].as_str().unwrap());
    assert_eq!(id["aud"], app.client_id.as_str());
    assert_eq!(id["email"], "ada@acme.test");
    assert_eq!(id["amr"], json!(["hwk", "user"]), "{id}");
    let session_auth_time = sql.i64("SELECT auth_time FROM sessions ORDER BY id DESC LIMIT 1");
    assert_eq!(id["auth_time"], session_auth_time, "the approving sign-in's auth_time");
    assert!(id.get("nonce").is_none());

    // The refresh token works as in the code flow.
    let refreshed =
        token(&site, &app, &[("grant_type", "refresh_token"), ("refresh_token", t["refresh_token"].as_str().unwrap())]);
    assert_eq!(refreshed.status, 200, "{}", refreshed.body);

    // Tokens once: a second redemption is refused.
    d.clock.advance(5);
    let second = poll(&site, &app, &device_code);
    assert_eq!((second.status, error(&second)), (400, "invalid_grant".into()), "{}", second.body);
    assert_eq!(sql.text("SELECT status FROM device_codes"), "redeemed");

    let actions = audit_actions(&d, "acme");
    for wanted in [
        "device.requested \"success\"",
        "device.approved \"success\"",
        "device.redeemed \"success\"",
        "device.redeemed \"failure: invalid_grant\"",
    ] {
        assert!(actions.iter().any(|a| a == wanted), "{wanted} in {actions:?}");
    }
    assert!(!actions.iter().any(|a| a.contains("authorization_pending")), "waiting polls are not audited: {actions:?}");
}

#[test]
fn slow_down_grows_the_interval_by_five_seconds() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let app = device_app(&site, "acmectl", &[]);
    let started = requested(&site, &app, "openid");
    let code = started["device_code"].as_str().unwrap();
    assert_eq!(error(&poll(&site, &app, code)), "authorization_pending");
    let fast = poll(&site, &app, code);
    assert_eq!((fast.status, error(&fast)), (400, "slow_down".into()), "{}", fast.body);
    let sql = d.sql();
    assert_eq!(sql.i64("SELECT poll_interval FROM device_codes"), 10, "the interval grows by 5 s and is stored");
    // Five seconds are now too fast; ten are not.
    d.clock.advance(5);
    assert_eq!(error(&poll(&site, &app, code)), "slow_down");
    assert_eq!(sql.i64("SELECT poll_interval FROM device_codes"), 15);
    d.clock.advance(15);
    assert_eq!(error(&poll(&site, &app, code)), "authorization_pending");
    assert_eq!(sql.i64("SELECT poll_interval FROM device_codes"), 15);
}

#[test]
fn denial_is_access_denied_and_expiry_is_expired_token() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let app = device_app(&site, "acmectl", &[]);
    let cookie = signed_in(&site, "ada@acme.test");

    let denied = requested(&site, &app, "openid");
    let r = decide(&site, denied["user_code"].as_str().unwrap(), false, Some(&cookie));
    assert_eq!(r.json(), json!({"status": "denied"}));
    let answer = poll(&site, &app, denied["device_code"].as_str().unwrap());
    assert_eq!((answer.status, error(&answer)), (400, "access_denied".into()), "{}", answer.body);
    assert!(audit_actions(&d, "acme").iter().any(|a| a == "device.denied \"success\""));

    // Expiry with the injected clock: approving and polling both end.
    let late = requested(&site, &app, "openid");
    d.clock.advance(600);
    let r = decide(&site, late["user_code"].as_str().unwrap(), true, Some(&cookie));
    assert_eq!(error(&r), "invalid_user_code", "an expired user code cannot be approved");
    let answer = poll(&site, &app, late["device_code"].as_str().unwrap());
    assert_eq!((answer.status, error(&answer)), (400, "expired_token".into()), "{}", answer.body);

    // An approved code that expires before the client polls is expired too.
    let slow = requested(&site, &app, "openid");
    assert_eq!(decide(&site, slow["user_code"].as_str().unwrap(), true, Some(&cookie)).status, 200);
    d.clock.advance(601);
    assert_eq!(error(&poll(&site, &app, slow["device_code"].as_str().unwrap())), "expired_token");
}

#[test]
fn codes_stay_in_their_tenant_and_client() {
    let d = TestDaemon::start();
    let acme = Site::new(&d, "acme", &[]);
    let other = Site::new(&d, "other", &[]);
    let app = device_app(&acme, "acmectl", &[]);
    let other_app = device_app(&other, "otherctl", &[]);
    let other_cookie = signed_in(&other, "bob@other.test");
    let started = requested(&acme, &app, "openid");
    let user_code = started["user_code"].as_str().unwrap();

    // A user code of another tenant is unknown here, for lookups and decisions alike.
    let r = other.post("/device/lookup", &json!({ "user_code": user_code }), None);
    assert_eq!((r.status, error(&r)), (400, "invalid_user_code".into()), "{}", r.body);
    let r = decide(&other, user_code, true, Some(&other_cookie));
    assert_eq!((r.status, error(&r)), (400, "invalid_user_code".into()), "{}", r.body);
    // A session of another tenant is no session here.
    let r = decide(&acme, user_code, true, Some(&other_cookie));
    assert_eq!(error(&r), "login_required");
    // Another tenant's client and another client cannot redeem the device code.
    let code = started["device_code"].as_str().unwrap();
    assert_eq!(error(&poll(&other, &other_app, code)), "invalid_grant");
    let second = device_app(&acme, "acmectl 2", &[]);
    assert_eq!(error(&poll(&acme, &second, code)), "invalid_grant");
    assert_eq!(d.sql().text("SELECT status FROM device_codes"), "pending");
}

#[test]
fn only_native_device_flow_apps_and_bad_input_stores_nothing() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let before = d.snapshot();

    // The flag is for native apps only, with a stable code, and nothing is stored.
    for kind in ["web", "spa", "m2m"] {
        let mut args = vec!["app", "create", "--tenant", "acme", "--name", "X", "--type", kind, "--device-flow"];
        if kind != "m2m" {
            args.extend_from_slice(&["--redirect-uri", "https://app.example.com/cb"]);
        }
        let r = d.cli(&args);
        assert_ne!(r.code, 0);
        assert!(r.stderr.contains("device_flow_not_native"), "{kind}: {}", r.stderr);
    }
    assert_eq!(d.snapshot(), before);

    // A native app without the flag: unauthorized_client; app update switches it on and off.
    let plain = d
        .cli(&[
            "app",
            "create",
            "--tenant",
            "acme",
            "--name",
            "cli",
            "--type",
            "native",
            "--redirect-uri",
            "http://127.0.0.1/cb",
            "-o",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(plain["device_flow"], false);
    let id = plain["client_id"].as_str().unwrap();
    let web = crate::oidc_support::app(&site, "web", &[]);
    let before = d.snapshot();
    let r = request(&site, id, Some("openid"));
    assert_eq!((r.status, error(&r)), (400, "unauthorized_client".into()), "{}", r.body);
    let r = request(&site, &web.client_id, None);
    assert_eq!(error(&r), "invalid_client", "a confidential client without its secret");
    let r = token(
        &site,
        &App { client_id: id.to_owned(), secret: None, redirect: String::new() },
        &[("grant_type", GRANT), ("device_code", "x")],
    );
    assert_eq!(error(&r), "invalid_grant");
    assert_eq!(d.snapshot(), before, "refusals store nothing");
    let shown = d.cli(&["app", "update", "--tenant", "acme", id, "--device-flow", "true", "-o", "json"]).ok().json();
    assert_eq!(shown["device_flow"], true);
    let table = d.cli(&["app", "show", "--tenant", "acme", id]).ok().stdout;
    assert!(table.contains("device flow") && table.contains("yes"), "{table}");
    let r = request(&site, id, Some("openid"));
    assert_eq!(r.status, 200, "{}", r.body);
    let r = d.cli(&["app", "update", "--tenant", "acme", &web.client_id, "--device-flow", "true"]);
    assert!(r.stderr.contains("device_flow_not_native"), "{}", r.stderr);
    d.cli(&["app", "update", "--tenant", "acme", id, "--device-flow", "false"]).ok();
    let r = request(&site, id, Some("openid"));
    assert_eq!(error(&r), "unauthorized_client");

    // A device-flow app without a redirect URI may have the flow turned off (it then signs no one
    // in, and says so), and back on.
    let tv = device_app(&site, "tv", &[]);
    let r = d.cli(&["app", "update", "--tenant", "acme", &tv.client_id, "--device-flow", "false"]).ok();
    assert!(r.stderr.contains("can sign no one in now"), "{}", r.stderr);
    assert_eq!(error(&request(&site, &tv.client_id, Some("openid"))), "unauthorized_client");
    d.cli(&["app", "update", "--tenant", "acme", &tv.client_id, "--device-flow", "true"]).ok();
    assert_eq!(request(&site, &tv.client_id, Some("openid")).status, 200);

    // Bad input at every endpoint: a stable code, nothing stored.
    let app = device_app(&site, "acmectl", &[]);
    let before = d.snapshot();
    let cases: Vec<(Http, u16, &str)> = vec![
        (request(&site, &app.client_id, Some("openid root")), 400, "invalid_scope"),
        (request(&site, &app.client_id, Some("credentials")), 400, "invalid_scope"),
        (request(&site, "nobody", None), 401, "invalid_client"),
        (form_post(&site, "/device_authorization", &[]), 401, "invalid_client"),
        (
            form_post(&site, "/device_authorization", &[("client_id", &app.client_id), ("scope", "a"), ("scope", "b")]),
            400,
            "invalid_request",
        ),
        (token(&site, &app, &[("grant_type", GRANT)]), 400, "invalid_request"),
        (poll(&site, &app, "not-a-device-code"), 400, "invalid_grant"),
        (lookup(&site, "BCDF-GHJ"), 400, "invalid_user_code"),
        (site.post("/device/lookup", &json!({"code": "BCDF-GHJK"}), None), 400, "invalid_input"),
        (site.post("/device/decide", &json!({"user_code": "BCDF-GHJK"}), None), 400, "invalid_input"),
    ];
    for (i, (r, status, code)) in cases.iter().enumerate() {
        assert_eq!((r.status, error(r).as_str()), (*status, *code), "case {i}: {}", r.body);
    }
    assert_eq!(d.snapshot(), before);
    let page = d.get("/acme/device?user_code=bcdf%20ghjk");
    assert_eq!(page.status, 200);
    assert!(page.body.contains("value=\"BCDF-GHJK\""), "prefilled in canonical form");
    assert!(page.header("content-security-policy").unwrap().contains("script-src 'self'"));
    assert!(!page.body.contains("<script>"), "no inline script");
    let hostile = d.get("/acme/device?user_code=%22%3E%3Cscript%3E");
    assert!(!hostile.body.contains("\"><script>"), "the prefill is escaped");
}

#[test]
fn wrong_user_codes_are_rate_limited_per_address() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let app = device_app(&site, "acmectl", &[]);
    let started = requested(&site, &app, "openid");
    let right = started["user_code"].as_str().unwrap();
    // A wrong code that is still well formed: the right one with its first letter changed.
    let first = if right.starts_with('B') { 'C' } else { 'B' };
    let wrong = format!("{first}{}", &right[1..]);
    for i in 0..10 {
        let r = lookup(&site, &wrong);
        assert_eq!((r.status, error(&r)), (400, "invalid_user_code".into()), "attempt {i}");
    }
    // The eleventh attempt from this address is refused, the right code included: a guesser
    // learns nothing more this minute.
    let r = lookup(&site, &wrong);
    assert_eq!((r.status, error(&r)), (429, "rate_limited".into()), "{}", r.body);
    let r = lookup(&site, right);
    assert_eq!((r.status, error(&r)), (429, "rate_limited".into()));
    let r = decide(&site, right, true, None);
    assert_eq!(r.status, 429);
    // The next minute it works again; right codes never count.
    d.clock.advance(60);
    for _ in 0..12 {
        assert_eq!(lookup(&site, right).status, 200);
    }
}

/// Advances the daemon's clock two seconds per real second while an outside client polls in real
/// time (its 5 s waits are then 10 s for the daemon: never too fast). Stops when dropped.
struct Ticking(Arc<AtomicBool>);

impl Ticking {
    fn start(d: &TestDaemon) -> Ticking {
        let stop = Arc::new(AtomicBool::new(false));
        let (clock, flag) = (d.clock.clone(), stop.clone());
        std::thread::spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(500));
                clock.advance(1);
            }
        });
        Ticking(stop)
    }
}

impl Drop for Ticking {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn chromium_ready() {
    assert!(
        std::path::Path::new(&std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into())).exists(),
        "Chromium is not installed: run `bash scripts/test.sh`, which installs Debian's chromium package"
    );
    assert!(
        repo_root().join("tests/js/node_modules/playwright-core").exists(),
        "playwright-core is not installed: run `bash scripts/test.sh` (npm ci in tests/js)"
    );
}

/// Headless Chromium with a virtual passkey: the user registers from an invitation, signs out,
/// then opens `verification_uri_complete`, signs in on `/device` and approves, while this test
/// polls `/token` as the device would.
#[test]
fn approve_on_the_device_page_in_chromium_while_the_client_polls() {
    chromium_ready();
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let app = device_app(&site, "acmectl", &[]);
    let invite = format!("{}/invite/{}", site.base, site.invite("ada@acme.test", "Ada Lovelace"));
    let started = requested(&site, &app, "openid profile email");
    let code = started["device_code"].as_str().unwrap();
    let complete = started["verification_uri_complete"].as_str().unwrap();

    let mut child = Command::new("node")
        .arg(repo_root().join("tests/js/device-page.mjs"))
        .args([&site.base, &invite, complete])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node");
    let mut polls = 0;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    let tokens = loop {
        d.clock.advance(5);
        let r = poll(&site, &app, code);
        polls += 1;
        if r.status == 200 {
            break r.json();
        }
        assert_eq!(error(&r), "authorization_pending", "{}", r.body);
        if std::time::Instant::now() > deadline || child.try_wait().expect("node").is_some_and(|s| !s.success()) {
            let _ = child.kill();
            let out = child.wait_with_output().expect("node output");
            panic!(
                "the page never approved:\n{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    let out = child.wait_with_output().expect("node output");
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    });
    check_page(&seen);
    assert!(polls >= 2, "the client polled while the user approved");
    let (_, id) = jwt_parts(tokens["id_token"].as_str().unwrap());
    assert_eq!(id["email"], "ada@acme.test");
    assert_eq!(id["name"], "Ada Lovelace");
    assert_eq!(error(&poll(&site, &app, code)), "invalid_grant", "tokens once");
}

fn check_page(seen: &Value) {
    assert_eq!(seen["ok"], true, "{seen:#}");
    assert!(seen["csp"].as_str().unwrap().contains("script-src 'self'"), "{seen}");
    assert_eq!(seen["prefilled"].as_str().map(|s| s.len()), Some(9), "{seen}");
    assert_eq!(seen["appName"], "acmectl");
    assert_eq!(seen["scopes"], json!(["openid", "profile", "email"]));
    assert_eq!(seen["user"], "ada@acme.test");
    // The code is shown beside Approve, to be checked against the device's.
    assert_eq!(seen["codeShown"], seen["prefilled"], "{seen}");
    assert!(seen["codeCheck"].as_str().unwrap().contains("matches the code your device shows"), "{seen}");
    assert_eq!(seen["status"], "approved");
    assert_eq!(seen["consoleErrors"], json!([]), "no script errors");
}

/// An outside RFC 8628 client (`openid-client` from npm) runs the whole flow: discovery, device
/// authorization, polling; the user approves through the decide API meanwhile; its ID token
/// verifies with `jose` against the JWKS.
#[test]
fn openid_client_completes_the_device_flow_and_jose_verifies_its_id_token() {
    let js = repo_root().join("tests/js");
    assert!(
        js.join("node_modules/openid-client").exists(),
        "openid-client is not installed: run `bash scripts/test.sh`, which runs `npm ci` in tests/js"
    );
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let app = device_app(&site, "acmectl", &[]);
    let cookie = signed_in(&site, "ada@acme.test");
    let _ticking = Ticking::start(&d);

    let mut child = Command::new("node")
        .arg(js.join("device-client.mjs"))
        .args([&site.base, &app.client_id])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first: Value = serde_json::from_str(&lines.next().expect("a first line").expect("read")).unwrap();
    let user_code = first["user_code"].as_str().unwrap_or_else(|| panic!("{first}"));
    assert_eq!(first["verification_uri"], format!("{}/device", site.base));
    // The user types the code and approves while the library polls: once it has polled.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while d.sql().opt_i64("SELECT max(last_poll_at) FROM device_codes").is_none() {
        assert!(std::time::Instant::now() < deadline, "the library never polled");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let r = decide(&site, user_code, true, Some(&cookie));
    assert_eq!(r.status, 200, "{}", r.body);
    let last: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let status = child.wait().expect("node");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{last:?}\n{stderr}");
    let out: Value = serde_json::from_str(last.last().expect("a result line")).unwrap();
    assert_eq!(out["ok"], true, "{out:#}\n{stderr}");
    assert_eq!(out["claims"]["email"], "ada@acme.test", "{out}");
    assert!(out["refresh_token"].as_bool().unwrap());

    let id_token = out["id_token"].as_str().unwrap();
    let jwks = format!("{}/.well-known/jwks.json", site.base);
    let verified = node("verify-jwt.mjs", &[&jwks, id_token, &site.base, &app.client_id]);
    assert_eq!(verified["ok"], true, "{verified}");
    assert_eq!(verified["payload"]["email"], "ada@acme.test");
    assert_eq!(d.sql().text("SELECT status FROM device_codes"), "redeemed");
}

#[test]
fn apply_and_export_carry_the_device_flow() {
    let d = TestDaemon::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("latchkey.toml");
    let f = file.to_str().unwrap();
    let text =
        "[[tenant]]\nslug = \"acme\"\n[[tenant.app]]\nname = \"acmectl\"\ntype = \"native\"\ndevice_flow = true\n";
    std::fs::write(&file, text).unwrap();
    d.cli(&["apply", "-f", f]).ok();
    let apps = d.cli(&["app", "list", "--tenant", "acme", "-o", "json"]).ok().json();
    assert_eq!(apps[0]["device_flow"], true, "{apps}");
    let exported = d.cli(&["export", "--tenant", "acme"]).ok().stdout;
    assert!(exported.contains("device_flow = true"), "{exported}");
    let again = d.cli(&["apply", "-f", f, "-o", "json"]).ok().json();
    assert_eq!(again["changes"], json!([]), "idempotent");

    // Switched off by the file: an update of that one field.
    let off = text.replace("device_flow = true\n", "redirect_uris = [\"http://127.0.0.1/cb\"]\n");
    std::fs::write(&file, off).unwrap();
    let plan = d.cli(&["apply", "-f", f, "-o", "json"]).ok().json();
    assert!(plan.to_string().contains("device_flow"), "{plan}");
    assert!(!d.sql().bool("SELECT device_flow FROM applications"));
    assert!(!d.cli(&["export", "--tenant", "acme"]).ok().stdout.contains("device_flow"));

    // Only native apps, refused whole with the stable code.
    let before = d.snapshot();
    let web = "[[tenant]]\nslug = \"acme\"\n[[tenant.app]]\nname = \"Portal\"\ntype = \"web\"\nredirect_uris = [\"https://p.test/cb\"]\ndevice_flow = true\n";
    std::fs::write(&file, web).unwrap();
    let r = d.cli(&["apply", "-f", f]);
    assert!(r.stderr.contains("device_flow_not_native"), "{}", r.stderr);
    assert_eq!(d.snapshot(), before);
}

/// A user without a passkey signs in on `/device` with a social provider (a GitHub stand-in):
/// the page offers its button, the sign-in comes back to `/device` with a session, and the
/// decision is made with it.
#[test]
fn social_sign_in_on_the_device_page_comes_back_to_it() {
    use crate::oidc_support::get;
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    site.invite("ada@acme.test", "Ada");
    let app = device_app(&site, "acmectl", &[]);
    let gh = crate::upstream::GithubStandin::start("gh-client", "upstream-secret");
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("gh.secret");
    std::fs::write(&secret, "upstream-secret").unwrap();
    d.cli(&[
        "social",
        "enable",
        "--tenant",
        "acme",
        "github",
        "--client-id",
        "gh-client",
        "--github-url",
        &gh.web_url,
        "--github-api-url",
        &gh.api_url,
        "--client-secret-file",
        secret.to_str().unwrap(),
    ])
    .ok();
    let started = requested(&site, &app, "openid email");

    let page = get(started["verification_uri_complete"].as_str().unwrap(), None);
    assert!(page.body.contains("/login/github?device=1"), "{}", page.body);
    assert!(page.body.contains("data-email=\"\""), "not signed in yet");
    let start = get(&format!("{}/login/github?device=1", site.base), None);
    assert_eq!(start.status, 302, "{}", start.body);
    let binding = start
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("set-cookie"))
        .find_map(|(_, v)| v.split(';').next().filter(|p| p.starts_with("latchkey_social=")).map(str::to_owned))
        .expect("browser-binding cookie");
    let at_provider = get(start.header("location").unwrap(), None);
    assert_eq!(at_provider.status, 302, "{}", at_provider.body);
    let back = get(at_provider.header("location").unwrap(), Some(&binding));
    // Ada has no passkey: offered one once, then on to the device page either way.
    assert!(back.body.contains("id=\"offer-passkey\""), "{}", back.body);
    assert_eq!(crate::social::onward(&back), Some(format!("{}/device", site.base)));
    let cookie = back.session_cookie().expect("a session");
    let page = get(&format!("{}/device", site.base), Some(&cookie));
    assert!(page.body.contains("data-email=\"ada@acme.test\""), "signed in on return: {}", page.body);

    let r = decide(&site, started["user_code"].as_str().unwrap(), true, Some(&cookie));
    assert_eq!(r.json(), json!({"status": "approved"}));
    let t = poll(&site, &app, started["device_code"].as_str().unwrap());
    assert_eq!(t.status, 200, "{}", t.body);
    let (_, id) = jwt_parts(t.json()["id_token"].as_str().unwrap());
    assert_eq!(id["amr"], json!(["fed", "github"]), "the approving sign-in's amr");
}
