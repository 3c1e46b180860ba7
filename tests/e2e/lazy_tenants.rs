//! A tenant's keys and relying party are loaded on its first request, not at start: what clients
//! see must not depend on whether a tenant was loaded yet, nor on a restart, rotation, creation,
//! deletion or `apply` in between.

use serde_json::{Value, json};

use crate::oidc_support::{App, app, jwt_parts, token};
use crate::support::*;

fn jwks(base: &str) -> Value {
    let r = http_get(&format!("{base}/.well-known/jwks.json"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()
}

fn kids(base: &str) -> Vec<String> {
    jwks(base)["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap().to_owned()).collect()
}

/// The tenant's keys as the admin API lists them, current first.
fn key_list(d: &TestDaemon, slug: &str) -> Vec<String> {
    let keys = d.cli(&["key", "list", "--tenant", slug, "-o", "json"]).ok().json();
    keys.as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap().to_owned()).collect()
}

/// A client-credentials access token, checked by an outside JOSE library against the tenant's
/// JWKS; returns the kid that signed it.
fn signed_kid(site: &Site, m2m: &App) -> String {
    let r = token(site, m2m, &[("grant_type", "client_credentials")]);
    assert_eq!(r.status, 200, "{}", r.body);
    let access = r.json()["access_token"].as_str().unwrap().to_owned();
    let (header, payload) = jwt_parts(&access);
    let aud = payload["aud"].as_str().map(str::to_owned).unwrap_or_else(|| payload["aud"][0].to_string());
    let jwks_url = format!("{}/.well-known/jwks.json", site.base);
    let v = node("verify-jwt.mjs", &[&jwks_url, &access, &site.base, &aud]);
    assert_eq!(v["ok"], true, "{v}");
    header["kid"].as_str().unwrap().to_owned()
}

/// An existing tenant of `d`, seen from the daemon's origin.
fn site<'a>(d: &'a TestDaemon, slug: &str) -> Site<'a> {
    Site { d, slug: slug.into(), base: format!("{}/{slug}", d.base), origin: d.base.clone() }
}

/// Stops `d` and starts a daemon on its files and port (same origin, same issuers).
fn restart(d: &mut TestDaemon) -> TestDaemon {
    let dir = d.dir.path().to_owned();
    let port: u16 = d.base.rsplit(':').next().unwrap().parse().unwrap();
    d.stop();
    let same = d.same_store();
    TestDaemon::start_on(port, |f| {
        same(f);
        f.keys.encryption_key_file = Some(dir.join("key-encryption.key"));
    })
}

#[test]
fn after_a_restart_a_tenant_serves_and_signs_with_its_stored_keys() {
    let mut d = TestDaemon::start();
    let acme = Site::new(&d, "acme", &[]);
    let m2m = app(&acme, "m2m", &[]);
    Site::new(&d, "beta", &[]);
    let acme_before = jwks(&acme.base);
    let beta_before = jwks(&format!("{}/beta", d.base));
    assert_ne!(acme_before, beta_before, "each tenant has its own key");

    let again = restart(&mut d);
    let acme = site(&again, "acme");
    // The first request to acme since the start needs its private key: a token grant.
    let kid = signed_kid(&acme, &m2m);
    assert_eq!(kid, key_list(&again, "acme")[0]);
    assert_eq!(jwks(&acme.base), acme_before);

    // Many first requests at once to a tenant not loaded yet all get the same keys.
    let beta = format!("{}/beta", again.base);
    let seen: Vec<Value> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8).map(|_| s.spawn(|| jwks(&beta))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(seen.iter().all(|j| *j == beta_before), "{seen:?}");
}

#[test]
fn rotation_and_retirement_reach_a_loaded_tenant_at_once_and_survive_a_restart() {
    let mut d = TestDaemon::start();
    let acme = Site::new(&d, "acme", &[]);
    let m2m = app(&acme, "m2m", &[]);
    let first = signed_kid(&acme, &m2m);
    assert_eq!(kids(&acme.base), [first.as_str()]);

    let rotated = d.cli(&["key", "rotate", "--tenant", "acme", "-o", "json"]).ok().json();
    let second = rotated["kid"].as_str().unwrap().to_owned();
    assert_ne!(second, first);
    assert_eq!(kids(&acme.base), [second.clone(), first.clone()], "the new key is published, the old one kept");
    assert_eq!(signed_kid(&acme, &m2m), second, "the new key signs from the next token on");

    d.cli(&["key", "retire", "--tenant", "acme", &first, "--yes"]).ok();
    assert_eq!(kids(&acme.base), [second.as_str()]);

    // A second rotation right away: a spare key, or one generated on the spot, is as good.
    let third = d.cli(&["key", "rotate", "--tenant", "acme", "-o", "json"]).ok().json()["kid"].clone();
    assert_eq!(kids(&acme.base), [third.as_str().unwrap(), second.as_str()]);

    let again = restart(&mut d);
    let acme = site(&again, "acme");
    assert_eq!(kids(&acme.base), [third.as_str().unwrap(), second.as_str()]);
    assert_eq!(signed_kid(&acme, &m2m), third.as_str().unwrap());
}

