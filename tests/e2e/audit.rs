//! The audit log through `latchkey audit`.

use std::io::{BufRead, BufReader, Read};
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
    let metrics = d.metrics();
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
    assert!(has("user.recover", "success"), "the recovery link was issued: {seen:?}");
    assert!(
        events.as_array().unwrap().iter().any(|e| e["detail"].as_str().is_some_and(|d| d.contains("via recovery")))
    );
    assert!(has("token.client_credentials", "success"));
    assert!(has("token.password", "failure: unsupported_grant_type"));
    assert!(has("app.create", "success"), "admin operations: {seen:?}");
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
    for i in 0..3 {
        site.invite(&format!("late{i}@acme.test"), "Late");
    }
    // Each new event once, in order, with the cursor the follow goes on from.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut invited = vec![];
    while Instant::now() < deadline && invited.len() < 3 {
        let mut line = String::new();
        if out.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        let event: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert!(event["cursor"].is_string(), "{line}");
        if event["action"] == "user.invite" {
            invited.push(event["subject"].as_str().unwrap().to_owned());
        }
    }
    std::thread::sleep(Duration::from_millis(1500));
    let _ = child.kill();
    let mut rest = String::new();
    let _ = out.read_to_string(&mut rest);
    let _ = child.wait();
    assert_eq!(invited, ["late0@acme.test", "late1@acme.test", "late2@acme.test"], "--follow printed the new events");
    assert!(!rest.contains("user.invite"), "an event printed twice: {rest}");

    // The cursor is the daemon's own: anything else is refused.
    for bad in ["x", "1", "1.x", "-1.2"] {
        let (status, body) = d.admin_raw(&admin_request("GET", &format!("/admin/v1/audit?cursor={bad}"), None, b""));
        assert_eq!((status, body["error"].as_str()), (400, Some("invalid_input")), "{bad}: {body}");
    }
}

fn my_uid() -> String {
    let out = Command::new("id").arg("-u").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn find<'a>(events: &'a serde_json::Value, action: &str) -> Vec<&'a serde_json::Value> {
    events.as_array().unwrap().iter().filter(|e| e["action"] == action).collect()
}

