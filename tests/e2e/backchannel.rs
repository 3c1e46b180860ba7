//! Back-Channel Logout 1.0 and the consent page, over real HTTP: a stand-in application's
//! back-channel logout endpoint on loopback receives the logout tokens, which the `jose` library
//! (Node) validates as §2.6 of the specification tells a relying party to.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::oidc_support::*;
use crate::support::*;

pub use crate::receiver::{Answer, Receiver};

/// The `(path, logout_token)` of each logout token `rx` has received.
pub fn tokens(rx: &Receiver) -> Vec<(String, String)> {
    as_tokens(rx.hits())
}

/// Waits (up to `secs` seconds) until `rx` has received `n` logout tokens; returns them all.
pub fn wait_tokens(rx: &Receiver, n: usize, secs: u64) -> Vec<(String, String)> {
    as_tokens(rx.wait_for(n, secs))
}

fn as_tokens(hits: Vec<crate::receiver::Hit>) -> Vec<(String, String)> {
    hits.into_iter()
        .filter(|h| h.header("content-type") == "application/x-www-form-urlencoded")
        .filter_map(|h| {
            let form: Vec<(String, String)> = url::form_urlencoded::parse(&h.body).into_owned().collect();
            let token = form.into_iter().find(|(k, _)| k == "logout_token")?.1;
            Some((h.path, token))
        })
        .collect()
}

/// The token's claims as `jose` validated them for `client_id`; panics when it refuses it.
fn verified(site: &Site, token: &str, client_id: &str) -> Value {
    let out =
        node("verify-logout.mjs", &[&format!("{}/.well-known/jwks.json", site.base), token, &site.base, client_id]);
    assert_eq!(out["ok"], true, "jose refused the logout token: {out}");
    out["payload"].clone()
}

fn bcl_app(site: &Site, receiver: &Receiver, path: &str, extra: &[&str]) -> App {
    let url = receiver.url(path);
    let mut args = vec!["--backchannel-logout-uri", url.as_str()];
    args.extend_from_slice(extra);
    app(site, "web", &args)
}

/// Signs in to `first`, then to `second` with the same session; returns the cookie and each
/// app's ID token claims.
fn two_apps_one_session(
    site: &Site,
    soft: &mut crate::authenticator::Soft,
    first: &App,
    second: &App,
) -> (String, Value, Value, String) {
    let p = pkce();
    let (code, cookie) = code_flow(site, soft, "ada@acme.test", first, &p, &[]);
    let t1 = exchange(site, first, &code, &p).json();
    let again = get(&authorize_url(site, second, &p, &[]), Some(&cookie));
    let code2 = param(&location_params(&again), "code").unwrap().to_owned();
    let t2 = exchange(site, second, &code2, &p).json();
    let id_token = t1["id_token"].as_str().unwrap().to_owned();
    (cookie, jwt_parts(&id_token).1, jwt_parts(t2["id_token"].as_str().unwrap()).1, id_token)
}

fn metric(d: &TestDaemon, line_start: &str) -> Option<String> {
    let text = get(&format!("{}/metrics", d.metrics_base.as_ref().unwrap()), None).body;
    text.lines().find(|l| l.starts_with(line_start)).map(|l| l[line_start.len()..].trim().to_owned())
}

