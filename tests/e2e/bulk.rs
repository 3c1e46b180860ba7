//! `POST {api_url}/v1/users/invite` with a real client-credentials token from /token and real
//! multipart sent by curl.

use std::process::Command;

use serde_json::{Value, json};

use crate::oidc_support::{App, app, token};
use crate::support::*;

fn cc_token(site: &Site, m2m: &App) -> String {
    let r = token(site, m2m, &[("grant_type", "client_credentials")]);
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()["access_token"].as_str().unwrap().to_owned()
}

/// curl -F: returns (status, body).
fn upload(url: &str, token: Option<&str>, parts: &[&str]) -> (u16, Value) {
    let mut c = Command::new("curl");
    c.args(["-sS", "-o", "-", "-w", "\n%{http_code}", "-X", "POST", url]);
    if let Some(t) = token {
        c.args(["-H", &format!("Authorization: Bearer {t}")]);
    }
    for p in parts {
        c.args(["-F", p]);
    }
    let out = c.output().expect("curl");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    (code.trim().parse().unwrap_or(0), serde_json::from_str(body).unwrap_or(Value::Null))
}

#[test]
fn bulk_invite_from_csv() {
    let d = TestDaemon::start_with(|f| {
        f.limits.invite_file_max = Some("2KiB".into());
        f.limits.invite_rows_max = Some(5);
    });
    let site = Site::new(&d, "acme", &[]);
    d.cli(&["role", "create", "--tenant", "acme", "staff"]).ok();
    let m2m = app(&site, "m2m", &["--scope", "users:invite"]);
    let bearer = cc_token(&site, &m2m);
    let url = format!("{}/api/v1/users/invite", site.base);
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        format!("file=@{};type=text/csv", p.display())
    };
    let good = file(
        "good.csv",
        "email,name,roles\nada@acme.test,Ada Lovelace,staff\nbob@acme.test,Bob,\n=cmd@acme.test,=HYPERLINK(\"x\"),\n"
            .as_bytes(),
    );

    let (status, body) = upload(&url, Some(&bearer), &[&good]);
    assert_eq!(status, 200, "{body}");
    let invited = body["invited"].as_array().unwrap();
    assert_eq!(invited.len(), 3);
    assert!(invited[0]["invite_url"].as_str().unwrap().starts_with(&format!("{}/invite/", site.base)));
    assert_eq!(body["already_present"], json!([]));
    let ada = d.cli(&["user", "show", "--tenant", "acme", "ada@acme.test", "-o", "json"]).ok().json();
    assert_eq!((ada["status"].as_str(), ada["roles"].clone()), (Some("invited"), json!(["staff"])));
    let stored = d.sql().text("SELECT name FROM users WHERE email = '=cmd@acme.test'");
    assert_eq!(stored, "=HYPERLINK(\"x\")", "cells are stored as given");

    // Re-sending the same file invites no one twice.
    let before = d.snapshot();
    let (status, body) = upload(&url, Some(&bearer), &[&good]);
    assert_eq!(status, 200);
    assert_eq!(body["invited"], json!([]));
    assert_eq!(body["already_present"].as_array().unwrap().len(), 3);
    assert_eq!(d.snapshot(), before);

    // Any bad row: 422 listing every bad row, and the database is byte-for-byte unchanged.
    let bad = file(
        "bad.csv",
        b"email,name,roles\nnew@acme.test,New,\nnot-an-email,X,\nnew@ACME.test,Dup,\nempty@acme.test,,\nrole@acme.test,R,ghost\n",
    );
    let before = d.snapshot();
    let (status, body) = upload(&url, Some(&bearer), &[&bad]);
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"], "invalid_rows");
    let rows: Vec<(u64, String)> = body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["row"].as_u64().unwrap(), r["column"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(rows, [(3, "email".into()), (4, "email".into()), (5, "name".into()), (6, "roles".into())]);
    assert_eq!(body["error_description"], "4 row(s) are invalid; nothing was stored");
    assert_eq!(body["reasons"].as_array().map(Vec::len), Some(4), "{body}");
    // A row with two problems is one invalid row; the problems are counted by reason too.
    let two = file("two.csv", b"email,name,roles\nbad,,ghost\nworse,,ghost\n");
    let (status, body) = upload(&url, Some(&bearer), &[&two]);
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error_description"], "2 row(s) are invalid (6 problems); nothing was stored");
    let ghost = body["reasons"].as_array().unwrap().iter().find(|r| r["column"] == "roles").cloned().unwrap();
    assert_eq!((ghost["rows"].as_u64(), ghost["first_rows"].clone()), (Some(2), json!([2, 3])));
    let (status, body) = upload(&url, Some(&bearer), &[&file("header.csv", b"mail,name\na@acme.test,A\n")]);
    assert_eq!((status, body["rows"][0]["column"].as_str()), (422, Some("header")));
    // Rows that cannot be read count towards limits.invite_rows_max (5 here) like the others.
    let unreadable = file("unreadable.csv", &[&b"email,name\n"[..], &b"\xff@acme.test,\xfe\n".repeat(8)].concat());
    let (status, body) = upload(&url, Some(&bearer), &[&unreadable]);
    assert_eq!((status, body["error"].as_str()), (422, Some("invalid_rows")), "{body}");
    let rows: Vec<(u64, &str)> = body["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["row"].as_u64().unwrap(), r["column"].as_str().unwrap()))
        .collect();
    assert_eq!(rows, [(2, "row"), (3, "row"), (4, "row"), (5, "row"), (6, "row"), (7, "file")], "{body}");
    assert_eq!(d.snapshot(), before, "a refused file stores nothing");
    // The CLI is not bound by the upload API's limits: every row is read (and these rejected),
    // and a file of 300 rows and 9 KiB, beyond both limits, is imported whole.
    let unreadable = dir.path().join("unreadable.csv");
    let people_before = d.snapshot_of(&["users", "invites"]);
    let run = d.cli(&["user", "import", "--tenant", "acme", &unreadable.to_string_lossy(), "-o", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let summary = run.json();
    let invited = |v: &Value| v["invited"].as_array().map(Vec::len);
    assert_eq!((summary["rejected_rows"].as_u64(), invited(&summary)), (Some(8), Some(0)), "{summary}");
    assert_eq!(d.snapshot_of(&["users", "invites"]), people_before, "nothing of a rejected row is stored");
    let many = dir.path().join("many.csv");
    let rows: String = (0..300).map(|i| format!("person{i:03}@acme.test,Person {i}\n")).collect();
    std::fs::write(&many, format!("email,name\n{rows}")).unwrap();
    assert!(std::fs::metadata(&many).unwrap().len() > 2048);
    let run = d.cli(&["user", "import", "--tenant", "acme", many.to_str().unwrap(), "-o", "json"]).ok().json();
    assert_eq!((invited(&run), run["rejected_rows"].as_u64()), (Some(300), Some(0)), "{run}");

    // Every other error status; none of them stores a user or an invitation.
    let people = d.snapshot_of(&["users", "invites"]);
    let big = file("big.csv", format!("email,name\n{}", "a@acme.test,A\n".repeat(300)).as_bytes());
    let checks: Vec<(Option<&str>, Vec<&str>, u16, &str)> = vec![
        (None, vec![good.as_str()], 401, "invalid_token"),
        (Some("garbage"), vec![good.as_str()], 401, "invalid_token"),
        (Some(bearer.as_str()), vec![big.as_str()], 413, "payload_too_large"),
        (Some(bearer.as_str()), vec![good.as_str(), good.as_str()], 400, "invalid_input"),
        (Some(bearer.as_str()), vec!["note=hello"], 400, "invalid_input"),
    ];
    for (tok, parts, status, code) in checks {
        let (got, body) = upload(&url, tok, &parts);
        assert_eq!((got, body["error"].as_str().unwrap_or("")), (status, code), "{parts:?}: {body}");
    }
    let r = send_json("POST", &url, &json!({"file": "x"}), &[("Authorization", &format!("Bearer {bearer}"))]);
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (415, "unsupported_media_type"));
    // A token without the scope, and a token of another tenant.
    let plain = app(&site, "m2m", &[]);
    let (status, body) = upload(&url, Some(&cc_token(&site, &plain)), &[&good]);
    assert_eq!((status, body["error"].as_str().unwrap()), (403, "insufficient_scope"));
    let other = Site::new(&d, "other", &[]);
    let other_m2m = app(&other, "m2m", &["--scope", "users:invite"]);
    let (status, _) = upload(&url, Some(&cc_token(&other, &other_m2m)), &[&good]);
    assert_eq!(status, 401, "another tenant's token");
    assert_eq!(d.snapshot_of(&["users", "invites"]), people);
}

#[test]
fn cli_import_with_dry_run_rejections_and_links_out() {
    let d = TestDaemon::start();
    Site::new(&d, "acme", &[]);
    d.cli(&["role", "create", "--tenant", "acme", "staff"]).ok();
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("staff.csv");
    std::fs::write(
        &csv,
        "email,name,roles\nada@acme.test,Ada,staff\n=evil@acme.test,=HYPERLINK(\"http://x\"),\nbad-email,Bob,\ncy@acme.test,Cy,ghost\n",
    )
    .unwrap();
    let csv_arg = csv.to_str().unwrap();

    let before = d.snapshot();
    let dry = d.cli(&["user", "import", "--tenant", "acme", csv_arg, "--dry-run", "-o", "json"]);
    assert_eq!(dry.code, 1, "rejected rows make the exit code 1: {}", dry.stderr);
    let s = dry.json();
    assert_eq!(s["dry_run"], true);
    assert_eq!(s["invited"].as_array().unwrap().len(), 2);
    assert_eq!(s["rejected"].as_array().unwrap().len(), 2);
    assert_eq!(d.snapshot(), before, "--dry-run stores nothing");

    let links = dir.path().join("links.csv");
    let run = d.cli(&["user", "import", "--tenant", "acme", csv_arg, "--links-out", links.to_str().unwrap()]);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("invited") && run.stdout.contains('2'), "{}", run.stdout);
    assert!(run.stderr.contains("bad-email") || run.stderr.contains("not an e-mail"), "{}", run.stderr);
    assert!(run.stderr.contains("ghost"), "{}", run.stderr);
    let text = std::fs::read_to_string(&links).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "email,name,invite_url");
    // In address order ('=' sorts before 'a'), not the file's.
    assert!(lines[1].starts_with("'=evil@acme.test,\"'=HYPERLINK("), "formula cells neutralised: {text}");
    assert!(lines[2].starts_with("ada@acme.test,Ada,http://"), "{text}");

    // Fixing the file and re-running invites only who is missing.
    std::fs::write(&csv, "email,name\nada@acme.test,Ada\ncy@acme.test,Cy\n").unwrap();
    let again = d.cli(&["user", "import", "--tenant", "acme", csv_arg, "-o", "json"]).ok().json();
    assert_eq!(again["invited"].as_array().unwrap().len(), 1);
    assert_eq!(again["already_present"], json!(["ada@acme.test"]));
    let bad_header = dir.path().join("h.csv");
    std::fs::write(&bad_header, "mail\nx\n").unwrap();
    let r = d.cli(&["user", "import", "--tenant", "acme", bad_header.to_str().unwrap()]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("header"), "{}", r.stderr);
}

