//! A tenant's first signing key is made after the tenant exists (RSA generation takes 50–150 ms,
//! which `apply` of thousands of tenants cannot wait for): such a tenant serves at once, its JWKS
//! lists only the keys it has, and a token request waits for its key. The daemons here hold key
//! making (`TestDaemon::start_holding_keys`) to see tenants without one.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::authenticator::Tamper;
use crate::oidc_support::{app, code_flow, exchange, pkce, token};
use crate::support::*;

/// A tenant created through the CLI, without waiting for its key.
fn keyless<'a>(d: &'a TestDaemon, slug: &str) -> Site<'a> {
    let t = d.cli(&["tenant", "create", slug, "-o", "json"]).ok().json();
    Site { d, slug: slug.to_owned(), base: t["base_url"].as_str().unwrap().to_owned(), origin: d.base.clone() }
}

fn keys(d: &TestDaemon, slug: &str) -> serde_json::Value {
    d.cli(&["key", "list", "--tenant", slug, "-o", "json"]).ok().json()
}

fn jwks(d: &TestDaemon, slug: &str) -> Http {
    d.get(&format!("/{slug}/.well-known/jwks.json"))
}

/// Adds an ES256 key through the admin API (the CLI lists the keys afterwards, which waits for
/// the first RS256 key); returns its kid.
pub fn rotate_es256(d: &TestDaemon, slug: &str) -> serde_json::Value {
    let path = format!("/admin/v1/tenants/{slug}/keys/rotate");
    let (status, key) = d.admin_raw(&admin_request("POST", &path, Some("application/json"), br#"{"alg":"ES256"}"#));
    assert_eq!(status, 201, "{key}");
    key["kid"].clone()
}

/// Current RS256 keys, and RS256 keys in all, of every tenant.
fn rs256_counts(d: &TestDaemon) -> (i64, i64) {
    let sql = d.sql();
    (
        sql.i64("SELECT COUNT(*) FROM signing_keys WHERE alg = 'RS256' AND state = 'current'"),
        sql.i64("SELECT COUNT(*) FROM signing_keys WHERE alg = 'RS256'"),
    )
}

#[test]
fn a_tenant_without_its_key_yet_serves_at_once_and_its_first_token_waits_for_the_key() {
    let d = TestDaemon::start_holding_keys(Duration::from_secs(30), |_| {});
    let site = keyless(&d, "acme");
    assert_eq!(d.get("/acme/.well-known/openid-configuration").status, 200);
    let r = jwks(&d, "acme");
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), json!({"keys": []}), "only keys that exist are listed");
    assert_eq!(r.header("cache-control"), Some("no-store"), "an empty set is kept by no verifier");
    assert_eq!(rs256_counts(&d), (0, 0));
    // Passkeys need no signing key.
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let r = site.sign_in(&mut soft, Some("ada@acme.test"), &Tamper::default());
    assert_eq!(r.status, 200, "{}", r.body);

    let m2m = app(&site, "m2m", &[]);
    let answer = std::thread::scope(|s| {
        let waiting = s.spawn(|| token(&site, &m2m, &[("grant_type", "client_credentials")]));
        std::thread::sleep(Duration::from_millis(500));
        assert!(!waiting.is_finished(), "the token request waits for the key");
        d.hold_keys(false);
        waiting.join().unwrap()
    });
    assert_eq!(answer.status, 200, "{}", answer.body);
    let listed = keys(&d, "acme");
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!((listed[0]["algorithm"].as_str(), listed[0]["state"].as_str()), (Some("RS256"), Some("current")));
    let r = jwks(&d, "acme");
    assert_eq!(r.json()["keys"][0]["kid"], listed[0]["kid"]);
    assert!(r.header("cache-control").unwrap().contains("max-age"));
    let access = answer.json()["access_token"].as_str().unwrap().to_owned();
    let jwks_url = format!("{}/.well-known/jwks.json", site.base);
    let v = node("verify-jwt.mjs", &[&jwks_url, &access, &site.base, &m2m.client_id]);
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["kid"], listed[0]["kid"]);
}