#[test]
fn oidcc_backchannel_rp_initiated_logout() {
    // Two apps with back-channel logout URIs and one without, signed into in one session; the
    // session ends at /logout: each of the two gets a logout token naming the user and the
    // session, which jose validates; the third gets nothing. Delivery is audited and counted.
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let rx = Receiver::start();
    let one = bcl_app(&site, &rx, "/one/bcl", &["--backchannel-logout-session-required"]);
    let two = bcl_app(&site, &rx, "/two/bcl", &[]);
    let quiet = app(&site, "web", &[]);
    let shown = d.cli(&["app", "show", "--tenant", "acme", &one.client_id]).ok().stdout;
    assert!(shown.contains(&format!("{} (sid required)", rx.url("/one/bcl"))), "{shown}");
    let disco = get(&format!("{}/.well-known/openid-configuration", site.base), None).json();
    assert_eq!(
        (disco["backchannel_logout_supported"].as_bool(), disco["backchannel_logout_session_supported"].as_bool()),
        (Some(true), Some(true))
    );

    let (cookie, id1, id2, id_token) = two_apps_one_session(&site, &mut soft, &one, &two);
    let p = pkce();
    let third = get(&authorize_url(&site, &quiet, &p, &[]), Some(&cookie));
    assert!(param(&location_params(&third), "code").is_some());
    assert_eq!(id1["sid"], id2["sid"]);

    let started = Instant::now();
    let out = get(&format!("{}/logout?{}", site.base, query(&[("id_token_hint", &id_token)])), Some(&cookie));
    assert!(matches!(out.status, 200 | 302), "{}", out.body);
    assert!(started.elapsed() < Duration::from_secs(2), "the user's answer does not wait for deliveries");
    let got = wait_tokens(&rx, 2, 15);
    assert_eq!(got.len(), 2, "{got:?}");
    for (path, token) in &got {
        let (client, id) = if path == "/one/bcl" { (&one, &id1) } else { (&two, &id2) };
        let claims = verified(&site, token, &client.client_id);
        assert_eq!((&claims["sub"], &claims["sid"]), (&id["sub"], &id["sid"]), "{claims}");
        assert!(claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap() <= 120);
        let (header, _) = jwt_parts(token);
        assert_eq!(header["typ"], "logout+jwt");
    }
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(tokens(&rx).len(), 2, "one token per app, the app without a URI none");
    let events = d.cli(&["audit", "--tenant", "acme", "-o", "json"]).ok().json();
    let delivered = events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "logout.backchannel" && e["outcome"] == "success")
        .count();
    assert_eq!(delivered, 2, "{events}");
    assert_eq!(
        metric(&d, "latchkey_outbox_deliveries_total{kind=\"backchannel_logout\",outcome=\"delivered\"}").as_deref(),
        Some("2")
    );
}

#[test]
fn every_way_a_session_ends_sends_a_logout_token() {
    // A new sign-in in the same browser, a disabled user, a deleted user: each ends the session
    // as a logout does, and the app is told.
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut ada, _) = site.user_with_passkey("ada@acme.test");
    let rx = Receiver::start();
    let web = bcl_app(&site, &rx, "/bcl", &[]);
    let p = pkce();
    let sid_of =
        |code: &str| jwt_parts(exchange(&site, &web, code, &p).json()["id_token"].as_str().unwrap()).1["sid"].clone();

    // Replaced: prompt=login and a new sign-in in the same browser.
    let (code, cookie) = code_flow(&site, &mut ada, "ada@acme.test", &web, &p, &[]);
    let first = sid_of(&code);
    d.clock.advance(2);
    let page = get(&authorize_url(&site, &web, &p, &[("prompt", "login")]), Some(&cookie));
    let id = request_id(&page);
    let options = site.auth_start(Some("ada@acme.test"));
    let assertion = ada.get(&options, &Default::default());
    let r = site.post(
        "/auth/finish",
        &serde_json::json!({"assertion": assertion, "challenge": options["challenge"]}),
        Some(&cookie),
    );
    let cookie = r.session_cookie().unwrap();
    let back = get(&format!("{}/authorize/resume?request={id}", site.base), Some(&cookie));
    let second = sid_of(param(&location_params(&back), "code").unwrap());
    let got = wait_tokens(&rx, 1, 15);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(verified(&site, &got[0].1, &web.client_id)["sid"], first);

    // Disabled by the operator.
    d.cli(&["user", "disable", "--tenant", "acme", "ada@acme.test"]).ok();
    let got = wait_tokens(&rx, 2, 15);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(verified(&site, &got[1].1, &web.client_id)["sid"], second);

    // Deleted: Bob signs in, then his account goes.
    let (mut bob, _) = site.user_with_passkey("bob@acme.test");
    let (code, _) = code_flow(&site, &mut bob, "bob@acme.test", &web, &p, &[]);
    let bobs = jwt_parts(exchange(&site, &web, &code, &p).json()["id_token"].as_str().unwrap()).1;
    d.cli(&["user", "delete", "--tenant", "acme", "bob@acme.test", "--yes"]).ok();
    let got = wait_tokens(&rx, 3, 15);
    assert_eq!(got.len(), 3, "{got:?}");
    let claims = verified(&site, &got[2].1, &web.client_id);
    assert_eq!((&claims["sub"], &claims["sid"]), (&bobs["sub"], &bobs["sid"]));

    // Recovered: Carol's lost device's session ends when she uses her recovery link.
    let (mut carol, _) = site.user_with_passkey("carol@acme.test");
    let (code, _) = code_flow(&site, &mut carol, "carol@acme.test", &web, &p, &[]);
    let carols = jwt_parts(exchange(&site, &web, &code, &p).json()["id_token"].as_str().unwrap()).1;
    let link = site.recover("carol@acme.test");
    let mut fresh = crate::authenticator::Soft::new(&site.origin);
    let r = site.register(&mut fresh, "carol@acme.test", Some(&link), None, &Default::default());
    assert_eq!(r.status, 201, "{}", r.body);
    let got = wait_tokens(&rx, 4, 15);
    assert_eq!(got.len(), 4, "{got:?}");
    assert_eq!(verified(&site, &got[3].1, &web.client_id)["sid"], carols["sid"]);
}

