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

[[tenant.app]]
name = "Dashboard"
type = "spa"
redirect_uris = ["http://localhost:5173/oidc-callback"]
cors_origins = ["http://localhost:5173"]
scopes = ["credentials"]

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
    assert_eq!(plan["changes"].as_array().unwrap().len(), 7, "{plan}");
    assert_eq!(
        plan["plan"][0],
        serde_json::json!({"action": "create", "kind": "tenant", "tenant": "acme", "name": "acme", "changes": []})
    );
    assert_eq!(d.snapshot(), before, "--dry-run changes nothing");

    let first = d.cli(&["apply", "-f", f, "-o", "json"]).ok().json();
    assert_eq!(first["changes"].as_array().unwrap().len(), 7);
    let created = first["created_apps"].as_array().unwrap();
    assert_eq!(created.len(), 3);
    let secrets = created.iter().filter(|a| a["client_secret"].is_string()).count();
    assert_eq!(secrets, 2, "confidential apps get a secret, once; the spa none: {created:?}");
    let second = d.cli(&["apply", "-f", f]).ok();
    assert!(second.stdout.contains("No changes"), "{}", second.stdout);
    assert_eq!(d.cli(&["tenant", "show", "beta", "-o", "json"]).ok().json()["registration"], "open");

    // A change in the file is an update in place.
    std::fs::write(&file, FILE.replace("Administrators", "People who run things")).unwrap();
    let third = d.cli(&["apply", "-f", f, "-o", "json"]).ok().json();
    assert_eq!(
        third["changes"],
        serde_json::json!(["update role acme/admin: description \"Administrators\" → \"People who run things\""])
    );
    assert_eq!(
        third["plan"][0]["changes"],
        serde_json::json!([{"field": "description", "old": "Administrators", "new": "People who run things"}])
    );
    std::fs::write(&file, FILE.replace("Administrators", "People who run things")).unwrap();

    // A list in the file replaces the app's list: the plan names what is added and removed.
    let lists = FILE.replace("Administrators", "People who run things").replace(
        r#"redirect_uris = ["https://portal.acme.test/oidc-callback"]"#,
        r#"redirect_uris = ["https://portal.acme.test/cb2", "https://portal.acme.test/cb3"]"#,
    );
    std::fs::write(&file, &lists).unwrap();
    let before = d.snapshot();
    let plan = d.cli(&["apply", "-f", f, "--dry-run", "-o", "json"]).ok().json();
    assert_eq!(d.snapshot(), before);
    assert_eq!(plan["plan"].as_array().unwrap().len(), 1, "{plan}");
    let step = &plan["plan"][0];
    assert_eq!(
        (step["action"].as_str(), step["kind"].as_str(), step["name"].as_str()),
        (Some("update"), Some("app"), Some("Portal"))
    );
    assert_eq!(
        step["changes"],
        serde_json::json!([{
            "field": "redirect_uris",
            "old": ["https://portal.acme.test/oidc-callback"],
            "new": ["https://portal.acme.test/cb2", "https://portal.acme.test/cb3"],
            "added": ["https://portal.acme.test/cb2", "https://portal.acme.test/cb3"],
            "removed": ["https://portal.acme.test/oidc-callback"],
        }])
    );
    let line = plan["changes"][0].as_str().unwrap();
    assert!(line.contains("removes \"https://portal.acme.test/oidc-callback\"") && line.contains("replaces"), "{line}");
    let table = d.cli(&["apply", "-f", f, "--dry-run"]).ok();
    assert!(
        table.stdout.contains("update app acme/Portal") && table.stdout.contains("redirect_uris"),
        "{}",
        table.stdout
    );
    assert!(table.stdout.contains("− https://portal.acme.test/oidc-callback"), "{}", table.stdout);
    assert!(table.stdout.contains("+ https://portal.acme.test/cb3"), "{}", table.stdout);
    d.cli(&["apply", "-f", f]).ok();
    let portal = d.cli(&["app", "list", "--tenant", "acme", "-o", "json"]).ok().json();
    let portal = portal.as_array().unwrap().iter().find(|a| a["name"] == "Portal").unwrap().clone();
    assert_eq!(
        portal["redirect_uris"],
        serde_json::json!(["https://portal.acme.test/cb2", "https://portal.acme.test/cb3"])
    );

    // Apply never deletes what the file leaves out: a tenant, an app, a role made by hand stay.
    d.cli(&["role", "create", "--tenant", "acme", "by-hand"]).ok();
    d.cli(&["app", "create", "--tenant", "acme", "--name", "By hand", "--type", "m2m"]).ok();
    d.cli(&["tenant", "create", "manual"]).ok();
    assert!(d.cli(&["apply", "-f", f]).ok().stdout.contains("No changes"));
    assert_eq!(d.cli(&["app", "list", "--tenant", "acme", "-o", "json"]).ok().json().as_array().unwrap().len(), 4);
    d.cli(&["tenant", "show", "manual"]).ok();

    // Export, then apply to an empty daemon: the same configuration.
    let exported = d.cli(&["export", "--tenant", "acme"]).ok().stdout;
    let body: String = exported.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n");
    assert!(body.contains("[[tenant.app]]") && !body.contains("secret"), "no secret, no social provider: {exported}");
    let other = TestDaemon::start();
    let copy = dir.path().join("acme.toml");
    std::fs::write(&copy, &exported).unwrap();
    // In table mode the new secrets go to stdout with the plan, as `app create`'s do: they must
    // survive `2>/dev/null`.
    let applied = other.cli(&["apply", "-f", copy.to_str().unwrap()]).ok();
    let created = applied.stdout.split("CLIENT SECRET").nth(1).unwrap_or_else(|| panic!("{}", applied.stdout));
    assert_eq!(created.lines().filter(|l| l.contains("acme")).count(), 4, "apps get new secrets, printed once");
    assert!(!applied.stderr.contains("CLIENT SECRET"), "{}", applied.stderr);
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
        (
            "[[tenant]]\nslug = \"acme\"\n[[tenant.app]]\nname = \"Twice\"\ntype = \"m2m\"\n[[tenant.app]]\nname = \"Twice\"\ntype = \"m2m\"\n",
            "app_name_taken",
            1,
        ),
    ] {
        std::fs::write(&file, text).unwrap();
        let r = d.cli(&["apply", "-f", f]);
        assert_eq!(r.code, code, "{text}: {}", r.stderr);
        assert!(r.stderr.contains(expect), "{text}: {}", r.stderr);
    }
    assert_eq!(d.snapshot(), before);
}

