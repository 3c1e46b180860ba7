//! A tenant's URL can change (`latchkey tenant update --base-url`, and `apply`; SPEC §8): the
//! issuer changes, passkeys keep working while the RP ID stays valid, and the old URL answers for
//! a while with 308 and the same JWKS, so that tokens issued before still verify in outside
//! clients.

use serde_json::Value;

use crate::oidc_support::{App, app, client_post, get, jwt_parts, token};
use crate::support::*;

fn client_credentials(site: &Site, m2m: &App) -> String {
    let r = token(site, m2m, &[("grant_type", "client_credentials")]);
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()["access_token"].as_str().unwrap().to_owned()
}

fn moved_site<'a>(d: &'a TestDaemon, slug: &str, base: &str) -> Site<'a> {
    Site { d, slug: slug.into(), base: base.into(), origin: d.base.clone() }
}

#[test]
fn a_moved_tenant_signs_in_with_its_passkeys_and_its_old_url_answers_for_a_while() {
    let d = TestDaemon::start();
    let acme = Site::new(&d, "acme", &[]);
    let (mut soft, _) = acme.user_with_passkey("ada@acme.test");
    let m2m = app(&acme, "m2m", &[]);
    let before = client_credentials(&acme, &m2m);
    let old_jwks = get(&format!("{}/.well-known/jwks.json", acme.base), None).body;

    let new_base = format!("{}/acme-corp", d.base);
    let moved = d.cli(&["tenant", "update", "acme", "--base-url", &new_base, "-o", "json"]).ok().json();
    assert_eq!(
        (moved["base_url"].as_str(), moved["issuer"].as_str()),
        (Some(new_base.as_str()), Some(new_base.as_str()))
    );
    assert_eq!(moved["rp_id"], "localhost", "the RP ID is still valid for the new URL: kept");
    assert_eq!(moved["old_urls"][0]["base_url"], acme.base.as_str());
    let table = d.cli(&["tenant", "update", "acme", "--name", "Acme Corp"]).ok();
    assert!(table.stdout.contains(&format!("{} (until", acme.base)), "{}", table.stdout);

    // The tenant at its new URL: new issuer in discovery and tokens, and the passkey registered
    // before the move signs in.
    let site = moved_site(&d, "acme", &new_base);
    let doc = get(&format!("{new_base}/.well-known/openid-configuration"), None).json();
    assert_eq!(doc["issuer"], new_base.as_str());
    let after = client_credentials(&site, &m2m);
    assert_eq!(jwt_parts(&after).1["iss"], new_base.as_str());
    let r = site.sign_in(&mut soft, Some("ada@acme.test"), &Default::default());
    assert_eq!(r.status, 200, "{}", r.body);

    // The old URL: discovery and pages move with 308 (query kept), the JWKS is served as it was,
    // and an outside JOSE verifier accepts a token issued before the move against it.
    let r = get(&format!("{}/.well-known/openid-configuration", acme.base), None);
    assert_eq!(r.status, 308);
    assert_eq!(r.header("location"), Some(format!("{new_base}/.well-known/openid-configuration").as_str()));
    let r = get(&format!("{}/authorize?client_id=x&state=s", acme.base), None);
    assert_eq!(
        (r.status, r.header("location")),
        (308, Some(format!("{new_base}/authorize?client_id=x&state=s").as_str()))
    );
    let r = get(&format!("{}/.well-known/jwks.json", acme.base), None);
    assert_eq!((r.status, r.body.as_str()), (200, old_jwks.as_str()), "the same keys at the old URL");
    let v =
        node("verify-jwt.mjs", &[&format!("{}/.well-known/jwks.json", acme.base), &before, &acme.base, &m2m.client_id]);
    assert_eq!(v["ok"], true, "a token issued before the move verifies against the old JWKS: {v}");
    let v = node("verify-jwt.mjs", &[&format!("{new_base}/.well-known/jwks.json"), &after, &new_base, &m2m.client_id]);
    assert_eq!(v["ok"], true, "{v}");
    // And this service still takes it while the old URL answers.
    let r = client_post(&site, &m2m, "/introspect", &[("token", &before)]);
    assert_eq!(r.json()["active"], true, "{}", r.body);

    // The trail names the tenant as the subject of the change.
    let trail = d.cli(&["audit", "--tenant", "acme", "--user", "acme", "-o", "json"]).ok().json();
    let actions: Vec<&str> = trail.as_array().unwrap().iter().filter_map(|e| e["action"].as_str()).collect();
    assert!(actions.contains(&"tenant.update"), "{trail}");

    // Past --keep-old-url (30 days by default) the old URL answers nothing.
    d.clock.advance(30 * 24 * 3600 + 1);
    let r = get(&format!("{}/.well-known/jwks.json", acme.base), None);
    assert_eq!((r.status, r.json()["error"].as_str()), (404, Some("tenant_not_found")));
    assert_eq!(get(&format!("{new_base}/.well-known/jwks.json"), None).status, 200);
}