#[test]
fn a_receiver_that_is_down_gets_its_token_later_and_one_that_hangs_delays_nothing() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let port = Receiver::down();
    let down_url = format!("http://127.0.0.1:{port}/bcl");
    let late = app(&site, "web", &["--backchannel-logout-uri", &down_url]);
    let hanging = Receiver::start();
    hanging.answer(Answer::Hang);
    let stuck = bcl_app(&site, &hanging, "/bcl", &[]);
    let healthy = Receiver::start();
    let fine = bcl_app(&site, &healthy, "/bcl", &[]);

    // One session, three apps.
    let p = pkce();
    let (code, cookie) = code_flow(&site, &mut soft, "ada@acme.test", &late, &p, &[]);
    exchange(&site, &late, &code, &p);
    for a in [&stuck, &fine] {
        let r = get(&authorize_url(&site, a, &p, &[]), Some(&cookie));
        exchange(&site, a, param(&location_params(&r), "code").unwrap(), &p);
    }
    let started = Instant::now();
    let out = send_raw(
        "POST",
        &format!("{}/logout", site.base),
        Some("application/x-www-form-urlencoded"),
        b"".to_vec(),
        &[("Cookie", &cookie), ("Origin", &site.origin)],
    );
    assert!(matches!(out.status, 200 | 302), "{} {}", out.status, out.body);
    assert!(started.elapsed() < Duration::from_secs(2), "the user's answer does not wait");
    // The healthy app is told while the other two fail or hang.
    assert_eq!(wait_tokens(&healthy, 1, 15).len(), 1);

    // The down receiver comes up; its retry is due 5 s after the failure (the daemon's clock).
    let back = Receiver::on(port);
    std::thread::sleep(Duration::from_secs(2));
    assert!(tokens(&back).is_empty(), "not before the retry is due");
    d.clock.advance(10);
    let got = wait_tokens(&back, 1, 15);
    assert_eq!(got.len(), 1, "delivered on retry");
    verified(&site, &got[0].1, &late.client_id);
    let events = d.cli(&["audit", "--tenant", "acme", "-o", "json"]).ok().json();
    let retried = events
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["action"] == "logout.backchannel" && e["outcome"] == "failure: retried");
    assert!(retried, "{events}");
}

