//! Signing keys: JWKS contents, rotation and retirement, verified by an outside JOSE library;
//! private keys never in plaintext at rest.

use std::os::unix::fs::PermissionsExt;

use base64::Engine;
use serde_json::json;

use crate::support::*;

fn claims(d: &TestDaemon, aud: &str) -> serde_json::Value {
    json!({"iss": format!("{}/acme", d.base), "aud": aud, "sub": "user-1", "iat": now(), "exp": now() + 600})
}

fn verify(d: &TestDaemon, token: &str, aud: &str) -> serde_json::Value {
    let jwks = format!("{}/acme/.well-known/jwks.json", d.base);
    node("verify-jwt.mjs", &[&jwks, token, &format!("{}/acme", d.base), aud])
}

fn kids(d: &TestDaemon) -> Vec<String> {
    let jwks = d.get("/acme/.well-known/jwks.json").json();
    jwks["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn jwks_publishes_public_rsa_parameters_only() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let r = d.get("/acme/.well-known/jwks.json");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    assert!(r.header("cache-control").unwrap().contains("max-age"));
    let jwks = r.json();
    let keys = jwks["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1);
    let k = keys[0].as_object().unwrap();
    let mut names: Vec<&str> = k.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(names, ["alg", "e", "kid", "kty", "n", "use"]);
    assert_eq!(k["kty"], "RSA");
    assert_eq!(k["alg"], "RS256");
    assert_eq!(k["use"], "sig");
    assert_eq!(k["e"], "AQAB");
    let n = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(k["n"].as_str().unwrap()).unwrap();
    assert_eq!(n.len() * 8, 2048);
}

#[test]
fn rotation_and_retirement_as_a_relying_party_sees_them() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let (old_token, old_kid) = sign_with_current_key(&d.store, &d.kek_path, "acme", &claims(&d, "app-1"));
    let v = verify(&d, &old_token, "app-1");
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["kid"], old_kid.as_str());
    // The relying backend also checks issuer and audience.
    assert_eq!(verify(&d, &old_token, "another-app")["ok"], false);

    let rotated = d.cli(&["key", "rotate", "--tenant", "acme", "-o", "json"]).ok().json();
    let new_kid = rotated["kid"].as_str().unwrap().to_owned();
    assert_eq!(rotated["state"], "current");
    assert_ne!(new_kid, old_kid);
    assert_eq!(kids(&d), vec![new_kid.clone(), old_kid.clone()], "both keys are published, current first");
    let listed = d.cli(&["key", "list", "--tenant", "acme", "-o", "json"]).ok().json();
    assert_eq!(listed[0]["state"], "current");
    assert_eq!(listed[1]["state"], "previous", "no longer signing, still published: {listed}");
    let table = d.cli(&["key", "list", "--tenant", "acme"]).ok().stdout;
    assert!(table.contains("previous") && !table.contains("retired"), "{table}");

    let (new_token, signed_kid) = sign_with_current_key(&d.store, &d.kek_path, "acme", &claims(&d, "app-1"));
    assert_eq!(signed_kid, new_kid);
    assert_eq!(verify(&d, &new_token, "app-1")["ok"], true);
    assert_eq!(verify(&d, &old_token, "app-1")["ok"], true, "a token signed before rotation still verifies");

    // Retiring needs --yes (a usage error otherwise, nothing sent); the current key cannot be
    // retired; the daemon wants the confirmation too. None of it changes anything.
    let before = d.snapshot();
    let r = d.cli(&["key", "retire", "--tenant", "acme", &old_kid]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--yes"), "{}", r.stderr);
    let r = d.cli(&["key", "retire", "--tenant", "acme", &new_kid, "--yes"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("key_is_current") && r.stderr.contains("key rotate"), "{}", r.stderr);
    let r = d.cli(&["key", "retire", "--tenant", "acme", "no-such-kid", "--yes"]);
    assert!(r.stderr.contains("key_not_found"), "{}", r.stderr);
    let (status, body) =
        d.admin_raw(&admin_request("POST", &format!("/admin/v1/tenants/acme/keys/{old_kid}/retire"), None, b""));
    assert_eq!((status, body["error"].as_str()), (400, Some("confirmation_required")), "{body}");
    assert_eq!(d.snapshot(), before);
    assert_eq!(kids(&d).len(), 2);

    let left = d.cli(&["key", "retire", "--tenant", "acme", &old_kid, "--yes", "-o", "json"]).ok().json();
    assert_eq!(left.as_array().unwrap().len(), 1);
    assert_eq!(left[0]["state"], "current");
    assert_eq!(kids(&d), vec![new_kid.clone()]);
    assert_eq!(verify(&d, &new_token, "app-1")["ok"], true);
    let v = verify(&d, &old_token, "app-1");
    assert_eq!(v["ok"], false, "after retirement the old key's tokens no longer verify: {v}");
    assert_eq!(v["code"], "ERR_JWKS_NO_MATCHING_KEY");
}

#[test]
fn tenants_have_separate_keys() {
    let d = TestDaemon::start();
    d.tenant("acme");
    d.tenant("other");
    let (token, _) = sign_with_current_key(&d.store, &d.kek_path, "other", &claims(&d, "app-1"));
    // Signed by another tenant's key (with acme's issuer claim): acme's JWKS does not verify it.
    assert_eq!(verify(&d, &token, "app-1")["ok"], false);
}

#[test]
fn private_keys_are_sealed_at_rest_and_kek_is_0600() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let rotated = d.cli(&["key", "rotate", "--tenant", "acme"]).ok();
    // The table shows every key, and the retire hint names the previous one by its kid.
    let listed = d.cli(&["key", "list", "--tenant", "acme", "-o", "json"]).ok().json();
    let previous = listed[1]["kid"].as_str().unwrap();
    assert!(rotated.stdout.contains(previous), "{}", rotated.stdout);
    let hint = format!("latchkey key retire --tenant acme {previous} --yes");
    assert!(rotated.stderr.contains(&hint), "{}", rotated.stderr);
    let mode = std::fs::metadata(&d.kek_path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    if !sqlite_only("the mode of the database file") {
        let db_mode = std::fs::metadata(d.db_path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(db_mode, 0o600);
    }

    let jwks = d.get("/acme/.well-known/jwks.json").json();
    let rows: Vec<(String, Vec<u8>)> = d
        .sql()
        .rows("SELECT kid, private_key FROM signing_keys")
        .into_iter()
        .map(|r| (r[0].clone(), unhex(&r[1])))
        .collect();
    assert_eq!(rows.len(), 2);
    // The rsaEncryption OID, present in every plaintext PKCS#8 or SPKI RSA key.
    let rsa_oid = [0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
    for (kid, blob) in rows {
        let jwk = jwks["keys"].as_array().unwrap().iter().find(|k| k["kid"] == kid.as_str()).unwrap();
        let n = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(jwk["n"].as_str().unwrap()).unwrap();
        assert!(blob.len() > 1000, "the column holds the sealed key");
        assert!(!blob.windows(rsa_oid.len()).any(|w| w == rsa_oid), "plaintext PKCS#8 structure in the database");
        assert!(!blob.windows(32).any(|w| w == &n[..32]), "the modulus appears in clear in the database");
        assert!(!String::from_utf8_lossy(&blob).contains("PRIVATE KEY"));
    }
}

#[test]
fn ids_that_begin_with_a_hyphen_are_accepted() {
    let d = TestDaemon::start();
    d.tenant("acme");
    // Key ids are base64url thumbprints and may begin with '-'; the CLI takes them as values.
    let r = d.cli(&["key", "retire", "--tenant", "acme", "-abc", "--yes"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("key_not_found"), "{}", r.stderr);
}
