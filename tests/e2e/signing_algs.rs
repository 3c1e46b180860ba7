//! Signing algorithms beyond RS256: ES256 and EdDSA keys added with `key rotate --alg`, published
//! in the JWKS with their `alg`, chosen per app with `--signing-alg`, verified by an outside JOSE
//! library (`jose`); and every token accepted only under the algorithm of the key its `kid`
//! names (alg-confusion cases across all three).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use crate::oidc_support::*;
use crate::support::*;

const ALGS: [&str; 3] = ["RS256", "ES256", "EdDSA"];

fn rotate(d: &TestDaemon, slug: &str, alg: &str) -> Value {
    d.cli(&["key", "rotate", "--tenant", slug, "--alg", alg, "-o", "json"]).ok().json()
}

fn jwks(site: &Site) -> Vec<Value> {
    let r = get(&format!("{}/.well-known/jwks.json", site.base), None);
    assert_eq!(r.status, 200);
    r.json()["keys"].as_array().unwrap().clone()
}

fn fields(k: &Value) -> Vec<String> {
    let mut names: Vec<String> = k.as_object().unwrap().keys().cloned().collect();
    names.sort();
    names
}

fn b64len(v: &Value) -> usize {
    URL_SAFE_NO_PAD.decode(v.as_str().unwrap()).unwrap().len()
}

/// `jose` verifying `token` with the tenant's JWKS, accepting `algs` only.
fn jose(site: &Site, token: &str, aud: &str, algs: &str) -> Value {
    node("verify-jwt.mjs", &[&format!("{}/.well-known/jwks.json", site.base), token, &site.base, aud, algs])
}

fn current_kid(d: &TestDaemon, slug: &str, alg: &str) -> String {
    let keys = d.cli(&["key", "list", "--tenant", slug, "-o", "json"]).ok().json();
    let k = keys.as_array().unwrap().iter().find(|k| k["algorithm"] == alg && k["state"] == "current").unwrap();
    k["kid"].as_str().unwrap().to_owned()
}

