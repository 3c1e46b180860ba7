//! The CLI as a Unix tool: exit codes 0-3 (docs/cli.md), a daemon that goes away
//! mid-call, closed pipes, `-q`, and where it looks for the admin socket.

use std::io::{Read, Write};
use std::os::unix::net::UnixListener;
use std::path::Path;

use crate::support::*;

/// A fake daemon on `socket`: for each connection it reads one request, writes `answer` (maybe
/// a truncated one) and closes the connection.
fn fake_daemon(socket: &Path, answer: &'static [u8]) -> std::thread::JoinHandle<()> {
    let listener = UnixListener::bind(socket).unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let mut seen = vec![];
            let mut buf = [0u8; 4096];
            // Up to the end of the headers, then the body's Content-Length.
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                match conn.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => seen.extend_from_slice(&buf[..n]),
                }
            }
            let text = String::from_utf8_lossy(&seen).to_lowercase();
            let head_end = text.find("\r\n\r\n").map(|i| i + 4).unwrap_or(seen.len());
            let length: usize = text
                .lines()
                .find_map(|l| l.strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
                .unwrap_or(0);
            let mut have = seen.len() - head_end;
            while have < length {
                match conn.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => have += n,
                }
            }
            let _ = conn.write_all(answer);
            // Dropping the stream closes it: the "daemon" is gone.
        }
    })
}