#[test]
fn admin_changes_are_typed_events_and_reads_are_not_recorded() {
    let d = TestDaemon::start();
    d.tenant("acme");
    d.tenant("beta");
    let dir = tempfile::tempdir().unwrap();
    let cli = |args: &[&str]| d.cli(args).ok();
    let app = cli(&["app", "create", "--tenant", "acme", "--name", "Portal", "--type", "m2m", "-o", "json"]).json();
    let client_id = app["client_id"].as_str().unwrap().to_owned();
    cli(&["app", "update", "--tenant", "acme", &client_id, "--add-scope", "users:invite"]);
    cli(&["app", "rotate-secret", "--tenant", "acme", &client_id]);
    let old_kid = cli(&["key", "list", "--tenant", "acme", "-o", "json"]).json()[0]["kid"].as_str().unwrap().to_owned();
    let new_kid = cli(&["key", "rotate", "--tenant", "acme", "-o", "json"]).json()["kid"].as_str().unwrap().to_owned();
    assert_eq!(d.cli(&["key", "retire", "--tenant", "acme", &new_kid, "--yes"]).code, 1);
    cli(&["key", "retire", "--tenant", "acme", &old_kid, "--yes"]);
    cli(&["role", "create", "--tenant", "acme", "staff"]);
    cli(&["user", "invite", "--tenant", "acme", "--email", "ada@acme.test", "--name", "Ada"]);
    cli(&["role", "assign", "--tenant", "acme", "staff", "ada@acme.test"]);
    cli(&["role", "unassign", "--tenant", "acme", "staff", "ada@acme.test"]);
    cli(&["user", "disable", "--tenant", "acme", "ADA@acme.test"]);
    cli(&["user", "enable", "--tenant", "acme", "ada@acme.test"]);
    cli(&["user", "recover", "--tenant", "acme", "ada@acme.test"]);
    assert_eq!(d.cli(&["credential", "revoke", "--tenant", "acme", "ada@acme.test", "nope"]).code, 1);
    let secret = dir.path().join("gh.secret");
    std::fs::write(&secret, "s3cret").unwrap();
    let secret = secret.to_str().unwrap();
    cli(&[
        "social",
        "enable",
        "--tenant",
        "acme",
        "github",
        "--client-id",
        "Iv1.x",
        "--client-secret-file",
        secret,
        "--no-verify",
    ]);
    cli(&["social", "disable", "--tenant", "acme", "github", "--yes"]);
    cli(&["user", "delete", "--tenant", "acme", "ada@acme.test", "--yes"]);
    cli(&["role", "delete", "--tenant", "acme", "staff", "--yes"]);
    let csv = dir.path().join("staff.csv");
    std::fs::write(&csv, "email,name\nbob@acme.test,Bob\ncy@acme.test,Cy\nnot-an-email,Bad\n").unwrap();
    let _ = d.cli(&["user", "import", "--tenant", "acme", csv.to_str().unwrap(), "-q"]);
    let file = dir.path().join("l.toml");
    std::fs::write(
        &file,
        "[[tenant]]\nslug = \"acme\"\n[[tenant.role]]\nname = \"ops\"\n[[tenant]]\nslug = \"beta\"\n",
    )
    .unwrap();
    cli(&["apply", "-f", file.to_str().unwrap(), "--dry-run"]);
    cli(&["apply", "-f", file.to_str().unwrap()]);
    // A backup is a SQLite file (on PostgreSQL, pg_dump: no `backup` event).
    let sqlite = !sqlite_only("the backup event (a backup is a copy of the SQLite file)");
    if sqlite {
        cli(&["backup", dir.path().join("copy.db").to_str().unwrap()]);
    }
    cli(&["tenant", "create", "gamma"]);
    cli(&["tenant", "delete", "gamma", "--yes"]);
    // Reads, which are not recorded.
    for read in [&["app", "list", "--tenant", "acme"][..], &["user", "list", "--tenant", "acme"], &["tenant", "list"]] {
        cli(read);
    }

    let all = cli(&["audit", "-o", "json"]).json();
    let uid = format!("uid:{}", my_uid());
    let events = all.as_array().unwrap();
    for e in events {
        let keys: Vec<&str> = e.as_object().unwrap().keys().map(String::as_str).collect();
        for k in ["time", "tenant", "actor", "action", "subject", "outcome", "detail", "ip"] {
            assert!(keys.contains(&k), "{k} in {e}");
        }
        assert_eq!(e["actor"], uid.as_str(), "{e}");
        assert!(!e["action"].as_str().unwrap().contains(' '), "typed actions, not HTTP lines: {e}");
    }
    let one = |action: &str| {
        let found = find(&all, action);
        assert_eq!(found.len(), 1, "{action}: {found:?}");
        found[0].clone()
    };
    let check = |action: &str, tenant: Option<&str>, subject: Option<&str>, outcome: &str| {
        let e = one(action);
        assert_eq!(e["tenant"].as_str(), tenant, "{e}");
        assert_eq!(e["subject"].as_str(), subject, "{e}");
        assert_eq!(e["outcome"], outcome, "{e}");
        e
    };
    let acme = Some("acme");
    let ada = Some("ada@acme.test");
    check("app.create", acme, Some(&client_id), "success");
    let upd = check("app.update", acme, Some(&client_id), "success");
    assert!(upd["detail"].as_str().unwrap().contains("users:invite"), "{upd}");
    check("app.rotate_secret", acme, Some(&client_id), "success");
    check("key.rotate", acme, Some(&new_kid), "success");
    let retired = find(&all, "key.retire");
    assert_eq!(retired.len(), 2);
    assert_eq!(
        (retired[0]["subject"].as_str(), retired[0]["outcome"].as_str()),
        (Some(new_kid.as_str()), Some("failure: key_is_current"))
    );
    assert_eq!(
        (retired[1]["subject"].as_str(), retired[1]["outcome"].as_str()),
        (Some(old_kid.as_str()), Some("success"))
    );
    check("role.create", acme, Some("staff"), "success");
    check("user.invite", acme, ada, "success");
    // The user given the role is the subject (`audit --user` finds who was made what).
    assert_eq!(check("role.assign", acme, ada, "success")["detail"], "role staff");
    check("role.unassign", acme, ada, "success");
    check("user.disable", acme, Some("ADA@acme.test"), "success");
    check("user.enable", acme, ada, "success");
    check("user.recover", acme, ada, "success");
    check("credential.revoke", acme, ada, "failure: credential_not_found");
    check("social.enable", acme, Some("github"), "success");
    check("social.disable", acme, Some("github"), "success");
    check("user.delete", acme, ada, "success");
    check("role.delete", acme, Some("staff"), "success");
    let import = check("user.import", acme, Some("staff.csv"), "success");
    assert_eq!(import["detail"], "invited=2 already_present=0 rejected=1", "{import}");
    let applied = find(&all, "apply");
    assert_eq!(applied.len(), 2, "one event per tenant of the file; the dry run is not recorded: {applied:?}");
    assert_eq!(applied[0]["tenant"], "acme");
    assert!(applied[0]["detail"].as_str().unwrap().contains("create role acme/ops"), "{}", applied[0]);
    assert_eq!((applied[1]["tenant"].as_str(), applied[1]["detail"].as_str()), (Some("beta"), Some("no changes")));
    if sqlite {
        check("backup", None, None, "success");
    }
    let created: Vec<&str> = find(&all, "tenant.create").iter().map(|e| e["tenant"].as_str().unwrap()).collect();
    assert!(
        find(&all, "tenant.create").iter().all(|e| e["subject"] == e["tenant"]),
        "a tenant's creation names it as subject: {all:?}"
    );
    assert_eq!(created, ["acme", "beta", "gamma"], "tenant creation carries the new tenant");
    check("tenant.delete", Some("gamma"), Some("gamma"), "success");
    assert!(!events.iter().any(|e| e["action"].as_str().unwrap().contains("list")));

    // --tenant filters; --user matches the subject, case-insensitively.
    let only_acme = cli(&["audit", "--tenant", "acme", "-o", "json"]).json();
    assert!(only_acme.as_array().unwrap().iter().all(|e| e["tenant"] == "acme"));
    assert!(find(&cli(&["audit", "--tenant", "gamma", "-o", "json"]).json(), "tenant.create").len() == 1);
    let about_ada = cli(&["audit", "--tenant", "acme", "--user", "ada@acme.test", "-o", "json"]).json();
    let actions: Vec<&str> = about_ada.as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(
        actions,
        [
            "user.invite",
            "role.assign",
            "role.unassign",
            "user.disable",
            "user.enable",
            "user.recover",
            "credential.revoke",
            "user.delete"
        ],
        "{about_ada}"
    );
    let table = cli(&["audit"]).stdout;
    assert!(table.contains("TENANT") && table.contains("gamma") && table.contains("user.disable"), "{table}");
    assert!(!cli(&["audit", "--tenant", "acme"]).stdout.contains("TENANT"));
}