#[test]
fn a_tenant_created_while_serving_is_routed_at_once_and_a_deleted_one_is_gone_at_once() {
    let d = TestDaemon::start();
    let acme = Site::new(&d, "acme", &[]);
    let m2m = app(&acme, "m2m", &[]);
    signed_kid(&acme, &m2m);

    let beta = Site::new(&d, "beta", &[]);
    let doc = http_get(&format!("{}/.well-known/openid-configuration", beta.base), None);
    assert_eq!(doc.status, 200, "{}", doc.body);
    assert_eq!(doc.json()["issuer"], beta.base.as_str());
    let beta_kid = key_list(&d, "beta");
    assert_eq!(kids(&beta.base), beta_kid);
    let beta_m2m = app(&beta, "m2m", &[]);
    assert_eq!(signed_kid(&beta, &beta_m2m), beta_kid[0]);

    // Through `apply` too.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("latchkey.toml");
    std::fs::write(&file, "[[tenant]]\nslug = \"gamma\"\n").unwrap();
    d.cli(&["apply", "-f", file.to_str().unwrap()]).ok();
    let gamma_keys = key_list(&d, "gamma");
    assert_eq!(kids(&format!("{}/gamma", d.base)), gamma_keys);

    // beta is loaded (it signed a token); deleting it takes every route of it away at once.
    d.cli(&["tenant", "delete", "beta", "--yes"]).ok();
    for path in ["/.well-known/openid-configuration", "/.well-known/jwks.json"] {
        let r = http_get(&format!("{}{path}", beta.base), None);
        assert_eq!((r.status, r.json()["error"].clone()), (404, json!("tenant_not_found")), "{path}");
    }
    assert_eq!(token(&beta, &beta_m2m, &[("grant_type", "client_credentials")]).status, 404);
    assert_eq!(kids(&acme.base), key_list(&d, "acme"), "other tenants are untouched");

    // The same slug again is a new tenant with a new key, not the old one kept in memory.
    Site::new(&d, "beta", &[]);
    let new_kid = key_list(&d, "beta");
    assert_ne!(new_kid, beta_kid);
    assert_eq!(kids(&beta.base), new_kid);
}

#[test]
fn apply_changes_a_loaded_tenant_s_name_and_registration_at_once() {
    let d = TestDaemon::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("latchkey.toml");
    let f = file.to_str().unwrap();
    std::fs::write(&file, "[[tenant]]\nslug = \"acme\"\nname = \"Acme\"\nregistration = \"invite\"\n").unwrap();
    d.cli(&["apply", "-f", f]).ok();
    let acme = site(&d, "acme");
    let r = acme.register_start("ada@acme.test", "Ada", None, None, json!({}));
    assert_eq!(r.status, 403, "invitation only: {}", r.body);

    std::fs::write(&file, "[[tenant]]\nslug = \"acme\"\nname = \"Acme Two\"\nregistration = \"open\"\n").unwrap();
    d.cli(&["apply", "-f", f]).ok();
    let r = acme.register_start("ada@acme.test", "Ada", None, None, json!({}));
    assert_eq!(r.status, 200, "open registration from now on: {}", r.body);
    assert_eq!(r.json()["rp"]["name"], "Acme Two");
}

#[test]
fn a_wrong_key_encryption_key_still_stops_the_start() {
    // The first tenant has no key yet (made in the background, held here): the check opens the
    // first tenant's that has one.
    let mut d = TestDaemon::start_holding_keys(std::time::Duration::from_secs(20), |_| {});
    d.cli(&["tenant", "create", "early"]).ok();
    d.cli(&["tenant", "create", "acme"]).ok();
    crate::key_generation::rotate_es256(&d, "acme");
    d.stop();
    let dir = d.dir.path().to_owned();
    let other = dir.join("other.key");
    std::fs::write(&other, "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=\n").unwrap();
    std::fs::set_permissions(&other, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let mut file = latchkey_domain::config::FileConfig::default();
    file.server.public_url = Some(d.base.clone());
    file.server.listen = Some("127.0.0.1:0".into());
    // Not the default port, which a development daemon of another test may hold.
    file.server.metrics_listen = Some(String::new());
    (d.same_store())(&mut file);
    file.keys.encryption_key_file = Some(other);
    file.admin.socket = Some(dir.join("again.sock"));
    let flags = latchkey_domain::config::Overrides { data_dir: Some(dir.clone()), ..Default::default() };
    let config = latchkey_domain::config::Config::from_file(file, &flags).unwrap();
    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    let mut options = latchkeyd::server::Options::new(stop_rx);
    options.ready = Some(ready_tx);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let result = rt.block_on(async {
        let run = latchkeyd::server::run(config, options);
        tokio::pin!(run);
        tokio::select! {
            r = &mut run => r,
            Ok(_) = ready_rx => {
                let _ = stop.send(true);
                let _ = run.await;
                panic!("the daemon started with a key-encryption key that does not open its keys");
            }
        }
    });
    let err = result.unwrap_err().to_string();
    assert!(err.contains("does not open the signing keys") && err.contains("Restore"), "{err}");
    assert!(!dir.join("again.sock").exists(), "nothing served");
}