const SOCIAL: &str = r#"
[[tenant]]
slug = "acme"
registration = "invite"

[[tenant.social]]
kind = "github"
client_id = "Iv1.abc"
client_secret_file = "github.secret"
allowed_orgs = ["acme"]

[[tenant.social]]
kind = "oidc"
name = "Work SSO"
client_id = "sso-client"
client_secret_file = "sso.secret"
issuer = "https://sso.acme.test"
"#;

#[test]
fn social_providers_as_code_without_their_secrets() {
    let d = TestDaemon::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("github.secret"), "gh-secret-1\n").unwrap();
    std::fs::write(dir.path().join("sso.secret"), "sso-secret-1").unwrap();
    let file = dir.path().join("latchkey.toml");
    std::fs::write(&file, SOCIAL).unwrap();
    let f = file.to_str().unwrap();

    let dry = d.cli(&["apply", "-f", f, "--dry-run"]).ok();
    assert!(dry.stdout.contains("create social acme/github") && dry.stdout.contains("create social acme/work-sso"));
    let applied = d.cli(&["apply", "-f", f]).ok();
    assert!(!applied.stdout.contains("gh-secret-1") && !applied.stderr.contains("gh-secret-1"));
    let list = d.cli(&["social", "list", "--tenant", "acme", "-o", "json"]).ok().json();
    assert_eq!(list.as_array().unwrap().len(), 2);
    assert!(d.cli(&["apply", "-f", f]).ok().stdout.contains("No changes"), "idempotent, secrets included");

    // A changed setting and a new secret: the plan names each change; --dry-run stores nothing.
    std::fs::write(&file, SOCIAL.replace("allowed_orgs = [\"acme\"]", "allowed_orgs = [\"acme\", \"labs\"]")).unwrap();
    std::fs::write(dir.path().join("sso.secret"), "sso-secret-2").unwrap();
    let before = d.snapshot();
    let plan = d.cli(&["apply", "-f", f, "--dry-run", "-o", "json"]).ok().json();
    let lines = plan["changes"].to_string();
    assert!(lines.contains(r#"allowed_orgs [\"acme\"] → [\"acme\", \"labs\"] (adds \"labs\""#), "{lines}");
    assert!(lines.contains("work-sso: client secret replaced"), "{lines}");
    let orgs = plan["plan"].as_array().unwrap().iter().find(|s| s["name"] == "github").unwrap();
    assert_eq!(orgs["changes"][0]["added"], serde_json::json!(["labs"]));
    let table = d.cli(&["apply", "-f", f, "--dry-run"]).ok().stdout;
    assert!(table.contains("allowed_orgs") && table.contains("+ labs") && table.contains("client_secret"), "{table}");
    assert!(!table.contains("sso-secret"), "{table}");
    assert_eq!(d.snapshot(), before);
    d.cli(&["apply", "-f", f]).ok();
    assert!(d.cli(&["apply", "-f", f]).ok().stdout.contains("No changes"));

    // Export: no secret, but the file each secret is to be read from. Applied back here (no such
    // file) it changes nothing: the stored secrets are kept, and the CLI says so.
    let export = d.cli(&["export", "--tenant", "acme"]).ok().stdout;
    assert!(export.contains("[[tenant.social]]") && export.contains("Work SSO"), "{export}");
    assert!(!export.contains("secret-1") && !export.contains("secret-2"), "{export}");
    assert!(export.contains("client_secret_file = \"acme-github.secret\""), "{export}");
    assert!(export.contains("client_secret_file = \"acme-work-sso.secret\""), "{export}");
    let exported = dir.path().join("export.toml");
    std::fs::write(&exported, &export).unwrap();
    let back = d.cli(&["apply", "-f", exported.to_str().unwrap()]).ok();
    assert!(back.stdout.contains("No changes"), "{}", back.stdout);
    assert!(back.stderr.contains("acme-github.secret does not exist: an existing provider keeps"), "{}", back.stderr);

    // On a new install the export applies once each named file holds its secret.
    let fresh = TestDaemon::start();
    let refused = fresh.cli(&["apply", "-f", exported.to_str().unwrap()]);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(refused.stderr.contains("acme-github.secret does not exist"), "{}", refused.stderr);
    std::fs::write(dir.path().join("acme-github.secret"), "gh-secret-1\n").unwrap();
    std::fs::write(dir.path().join("acme-work-sso.secret"), "sso-secret-2\n").unwrap();
    fresh.cli(&["apply", "-f", exported.to_str().unwrap()]).ok();
    assert_eq!(
        fresh.cli(&["social", "list", "--tenant", "acme", "-o", "json"]).ok().json().as_array().unwrap().len(),
        2
    );

    // Sealed at rest.
    let sealed: Vec<Vec<u8>> =
        d.sql().rows("SELECT secret_sealed FROM social_providers").iter().map(|r| unhex(&r[0])).collect();
    assert!(sealed.iter().all(|s| !String::from_utf8_lossy(s).contains("secret-")));
}

#[test]
fn bad_social_entries_refuse_the_whole_file() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.secret"), "x").unwrap();
    let file = dir.path().join("latchkey.toml");
    let entry = |body: &str| {
        format!("[[tenant]]\nslug = \"acme\"\n\n[[tenant.role]]\nname = \"new-role\"\n\n[[tenant.social]]\n{body}\n")
    };
    let before = d.snapshot();
    for (body, said) in [
        ("kind = \"facebook\"\nclient_id = \"x\"\nclient_secret_file = \"s.secret\"", "coming soon"),
        ("kind = \"github\"\nclient_id = \"x\"", "needs client_secret_file"),
        (
            "kind = \"github\"\nclient_id = \"x\"\nclient_secret_file = \"missing.secret\"",
            "missing.secret does not exist",
        ),
        ("kind = \"github\"\nclient_id = \"x\"\nclient_secret = \"inline\"", "do not write the secret"),
        (
            "kind = \"google\"\nclient_id = \"x\"\nclient_secret_file = \"s.secret\"\ncreate_users = true",
            "open registration",
        ),
    ] {
        std::fs::write(&file, entry(body)).unwrap();
        let r = d.cli(&["apply", "-f", file.to_str().unwrap()]);
        assert_ne!(r.code, 0, "{body}");
        assert!(r.stderr.contains(said), "{body}: {}", r.stderr);
        assert_eq!(d.snapshot(), before, "{body}: nothing applied, not even the role");
    }
}

