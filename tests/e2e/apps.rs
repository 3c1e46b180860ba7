//! Client applications: IDs, secrets shown once and stored hashed, redirect URI rules.

use crate::support::*;

fn sha256_hex(s: &str) -> String {
    let out = std::process::Command::new("sha256sum")
        .arg("-")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(s.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap().to_owned()
}

#[test]
fn confidential_app_secret_is_shown_once_and_stored_hashed() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let app = d
        .cli(&[
            "app",
            "create",
            "--tenant",
            "acme",
            "--name",
            "Portal",
            "--type",
            "web",
            "--redirect-uri",
            "https://portal.acme.com/oidc-callback",
            "--post-logout-redirect-uri",
            "https://portal.acme.com/",
            "--cors-origin",
            "https://portal.acme.com",
            "-o",
            "json",
        ])
        .ok()
        .json();
    let client_id = app["client_id"].as_str().unwrap().to_owned();
    let secret = app["client_secret"].as_str().unwrap().to_owned();
    assert_eq!(client_id.len(), 24);
    assert!(client_id.chars().all(|c| c.is_ascii_alphanumeric()), "{client_id}");
    assert_eq!(secret.len(), 43);
    assert_eq!(app["type"], "web");
    assert_eq!(app["redirect_uris"][0], "https://portal.acme.com/oidc-callback");

    let (hash, stored_text): (Vec<u8>, String) = d
        .db()
        .query_row(
            "SELECT secret_hash, redirect_uris || name FROM applications WHERE client_id = ?1",
            [&client_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hex, sha256_hex(&secret), "only the SHA-256 of the secret is stored");
    assert!(!d.snapshot().0.contains(&secret), "the secret itself is nowhere in the database");

    let shown = d.cli(&["app", "show", "--tenant", "acme", &client_id, "-o", "json"]).ok().json();
    assert!(shown.get("client_secret").is_none(), "show never reveals a secret");
    assert!(!stored_text.is_empty());

    let rotated = d.cli(&["app", "rotate-secret", "--tenant", "acme", &client_id, "-o", "json"]).ok().json();
    let new_secret = rotated["client_secret"].as_str().unwrap();
    assert_ne!(new_secret, secret);
    let hash2: Vec<u8> = d.db().query_row("SELECT secret_hash FROM applications", [], |r| r.get(0)).unwrap();
    assert_ne!(hash2, hash);

    let listed = d.cli(&["app", "list", "--tenant", "acme", "-o", "json"]).ok().json();
    assert_eq!(listed[0]["client_id"], client_id.as_str());
    d.cli(&["app", "delete", "--tenant", "acme", &client_id, "--yes"]).ok();
    assert_eq!(d.cli(&["app", "list", "--tenant", "acme", "-o", "json"]).ok().json(), serde_json::json!([]));
}

#[test]
fn public_and_m2m_apps() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let spa = d
        .cli(&[
            "app",
            "create",
            "--tenant",
            "acme",
            "--name",
            "SPA",
            "--type",
            "spa",
            "--redirect-uri",
            "http://localhost:5173/oidc-callback",
            "-o",
            "json",
        ])
        .ok()
        .json();
    assert!(spa.get("client_secret").is_none());
    assert_eq!(spa["confidential"], false);
    let r = d.cli(&["app", "rotate-secret", "--tenant", "acme", spa["client_id"].as_str().unwrap()]);
    assert_eq!(r.code, 1, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    assert!(r.stderr.contains("not_confidential"), "{}", r.stderr);

    let m2m = d
        .cli(&[
            "app",
            "create",
            "--tenant",
            "acme",
            "--name",
            "Importer",
            "--type",
            "m2m",
            "--scope",
            "users:invite",
            "-o",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(m2m["scopes"][0], "users:invite");
    assert!(m2m["client_secret"].is_string());

    let table = d
        .cli(&[
            "app",
            "create",
            "--tenant",
            "acme",
            "--name",
            "Web2",
            "--type",
            "web",
            "--redirect-uri",
            "https://w.example/cb",
        ])
        .ok();
    assert!(table.stdout.contains("client secret"), "{}", table.stdout);
    assert!(table.stderr.contains("shown this once"), "{}", table.stderr);
}

#[test]
fn invalid_redirect_uris_and_origins_are_refused_and_nothing_stored() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let before = d.snapshot();
    let cases: &[(&[&str], &str)] = &[
        (&["--type", "web", "--redirect-uri", "http://portal.acme.com/oidc-callback"], "invalid_redirect_uri"),
        (&["--type", "web", "--redirect-uri", "https://portal.acme.com/cb#x"], "invalid_redirect_uri"),
        (&["--type", "web", "--redirect-uri", "https://*.acme.com/cb"], "invalid_redirect_uri"),
        (&["--type", "web", "--redirect-uri", "javascript:alert(1)"], "invalid_redirect_uri"),
        (&["--type", "web", "--redirect-uri", "data:text/html,x"], "invalid_redirect_uri"),
        (&["--type", "web", "--redirect-uri", "/relative/cb"], "invalid_redirect_uri"),
        (&["--type", "web"], "invalid_redirect_uri"),
        (&["--type", "m2m", "--redirect-uri", "https://a.example/cb"], "invalid_redirect_uri"),
        (&["--type", "spa", "--redirect-uri", "https://a.example/cb", "--cors-origin", "*"], "invalid_origin"),
        (
            &["--type", "spa", "--redirect-uri", "https://a.example/cb", "--cors-origin", "https://a.example/path"],
            "invalid_origin",
        ),
        (&["--type", "m2m", "--scope", "admin:everything"], "invalid_scope"),
    ];
    for (extra, code) in cases {
        let mut args = vec!["app", "create", "--tenant", "acme", "--name", "X"];
        args.extend_from_slice(extra);
        let r = d.cli(&args);
        assert_eq!(r.code, 1, "{extra:?}: {}", r.stderr);
        assert!(r.stderr.contains(code), "{extra:?} should say {code}: {}", r.stderr);
    }
    let r = d.cli(&["app", "create", "--tenant", "nope", "--name", "X", "--type", "m2m"]);
    assert!(r.stderr.contains("tenant_not_found"), "{}", r.stderr);
    assert_eq!(d.snapshot(), before);
}
