//! Social login: `latchkey social enable|list|disable` through the real CLI; secrets from files
//! and standard input, sealed at rest, never printed.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::support::*;

fn secret_file(dir: &std::path::Path, text: &str) -> String {
    let p = dir.join("provider.secret");
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_owned()
}

#[test]
fn providers_are_enabled_listed_and_disabled_with_sealed_secrets() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let dir = tempfile::tempdir().unwrap();
    let file = secret_file(dir.path(), "gh-very-secret-value\n");
    let enabled = d
        .cli(&[
            "social",
            "enable",
            "--tenant",
            "acme",
            "github",
            "--client-id",
            "Iv1.abc",
            "--client-secret-file",
            &file,
            "--allowed-org",
            "acme",
            "-o",
            "json",
        ])
        .ok();
    assert!(!enabled.stdout.contains("gh-very-secret-value") && !enabled.stderr.contains("gh-very-secret-value"));
    let p = enabled.json();
    assert_eq!(p["provider"], "github");
    assert_eq!(p["callback_url"], format!("{}/acme/login/github/callback", d.base));

    // The secret on standard input, for an OIDC provider keyed by its label.
    let mut child = Command::new(bin("latchkey"))
        .args([
            "social",
            "enable",
            "--tenant",
            "acme",
            "oidc",
            "--name",
            "Work SSO",
            "--issuer",
            "https://sso.example.com",
            "--client-id",
            "cid",
            "--client-secret-file",
            "-",
        ])
        .env("LATCHKEY_ADMIN_SOCKET", &d.socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"oidc-secret-from-stdin\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("/login/work-sso/callback"), "the redirect URI to register is shown: {said}");

    let list = d.cli(&["social", "list", "--tenant", "acme", "-o", "json"]).ok();
    assert!(!list.stdout.contains("secret-value") && !list.stdout.contains("from-stdin"), "{}", list.stdout);
    let keys: Vec<String> =
        list.json().as_array().unwrap().iter().map(|p| p["provider"].as_str().unwrap().into()).collect();
    assert_eq!(keys, ["github", "work-sso"]);

    // Sealed at rest: neither secret appears in the database file's column.
    let sealed: Vec<Vec<u8>> = {
        let db = d.db();
        let mut stmt = db.prepare("SELECT secret_sealed FROM social_providers").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    for s in &sealed {
        let text = String::from_utf8_lossy(s);
        assert!(!text.contains("gh-very-secret-value") && !text.contains("oidc-secret-from-stdin"));
    }

    // The login page of a tenant with providers is covered by the flow tests; disabling needs --yes.
    let refused = d.cli(&["social", "disable", "--tenant", "acme", "github"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    d.cli(&["social", "disable", "--tenant", "acme", "github", "--yes"]).ok();
    let list = d.cli(&["social", "list", "--tenant", "acme", "-o", "json"]).ok().json();
    assert_eq!(list.as_array().unwrap().len(), 1);
}

#[test]
fn refused_providers_change_nothing() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let dir = tempfile::tempdir().unwrap();
    let file = secret_file(dir.path(), "s3cret");
    let before = d.snapshot();
    for (args, code, said) in [
        (vec!["facebook"], 1, "coming soon"),
        (vec!["twitter"], 1, "coming soon"),
        (vec!["myspace", "--client-id", "x", "--client-secret-file", &file], 2, "invalid value"),
        (vec!["oidc", "--client-id", "x", "--client-secret-file", &file], 1, "--name is required"),
        (vec!["google", "--client-id", "x", "--client-secret-file", &file, "--create-users"], 1, "open registration"),
        (
            vec!["google", "--client-id", "x", "--client-secret-file", &file, "--issuer", "http://evil.example"],
            1,
            "https",
        ),
        (vec!["github", "--client-id", "x", "--client-secret-file", "/no/such/file"], 1, "/no/such/file"),
        (vec!["github", "--client-id", "x"], 2, "--client-secret-file"),
    ] {
        let mut all = vec!["social", "enable", "--tenant", "acme"];
        all.extend(args.iter().copied());
        let r = d.cli(&all);
        assert_eq!(r.code, code, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(said), "{args:?}: {}", r.stderr);
    }
    assert_eq!(d.snapshot(), before, "nothing stored");
    let r = d.cli(&["social", "disable", "--tenant", "acme", "google", "--yes"]);
    assert!(r.stderr.contains("provider_not_found"), "{}", r.stderr);
}

#[test]
fn a_provider_of_another_tenant_does_nothing_here() {
    let d = TestDaemon::start();
    d.tenant("acme");
    d.tenant("beta");
    let dir = tempfile::tempdir().unwrap();
    let file = secret_file(dir.path(), "s3cret");
    d.cli(&["social", "enable", "--tenant", "acme", "github", "--client-id", "x", "--client-secret-file", &file]).ok();
    let r = http_get(&format!("{}/beta/login/github?request=whatever", d.base), None);
    assert_eq!(r.status, 404, "{}", r.body);
    assert!(r.body.contains("not available here"), "{}", r.body);
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
}