/// A tenant's logo as code: `logo_file` names a PNG or SVG next to the file; export names one to
/// save, and applying it while that file is missing keeps the logo.
#[test]
fn a_tenant_logo_travels_by_file_name() {
    let d = TestDaemon::start();
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    std::fs::write(dir.path().join("brand.svg"), crate::languages::SVG_LOGO).unwrap();
    std::fs::write(
        dir.path().join("bad.svg"),
        r#"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>"#,
    )
    .unwrap();
    let file = |logo: &str| {
        let f = path("acme.toml");
        std::fs::write(&f, format!("[[tenant]]\nslug = \"acme\"\nlogo_file = \"{logo}\"\n")).unwrap();
        f
    };

    let r = d.cli(&["apply", "-f", &file("brand.svg"), "-o", "json"]).ok().json();
    let sha = d.cli(&["tenant", "show", "acme", "-o", "json"]).ok().json()["logo_sha256"].as_str().unwrap().to_owned();
    assert!(r.to_string().contains(&sha), "the plan names the new logo: {r}");
    let logo = http_get(&format!("{}/acme/logo", d.base), None);
    assert_eq!((logo.status, logo.body.as_str()), (200, crate::languages::SVG_LOGO));

    // Refused whole, naming why; nothing changes.
    let before = d.snapshot();
    let bad = d.cli(&["apply", "-f", &file("bad.svg")]);
    assert_eq!(bad.code, 1);
    assert!(bad.stderr.contains("script"), "{}", bad.stderr);
    assert_eq!(d.snapshot(), before);

    // Export names the file; applied where it is missing, or where it holds the same logo, nothing
    // changes.
    let exported = d.cli(&["export", "--tenant", "acme"]).ok().stdout;
    assert!(exported.contains("logo_file = \"acme-logo.svg\""), "{exported}");
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = elsewhere.path().join("acme.toml");
    std::fs::write(&copy, &exported).unwrap();
    let again = d.cli(&["apply", "-f", copy.to_str().unwrap()]).ok();
    assert!(again.stdout.contains("No changes"), "{}", again.stdout);
    assert!(
        again.stderr.contains("acme-logo.svg does not exist") || again.stdout.contains("acme-logo.svg does not exist")
    );
    std::fs::write(elsewhere.path().join("acme-logo.svg"), crate::languages::SVG_LOGO).unwrap();
    assert!(d.cli(&["apply", "-f", copy.to_str().unwrap()]).ok().stdout.contains("No changes"));

    // `none` removes it.
    d.cli(&["apply", "-f", &file("none")]).ok();
    assert_eq!(d.cli(&["tenant", "show", "acme", "-o", "json"]).ok().json()["logo_sha256"], serde_json::Value::Null);
    assert_eq!(d.sql().i64("SELECT count(*) FROM tenant_logos"), 0);
}
