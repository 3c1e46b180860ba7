//! The audit log through `latchkey audit`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::authenticator::Tamper;
use crate::oidc_support::{app, token};
use crate::support::*;

fn actions(events: &serde_json::Value) -> Vec<(String, String)> {
    events
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["action"].as_str().unwrap().to_owned(), e["outcome"].as_str().unwrap().to_owned()))
        .collect()
}

#[test]
fn registrations_logins_credentials_recoveries_grants_and_admin_calls_are_audited() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, cookie) = site.user_with_passkey("ada@acme.test");
    assert_eq!(site.sign_in(&mut soft, Some("ada@acme.test"), &Tamper::default()).status, 200);
    assert_eq!(
        site.sign_in(&mut soft, Some("ada@acme.test"), &Tamper { flip_signature_bit: true, ..Tamper::default() })
            .status,
        401
    );
    let creds = site.api("GET", "/api/credentials", None, &cookie, None).json();
    let id = creds[0]["id"].as_str().unwrap().to_owned();
    site.api(
        "PATCH",
        &format!("/api/credentials/{id}"),
        Some(&serde_json::json!({"name": "Laptop"})),
        &cookie,
        Some(&site.origin),
    );
    let token_ = site.recover("ada@acme.test");
    let mut fresh = crate::authenticator::Soft::new(&site.origin);
    assert_eq!(site.register(&mut fresh, "ada@acme.test", Some(&token_), None, &Tamper::default()).status, 201);
    let m2m = app(&site, "m2m", &[]);
    assert_eq!(token(&site, &m2m, &[("grant_type", "client_credentials")]).status, 200);
    assert_eq!(token(&site, &m2m, &[("grant_type", "password")]).status, 400);

    // The same outcomes are counted for Prometheus.
    let metrics = d.get("/metrics").body;
    for series in [
        "latchkey_ceremonies_total{kind=\"login\",outcome=\"success\"}",
        "latchkey_ceremonies_total{kind=\"login\",outcome=\"invalid_signature\"} 1",
        "latchkey_ceremonies_total{kind=\"registration\",outcome=\"success\"} 2",
        "latchkey_token_grants_total{grant=\"client_credentials\",outcome=\"success\"} 1",
        "latchkey_token_grants_total{grant=\"password\",outcome=\"unsupported_grant_type\"} 1",
    ] {
        assert!(metrics.contains(series), "{series} in\n{metrics}");
    }

    let events = d.cli(&["audit", "--tenant", "acme", "-o", "json"]).ok().json();
    let seen = actions(&events);
    let has = |action: &str, outcome: &str| seen.iter().any(|(a, o)| a == action && o.starts_with(outcome));
    assert!(has("registration", "success"), "{seen:?}");
    assert!(has("login", "success"));
    assert!(has("login", "failure: invalid_signature"), "failure reasons are kept: {seen:?}");
    assert!(has("credential.rename", "success"));
    assert!(seen.iter().any(|(a, _)| a.contains("/recover")), "the recovery link was issued: {seen:?}");
    assert!(
        events.as_array().unwrap().iter().any(|e| e["detail"].as_str().is_some_and(|d| d.contains("via recovery")))
    );
    assert!(has("token.client_credentials", "success"));
    assert!(has("token.password", "failure: unsupported_grant_type"));
    assert!(has("admin POST /tenants/acme/apps", "success"), "admin operations: {seen:?}");
    let login = events.as_array().unwrap().iter().find(|e| e["action"] == "login").unwrap();
    assert_eq!(login["ip"], "127.0.0.1");
    assert_eq!(login["subject"], "ada@acme.test");

    let ada = d.cli(&["audit", "--tenant", "acme", "--user", "ada@acme.test", "-o", "json"]).ok().json();
    assert!(ada.as_array().unwrap().iter().all(|e| e["subject"] == "ada@acme.test"));
    assert!(!ada.as_array().unwrap().is_empty());
    let table = d.cli(&["audit", "--tenant", "acme", "--since", "1h"]).ok();
    assert!(table.stdout.contains("ACTION") && table.stdout.contains("login"), "{}", table.stdout);
    d.clock.advance(7200);
    let r = d.cli(&["audit", "--tenant", "acme", "--since", "soon"]);
    assert_eq!(r.code, 2);
}

#[test]
fn follow_prints_new_events() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let mut child = Command::new(bin("latchkey"))
        .args(["audit", "--tenant", "acme", "--follow", "-o", "json"])
        .env("LATCHKEY_ADMIN_SOCKET", &d.socket)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    std::thread::sleep(Duration::from_millis(300));
    site.invite("late@acme.test", "Late");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut found = false;
    while Instant::now() < deadline && !found {
        let mut line = String::new();
        if out.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        found = line.contains("users/invite");
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(found, "--follow printed the new event");
}
