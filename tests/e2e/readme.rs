//! The README's walk-through, run as written: every `sh` block from "Walk-through" to "Running in
//! production", in order, in one bash (with `set -euo pipefail`, so any command that fails fails
//! the test) in the directory of a `latchkeyd --dev`, with the real CLI, curl and jq. What the
//! README leaves to a person is done here, and each change to the text is named:
//!
//! - `alias latchkey=...` names the binaries this test run built (the README's release build);
//! - `localhost:8080` becomes a free port (the quick-start test may hold 8080 at the same time);
//! - "Open the link in a browser": the software authenticator registers Ada's passkey with the
//!   last invite link the script printed, and `CREDENTIAL_ID` becomes that passkey's ID;
//! - `social enable ... google` gets `--no-verify`: the check fetches Google's discovery
//!   document, and the tests run without the internet.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::authenticator::Soft;
use crate::dev_mode::start_dev;
use crate::support::*;

/// Where the script waits for the browser step.
const BROWSER_STEP: &str = "# After Ada has registered a passkey in the browser:\n";

/// The `sh` blocks of the walk-through, joined in order.
fn walk_through() -> String {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let start = readme.find("\n## Walk-through\n").expect("a Walk-through section");
    let end = readme[start..].find("\n## Running in production\n").map(|e| start + e).expect("its end");
    let mut script = String::new();
    let mut inside = false;
    for line in readme[start..end].lines() {
        match (inside, line.trim_end()) {
            (false, "```sh") => inside = true,
            (true, "```") => inside = false,
            (true, _) => {
                script.push_str(line);
                script.push('\n');
            }
            _ => {}
        }
    }
    script
}

/// `text` with `from` replaced, which must be there: an edit of the README that removes it
/// must update this test too.
fn replaced(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "the README's walk-through no longer has {from:?}: update tests/e2e/readme.rs");
    text.replace(from, to)
}

#[test]
fn readme_walk_through_runs_as_written() {
    if sqlite_only("latchkeyd --dev keeps its data in SQLite") {
        return;
    }
    for tool in ["bash", "curl", "jq"] {
        assert!(
            Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().unwrap().status.success(),
            "{tool}"
        );
    }
    let cwd = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port().to_string();
    let listen = format!("127.0.0.1:{port}");
    let origin = format!("http://localhost:{port}");
    let mut dev = start_dev(cwd.path(), &listen, None);
    assert!(dev.banner.iter().any(|l| l.starts_with("Stop with")), "{:?}", dev.banner);

    let mut script = walk_through();
    script = replaced(
        &script,
        "alias latchkey=$PWD/target/release/latchkey\n",
        &format!("alias latchkey={}\n", bin("latchkey").display()),
    );
    script = replaced(&script, "localhost:8080", &format!("localhost:{port}"));
    script = replaced(
        &script,
        BROWSER_STEP,
        "echo BROWSER-STEP\nwhile [ ! -s .credential ]; do sleep 0.05; done\nCREDENTIAL_ID=$(cat .credential)\n",
    );
    script = replaced(&script, " CREDENTIAL_ID\n", " \"$CREDENTIAL_ID\"\n");
    script = replaced(&script, "--allowed-domain acme.com\n", "--allowed-domain acme.com --no-verify\n");
    let script = format!("set -euo pipefail\nshopt -s expand_aliases\n{script}echo WALK-THROUGH-DONE\n");
    std::fs::write(cwd.path().join("walk-through.sh"), &script).unwrap();

    let mut bash = Command::new("bash")
        .arg("walk-through.sh")
        .current_dir(cwd.path())
        .env_remove("LATCHKEY_ADMIN_SOCKET")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = bash.stderr.take().unwrap();
    let errors = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let mut out = BufReader::new(bash.stdout.take().unwrap());
    let mut printed = String::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let mut line = String::new();
        if out.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if line.trim_end() == "BROWSER-STEP" {
            // The browser: the last invite link printed (the reinvite's; it replaced the first).
            let prefix = format!("{origin}/acme/invite/");
            let link = printed.split_whitespace().rfind(|w| w.starts_with(&prefix)).expect("an invite link");
            let token = link.rsplit('/').next().unwrap();
            let mut soft = Soft::new(&origin);
            let headers = [("Origin", origin.as_str())];
            let body = json!({"username": "ada@example.com", "display_name": "Ada Lovelace", "invite": token});
            let start = send_json("POST", &format!("{origin}/acme/register/start"), &body, &headers);
            assert_eq!(start.status, 200, "{}", start.body);
            let options = start.json();
            let credential = soft.create(&options, &Default::default());
            let finish = send_json(
                "POST",
                &format!("{origin}/acme/register/finish"),
                &json!({"credential": credential, "challenge": options["challenge"]}),
                &headers,
            );
            assert_eq!(finish.status, 201, "{}", finish.body);
            let list = Command::new(bin("latchkey"))
                .args(["credential", "list", "--tenant", "acme", "ada@example.com", "-o", "json"])
                .current_dir(cwd.path())
                .env_remove("LATCHKEY_ADMIN_SOCKET")
                .output()
                .unwrap();
            let list: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
            let id = list[0]["id"].as_str().expect("Ada's passkey").to_owned();
            let mut f = std::fs::File::create(cwd.path().join(".credential")).unwrap();
            writeln!(f, "{id}").unwrap();
        }
        printed.push_str(&line);
        assert!(Instant::now() < deadline, "the walk-through takes too long:\n{printed}");
    }
    let status = bash.wait().unwrap();
    let errors = errors.join().unwrap();
    let _ = dev.child.kill();
    let _ = dev.child.wait();
    assert!(status.success(), "the walk-through failed ({status}):\n--- stdout\n{printed}\n--- stderr\n{errors}");
    assert!(printed.contains("WALK-THROUGH-DONE"), "{printed}");
    // A few of the things it did, as a reader would check them.
    assert!(printed.contains(&format!("{origin}/acme")), "the issuer: {printed}");
    assert!(printed.contains("\"access_token\""), "a client-credentials token: {printed}");
    assert!(printed.contains("Open ") && printed.contains("/acme/device"), "the device flow: {printed}");
}