#[test]
fn a_tenant_restored_on_another_port_is_moved_there_and_keeps_its_passkeys() {
    let mut d = TestDaemon::start();
    let acme = Site::new(&d, "acme", &[]);
    let (mut soft, _) = acme.user_with_passkey("ada@acme.test");
    let dir = d.dir.path().to_owned();
    d.stop();
    let same = d.same_store();
    // The same database on another port (a backup restored elsewhere, or `--dev --listen`).
    let moved = TestDaemon::start_on(0, |f| {
        same(f);
        f.keys.encryption_key_file = Some(dir.join("key-encryption.key"));
    });
    assert_ne!(moved.base, d.base);
    let new_base = format!("{}/acme", moved.base);
    let r = get(&format!("{new_base}/.well-known/openid-configuration"), None);
    assert_eq!((r.status, r.json()["error"].as_str()), (404, Some("tenant_not_found")), "still at the old port");
    let r = moved.cli(&["tenant", "update", "acme", "--base-url", &new_base]).ok();
    assert!(r.stderr.contains("tell the client applications"), "{}", r.stderr);
    let site = moved_site(&moved, "acme", &new_base);
    soft.origin = moved.base.clone();
    let r = site.sign_in(&mut soft, Some("ada@acme.test"), &Default::default());
    assert_eq!(r.status, 200, "the passkey registered at the old port signs in at the new one: {}", r.body);
}

#[test]
fn a_move_that_would_strand_passkeys_or_take_anothers_url_is_refused_and_stores_nothing() {
    let d = TestDaemon::start();
    let acme = Site::new(&d, "acme", &[]);
    Site::new(&d, "beta", &[]);
    acme.user_with_passkey("ada@acme.test");
    let before = d.snapshot();
    let refused = |args: &[&str], code: &str| {
        let mut all = vec!["tenant", "update", "acme"];
        all.extend_from_slice(args);
        let r = d.cli(&all);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(code), "{args:?}: expected {code}: {}", r.stderr);
        r.stderr
    };
    let why = refused(&["--base-url", "https://id.other.test/acme"], "invalid_rp_id");
    assert!(why.contains("--rp-id id.other.test") && why.contains("--yes"), "says what to do next: {why}");
    let why =
        refused(&["--base-url", "https://id.other.test/acme", "--rp-id", "id.other.test"], "confirmation_required");
    assert!(why.contains("stop working"), "{why}");
    refused(&["--rp-id", "other.test", "--yes"], "invalid_rp_id");
    refused(&["--base-url", "ftp://localhost/acme"], "invalid_base_url");
    refused(&["--base-url", &format!("{}/beta", d.base)], "base_url_taken");
    refused(&["--name", ""], "invalid_input");
    let usage = d.cli(&["tenant", "update", "acme"]);
    assert_eq!(usage.code, 2, "{}", usage.stderr);
    assert_eq!(d.snapshot(), before, "refusals store nothing");

    // Confirmed, the RP ID changes; the old URL then keeps others from taking it while it answers.
    let moved = d
        .cli(&[
            "tenant",
            "update",
            "acme",
            "--base-url",
            "https://id.other.test/acme",
            "--rp-id",
            "id.other.test",
            "--yes",
            "-o",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(moved["rp_id"], "id.other.test");
    let r = d.cli(&["tenant", "create", "again", "--base-url", &acme.base]);
    assert!(r.stderr.contains("base_url_taken"), "{}", r.stderr);
    // Moving back takes the URL out of the old ones.
    let back = d
        .cli(&[
            "tenant",
            "update",
            "acme",
            "--base-url",
            &acme.base,
            "--rp-id",
            "localhost",
            "--yes",
            "--keep-old-url",
            "0",
            "-o",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(back["base_url"], acme.base.as_str());
    assert_eq!(back.get("old_urls"), None::<&Value>, "{back}");
}

#[test]
fn apply_moves_a_tenant_and_shows_it_in_the_plan() {
    let d = TestDaemon::start();
    Site::new(&d, "acme", &[]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("latchkey.toml");
    let new_base = format!("{}/acme-corp", d.base);
    std::fs::write(&file, format!("[[tenant]]\nslug = \"acme\"\nbase_url = \"{new_base}\"\n")).unwrap();
    let f = file.to_str().unwrap();
    let plan = d.cli(&["apply", "-f", f, "--dry-run"]).ok();
    assert!(plan.stdout.contains("base_url") && plan.stdout.contains(&new_base), "{}", plan.stdout);
    d.cli(&["apply", "-f", f]).ok();
    let t = d.cli(&["tenant", "show", "acme", "-o", "json"]).ok().json();
    assert_eq!(t["issuer"], new_base.as_str());
    assert_eq!(get(&format!("{}/acme/.well-known/openid-configuration", d.base), None).status, 308);

    std::fs::write(&file, format!("[[tenant]]\nslug = \"acme\"\nbase_url = \"{new_base}\"\nrp_id = \"other.test\"\n"))
        .unwrap();
    let before = d.snapshot();
    let r = d.cli(&["apply", "-f", f]);
    assert!(r.code != 0 && r.stderr.contains("tenant update acme --rp-id"), "{}", r.stderr);
    assert_eq!(d.snapshot(), before);
}