#[test]
fn a_receiver_that_keeps_failing_is_given_up_after_a_day() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let rx = Receiver::start();
    rx.answer(Answer::Status(503));
    let web = bcl_app(&site, &rx, "/bcl", &[]);
    let p = pkce();
    let (code, cookie) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let id_token = exchange(&site, &web, &code, &p).json()["id_token"].as_str().unwrap().to_owned();
    get(&format!("{}/logout?{}", site.base, query(&[("id_token_hint", &id_token)])), Some(&cookie));
    let outcomes = |d: &TestDaemon| -> Vec<String> {
        let events = d.cli(&["audit", "--tenant", "acme", "--action", "logout.backchannel", "-o", "json"]).ok().json();
        events.as_array().unwrap().iter().map(|e| e["outcome"].as_str().unwrap().to_owned()).collect()
    };
    let deadline = Instant::now() + Duration::from_secs(15);
    while !outcomes(&d).contains(&"failure: retried".to_owned()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(outcomes(&d).contains(&"failure: retried".to_owned()), "a 503 is retried");
    // A day later the next attempt is the last.
    d.clock.advance(25 * 3600);
    let deadline = Instant::now() + Duration::from_secs(15);
    while !outcomes(&d).contains(&"failure: failed".to_owned()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(outcomes(&d).contains(&"failure: failed".to_owned()), "{:?}", outcomes(&d));
    let deadline = Instant::now() + Duration::from_secs(10);
    while metric(&d, "latchkey_outbox_rows{state=\"failed\"}").as_deref() != Some("1") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(metric(&d, "latchkey_outbox_rows{state=\"failed\"}").as_deref(), Some("1"));
    assert_eq!(metric(&d, "latchkey_outbox_rows{state=\"pending\"}").as_deref(), Some("0"));
}

#[test]
fn backchannel_settings_are_checked_and_nothing_is_stored_when_refused() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let before = d.snapshot_of(&["applications"]);
    for (args, code) in [
        (
            vec![
                "--type",
                "web",
                "--redirect-uri",
                "https://a.example/cb",
                "--backchannel-logout-uri",
                "http://bcl.example/x",
            ],
            "invalid_redirect_uri",
        ),
        (
            vec![
                "--type",
                "web",
                "--redirect-uri",
                "https://a.example/cb",
                "--backchannel-logout-uri",
                "https://bcl.example/x#frag",
            ],
            "invalid_redirect_uri",
        ),
        (vec!["--type", "m2m", "--backchannel-logout-uri", "https://bcl.example/x"], "invalid_redirect_uri"),
        (vec!["--type", "web", "--redirect-uri", "https://a.example/cb", "--consent", "sometimes"], "invalid_input"),
    ] {
        let mut all = vec!["app", "create", "--tenant", "acme", "--name", "X", "-o", "json"];
        all.extend(args.iter().copied());
        let r = d.cli(&all);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stdout);
        assert!(r.stderr.contains(code), "{args:?}: {}", r.stderr);
    }
    let r = d.cli(&[
        "app",
        "create",
        "--tenant",
        "acme",
        "--name",
        "X",
        "--type",
        "web",
        "--redirect-uri",
        "https://a.example/cb",
        "--backchannel-logout-session-required",
    ]);
    assert_eq!(r.code, 2, "clap: the flag needs the URI: {}", r.stderr);
    assert_eq!(d.snapshot_of(&["applications"]), before, "nothing stored");

    // Set, shown, and removed with `none` (the sid requirement with it).
    let web = app(&site, "web", &[]);
    let a = d
        .cli(&[
            "app",
            "update",
            "--tenant",
            "acme",
            &web.client_id,
            "--backchannel-logout-uri",
            "https://bcl.example/x",
            "--backchannel-logout-session-required",
            "true",
            "--consent",
            "explicit",
            "-o",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(
        (
            a["backchannel_logout_uri"].as_str(),
            a["backchannel_logout_session_required"].as_bool(),
            a["consent"].as_str()
        ),
        (Some("https://bcl.example/x"), Some(true), Some("explicit"))
    );
    let a = d
        .cli(&["app", "update", "--tenant", "acme", &web.client_id, "--backchannel-logout-uri", "none", "-o", "json"])
        .ok()
        .json();
    assert_eq!(
        (a["backchannel_logout_uri"].as_str(), a["backchannel_logout_session_required"].as_bool()),
        (None, Some(false))
    );
    let _ = site;
}

/// The pending request of a consent page.
fn consent_request(page: &Http) -> String {
    let marker = "name=\"request\" value=\"";
    let start = page.body.find(marker).unwrap_or_else(|| panic!("not the consent page: {}", page.body)) + marker.len();
    page.body[start..].split('"').next().unwrap().to_owned()
}

/// POSTs a consent page's decision from `origin`.
fn decide_from(site: &Site, page: &Http, cookie: &str, decision: &str, origin: &str) -> Http {
    send_raw(
        "POST",
        &format!("{}/authorize/consent", site.base),
        Some("application/x-www-form-urlencoded"),
        query(&[("request", &consent_request(page)), ("decision", decision)]).into_bytes(),
        &[("Cookie", cookie), ("Origin", origin)],
    )
}

/// POSTs the consent page's decision, from the tenant's origin.
fn decide(site: &Site, page: &Http, cookie: &str, decision: &str) -> Http {
    decide_from(site, page, cookie, decision, &site.origin)
}

#[test]
fn oidcc_prompt_consent_and_the_consent_page() {
    // An app created --consent explicit asks once per set of scopes; prompt=none without the
    // user's consent is consent_required; Deny is access_denied; prompt=consent always asks; the
    // account page lists the app and revokes it, with the app's refresh tokens.
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let first_party = app(&site, "web", &[]);
    let third = app(&site, "web", &["--consent", "explicit"]);
    let p = pkce();
    let (_, cookie) = code_flow(&site, &mut soft, "ada@acme.test", &first_party, &p, &[]);
    let disco = get(&format!("{}/.well-known/openid-configuration", site.base), None).json();
    assert!(disco["prompt_values_supported"].as_array().unwrap().iter().any(|v| v == "consent"));

    // prompt=none: consent_required, nothing stored.
    let before = d.snapshot_of(&["consents", "authorization_codes", "authorize_requests"]);
    let r = get(&authorize_url(&site, &third, &p, &[("prompt", "none")]), Some(&cookie));
    assert_eq!(param(&location_params(&r), "error"), Some("consent_required"));
    assert_eq!(d.snapshot_of(&["consents", "authorization_codes", "authorize_requests"]), before);

    // The page: the app's name and each scope in words.
    let page = get(&authorize_url(&site, &third, &p, &[]), Some(&cookie));
    assert_eq!(page.status, 200, "{}", page.body);
    for words in ["Allow Portal 2?", "See your name and picture", "See your e-mail address", "Know who you are"] {
        assert!(page.body.contains(words), "{words}: {}", page.body);
    }
    let csp = page.header("content-security-policy").unwrap();
    assert!(csp.contains("form-action 'self' https://app.example.com"), "{csp}");
    // Deny: access_denied, nothing remembered.
    let denied = decide(&site, &page, &cookie, "deny");
    assert_eq!(param(&location_params(&denied), "error"), Some("access_denied"), "{}", denied.body);
    assert_eq!(param(&location_params(&denied), "state"), Some("st-123"));
    // From another origin: refused, nothing stored.
    let page = get(&authorize_url(&site, &third, &p, &[]), Some(&cookie));
    let no_consents = d.snapshot_of(&["consents"]);
    let forged = decide_from(&site, &page, &cookie, "allow", "https://evil.example");
    assert_eq!(forged.status, 400, "{}", forged.body);
    assert_eq!(d.snapshot_of(&["consents"]), no_consents, "nothing stored");
    // Allow: the code; next time no page.
    let allowed = decide(&site, &page, &cookie, "allow");
    let code = param(&location_params(&allowed), "code").expect("a code").to_owned();
    let t = exchange(&site, &third, &code, &p).json();
    let again = get(&authorize_url(&site, &third, &p, &[]), Some(&cookie));
    assert!(param(&location_params(&again), "code").is_some(), "remembered");
    let none = get(&authorize_url(&site, &third, &p, &[("prompt", "none")]), Some(&cookie));
    assert!(param(&location_params(&none), "code").is_some(), "prompt=none after consent");
    // Fewer scopes: allowed already. prompt=consent: asked again, first-party apps too.
    let fewer = get(&authorize_url(&site, &third, &p, &[("scope", "openid")]), Some(&cookie));
    assert!(param(&location_params(&fewer), "code").is_some());
    for a in [&third, &first_party] {
        let page = get(&authorize_url(&site, a, &p, &[("prompt", "consent")]), Some(&cookie));
        assert_eq!(page.status, 200, "prompt=consent always asks: {}", page.body);
        assert!(param(&location_params(&decide(&site, &page, &cookie, "allow")), "code").is_some());
    }

    // The account page lists the app; Revoke forgets it and ends its refresh tokens.
    let account = get(&format!("{}/account", site.base), Some(&cookie));
    assert!(account.body.contains("Applications you allowed") && account.body.contains("Portal 2"), "{}", account.body);
    assert!(
        !account.body.contains(&format!("data-client-id=\"{}\"", first_party.client_id)),
        "first-party apps are not listed"
    );
    let revoke = |origin: &str| {
        send_raw(
            "POST",
            &format!("{}/account/consents/revoke", site.base),
            Some("application/x-www-form-urlencoded"),
            query(&[("client_id", &third.client_id)]).into_bytes(),
            &[("Cookie", &cookie), ("Origin", origin)],
        )
    };
    assert_eq!(revoke("https://evil.example").status, 403);
    assert_eq!(revoke(&site.origin).status, 302);
    let refreshed = token(
        &site,
        &third,
        &[("grant_type", "refresh_token"), ("refresh_token", t["refresh_token"].as_str().unwrap())],
    );
    assert_eq!(refreshed.json()["error"], "invalid_grant", "{}", refreshed.body);
    let asks = get(&authorize_url(&site, &third, &p, &[]), Some(&cookie));
    assert_eq!(asks.status, 200, "asked again after revoking");
    let events = d.cli(&["audit", "--tenant", "acme", "-o", "json"]).ok().json();
    for action in ["consent.allowed", "consent.denied", "consent.revoked"] {
        let found =
            events.as_array().unwrap().iter().any(|e| {
                e["action"] == action && e["actor"] == "ada@acme.test" && e["detail"] == third.client_id.as_str()
            });
        assert!(found, "{action}: {events}");
    }
}

#[test]
fn consent_and_backchannel_logout_are_declared_exported_and_planned() {
    let d = TestDaemon::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("latchkey.toml");
    let declared = r#"
[[tenant]]
slug = "acme"

[[tenant.app]]
name = "Partner"
type = "web"
redirect_uris = ["https://partner.example/cb"]
consent = "explicit"
backchannel_logout_uri = "https://partner.example/bcl"
backchannel_logout_session_required = true
"#;
    std::fs::write(&file, declared).unwrap();
    let f = file.to_str().unwrap();
    d.cli(&["apply", "-f", f]).ok();
    let app = &d.cli(&["app", "list", "--tenant", "acme", "-o", "json"]).ok().json()[0];
    assert_eq!(
        (
            app["consent"].as_str(),
            app["backchannel_logout_uri"].as_str(),
            app["backchannel_logout_session_required"].as_bool()
        ),
        (Some("explicit"), Some("https://partner.example/bcl"), Some(true))
    );
    assert!(d.cli(&["apply", "-f", f]).ok().stdout.contains("No changes"));
    let exported = d.cli(&["export", "--tenant", "acme"]).ok().stdout;
    for line in [
        "consent = \"explicit\"",
        "backchannel_logout_uri = \"https://partner.example/bcl\"",
        "backchannel_logout_session_required = true",
    ] {
        assert!(exported.contains(line), "{line}: {exported}");
    }
    // The export applies as no change; a changed value is planned by name.
    std::fs::write(&file, &exported).unwrap();
    assert!(d.cli(&["apply", "-f", f]).ok().stdout.contains("No changes"));
    std::fs::write(&file, declared.replace("consent = \"explicit\"\n", "")).unwrap();
    let plan = d.cli(&["apply", "-f", f, "--dry-run", "-o", "json"]).ok().json();
    assert_eq!(
        plan["plan"][0]["changes"],
        serde_json::json!([{"field": "consent", "old": "explicit", "new": "implicit"}])
    );
    // A logo set on the command line stays through an apply that changes the app.
    use base64::Engine as _;
    let png = dir.path().join("logo.png");
    std::fs::write(&png, base64::engine::general_purpose::STANDARD.decode(PNG_1X1).unwrap()).unwrap();
    let id = app["client_id"].as_str().unwrap().to_owned();
    d.cli(&["app", "update", "--tenant", "acme", &id, "--logo", png.to_str().unwrap()]).ok();
    d.cli(&["apply", "-f", f]).ok();
    let after = d.cli(&["app", "show", "--tenant", "acme", &id, "-o", "json"]).ok().json();
    assert_eq!((after["consent"].as_str(), after["logo_sha256"].as_str().map(str::len)), (Some("implicit"), Some(64)));
}

#[test]
fn logout_tokens_waiting_or_in_flight_survive_a_daemon_restart() {
    // One receiver is down, the other hangs with the token in flight, when the daemon stops.
    // After a restart on the same database, both are delivered: the waiting one at its retry,
    // the one whose delivery was cut short once its lease is over.
    let mut d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let port = Receiver::down();
    let late = app(&site, "web", &["--backchannel-logout-uri", &format!("http://127.0.0.1:{port}/bcl")]);
    let hanging = Receiver::start();
    hanging.answer(Answer::Hang);
    let stuck = bcl_app(&site, &hanging, "/bcl", &[]);
    let p = pkce();
    let (code, cookie) = code_flow(&site, &mut soft, "ada@acme.test", &late, &p, &[]);
    exchange(&site, &late, &code, &p);
    let r = get(&authorize_url(&site, &stuck, &p, &[]), Some(&cookie));
    exchange(&site, &stuck, param(&location_params(&r), "code").unwrap(), &p);
    let form = Some("application/x-www-form-urlencoded");
    let headers = [("Cookie", cookie.as_str()), ("Origin", site.origin.as_str())];
    send_raw("POST", &format!("{}/logout", site.base), form, vec![], &headers);
    // Wait for the first attempts: the refused connection is recorded as a retry.
    let deadline = Instant::now() + Duration::from_secs(15);
    let retried = |d: &TestDaemon| {
        let events = d.cli(&["audit", "--tenant", "acme", "--action", "logout.backchannel", "-o", "json"]).ok().json();
        events.as_array().unwrap().iter().any(|e| e["outcome"] == "failure: retried")
    };
    while !retried(&d) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(retried(&d));

    // Stop; restart on the same files and port; both receivers answer now.
    let dir = d.dir.path().to_owned();
    let daemon_port: u16 = d.base.rsplit(':').next().unwrap().parse().unwrap();
    d.stop();
    let same = d.same_store();
    let again = TestDaemon::start_on(daemon_port, |f| {
        same(f);
        f.keys.encryption_key_file = Some(dir.join("key-encryption.key"));
    });
    hanging.answer(Answer::Ok);
    let back = Receiver::on(port);
    again.clock.advance(LEASE_AND_MORE);
    let site =
        Site { d: &again, slug: "acme".into(), base: format!("{}/acme", again.base), origin: again.base.clone() };
    let got = wait_tokens(&back, 1, 15);
    assert_eq!(got.len(), 1, "the waiting token, after the restart");
    verified(&site, &got[0].1, &late.client_id);
    let got = wait_tokens(&hanging, 1, 15);
    assert_eq!(got.len(), 1, "the token in flight at the stop, after its lease");
    verified(&site, &got[0].1, &stuck.client_id);
}

/// Past a lease (60 s) of the daemon's clock.
const LEASE_AND_MORE: i64 = 70;

/// A 1×1 PNG.
pub const PNG_1X1: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

#[test]
fn an_app_logo_is_a_checked_png_shown_on_the_consent_page() {
    use base64::Engine as _;
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let dir = tempfile::tempdir().unwrap();
    let png = base64::engine::general_purpose::STANDARD.decode(PNG_1X1).unwrap();
    let file = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let good = file("logo.png", &png);

    // Refused, nothing stored: an SVG, not a PNG, too large, too many pixels.
    let mut huge = png.clone();
    huge.resize(300 * 1024, 0);
    let mut wide = png.clone();
    wide[16..20].copy_from_slice(&4096u32.to_be_bytes());
    let bad = [
        (file("logo.svg", b"<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>"), "SVG"),
        (file("logo.gif", b"GIF89a\x01\x00\x01\x00"), "not a PNG"),
        (file("huge.png", &huge), "at most 256 KiB"),
        (file("wide.png", &wide), "4096×1 pixels"),
    ];
    let before = d.snapshot_of(&["applications", "app_logos"]);
    for (path, why) in &bad {
        let r = d.cli(&[
            "app",
            "create",
            "--tenant",
            "acme",
            "--name",
            "X",
            "--type",
            "web",
            "--redirect-uri",
            "https://a.example/cb",
            "--logo",
            path,
        ]);
        assert_eq!(r.code, 1, "{path}");
        assert!(r.stderr.contains("invalid_input") && r.stderr.contains(why), "{path}: {}", r.stderr);
    }
    assert_eq!(d.snapshot_of(&["applications", "app_logos"]), before, "nothing stored");

    // A PNG: shown on the consent page, served as it was given.
    let third = app(&site, "web", &["--consent", "explicit", "--logo", &good]);
    let shown = d.cli(&["app", "show", "--tenant", "acme", &third.client_id, "-o", "json"]).ok().json();
    let sha = shown["logo_sha256"].as_str().unwrap().to_owned();
    assert_eq!(sha.len(), 64);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let p = pkce();
    let page = get(&authorize_url(&site, &third, &p, &[]), None);
    let id = request_id(&page);
    let cookie = site.sign_in(&mut soft, Some("ada@acme.test"), &Default::default()).session_cookie().unwrap();
    let consent = get(&format!("{}/authorize/resume?request={id}", site.base), Some(&cookie));
    let src = format!("/acme/logos/{}.png?v={}", third.client_id, &sha[..16]);
    assert!(consent.body.contains(&src), "{}", consent.body);
    let logo = send_raw("GET", &format!("{}{}", site.origin, src), None, vec![], &[]);
    assert_eq!((logo.status, logo.header("content-type")), (200, Some("image/png")));
    assert_eq!(logo.header("content-length"), Some(png.len().to_string().as_str()));

    // Removed with `none`.
    let a = d.cli(&["app", "update", "--tenant", "acme", &third.client_id, "--logo", "none", "-o", "json"]).ok().json();
    assert!(a["logo_sha256"].is_null(), "{a}");
    assert_eq!(send_raw("GET", &format!("{}{}", site.origin, src), None, vec![], &[]).status, 404);
}