#[test]
fn key_rotate_alg_adds_es256_and_eddsa_keys_each_published_with_its_alg() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let rsa = jwks(&site);
    assert_eq!(rsa.len(), 1);
    let es = rotate(&d, "acme", "ES256");
    assert_eq!(
        (es["algorithm"].as_str(), es["bits"].as_u64(), es["state"].as_str()),
        (Some("ES256"), Some(256), Some("current"))
    );
    let ed = rotate(&d, "acme", "EdDSA");
    assert_eq!(ed["algorithm"], "EdDSA");
    let keys = jwks(&site);
    assert_eq!(keys.len(), 3);
    assert_eq!(keys[0], rsa[0], "the RS256 key first, unchanged");
    let ec = keys.iter().find(|k| k["alg"] == "ES256").unwrap();
    assert_eq!(fields(ec), ["alg", "crv", "kid", "kty", "use", "x", "y"]);
    assert_eq!((ec["kty"].as_str(), ec["crv"].as_str(), ec["use"].as_str()), (Some("EC"), Some("P-256"), Some("sig")));
    assert_eq!((b64len(&ec["x"]), b64len(&ec["y"])), (32, 32));
    assert_eq!(ec["kid"], es["kid"]);
    let okp = keys.iter().find(|k| k["alg"] == "EdDSA").unwrap();
    assert_eq!(fields(okp), ["alg", "crv", "kid", "kty", "use", "x"]);
    assert_eq!((okp["kty"].as_str(), okp["crv"].as_str()), (Some("OKP"), Some("Ed25519")));
    assert_eq!(b64len(&okp["x"]), 32);
    let listed = d.cli(&["key", "list", "--tenant", "acme", "-o", "json"]).ok().json();
    assert!(listed.as_array().unwrap().iter().all(|k| k["state"] == "current"), "{listed}");
    let table = d.cli(&["key", "list", "--tenant", "acme"]).ok().stdout;
    assert!(table.contains("ES256") && table.contains("EdDSA") && table.contains("RS256"), "{table}");

    // A second ES256 key: the first ES256 key steps down; RS256 and EdDSA keys stay current.
    let es2 = d.cli(&["key", "rotate", "--tenant", "acme", "--alg", "ES256"]).ok();
    assert!(es2.stdout.contains("now signs new ES256 tokens"), "{}", es2.stdout);
    assert!(
        es2.stderr.contains(es["kid"].as_str().unwrap()),
        "the retire hint names the old ES256 key: {}",
        es2.stderr
    );
    assert!(!es2.stderr.contains(ed["kid"].as_str().unwrap()), "{}", es2.stderr);
    let listed = d.cli(&["key", "list", "--tenant", "acme", "-o", "json"]).ok().json();
    let state = |kid: &Value| listed.as_array().unwrap().iter().find(|k| k["kid"] == *kid).unwrap()["state"].clone();
    assert_eq!(state(&es["kid"]), "previous");
    assert_eq!(state(&ed["kid"]), "current");
    assert_eq!(state(&rsa[0]["kid"]), "current");
    assert_eq!(jwks(&site).len(), 4, "the previous ES256 key stays published");

    // Refusals change nothing.
    let before = d.snapshot();
    let es2_kid = current_kid(&d, "acme", "ES256");
    let r = d.cli(&["key", "retire", "--tenant", "acme", &es2_kid, "--yes"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("key_is_current") && r.stderr.contains("--alg ES256"), "{}", r.stderr);
    let r = d.cli(&["key", "rotate", "--tenant", "acme", "--alg", "HS256"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let raw = |body: &Value| {
        d.admin_raw(&admin_request(
            "POST",
            "/admin/v1/tenants/acme/keys/rotate",
            Some("application/json"),
            body.to_string().as_bytes(),
        ))
    };
    let (s, b) = raw(&json!({"alg": "HS256"}));
    assert_eq!((s, b["error"].as_str()), (400, Some("invalid_input")), "{b}");
    let (s, _) = raw(&json!({"alg": "ES256", "bits": 4096}));
    assert_eq!(s, 400);
    assert_eq!(d.snapshot(), before, "nothing stored by a refusal");
    // An app may not sign with an algorithm its tenant has no key of.
    let other = Site::new(&d, "other", &[]);
    let m2m = app(&other, "m2m", &[]);
    let before = d.snapshot();
    let r = d.cli(&["app", "create", "--tenant", "other", "--name", "M", "--type", "m2m", "--signing-alg", "EdDSA"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("signing_key_missing") && r.stderr.contains("key rotate --tenant other --alg EdDSA"),
        "{}",
        r.stderr
    );
    let r = d.cli(&["app", "update", "--tenant", "other", &m2m.client_id, "--signing-alg", "ES256"]);
    assert!(r.code == 1 && r.stderr.contains("signing_key_missing"), "{}", r.stderr);
    let r = d.cli(&["app", "create", "--tenant", "other", "--name", "X", "--type", "m2m", "--signing-alg", "es256"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(d.snapshot(), before, "nothing stored by a refusal");
}

/// A user's tokens from a code flow of `web`, and the client-credentials token of `m2m`.
fn tokens(site: &Site, web: &App, m2m: &App, email: &str) -> (Value, Value) {
    let (mut soft, _) = site.user_with_passkey(email);
    let p = pkce();
    let (code, _) = code_flow(site, &mut soft, email, web, &p, &[]);
    let user = exchange(site, web, &code, &p);
    assert_eq!(user.status, 200, "{}", user.body);
    let machine = token(site, m2m, &[("grant_type", "client_credentials")]);
    assert_eq!(machine.status, 200, "{}", machine.body);
    (user.json(), machine.json())
}

fn at_hash(alg: &str, access: &str) -> String {
    let (hash, half) = match alg {
        "EdDSA" => (&aws_lc_rs::digest::SHA512, 32),
        _ => (&aws_lc_rs::digest::SHA256, 16),
    };
    URL_SAFE_NO_PAD.encode(&aws_lc_rs::digest::digest(hash, access.as_bytes()).as_ref()[..half])
}

#[test]
fn apps_get_tokens_in_their_alg_and_jose_verifies_them() {
    let d = TestDaemon::start();
    for (n, alg) in ["ES256", "EdDSA"].into_iter().enumerate() {
        let slug = format!("t{n}");
        let site = Site::new(&d, &slug, &[]);
        rotate(&d, &slug, alg);
        let kid = current_kid(&d, &slug, alg);
        let web = app(&site, "web", &["--signing-alg", alg]);
        let m2m = app(&site, "m2m", &["--signing-alg", alg]);
        let shown = d.cli(&["app", "show", "--tenant", &slug, &web.client_id, "-o", "json"]).ok().json();
        assert_eq!(shown["signing_alg"], alg);
        let (user, machine) = tokens(&site, &web, &m2m, "ada@acme.test");
        let access = user["access_token"].as_str().unwrap();
        let id = user["id_token"].as_str().unwrap();
        for (t, aud) in [(access, web.client_id.as_str()), (id, web.client_id.as_str())] {
            let (h, _) = jwt_parts(t);
            assert_eq!((h["alg"].as_str(), h["kid"].as_str()), (Some(alg), Some(kid.as_str())), "{h}");
            let v = jose(&site, t, aud, alg);
            assert_eq!(v["ok"], true, "jose: {v}");
            let v = jose(&site, t, aud, "RS256");
            assert_eq!(v["code"], "ERR_JOSE_ALG_NOT_ALLOWED", "{v}");
        }
        let (_, claims) = jwt_parts(id);
        assert_eq!(claims["at_hash"].as_str(), Some(at_hash(alg, access).as_str()), "{alg}");
        let m = machine["access_token"].as_str().unwrap();
        assert_eq!(jwt_parts(m).0["alg"], alg);
        assert_eq!(jose(&site, m, &m2m.client_id, alg)["ok"], true);
        // The daemon accepts its own tokens: userinfo, introspection.
        assert_eq!(userinfo(&site, access).status, 200);
        assert_eq!(client_post(&site, &web, "introspect", &[("token", access)]).json()["active"], true);
        // Back to RS256: new tokens are RS256, earlier ones still verify (by their kid).
        d.cli(&["app", "update", "--tenant", &slug, &web.client_id, "--signing-alg", "RS256"]).ok();
        let (again, _) = tokens(&site, &web, &m2m, "bob@acme.test");
        assert_eq!(jwt_parts(again["id_token"].as_str().unwrap()).0["alg"], "RS256");
        assert_eq!(userinfo(&site, access).status, 200, "an {alg} token issued before the change");
    }
}

#[test]
fn an_eddsa_apps_logout_tokens_are_signed_eddsa() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    rotate(&d, "acme", "EdDSA");
    let rx = crate::receiver::Receiver::start();
    let web = app(&site, "web", &["--signing-alg", "EdDSA", "--backchannel-logout-uri", &rx.url("/bcl")]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let p = pkce();
    let (code, cookie) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let id_token = exchange(&site, &web, &code, &p).json()["id_token"].as_str().unwrap().to_owned();
    let out = get(&format!("{}/logout?{}", site.base, query(&[("id_token_hint", &id_token)])), Some(&cookie));
    assert!(matches!(out.status, 200 | 302), "the EdDSA ID token is taken as a hint: {}", out.body);
    let got = crate::backchannel::wait_tokens(&rx, 1, 15);
    assert_eq!(got.len(), 1);
    let (h, _) = jwt_parts(&got[0].1);
    assert_eq!((h["alg"].as_str(), h["typ"].as_str()), (Some("EdDSA"), Some("logout+jwt")));
    let jwks = format!("{}/.well-known/jwks.json", site.base);
    let v = node("verify-logout.mjs", &[&jwks, &got[0].1, &site.base, &web.client_id, "EdDSA"]);
    assert_eq!(v["ok"], true, "jose: {v}");
}

/// `header.claims` signed by `key`: a token whose header says what the test wants.
fn forge(key: &latchkey_domain::oidc::keys::SigningKey, header: &Value, claims: &Value) -> String {
    let input =
        format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
    let sig = key.sign(input.as_bytes()).unwrap();
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig))
}

/// A token with its header replaced and its signature kept.
fn relabel(token: &str, header: &Value) -> String {
    let (_, rest) = token.split_once('.').unwrap();
    format!("{}.{rest}", URL_SAFE_NO_PAD.encode(header.to_string()))
}

fn hs256(secret: &[u8], header: &Value, claims: &Value) -> String {
    let input =
        format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
    let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, secret);
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(aws_lc_rs::hmac::sign(&key, input.as_bytes())))
}

#[test]
fn alg_confusion_is_refused_across_all_three() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    rotate(&d, "acme", "ES256");
    rotate(&d, "acme", "EdDSA");
    let web = app(&site, "web", &[]);
    let m2m = app(&site, "m2m", &[]);
    let (user, _) = tokens(&site, &web, &m2m, "ada@acme.test");
    let real = user["access_token"].as_str().unwrap().to_owned();
    let (_, claims) = jwt_parts(&real);
    let keys = current_keys(&d.store, &d.kek_path, "acme");
    assert_eq!(keys.len(), 3);
    let jwks = jwks(&site);
    let accepted = |t: &str| {
        let u = userinfo(&site, t).status;
        let i = client_post(&site, &web, "introspect", &[("token", t)]).json()["active"] == true;
        assert_eq!(u == 200, i, "userinfo and introspection agree on {t}");
        i
    };
    let header = |alg: &str, kid: &str| json!({"alg": alg, "typ": "at+jwt", "kid": kid});
    // Positive controls: each key signs an access token the daemon takes.
    for k in &keys {
        assert!(accepted(&forge(k, &header(k.alg.as_str(), &k.kid), &claims)), "{} control", k.alg);
    }
    let mut refused = 0;
    for k in &keys {
        let alg = k.alg.as_str();
        let own = forge(k, &header(alg, &k.kid), &claims);
        for named in keys.iter().filter(|n| n.kid != k.kid) {
            // Signed by one key, naming another's kid: with the signer's alg, and with the named key's.
            for h in [header(alg, &named.kid), header(named.alg.as_str(), &named.kid)] {
                assert!(!accepted(&forge(k, &h, &claims)), "{alg} key as {h}");
                refused += 1;
            }
            // A real token whose alg is swapped for the other algorithms (signature kept).
            assert!(!accepted(&relabel(&own, &header(named.alg.as_str(), &k.kid))), "{alg} relabelled");
            refused += 1;
        }
        // An HMAC keyed with the key's public material, in each shape a confused verifier might use.
        let jwk = jwks.iter().find(|j| j["kid"] == k.kid.as_str()).unwrap();
        let mut secrets: Vec<Vec<u8>> = vec![jwk.to_string().into_bytes()];
        for f in ["n", "x"] {
            if let Some(v) = jwk[f].as_str() {
                secrets.push(v.as_bytes().to_vec());
                secrets.push(URL_SAFE_NO_PAD.decode(v).unwrap());
            }
        }
        for s in &secrets {
            assert!(!accepted(&hs256(s, &header("HS256", &k.kid), &claims)), "HS256 for {alg}");
            refused += 1;
        }
        // none, and algorithms of the same families we do not sign with.
        let unsigned = format!("{}.", relabel(&own, &header("none", &k.kid)).rsplit_once('.').unwrap().0);
        for t in [unsigned, relabel(&own, &header("ES384", &k.kid)), relabel(&own, &header("PS256", &k.kid))] {
            assert!(!accepted(&t), "{alg}: {t}");
            refused += 1;
        }
    }
    // An ES256 signature in ASN.1 DER instead of JWS's r || s.
    let es = keys.iter().find(|k| k.alg.as_str() == "ES256").unwrap();
    let good = forge(es, &header("ES256", &es.kid), &claims);
    let (input, sig) = good.rsplit_once('.').unwrap();
    let raw = URL_SAFE_NO_PAD.decode(sig).unwrap();
    let der = {
        let int = |b: &[u8]| {
            let b: Vec<u8> = b.iter().copied().skip_while(|x| *x == 0).collect();
            let mut v = if b[0] & 0x80 != 0 { vec![0] } else { vec![] };
            v.extend(b);
            let mut out = vec![2, v.len() as u8];
            out.extend(v);
            out
        };
        let (r, s) = (int(&raw[..32]), int(&raw[32..]));
        let mut out = vec![0x30, (r.len() + s.len()) as u8];
        out.extend(r);
        out.extend(s);
        out
    };
    assert!(!accepted(&format!("{input}.{}", URL_SAFE_NO_PAD.encode(der))));
    // Another tenant's ES256 key, under its own kid or ours.
    Site::new(&d, "other", &[]);
    rotate(&d, "other", "ES256");
    let theirs = current_keys(&d.store, &d.kek_path, "other").into_iter().find(|k| k.alg.as_str() == "ES256").unwrap();
    assert!(!accepted(&forge(&theirs, &header("ES256", &theirs.kid), &claims)));
    assert!(!accepted(&forge(&theirs, &header("ES256", &es.kid), &claims)));
    // A retired ES256 key's tokens stop being accepted.
    let old = good.clone();
    rotate(&d, "acme", "ES256");
    assert!(accepted(&old), "a previous key still verifies");
    d.cli(&["key", "retire", "--tenant", "acme", &es.kid, "--yes"]).ok();
    assert!(!accepted(&old), "a retired key does not");
    assert!(refused >= 30, "{refused} cases");
    assert!(ALGS.iter().all(|a| jwks.iter().any(|k| k["alg"] == *a)));
}
