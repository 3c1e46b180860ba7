//! `latchkey apply` / `latchkey export`.

use crate::support::*;

const FILE: &str = r#"
[[tenant]]
slug = "acme"
name = "Acme Corp"
registration = "invite"

[[tenant.role]]
name = "admin"
description = "Administrators"

[[tenant.role]]
name = "staff"

[[tenant.app]]
name = "Portal"
type = "web"
redirect_uris = ["https://portal.acme.test/oidc-callback"]
post_logout_redirect_uris = ["https://portal.acme.test/"]

[[tenant.app]]
name = "Importer"
type = "m2m"
scopes = ["users:invite"]

[[tenant]]
slug = "beta"
registration = "open"
"#;

#[test]
fn apply_is_idempotent_and_export_round_trips() {
    let d = TestDaemon::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("latchkey.toml");
    std::fs::write(&file, FILE).unwrap();
    let f = file.to_str().unwrap();

    let before = d.snapshot();
    let plan = d.cli(&["apply", "-f", f, "--dry-run", "-o", "json"]).ok().json();
    assert_eq!(plan["dry_run"], true);
    assert_eq!(plan["changes"].as_array().unwrap().len(), 6, "{plan}");
    assert_eq!(d.snapshot(), before, "--dry-run changes nothing");

    let first = d.cli(&["apply", "-f", f, "-o", "json"]).ok().json();
    assert_eq!(first["changes"].as_array().unwrap().len(), 6);
    let created = first["created_apps"].as_array().unwrap();
    assert_eq!(created.len(), 2);
    assert!(created.iter().all(|a| a["client_secret"].is_string()), "confidential apps get a secret, once");
    let second = d.cli(&["apply", "-f", f]).ok();
    assert!(second.stdout.contains("No changes"), "{}", second.stdout);
    assert_eq!(d.cli(&["tenant", "show", "beta", "-o", "json"]).ok().json()["registration"], "open");

    // A change in the file is an update in place.
    std::fs::write(&file, FILE.replace("Administrators", "People who run things")).unwrap();
    let third = d.cli(&["apply", "-f", f, "-o", "json"]).ok().json();
    assert_eq!(third["changes"], serde_json::json!(["update role acme/admin: description \"People who run things\""]));

    // Export, then apply to an empty daemon: the same configuration.
    let exported = d.cli(&["export", "--tenant", "acme"]).ok().stdout;
    assert!(exported.contains("[[tenant.app]]") && !exported.contains("secret"), "{exported}");
    let other = TestDaemon::start();
    let copy = dir.path().join("acme.toml");
    std::fs::write(&copy, &exported).unwrap();
    let applied = other.cli(&["apply", "-f", copy.to_str().unwrap(), "-o", "json"]).ok().json();
    assert_eq!(applied["created_apps"].as_array().unwrap().len(), 2, "apps get new secrets, printed once");
    assert_eq!(other.cli(&["export", "--tenant", "acme"]).ok().stdout, exported);
    assert!(other.cli(&["apply", "-f", copy.to_str().unwrap()]).ok().stdout.contains("No changes"));

    // Bad files are refused whole, naming the problem.
    let before = d.snapshot();
    for (text, expect, code) in [
        ("[[tenant]]\nslug = \"x\"\ncolour = \"red\"\n", "colour", 2),
        ("[[tenant]]\nslug = \"Bad Slug\"\n", "invalid_slug", 1),
        (
            "[[tenant]]\nslug = \"acme\"\n[[tenant.app]]\nname = \"Portal\"\ntype = \"spa\"\nredirect_uris = [\"https://x.test/cb\"]\n",
            "type cannot change",
            1,
        ),
        ("[[tenant]]\nslug = \"new\"\n[[tenant.role]]\nname = \"Not Valid\"\n", "not a role name", 1),
    ] {
        std::fs::write(&file, text).unwrap();
        let r = d.cli(&["apply", "-f", f]);
        assert_eq!(r.code, code, "{text}: {}", r.stderr);
        assert!(r.stderr.contains(expect), "{text}: {}", r.stderr);
    }
    assert_eq!(d.snapshot(), before);
}
