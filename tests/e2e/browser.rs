//! The pages in a real browser: headless Chromium (Debian's package) driven by playwright-core
//! from npm, with CDP virtual authenticators standing in for a platform passkey and a USB key.

use std::process::Command;

use crate::support::*;

#[test]
fn invite_to_account_to_username_less_sign_in_in_chromium() {
    assert!(
        std::path::Path::new(&std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into())).exists(),
        "Chromium is not installed: run `bash scripts/test.sh`, which installs Debian's chromium package"
    );
    assert!(
        repo_root().join("tests/js/node_modules/playwright-core").exists(),
        "playwright-core is not installed: run `bash scripts/test.sh` (npm ci in tests/js)"
    );
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let token = site.invite("ada@acme.test", "Ada Lovelace");
    let invite_url = format!("{}/invite/{token}", site.base);
    let shots = std::env::var("LATCHKEY_SCREENSHOTS").ok();
    let mut cmd = Command::new("node");
    cmd.arg(repo_root().join("tests/js/browser-passkeys.mjs")).arg(&site.base).arg(&invite_url);
    if let Some(dir) = &shots {
        cmd.arg(dir);
    }
    let out: Run = cmd.output().expect("node").into();
    let seen: serde_json::Value = serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("browser script output is not JSON ({e}): {}\n{}", out.stdout, out.stderr));
    assert_eq!(seen["ok"], true, "{seen:#}\n{}", out.stderr);

    assert!(seen["csp"].as_str().unwrap().contains("frame-ancestors 'none'"));
    assert!(seen["csp"].as_str().unwrap().contains("script-src 'self'"));
    assert_eq!(seen["invitePage"], "Create your passkey");
    assert_eq!(seen["afterRegister"], serde_json::json!(["platform"]));
    assert_eq!(seen["adviceShownWithOne"], true, "the page recommends a second credential");
    assert_eq!(seen["afterAdd"], serde_json::json!(["platform", "roaming"]));
    assert_eq!(seen["adviceShownWithTwo"], false);
    assert!(seen["devices"][0].as_str().unwrap().contains("Chrome on Linux"), "{}", seen["devices"]);
    assert!(seen["names"].as_array().unwrap().iter().any(|n| n == "Blue YubiKey"));
    assert_eq!(seen["lastRemoveDisabled"], true, "the last credential cannot be removed");
    assert_eq!(seen["signedOutHeading"], "Sign in");
    assert_eq!(seen["signedInAgain"], "Your passkeys");
    assert!(seen["cancelMessage"].as_str().unwrap().contains("cancelled or timed out"), "{}", seen["cancelMessage"]);
    assert_eq!(seen["consoleErrors"], serde_json::json!([]), "no script errors");

    // What the browser did is what the database holds.
    let sql = d.sql();
    assert_eq!(sql.text("SELECT status FROM users"), "active");
    let creds = sql.i64("SELECT count(*) FROM credentials");
    assert_eq!(creds, 1, "the platform passkey remains; the security key was revoked");
    let sessions = sql.i64("SELECT count(*) FROM sessions");
    assert_eq!(sessions, 2, "one from registration, one from the username-less sign-in");
    let used = sql.opt_i64("SELECT last_used_at FROM credentials");
    assert!(used.is_some());
}