#[test]
fn a_token_request_that_outwaits_the_key_gets_503_and_its_code_stays_good() {
    let d = TestDaemon::start_holding_keys(Duration::from_secs(1), |_| {});
    let site = keyless(&d, "acme");
    let web = app(&site, "web", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let p = pkce();
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let before = d.snapshot_of(&["authorization_codes", "refresh_tokens", "signing_keys"]);
    let r = exchange(&site, &web, &code, &p);
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(r.json()["error"], "temporarily_unavailable");
    assert_eq!(r.header("retry-after"), Some("1"));
    assert_eq!(d.snapshot_of(&["authorization_codes", "refresh_tokens", "signing_keys"]), before, "nothing consumed");
    d.hold_keys(false);
    let r = exchange(&site, &web, &code, &p);
    assert_eq!(r.status, 200, "the same code, once the key exists: {}", r.body);
    assert!(r.json()["id_token"].is_string());
}

#[test]
fn rotations_of_a_tenant_without_its_key_leave_one_current_key_of_each_algorithm() {
    let d = TestDaemon::start_holding_keys(Duration::from_secs(30), |_| {});
    keyless(&d, "acme");
    let es = rotate_es256(&d, "acme");
    let listed = jwks(&d, "acme").json();
    assert_eq!(listed["keys"].as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed["keys"][0]["kid"], es, "the keys it has: ES256 only");
    // An RS256 rotation (and `key list`) waits for the first key, then rotates it: never a
    // passing state for an operator.
    let rotation = std::thread::scope(|s| {
        let waiting = s.spawn(|| d.cli(&["key", "rotate", "--tenant", "acme", "-o", "json"]));
        std::thread::sleep(Duration::from_millis(500));
        assert!(!waiting.is_finished(), "the rotation waits for the first key");
        d.hold_keys(false);
        waiting.join().unwrap()
    });
    let rs = rotation.ok().json();
    let listed = keys(&d, "acme");
    let states: Vec<(&str, &str)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (k["algorithm"].as_str().unwrap(), k["state"].as_str().unwrap()))
        .collect();
    assert_eq!(states, [("RS256", "current"), ("ES256", "current"), ("RS256", "previous")], "{listed}");
    assert_eq!((&listed[0]["kid"], &listed[1]["kid"]), (&rs["kid"], &es));
    // The queued tenant, taken by a thread, is found to have its key: nothing more is made.
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(rs256_counts(&d), (1, 2));
    let listed = jwks(&d, "acme").json();
    assert_eq!(listed["keys"][0]["kid"], rs["kid"], "RS256 first");
}

#[test]
fn apply_creates_tenants_at_once_and_a_restart_makes_their_keys() {
    let mut d = TestDaemon::start_holding_keys(Duration::from_secs(30), |_| {});
    const N: usize = 150;
    let file = d.dir.path().join("tenants.toml");
    let text: String = (0..N).map(|i| format!("[[tenant]]\nslug = \"t{i:03}\"\n\n")).collect();
    std::fs::write(&file, text).unwrap();
    d.cli(&["apply", "-f", file.to_str().unwrap()]).ok();
    for i in 0..N {
        assert_eq!(d.get(&format!("/t{i:03}/.well-known/openid-configuration")).status, 200);
    }
    assert_eq!(rs256_counts(&d), (0, 0), "held: no key made");
    let port: u16 = d.base.rsplit(':').next().unwrap().parse().unwrap();
    let (same, kek) = (d.same_store(), d.kek_path.clone());
    d.stop();

    let d = TestDaemon::start_on(port, |f| {
        same(f);
        f.keys.encryption_key_file = Some(kek);
    });
    assert_eq!(d.get("/t149/.well-known/openid-configuration").status, 200);
    // The background makes them at idle priority: some within moments, all within seconds on
    // an idle machine; the rest are made here at once (`key list`), as a token request would.
    let started = Instant::now();
    while rs256_counts(&d).0 == 0 {
        assert!(started.elapsed() < Duration::from_secs(120), "no key made in the background");
        std::thread::sleep(Duration::from_millis(100));
    }
    for i in 0..N {
        d.cli(&["key", "list", "--tenant", &format!("t{i:03}")]).ok();
    }
    assert_eq!(rs256_counts(&d), (N as i64, N as i64), "one key each, none made twice");
    for i in (0..N).step_by(37) {
        let r = jwks(&d, &format!("t{i:03}"));
        assert_eq!(r.json()["keys"][0]["alg"], "RS256", "{}", r.body);
        let site =
            Site { d: &d, slug: format!("t{i:03}"), base: format!("{}/t{i:03}", d.base), origin: d.base.clone() };
        let m2m = app(&site, "m2m", &[]);
        assert_eq!(token(&site, &m2m, &[("grant_type", "client_credentials")]).status, 200);
    }
}

#[test]
fn a_database_of_tenants_without_keys_still_needs_its_key_encryption_key() {
    let mut d = TestDaemon::start_holding_keys(Duration::from_secs(30), |_| {});
    keyless(&d, "acme");
    let (kek, port, same) = (d.kek_path.clone(), d.base.rsplit(':').next().unwrap().to_owned(), d.same_store());
    d.stop();
    std::fs::remove_file(&kek).unwrap();
    let dir = d.dir.path().to_owned();
    let mut file = latchkey_domain::config::FileConfig::default();
    file.server.public_url = Some(format!("http://localhost:{port}"));
    file.server.listen = Some("127.0.0.1:0".into());
    file.server.metrics_listen = Some(String::new());
    same(&mut file);
    file.admin.socket = Some(dir.join("again.sock"));
    let flags = latchkey_domain::config::Overrides { data_dir: Some(dir.clone()), ..Default::default() };
    let config = latchkey_domain::config::Config::from_file(file, &flags).unwrap();
    let (_stop, stop_rx) = tokio::sync::watch::channel(false);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let result = rt.block_on(async {
        tokio::time::timeout(
            Duration::from_secs(30),
            latchkeyd::server::run(config, latchkeyd::server::Options::new(stop_rx)),
        )
        .await
    });
    let err = result.expect("the start is refused at once").unwrap_err().to_string();
    assert!(err.contains("key-encryption key") && err.contains("does not exist"), "{err}");
    assert!(!kek.exists(), "no new key-encryption key made");
}
