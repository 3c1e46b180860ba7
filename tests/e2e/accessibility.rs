//! Accessibility of the hosted pages: axe-core (`@axe-core/playwright`) over every page and state
//! in headless Chromium, in light and dark themes, at 100% and 200% zoom, in several languages,
//! with a tenant's brand (colour, SVG logo) and an app's logo; every flow again with the keyboard
//! alone. `LATCHKEY_UPDATE_DOCS=1` also writes the screenshots of docs/screenshots/.

use crate::oidc_support::*;
use crate::support::*;

/// The states screenshotted for docs/screenshots/ (in English and German, light and dark).
const SHOT_STATES: [&str; 5] = ["login", "consent", "account", "device-confirm", "login-error"];

#[test]
fn every_page_and_state_passes_axe_in_both_themes_at_200_percent_and_by_keyboard() {
    use base64::Engine as _;
    if sqlite_only(
        "the pages' markup does not depend on the database engine; the PostgreSQL pass runs the page flows of the other browser tests",
    ) {
        return;
    }
    assert!(
        repo_root().join("tests/js/node_modules/@axe-core/playwright").exists(),
        "@axe-core/playwright is not installed: run `bash scripts/test.sh` (npm ci in tests/js)"
    );
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("acme.svg");
    std::fs::write(
        &svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#0b5fbf"/><path d="M9 23 16 8l7 15z" fill="#fff"/></svg>"##,
    )
    .unwrap();
    let png = dir.path().join("portal.png");
    std::fs::write(&png, base64::engine::general_purpose::STANDARD.decode(crate::backchannel::PNG_1X1).unwrap())
        .unwrap();
    d.cli(&[
        "tenant",
        "brand",
        "acme",
        "--display-name",
        "Acme",
        "--color",
        "#0b5fbf",
        "--logo",
        svg.to_str().unwrap(),
    ])
    .ok();
    // The app returns to a loopback page the script serves.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let redirect = format!("http://127.0.0.1:{port}/cb");
    let consent =
        app(&site, "web", &["--consent", "explicit", "--logo", png.to_str().unwrap(), "--redirect-uri", &redirect]);
    let device = d
        .cli(&[
            "app",
            "create",
            "--tenant",
            "acme",
            "--name",
            "Acme CLI",
            "--type",
            "native",
            "--device-flow",
            "-o",
            "json",
        ])
        .ok()
        .json();
    let runs: Vec<_> = [
        ("en", "light", 1),
        ("en", "dark", 1),
        ("en", "light", 2),
        ("en", "dark", 2),
        ("de", "light", 1),
        ("de", "dark", 1),
        ("fr", "dark", 2),
        ("es", "light", 2),
        ("pt-BR", "dark", 1),
        ("ja", "light", 2),
        ("zh-CN", "dark", 2),
    ]
    .iter()
    .enumerate()
    .map(|(i, (locale, theme, zoom))| {
        let invite = site.invite(&format!("user{i}@acme.test"), &format!("User {i}"));
        serde_json::json!({"locale": locale, "theme": theme, "zoom": zoom, "invite": format!("{}/invite/{invite}", site.base)})
    })
    .collect();
    // A user who accepts an invitation with GitHub (the stand-in answers as ada@acme.test) and is
    // offered a passkey once.
    let _github = crate::social::github(&d, &[]);
    let offer_invite = format!("{}/invite/{}", site.base, site.invite("ada@acme.test", "Ada Lovelace"));
    let keyboard_invite = format!("{}/invite/{}", site.base, site.invite("keys@acme.test", "Kim Keys"));
    let shots = if std::env::var_os("LATCHKEY_UPDATE_DOCS").is_some() {
        let p = repo_root().join("docs/screenshots");
        std::fs::create_dir_all(&p).unwrap();
        Some(p.to_str().unwrap().to_owned())
    } else {
        None
    };
    let config = serde_json::json!({
        "base": site.base,
        "consentApp": consent.client_id,
        "deviceApp": device["client_id"],
        "redirect": redirect,
        "runs": runs,
        "keyboardInvite": keyboard_invite,
        "offerInvite": offer_invite,
        "shots": shots,
        "shotStates": SHOT_STATES,
    });
    let out: Run = std::process::Command::new("node")
        .arg(repo_root().join("tests/js/pages-a11y.mjs"))
        .arg(config.to_string())
        .output()
        .expect("run node")
        .into();
    let seen: serde_json::Value = serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", out.stdout, out.stderr));
    assert_eq!(seen["ok"], true, "{seen:#}\n{}", out.stderr);

    let mut violations = vec![];
    let mut checked = 0;
    for run in seen["runs"].as_array().unwrap() {
        let what = format!("{} {} {}x", run["locale"], run["theme"], run["zoom"]);
        for (state, found) in run["states"].as_object().unwrap() {
            checked += 1;
            for v in found["violations"].as_array().unwrap() {
                violations.push(format!("{what} {state}: {v}"));
            }
            // axe ran its rules on the page: the ones every page has passed.
            let passed: Vec<&str> = found["passed"].as_array().unwrap().iter().filter_map(|p| p.as_str()).collect();
            for rule in ["html-has-lang", "document-title", "color-contrast", "target-size"] {
                assert!(passed.contains(&rule), "{what} {state}: {rule} did not pass: {found}");
            }
        }
        for r in run["reflow"].as_array().unwrap() {
            violations.push(format!("{what} reflow {r}"));
        }
    }
    assert_eq!(checked, 11 * 14 + 4, "every state of every run was checked: {seen:#}");
    assert!(violations.is_empty(), "{} axe violations:\n{}", violations.len(), violations.join("\n"));

    let k = &seen["keyboard"];
    assert_eq!(
        (&k["registered"], &k["consented"], &k["deviceApproved"], &k["signedInAgain"], &k["languageChosen"]),
        (&true.into(), &true.into(), &"approved".into(), &true.into(), &"de".into()),
        "{k}"
    );
    assert_eq!(k["autofillSignedIn"], true, "passkey autofill signs in without a click: {k}");
}
