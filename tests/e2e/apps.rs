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

    let sql = d.sql();
    let hash = sql.bytes(&format!("SELECT secret_hash FROM applications WHERE client_id = '{client_id}'"));
    let stored_text =
        sql.text(&format!("SELECT redirect_uris || name FROM applications WHERE client_id = '{client_id}'"));
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hex, sha256_hex(&secret), "only the SHA-256 of the secret is stored");
    assert!(!d.snapshot().0.contains(&secret), "the secret itself is nowhere in the database");

    let shown = d.cli(&["app", "show", "--tenant", "acme", &client_id, "-o", "json"]).ok().json();
    assert!(shown.get("client_secret").is_none(), "show never reveals a secret");
    assert!(!stored_text.is_empty());

    let rotated = d.cli(&["app", "rotate-secret", "--tenant", "acme", &client_id, "-o", "json"]).ok().json();
    let new_secret = rotated["client_secret"].as_str().unwrap();
    assert_ne!(new_secret, secret);
    let hash2 = d.sql().bytes("SELECT secret_hash FROM applications");
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

fn create(d: &TestDaemon, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["app", "create", "--tenant", "acme", "-o", "json"];
    all.extend_from_slice(args);
    d.cli(&all).ok().json()
}

#[test]
fn app_update_edits_name_and_lists_and_refuses_bad_input_whole() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let app = create(&d, &["--name", "Portal", "--type", "web", "--redirect-uri", "https://p.acme.test/cb"]);
    let id = app["client_id"].as_str().unwrap().to_owned();
    create(&d, &["--name", "Other", "--type", "spa", "--redirect-uri", "https://o.acme.test/cb"]);
    let upd = |args: &[&str]| {
        let mut all = vec!["app", "update", "--tenant", "acme", id.as_str()];
        all.extend_from_slice(args);
        d.cli(&all)
    };

    let changed = upd(&[
        "--name",
        "Customer Portal",
        "--add-redirect-uri",
        "https://p.acme.test/cb2",
        "--add-redirect-uri",
        "https://p.acme.test/cb",
        "--add-post-logout-redirect-uri",
        "https://p.acme.test/bye",
        "--add-cors-origin",
        "https://p.acme.test",
        "--add-scope",
        "credentials",
        "-o",
        "json",
    ])
    .ok()
    .json();
    assert_eq!(changed["client_id"], id.as_str());
    assert_eq!(changed["name"], "Customer Portal");
    assert_eq!(changed["redirect_uris"], serde_json::json!(["https://p.acme.test/cb", "https://p.acme.test/cb2"]));
    assert_eq!(changed["post_logout_redirect_uris"], serde_json::json!(["https://p.acme.test/bye"]));
    assert_eq!(changed["cors_origins"], serde_json::json!(["https://p.acme.test"]));
    assert_eq!(changed["scopes"], serde_json::json!(["credentials"]));
    assert_eq!(d.cli(&["app", "show", "--tenant", "acme", &id, "-o", "json"]).ok().json(), changed);
    // The secret is untouched; the table is `app show`'s.
    let table = upd(&["--remove-redirect-uri", "https://p.acme.test/cb2", "--remove-scope", "credentials"]).ok().stdout;
    assert!(table.contains("Customer Portal") && !table.contains("cb2") && table.contains("confidential"), "{table}");

    // Every refusal: exit 1, the code on stderr, the database as it was.
    let before = d.snapshot();
    for (args, code) in [
        (vec!["--remove-redirect-uri", "https://p.acme.test/nope"], "value_not_present"),
        (vec!["--remove-cors-origin", "https://x.acme.test"], "value_not_present"),
        (vec!["--remove-redirect-uri", "https://p.acme.test/cb"], "invalid_redirect_uri"),
        (vec!["--add-redirect-uri", "https://*.acme.test/cb"], "invalid_redirect_uri"),
        (vec!["--add-redirect-uri", "http://p.acme.test/cb"], "invalid_redirect_uri"),
        (vec!["--add-cors-origin", "https://p.acme.test/path"], "invalid_origin"),
        (vec!["--add-scope", "root"], "invalid_scope"),
        (vec!["--name", "Other"], "app_name_taken"),
        (vec!["--name", "  "], "invalid_input"),
        // A valid change together with a bad one: nothing is applied.
        (vec!["--name", "Fresh", "--remove-scope", "users:invite"], "value_not_present"),
    ] {
        let r = upd(&args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(code), "{args:?}: {}", r.stderr);
    }
    let r = d.cli(&["app", "update", "--tenant", "acme", "NoSuchClient", "--name", "X"]);
    assert!(r.code == 1 && r.stderr.contains("app_not_found"), "{}", r.stderr);
    let r = upd(&[]);
    assert_eq!(r.code, 2, "nothing to change is a usage error: {}", r.stderr);
    let (status, body) = d.admin_raw(&admin_request(
        "PATCH",
        &format!("/admin/v1/tenants/acme/apps/{id}"),
        Some("application/json"),
        br#"{"type":"spa"}"#,
    ));
    assert_eq!(status, 400, "the type cannot change: {body}");
    assert_eq!(d.snapshot(), before);
}

#[test]
fn app_names_are_unique_per_tenant() {
    let d = TestDaemon::start();
    d.tenant("acme");
    d.tenant("beta");
    create(&d, &["--name", "Importer", "--type", "m2m"]);
    let before = d.snapshot();
    let r = d.cli(&["app", "create", "--tenant", "acme", "--name", "Importer", "--type", "m2m"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("app_name_taken") && r.stderr.contains("Importer"), "{}", r.stderr);
    let (status, body) = d.admin_raw(&admin_request(
        "POST",
        "/admin/v1/tenants/acme/apps",
        Some("application/json"),
        br#"{"name":" Importer ","type":"m2m"}"#,
    ));
    assert_eq!((status, body["error"].as_str()), (409, Some("app_name_taken")), "names are compared trimmed: {body}");
    assert_eq!(d.snapshot(), before);
    // Another tenant may use the name.
    d.cli(&["app", "create", "--tenant", "beta", "--name", "Importer", "--type", "m2m"]).ok();
}