#[test]
fn cli_import_groups_rejected_rows_by_reason() {
    let d = TestDaemon::start();
    Site::new(&d, "acme", &[]);
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("members.csv");
    let mut text = String::from("email,name,roles\n");
    for i in 0..3334 {
        text.push_str(&format!("u{i}@acme.test,U {i},eng\n"));
    }
    text.push_str("not-an-email,,eng\nok@acme.test,Ok,\n");
    std::fs::write(&csv, text).unwrap();

    let before = d.snapshot();
    let run = d.cli(&["user", "import", "--tenant", "acme", csv.to_str().unwrap(), "--dry-run"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    // One line per reason, with its count and first rows, not 3,335 lines.
    assert!(run.stderr.lines().count() < 20, "{}", run.stderr);
    assert!(!run.stderr.contains("\\n"), "the table's lines are lines, not escapes: {}", run.stderr);
    let line = run.stderr.lines().find(|l| l.contains("\"eng\" does not exist")).unwrap_or_default();
    assert!(line.contains("3,335") && line.contains("2, 3, 4, 5, 6, …"), "{}", run.stderr);
    assert!(run.stderr.contains("is not an e-mail address") && run.stderr.contains("3336"), "{}", run.stderr);
    assert!(run.stdout.contains("rejected") && run.stdout.contains("3335"), "{}", run.stdout);

    let json = d.cli(&["user", "import", "--tenant", "acme", csv.to_str().unwrap(), "--dry-run", "-o", "json"]);
    let s = json.json();
    assert_eq!(s["rejected_rows"], 3335, "row 3336 has three problems and counts once");
    assert_eq!(s["rejected"].as_array().unwrap().len(), 3337, "every problem, one by one");
    let reasons = s["rejected_reasons"].as_array().unwrap();
    assert_eq!(reasons.len(), 3, "{reasons:?}");
    assert_eq!((reasons[0]["column"].as_str(), reasons[0]["rows"].as_u64()), (Some("roles"), Some(3335)));
    assert_eq!(reasons[0]["first_rows"], json!([2, 3, 4, 5, 6]));
    assert_eq!(d.snapshot(), before, "--dry-run stores nothing");
}

fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn import_links_out_is_private_never_overwritten_and_unsaved_links_are_warned_about() {
    use std::os::unix::fs::PermissionsExt;
    let d = TestDaemon::start();
    Site::new(&d, "acme", &[]);
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("staff.csv");
    std::fs::write(&csv, "email,name\nada@acme.test,Ada\n").unwrap();
    let csv_arg = csv.to_str().unwrap();

    // An existing file is refused before anything is sent: nobody is invited.
    let links = dir.path().join("links.csv");
    std::fs::write(&links, "precious\n").unwrap();
    std::fs::set_permissions(&links, std::fs::Permissions::from_mode(0o644)).unwrap();
    let before = d.snapshot();
    let r = d.cli(&["user", "import", "--tenant", "acme", csv_arg, "--links-out", links.to_str().unwrap()]);
    assert_eq!(r.code, 2, "a local file problem, nothing sent: {}", r.stderr);
    assert!(r.stderr.contains("already exists") && r.stderr.contains("--force"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&links).unwrap(), "precious\n");
    assert_eq!(d.snapshot(), before, "nothing was invited");

    // A refused call leaves no empty file behind (the path stays free for the re-run).
    let fresh = dir.path().join("fresh.csv");
    let r = d.cli(&["user", "import", "--tenant", "nope", csv_arg, "--links-out", fresh.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(!fresh.exists());

    // A new file is created 0600.
    d.cli(&["user", "import", "--tenant", "acme", csv_arg, "--links-out", fresh.to_str().unwrap()]).ok();
    assert_eq!(mode(&fresh), 0o600);
    assert!(std::fs::read_to_string(&fresh).unwrap().contains("ada@acme.test,Ada,http"));

    // --force overwrites, and makes the file private.
    std::fs::write(&csv, "email,name\nbob@acme.test,Bob\n").unwrap();
    d.cli(&["user", "import", "--tenant", "acme", csv_arg, "--links-out", links.to_str().unwrap(), "--force"]).ok();
    assert_eq!(mode(&links), 0o600);
    let text = std::fs::read_to_string(&links).unwrap();
    assert!(text.starts_with("email,name,invite_url\nbob@acme.test,Bob,http"), "{text}");
    let r = d.cli(&["user", "import", "--tenant", "acme", csv_arg, "--force"]);
    assert_eq!(r.code, 2, "--force needs --links-out: {}", r.stderr);

    // Neither --links-out nor [smtp]: the links went nowhere, and stderr says how to get new ones.
    std::fs::write(&csv, "email,name\ncy@acme.test,Cy\n").unwrap();
    let r = d.cli(&["user", "import", "--tenant", "acme", csv_arg]).ok();
    assert!(r.stderr.contains("1 invitation link(s) were not saved"), "{}", r.stderr);
    assert!(r.stderr.contains("latchkey user reinvite --tenant acme --all-pending --links-out"), "{}", r.stderr);
    let r = d.cli(&["user", "import", "--tenant", "acme", csv_arg, "-q"]).ok();
    assert!(!r.stderr.contains("not saved"), "nobody new was invited: {}", r.stderr);
    // With -o json the links are on stdout: no warning.
    std::fs::write(&csv, "email,name\ndi@acme.test,Di\n").unwrap();
    let r = d.cli(&["user", "import", "--tenant", "acme", csv_arg, "-o", "json"]).ok();
    assert!(!r.stderr.contains("not saved"), "{}", r.stderr);
    assert!(r.json()["invited"][0]["invite_url"].as_str().unwrap().contains("/invite/"));
}

/// The token at the end of an invite URL.
fn token_of(url: &str) -> String {
    url.rsplit('/').next().unwrap().to_owned()
}

/// Whether `token` still lets `email` start registering a passkey.
fn invite_works(site: &Site, email: &str, token: &str) -> bool {
    let r = site.register_start(email, "Tester", Some(token), None, json!({}));
    match r.status {
        200 => true,
        403 => {
            assert_eq!(r.json()["error"], "registration_not_allowed", "{}", r.body);
            false
        }
        other => panic!("register/start answered {other}: {}", r.body),
    }
}

#[test]
fn reinvite_replaces_the_links_of_invited_users_and_skips_the_others() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let beta = Site::new(&d, "beta", &[]);
    let ada1 = site.invite("ada@acme.test", "Ada");
    let bob1 = site.invite("bob@acme.test", "Bob");
    site.user_with_passkey("cy@acme.test");
    let eve1 = beta.invite("eve@beta.test", "Eve");

    // One user by name (any case): a new link works, the old one no longer does.
    let r = d.cli(&["user", "reinvite", "--tenant", "acme", "ADA@acme.test", "-o", "json"]).ok().json();
    assert_eq!(r["skipped"], json!([]));
    assert_eq!(r["invited"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!((&r["invited"][0]["email"], &r["invited"][0]["name"]), (&json!("ada@acme.test"), &json!("Ada")));
    let ada2 = token_of(r["invited"][0]["invite_url"].as_str().unwrap());
    assert!(r["invited"][0]["invite_url"].as_str().unwrap().starts_with(&format!("{}/invite/", site.base)));
    assert!(!invite_works(&site, "ada@acme.test", &ada1), "the old link is withdrawn");
    assert!(invite_works(&site, "ada@acme.test", &ada2));

    // In a table, the new link is printed (without --links-out it would be lost otherwise).
    let r = d.cli(&["user", "reinvite", "--tenant", "acme", "ada@acme.test"]).ok();
    assert!(r.stdout.contains(&format!("{}/invite/", site.base)), "{}", r.stdout);
    assert!(!r.stderr.contains("not saved"), "{}", r.stderr);
    assert!(!invite_works(&site, "ada@acme.test", &ada2));

    // Active and unknown users are skipped with the reason; nothing changes; exit 1.
    let before = d.snapshot();
    let r = d.cli(&["user", "reinvite", "--tenant", "acme", "cy@acme.test", "nobody@acme.test", "-o", "json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["invited"], json!([]));
    assert_eq!(j["skipped"][0]["email"], "cy@acme.test");
    assert!(j["skipped"][0]["reason"].as_str().unwrap().contains("already active"), "{j}");
    assert!(j["skipped"][1]["reason"].as_str().unwrap().contains("no such user"), "{j}");
    let r = d.cli(&["user", "reinvite", "--tenant", "acme", "cy@acme.test"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("already active") && r.stderr.contains("user recover"), "{}", r.stderr);
    assert_eq!(d.snapshot(), before, "skipped users change nothing");

    // --dry-run says who would get a link and changes nothing.
    let r = d.cli(&["user", "reinvite", "--tenant", "acme", "--all-pending", "--dry-run", "-o", "json"]).ok().json();
    let who: Vec<&str> = r["invited"].as_array().unwrap().iter().map(|i| i["email"].as_str().unwrap()).collect();
    assert_eq!(who, ["ada@acme.test", "bob@acme.test"]);
    assert_eq!(d.snapshot(), before);

    // An existing --links-out file is refused before anything is sent.
    let dir = tempfile::tempdir().unwrap();
    let links = dir.path().join("links.csv");
    std::fs::write(&links, "keep\n").unwrap();
    let r = d.cli(&["user", "reinvite", "--tenant", "acme", "--all-pending", "--links-out", links.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--force"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&links).unwrap(), "keep\n");
    assert_eq!(d.snapshot(), before, "nothing was reinvited");
    assert!(invite_works(&site, "bob@acme.test", &bob1));

    // --all-pending: every invited user of this tenant only, links in a new 0600 file.
    let out = dir.path().join("new-links.csv");
    let r =
        d.cli(&["user", "reinvite", "--tenant", "acme", "--all-pending", "--links-out", out.to_str().unwrap()]).ok();
    assert!(r.stdout.contains("new links") && r.stdout.contains('2'), "{}", r.stdout);
    assert!(!r.stdout.contains("/invite/"), "the links went to the file: {}", r.stdout);
    assert_eq!(mode(&out), 0o600);
    let text = std::fs::read_to_string(&out).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows[0], "email,name,invite_url");
    assert_eq!(rows.len(), 3, "{text}");
    assert!(rows[1].starts_with("ada@acme.test,Ada,") && rows[2].starts_with("bob@acme.test,Bob,"), "{text}");
    let bob2 = token_of(rows[2]);
    assert!(!invite_works(&site, "bob@acme.test", &bob1));
    assert!(invite_works(&site, "bob@acme.test", &bob2));
    assert!(invite_works(&beta, "eve@beta.test", &eve1), "another tenant's invitations are untouched");

    // Usage: users or --all-pending, not both, not neither.
    assert_eq!(d.cli(&["user", "reinvite", "--tenant", "acme"]).code, 2);
    assert_eq!(d.cli(&["user", "reinvite", "--tenant", "acme", "--all-pending", "ada@acme.test"]).code, 2);
    let r = d.cli(&["user", "reinvite", "--tenant", "nope", "ada@acme.test"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("tenant_not_found"), "{}", r.stderr);
}

/// Files larger than one batch are read from a temporary file: a bad row at the end of the file
/// still refuses the whole file on the API (nothing stored) and is still reported by the import,
/// whose good rows are all invited, counted across batches. The import sorts its rows by address
/// through temporary runs (16,384 rows each): 20,000 shuffled rows make a run on disk and one in
/// memory, and their links come back whole and in address order.
#[test]
fn large_files_are_checked_to_their_last_row() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let m2m = app(&site, "m2m", &["--scope", "users:invite"]);
    let bearer = cc_token(&site, &m2m);
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("email,name\n");
    for k in 0..20_000u64 {
        // 7,919 is prime to 20,000: every address once, in no order.
        let i = k * 7_919 % 20_000;
        text.push_str(&format!("user{i:05}@acme.test,User {i}\n"));
    }
    text.push_str("USER00007@acme.test,Again\nnot-an-address,Last\n");
    let path = dir.path().join("big.csv");
    std::fs::write(&path, &text).unwrap();

    let before = d.snapshot();
    let url = format!("{}/api/v1/users/invite", site.base);
    let (status, body) = upload(&url, Some(&bearer), &[&format!("file=@{};type=text/csv", path.display())]);
    assert_eq!(status, 422, "{body}");
    let rows: Vec<u64> = body["rows"].as_array().unwrap().iter().map(|r| r["row"].as_u64().unwrap()).collect();
    assert_eq!(rows, [20_002, 20_003], "{body}");
    assert_eq!(d.snapshot(), before, "a refused file stores nothing");

    let links = dir.path().join("links.csv");
    let run =
        d.cli(&["user", "import", "--tenant", "acme", path.to_str().unwrap(), "--links-out", links.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("appears earlier") && run.stderr.contains("not-an-address"), "{}", run.stderr);
    let n = d.sql().i64("SELECT count(*) FROM users WHERE status = 'invited'");
    assert_eq!(n, 20_000);
    let text = std::fs::read_to_string(&links).unwrap();
    let emails: Vec<&str> = text.lines().skip(1).map(|l| l.split(',').next().unwrap()).collect();
    let expected: Vec<String> = (0..20_000).map(|i| format!("user{i:05}@acme.test")).collect();
    assert_eq!(emails, expected, "one link per user, in address order");
    // Each link is the user's own: its name came through the sort with its address.
    assert!(text.lines().nth(8).unwrap().starts_with("user00007@acme.test,User 7,http"), "{}", &text[..400]);
}