#[track_caller]
fn assert_went_away(r: &Run, socket: &Path) {
    assert_eq!(r.code, 3, "a daemon that goes away mid-call is exit 3\nstdout: {}\nstderr: {}", r.stdout, r.stderr);
    assert!(r.stderr.contains(socket.to_str().unwrap()), "the message names the socket: {}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

#[test]
fn a_daemon_that_goes_away_mid_call_exits_3_naming_the_socket() {
    let dir = tempfile::tempdir().unwrap();

    // Accepts, reads the request, closes without a word.
    let silent = dir.path().join("silent.sock");
    fake_daemon(&silent, b"");
    let r = cli(&silent, &["tenant", "list"]);
    assert_went_away(&r, &silent);
    assert!(r.stderr.contains("closed the connection without answering"), "{}", r.stderr);

    // Starts an answer and stops half-way through its body.
    let cut = dir.path().join("cut.sock");
    fake_daemon(&cut, b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 200\r\n\r\n[{\"slug\":");
    let r = cli(&cut, &["tenant", "list"]);
    assert_went_away(&r, &cut);
    assert!(r.stderr.contains("before the answer was complete"), "{}", r.stderr);

    // A streamed import whose stream breaks off after one progress line.
    let stream = dir.path().join("stream.sock");
    fake_daemon(
        &stream,
        b"HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\n\r\n\
          4c\r\n{\"type\":\"progress\",\"processed\":1,\"total\":2,\"invited\":[],\"already_present\":[]}\n\r\n",
    );
    let csv = dir.path().join("staff.csv");
    std::fs::write(&csv, "email,name\nada@acme.test,Ada\nbob@acme.test,Bob\n").unwrap();
    let r = cli(&stream, &["user", "import", "--tenant", "acme", csv.to_str().unwrap()]);
    assert_went_away(&r, &stream);
}

#[test]
fn local_file_problems_exit_2_and_send_nothing() {
    let d = TestDaemon::start();
    Site::new(&d, "acme", &[]);
    let dir = tempfile::tempdir().unwrap();
    let before = d.snapshot();

    let missing = dir.path().join("missing.csv");
    let r = d.cli(&["user", "import", "--tenant", "acme", missing.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("missing.csv"), "{}", r.stderr);

    let r = d.cli(&["apply", "-f", dir.path().join("missing.toml").to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);

    let secret = dir.path().join("no-secret");
    let r = d.cli(&[
        "social",
        "enable",
        "--tenant",
        "acme",
        "github",
        "--client-id",
        "Iv1.abc",
        "--client-secret-file",
        secret.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);

    let existing = dir.path().join("backup.db");
    std::fs::write(&existing, b"keep me").unwrap();
    let r = d.cli(&["backup", existing.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(std::fs::read(&existing).unwrap(), b"keep me", "an existing file is not overwritten");
    assert_eq!(d.snapshot(), before, "nothing changed");

    let help = d.cli(&["--help"]).ok();
    assert!(
        help.stdout.contains("2  usage error, or a file named on the command line cannot be used"),
        "{}",
        help.stdout
    );
    assert!(!help.stdout.contains("\n  4  "), "exit codes are 0-3 only: {}", help.stdout);
}

#[test]
fn a_closed_pipe_ends_the_cli_quietly() {
    use std::process::{Command, Stdio};
    let d = TestDaemon::start();
    Site::new(&d, "dev", &[]);
    for i in 0..30 {
        let email = format!("user{i}@dev.test");
        d.cli(&["user", "invite", "--tenant", "dev", "--email", &email, "--name", "User"]).ok();
    }
    for args in [&["user", "list", "--tenant", "dev"][..], &["user", "list", "--tenant", "dev", "-o", "json"][..]] {
        let mut child = Command::new(bin("latchkey"))
            .args(args)
            .env("LATCHKEY_ADMIN_SOCKET", &d.socket)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // `| head -0`: the reader goes away before the CLI prints anything.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(stderr.is_empty(), "quiet: {stderr}");
        assert_eq!(out.status.code(), Some(0), "like coreutils: quietly done ({:?})", out.status);
    }
    // The shell's view of the same thing.
    let script = format!("{} user list --tenant dev | head -1", bin("latchkey").display());
    let out = Command::new("sh").args(["-c", &script]).env("LATCHKEY_ADMIN_SOCKET", &d.socket).output().unwrap();
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
}

/// Runs the CLI in `cwd` with only `LATCHKEY_CONFIG` (if any) to find the socket.
fn cli_in(cwd: &Path, config: Option<&Path>, args: &[&str]) -> Run {
    let mut cmd = std::process::Command::new(bin("latchkey"));
    cmd.args(args).current_dir(cwd).env_remove("LATCHKEY_ADMIN_SOCKET").env_remove("LATCHKEY_CONFIG");
    if let Some(c) = config {
        cmd.env("LATCHKEY_CONFIG", c);
    }
    cmd.output().unwrap().into()
}

#[test]
fn the_socket_is_found_through_latchkey_config_and_the_hint_says_how_it_was_chosen() {
    let d = TestDaemon::start();
    let cwd = tempfile::tempdir().unwrap();
    let config = cwd.path().join("config.toml");
    std::fs::write(&config, format!("[admin]\nsocket = {:?}\n", d.socket.to_str().unwrap())).unwrap();
    let status = cli_in(cwd.path(), Some(&config), &["status", "-o", "json"]).ok().json();
    assert_eq!(status["admin_socket"], d.socket.to_str().unwrap());
    assert_eq!(status["status"], "running", "the table's columns are fields: {status}");
    assert!(status["uptime"].as_str().unwrap().ends_with('s') && status["uptime_seconds"].is_u64(), "{status}");

    // A config naming a socket nobody listens on: exit 3, naming the path and where it came from.
    let gone = cwd.path().join("gone.sock");
    let other = cwd.path().join("other.toml");
    std::fs::write(&other, format!("[server]\npublic_url = \"https://id.example\"\n[admin]\nsocket = {gone:?}\n"))
        .unwrap();
    let r = cli_in(cwd.path(), Some(&other), &["status"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains(gone.to_str().unwrap()), "{}", r.stderr);
    assert!(r.stderr.contains(&format!("admin.socket in {} (from LATCHKEY_CONFIG)", other.display())), "{}", r.stderr);

    // A config without admin.socket: latchkeyd's default, and the hint says why.
    let bare = cwd.path().join("bare.toml");
    std::fs::write(&bare, "[server]\npublic_url = \"https://id.example\"\n").unwrap();
    let r = cli_in(cwd.path(), Some(&bare), &["status"]);
    if r.code != 0 {
        assert_eq!(r.code, 3, "{}", r.stderr);
        assert!(r.stderr.contains("/run/latchkey/admin.sock"), "{}", r.stderr);
        assert!(r.stderr.contains("sets no admin.socket"), "{}", r.stderr);
    }

    // ./latchkey-data/admin.sock comes first (a --dev daemon started in this directory).
    std::fs::create_dir(cwd.path().join("latchkey-data")).unwrap();
    std::os::unix::fs::symlink(&d.socket, cwd.path().join("latchkey-data/admin.sock")).unwrap();
    cli_in(cwd.path(), Some(&other), &["status"]).ok();

    // --socket beats everything, and the hint says it was the flag.
    let r = cli_in(cwd.path(), Some(&config), &["status", "--socket", gone.to_str().unwrap()]);
    assert_eq!(r.code, 3);
    assert!(r.stderr.contains("from --socket"), "{}", r.stderr);
    let r = cli(&gone, &["status"]);
    assert!(r.stderr.contains("from LATCHKEY_ADMIN_SOCKET"), "{}", r.stderr);
}

#[test]
fn quiet_prints_only_what_is_shown_once_and_errors() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);

    // Confirmations and tables disappear.
    let r = d.cli(&["-q", "tenant", "create", "beta"]).ok();
    assert_eq!((r.stdout.as_str(), r.stderr.as_str()), ("", ""));
    let r = d.cli(&["tenant", "list", "-q"]).ok();
    assert_eq!((r.stdout.as_str(), r.stderr.as_str()), ("", ""));

    // A new client secret is printed once: with -q, the client id and the secret, one per line.
    let r = d.cli(&["app", "create", "--tenant", "acme", "--name", "Portal", "--type", "m2m", "-q"]).ok();
    assert_eq!(r.stderr, "");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.stdout);
    let (id, secret) = (lines[0], lines[1]);
    let shown = d.cli(&["app", "show", "--tenant", "acme", id, "-o", "json"]).ok().json();
    assert_eq!(shown["client_id"], id);
    let cc = crate::support::send_raw(
        "POST",
        &format!("{}/token", site.base),
        Some("application/x-www-form-urlencoded"),
        b"grant_type=client_credentials".to_vec(),
        &[("Authorization", &format!("Basic {}", base64_pair(id, secret)))],
    );
    assert_eq!(cc.status, 200, "the printed secret is the secret: {}", cc.body);
    let r = d.cli(&["app", "rotate-secret", "--tenant", "acme", id, "-q"]).ok();
    assert_eq!(r.stdout.lines().count(), 1);
    assert_ne!(r.stdout.trim(), secret);

    // An invite link: just the URL.
    let r = d.cli(&["-q", "user", "invite", "--tenant", "acme", "--email", "ada@acme.test", "--name", "Ada"]).ok();
    assert!(r.stdout.trim().starts_with(&format!("{}/invite/", site.base)), "{}", r.stdout);
    assert_eq!(r.stdout.lines().count(), 1);
    // Reinvite: EMAIL<TAB>URL for each link that went nowhere else.
    let r = d.cli(&["-q", "user", "reinvite", "--tenant", "acme", "ada@acme.test"]).ok();
    let (email, url) = r.stdout.trim().split_once('\t').unwrap();
    assert_eq!(email, "ada@acme.test");
    assert!(url.starts_with(&format!("{}/invite/", site.base)));

    // apply: TENANT<TAB>APP<TAB>CLIENT ID<TAB>SECRET per new confidential app.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("l.toml");
    std::fs::write(&file, "[[tenant]]\nslug = \"acme\"\n\n[[tenant.app]]\nname = \"Api\"\ntype = \"m2m\"\n").unwrap();
    let r = d.cli(&["apply", "-f", file.to_str().unwrap(), "-q"]).ok();
    let fields: Vec<&str> = r.stdout.trim_end().split('\t').collect();
    assert_eq!(fields.len(), 4, "{}", r.stdout);
    assert_eq!((fields[0], fields[1]), ("acme", "Api"));
    assert_eq!(r.stderr, "");

    // -o json is unaffected.
    let r = d.cli(&["-q", "tenant", "show", "acme", "-o", "json"]).ok();
    assert_eq!(r.json()["slug"], "acme");

    // Errors still reach stderr: a refusal, and a partial failure's problems.
    let r = d.cli(&["-q", "tenant", "show", "nope"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("tenant_not_found"), "{}", r.stderr);
    let r = d.cli(&["-q", "user", "reinvite", "--tenant", "acme", "ghost@acme.test"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("ghost@acme.test") && r.stderr.contains("no such user"), "{}", r.stderr);
}

fn base64_pair(id: &str, secret: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}"))
}

/// The labels of a table the CLI printed: a record's first column, or a list's header row.
fn table_labels(out: &str) -> Vec<String> {
    let cells = |line: &str| -> Vec<String> {
        line.trim().trim_matches('│').split('┆').map(|c| c.trim().to_owned()).collect::<Vec<_>>()
    };
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with('│')).collect();
    if out.contains('╞') {
        rows.first().map(|header| cells(header)).unwrap_or_default()
    } else {
        rows.iter().map(|r| cells(r)[0].clone()).filter(|label| !label.is_empty()).collect()
    }
}

/// `snake_case` of a table's label, as `-o json` names the field.
fn snake(label: &str) -> String {
    let lower = label.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    words.join("_")
}

#[test]
fn every_table_label_is_a_field_of_the_json_output() {
    let d = TestDaemon::start();
    let _acme = Site::new(&d, "acme", &[]);
    let made = d.cli(&["app", "create", "--tenant", "acme", "--name", "Portal", "--type", "m2m", "-o", "json"]);
    let client_id = made.ok().json()["client_id"].as_str().unwrap().to_owned();
    d.cli(&["user", "invite", "--tenant", "acme", "--email", "ada@acme.test", "--name", "Ada"]).ok();
    d.cli(&["role", "create", "--tenant", "acme", "admin"]).ok();
    let secret = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(secret.path(), "s3cret\n").unwrap();
    let file = secret.path().to_str().unwrap();
    let enable = [
        "social",
        "enable",
        "--tenant",
        "acme",
        "github",
        "--client-id",
        "gh",
        "--client-secret-file",
        file,
        "--no-verify",
    ];
    d.cli(&enable).ok();
    for args in [
        vec!["status"],
        vec!["tenant", "show", "acme"],
        vec!["tenant", "list"],
        vec!["app", "show", "--tenant", "acme", &client_id],
        vec!["app", "list", "--tenant", "acme"],
        vec!["key", "list", "--tenant", "acme"],
        vec!["user", "show", "--tenant", "acme", "ada@acme.test"],
        vec!["user", "list", "--tenant", "acme"],
        vec!["role", "list", "--tenant", "acme"],
        vec!["social", "list", "--tenant", "acme"],
    ] {
        let table = d.cli(&args).ok().stdout;
        let labels = table_labels(&table);
        assert!(!labels.is_empty(), "{args:?}: no table in {table}");
        let json = d.cli(&[args.clone(), vec!["-o", "json"]].concat()).ok().json();
        let record = if json.is_array() { json[0].clone() } else { json };
        for label in labels {
            let field = snake(&label);
            assert!(record.get(&field).is_some(), "{args:?}: the column {label:?} has no field {field:?} in {record}");
        }
    }
}

#[test]
fn errors_are_json_on_stderr_with_output_json() {
    let d = TestDaemon::start();
    let r = d.cli(&["tenant", "show", "nobody", "-o", "json"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    let e: serde_json::Value = serde_json::from_str(r.stderr.trim()).unwrap_or_else(|e| panic!("{e}: {}", r.stderr));
    assert_eq!((e["error"].as_str(), e["exit_code"].as_u64()), (Some("tenant_not_found"), Some(1)), "{e}");
    assert!(e["error_description"].as_str().unwrap().contains("nobody"), "{e}");
    // Failures on this side too: a usage error, an unreachable daemon.
    let r = d.cli(&["tenant", "update", "nobody", "-o", "json"]);
    let e: serde_json::Value = serde_json::from_str(r.stderr.trim()).unwrap_or_else(|e| panic!("{e}: {}", r.stderr));
    assert_eq!((e["error"].as_str(), r.code), (Some("usage"), 2), "{e}");
    let r = cli(std::path::Path::new("/nonexistent/admin.sock"), &["status", "-o", "json"]);
    let e: serde_json::Value = serde_json::from_str(r.stderr.trim()).unwrap_or_else(|e| panic!("{e}: {}", r.stderr));
    assert_eq!((e["error"].as_str(), r.code), (Some("unreachable"), 3), "{e}");
    // Tables keep their plain-text errors.
    let r = d.cli(&["tenant", "show", "nobody"]);
    assert!(r.stderr.starts_with("latchkey: "), "{}", r.stderr);
}

#[test]
fn a_terminal_that_reports_no_width_gets_whole_rows() {
    let d = TestDaemon::start();
    d.tenant("acme");
    // `script` gives the CLI a terminal; `stty cols 0` makes it report no width, as some
    // serial consoles and containers do.
    let cmd = format!(
        "stty cols 0; LATCHKEY_ADMIN_SOCKET='{}' '{}' tenant list",
        d.socket.display(),
        bin("latchkey").display()
    );
    let out = std::process::Command::new("script").args(["-qc", &cmd, "/dev/null"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("SLUG") && text.contains("REGISTRATION"), "headers whole, not one letter a line: {text}");
}