#[test]
fn an_auditor_filters_by_time_action_actor_app_and_outcome() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    site.invite("ada@acme.test", "Ada");
    d.cli(&["role", "create", "--tenant", "acme", "admin"]).ok();
    d.cli(&["role", "assign", "--tenant", "acme", "admin", "ada@acme.test"]).ok();
    let m2m = app(&site, "m2m", &[]);
    assert_eq!(token(&site, &m2m, &[("grant_type", "client_credentials")]).status, 200);
    let bad = d.cli(&["app", "update", "--tenant", "acme", &m2m.client_id, "--add-redirect-uri", "https://x.test/cb"]);
    assert_eq!(bad.code, 1, "{}", bad.stderr);
    let audit = |args: &[&str]| {
        let mut all = vec!["audit", "--tenant", "acme", "-o", "json"];
        all.extend_from_slice(args);
        actions(&d.cli(&all).ok().json())
    };
    let names = |rows: Vec<(String, String)>| rows.into_iter().map(|(a, _)| a).collect::<Vec<_>>();

    // Who was made admin: the role grant names the user.
    assert_eq!(names(audit(&["--user", "ada@acme.test", "--action", "role.*"])), ["role.assign"]);
    assert_eq!(names(audit(&["--action", "user.*"])), ["user.invite"]);
    assert_eq!(names(audit(&["--actor", &m2m.client_id])), ["token.client_credentials"]);
    assert_eq!(
        names(audit(&["--app", &m2m.client_id])),
        ["app.create", "token.client_credentials", "app.update"],
        "by the app, or about it"
    );
    assert_eq!(audit(&["--outcome", "failure"]), [("app.update".into(), "failure: invalid_redirect_uri".into())]);
    assert_eq!(audit(&["--limit", "2"]).len(), 2);
    // Times: a duration back from now, or RFC 3339 (the daemon's clock is the test's).
    assert!(audit(&["--since", "2999-01-01T00:00:00Z"]).is_empty());
    assert!(audit(&["--until", "2000-01-01T00:00:00Z"]).is_empty());
    assert!(audit(&["--since", "2000-01-01T00:00:00Z", "--until", "2999-01-01T00:00:00Z"]).len() >= 6);
    let r = d.cli(&["audit", "--since", "last tuesday"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("RFC 3339"), "{}", r.stderr);
    let r = d.cli(&["audit", "--limit", "0"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let (status, body) = admin_raw(&d.socket, &admin_request("GET", "/admin/v1/audit?until=soon", None, b""));
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_input")), "{body}");
}
