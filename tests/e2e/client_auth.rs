//! `private_key_jwt` client authentication (RFC 7523): applications registered with a JWK Set
//! (a file, or a `jwks_uri` served on loopback) authenticate with client assertions made by
//! outside libraries — `openid-client` (npm) and authlib (PyPI) — with ES256, EdDSA and RS256
//! keys; and every assertion that is replayed, too long-lived, for another audience, signed by
//! another key or algorithm, or mixed with a secret is refused with `invalid_client`.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use latchkey::admin::SigningAlg;
use latchkey_domain::oidc::keys::{SigningKey, generate_for};
use serde_json::{Value, json};

use crate::oidc_support::*;
use crate::support::*;

/// A client key: the key (to sign assertions in the test), its PKCS#8 PEM (for the outside
/// libraries) and its public JWK with `kid`.
struct ClientKey {
    key: SigningKey,
    pem: String,
    jwk: Value,
}

fn client_key(alg: SigningAlg, kid: &str) -> ClientKey {
    let g = generate_for(alg, 2048).unwrap();
    let key = SigningKey::parsed(alg, kid, g.bits, &g.pkcs8, latchkey_domain::config::RsaEngine::AwsLc).unwrap();
    let body: Vec<String> =
        STANDARD.encode(&g.pkcs8).as_bytes().chunks(64).map(|c| String::from_utf8(c.to_vec()).unwrap()).collect();
    let pem = format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n", body.join("\n"));
    let jwk = serde_json::to_value(&key.jwk).unwrap();
    ClientKey { key, pem, jwk }
}

fn jwks_file(d: &TestDaemon, name: &str, keys: &[&ClientKey]) -> String {
    let path = d.dir.path().join(name);
    let set = json!({"keys": keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>()});
    std::fs::write(&path, set.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

fn pem_file(d: &TestDaemon, name: &str, k: &ClientKey) -> String {
    let path = d.dir.path().join(name);
    std::fs::write(&path, &k.pem).unwrap();
    path.to_str().unwrap().to_owned()
}

fn pkjwt_app(site: &Site, name: &str, keys: &[&str]) -> String {
    let mut args = vec!["app", "create", "--tenant", &site.slug, "--name", name, "--type", "m2m", "--token-auth"];
    args.push("private_key_jwt");
    args.extend_from_slice(keys);
    args.extend_from_slice(&["-o", "json"]);
    let a = site.d.cli(&args).ok().json();
    assert!(a.get("client_secret").is_none(), "no secret for a private_key_jwt app: {a}");
    assert_eq!(a["token_auth"], "private_key_jwt");
    assert_eq!(a["confidential"], true);
    a["client_id"].as_str().unwrap().to_owned()
}

/// A JWK Set served at `http://127.0.0.1:PORT/jwks` (any GET), for `jwks_uri`.
fn serve_json(body: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://127.0.0.1:{port}/jwks")
}

fn token_endpoint(site: &Site) -> String {
    format!("{}/token", site.base)
}

/// A client assertion with `header` and `claims`, signed by `key`.
fn assertion(key: &SigningKey, header: &Value, claims: &Value) -> String {
    let input =
        format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
    format!("{input}.{}", URL_SAFE_NO_PAD.encode(key.sign(input.as_bytes()).unwrap()))
}

/// A client-credentials grant authenticated by `assertion` (and `extra` form fields / headers).
fn grant(site: &Site, form: &[(&str, &str)], headers: &[(&str, &str)]) -> Http {
    let mut f = vec![("grant_type", "client_credentials")];
    f.extend_from_slice(form);
    send_raw("POST", &token_endpoint(site), Some("application/x-www-form-urlencoded"), query(&f).into_bytes(), headers)
}

const TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

#[test]
fn outside_clients_authenticate_with_private_key_jwt() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let discovery = get(&format!("{}/.well-known/openid-configuration", site.base), None).json();
    assert!(discovery["token_endpoint_auth_methods_supported"].as_array().unwrap().contains(&json!("private_key_jwt")));
    assert_eq!(
        discovery["token_endpoint_auth_signing_alg_values_supported"],
        json!(["RS256", "ES256", "EdDSA", "Ed25519"])
    );
    for (n, alg) in [SigningAlg::ES256, SigningAlg::EdDSA, SigningAlg::RS256].into_iter().enumerate() {
        let k = client_key(alg, &format!("k-{alg}"));
        let file = jwks_file(&d, &format!("jwks-{n}.json"), &[&k]);
        let client_id = pkjwt_app(&site, &format!("Service {alg}"), &["--jwks", &file]);
        let pem = pem_file(&d, &format!("key-{n}.pem"), &k);
        let kid = k.jwk["kid"].as_str().unwrap().to_owned();
        let js = node("pkjwt-client.mjs", &[&site.base, &client_id, alg.as_str(), &pem, &kid]);
        assert_eq!(js["ok"], true, "openid-client with {alg}: {js}");
        let py = python("pkjwt_grant.py", &[&token_endpoint(&site), &client_id, alg.as_str(), &pem, &kid]);
        assert_eq!(py["status"], 200, "authlib with {alg}: {py}");
        assert!(py["body"]["access_token"].is_string());
        // authlib's own default lifetime (an hour) is more than five minutes: refused.
        let long = python("pkjwt_grant.py", &[&token_endpoint(&site), &client_id, alg.as_str(), &pem, &kid, "3600"]);
        assert_eq!((long["status"].as_i64(), long["body"]["error"].as_str()), (Some(401), Some("invalid_client")));
    }
    // Keys published at a jwks_uri.
    let k = client_key(SigningAlg::ES256, "published");
    let uri = serve_json(json!({"keys": [k.jwk]}).to_string());
    let client_id = pkjwt_app(&site, "Published", &["--jwks-uri", &uri]);
    let shown = d.cli(&["app", "show", "--tenant", "acme", &client_id]).ok().stdout;
    assert!(shown.contains(&uri), "{shown}");
    let pem = pem_file(&d, "published.pem", &k);
    let js = node("pkjwt-client.mjs", &[&site.base, &client_id, "ES256", &pem, "published"]);
    assert_eq!(js["ok"], true, "openid-client via jwks_uri: {js}");
    // `export` carries how the apps authenticate and their keys; applying it changes nothing.
    let exported = d.cli(&["export", "--tenant", "acme"]).ok().stdout;
    assert!(exported.contains("token_auth = \"private_key_jwt\"") && exported.contains(&uri), "{exported}");
    let file = d.dir.path().join("exported.toml");
    std::fs::write(&file, &exported).unwrap();
    let again = d.cli(&["apply", "-f", file.to_str().unwrap()]).ok();
    assert!(again.stdout.contains("No changes"), "{}", again.stdout);
    // How an app authenticates is set when it is created: a file that changes it is refused.
    let as_secret_apps: Vec<&str> =
        exported.lines().filter(|l| !l.starts_with("token_auth") && !l.starts_with("jwks")).collect();
    std::fs::write(&file, as_secret_apps.join("\n")).unwrap();
    let r = d.cli(&["apply", "-f", file.to_str().unwrap()]);
    assert!(r.code == 1 && r.stderr.contains("token_auth cannot change"), "{}", r.stderr);
}

#[test]
fn bad_client_assertions_are_refused_and_nothing_is_stored() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let k = client_key(SigningAlg::ES256, "k1");
    let file = jwks_file(&d, "jwks.json", &[&k]);
    let client_id = pkjwt_app(&site, "Service", &["--jwks", &file]);
    let secret_app = app(&site, "m2m", &[]);
    let now = now();
    let claims = |extra: Value| {
        let mut c = json!({"iss": client_id, "sub": client_id, "aud": token_endpoint(&site), "exp": now + 120,
                           "iat": now, "jti": format!("j-{}", rand_id())});
        c.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        c
    };
    let es = json!({"alg": "ES256", "kid": "k1", "typ": "JWT"});
    let with = |a: &str| grant(&site, &[("client_assertion_type", TYPE), ("client_assertion", a)], &[]);
    // The control, then its replay.
    let good = assertion(&k.key, &es, &claims(json!({})));
    let r = with(&good);
    assert_eq!(r.status, 200, "{}", r.body);
    let token = r.json()["access_token"].as_str().unwrap().to_owned();
    let r = with(&good);
    assert_eq!((r.status, r.json()["error"].as_str()), (401, Some("invalid_client")));
    // One description for every failure (Client IDs cannot be probed); the log says why.
    assert!(r.json()["error_description"].as_str().unwrap().starts_with("client authentication failed"), "{}", r.body);
    // The app holds a secret hash nobody knows: a node of an earlier release refuses it rather
    // than taking it for a public client.
    assert_eq!(
        d.sql().i64(&format!(
            "SELECT count(*) FROM applications WHERE client_id = '{client_id}' AND secret_hash IS NOT NULL"
        )),
        1
    );
    // The issuer as audience is accepted too, and so is introspection with an assertion.
    let r = with(&assertion(&k.key, &es, &claims(json!({"aud": site.base}))));
    assert_eq!(r.status, 200, "{}", r.body);
    let intro = client_post_assertion(&site, &k.key, &es, &claims(json!({})), &token);
    assert_eq!(intro["active"], true, "{intro}");
    // A web app that authenticates with assertions pushes its requests with one addressed to the
    // PAR endpoint; the assertion is not kept with the request.
    let web_key = client_key(SigningAlg::EdDSA, "w1");
    let web_file = jwks_file(&d, "web-jwks.json", &[&web_key]);
    let web = site
        .d
        .cli(&[
            "app",
            "create",
            "--tenant",
            "acme",
            "--name",
            "Web",
            "--type",
            "web",
            "--redirect-uri",
            "https://web.example/cb",
            "--token-auth",
            "private_key_jwt",
            "--jwks",
            &web_file,
            "-o",
            "json",
        ])
        .ok()
        .json();
    let web_id = web["client_id"].as_str().unwrap().to_owned();
    let web_assertion = assertion(
        &web_key.key,
        &json!({"alg": "Ed25519", "kid": "w1"}),
        &json!({"iss": web_id, "sub": web_id, "aud": format!("{}/par", site.base), "exp": now + 60, "jti": "p1"}),
    );
    let pushed = send_raw(
        "POST",
        &format!("{}/par", site.base),
        Some("application/x-www-form-urlencoded"),
        query(&[
            ("response_type", "code"),
            ("redirect_uri", "https://web.example/cb"),
            ("client_assertion_type", TYPE),
            ("client_assertion", &web_assertion),
        ])
        .into_bytes(),
        &[],
    );
    assert_eq!(pushed.status, 201, "{}", pushed.body);
    assert_eq!(d.sql().i64("SELECT count(*) FROM pushed_requests WHERE params LIKE '%client_assertion%'"), 0);
    d.sql().exec("DELETE FROM pushed_requests");
    let jtis = || d.sql().i64("SELECT count(*) FROM client_assertion_jtis");
    // The same web app through the authorization code flow, its exchange authenticated by an
    // EdDSA assertion; then the m2m token revoked with an assertion.
    let web_app = App { client_id: web_id.clone(), secret: None, redirect: "https://web.example/cb".into() };
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let p = pkce();
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web_app, &p, &[]);
    let exchange_assertion = assertion(
        &web_key.key,
        &json!({"alg": "EdDSA", "kid": "w1"}),
        &json!({"iss": web_id, "sub": web_id, "aud": token_endpoint(&site), "exp": now + 60, "jti": "x1"}),
    );
    let r = send_raw(
        "POST",
        &token_endpoint(&site),
        Some("application/x-www-form-urlencoded"),
        query(&[
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", "https://web.example/cb"),
            ("code_verifier", p.verifier.as_str()),
            ("client_assertion_type", TYPE),
            ("client_assertion", &exchange_assertion),
        ])
        .into_bytes(),
        &[],
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.json()["id_token"].is_string());
    let revoke = send_raw(
        "POST",
        &format!("{}/revoke", site.base),
        Some("application/x-www-form-urlencoded"),
        query(&[
            ("token", token.as_str()),
            ("client_assertion_type", TYPE),
            ("client_assertion", &assertion(&k.key, &es, &claims(json!({})))),
        ])
        .into_bytes(),
        &[],
    );
    assert_eq!(revoke.status, 200, "{}", revoke.body);
    assert_eq!(client_post_assertion(&site, &k.key, &es, &claims(json!({})), &token)["active"], false, "revoked");
    assert_eq!(jtis(), 7);
    // Keys at a jwks_uri that does not answer: not authenticated.
    let gone = format!("http://127.0.0.1:{}/jwks", crate::receiver::Receiver::down());
    let gone_id = pkjwt_app(&site, "Gone", &["--jwks-uri", &gone]);
    let r = with(&assertion(
        &k.key,
        &es,
        &json!({"iss": gone_id, "sub": gone_id, "aud": token_endpoint(&site), "exp": now + 60, "jti": "g1"}),
    ));
    assert_eq!((r.status, r.json()["error"].as_str()), (401, Some("invalid_client")), "{}", r.body);
    assert_eq!(jtis(), 7);

    let other = client_key(SigningAlg::ES256, "k1");
    let ed = client_key(SigningAlg::EdDSA, "k1");
    let x = k.jwk["x"].as_str().unwrap();
    let hmac = {
        let header = json!({"alg": "HS256", "kid": "k1"});
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims(json!({})).to_string())
        );
        let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, x.as_bytes());
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(aws_lc_rs::hmac::sign(&key, input.as_bytes())))
    };
    let unsigned = {
        let header = json!({"alg": "none", "kid": "k1"});
        format!(
            "{}.{}.",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims(json!({})).to_string())
        )
    };
    let refused: Vec<(&str, String)> = vec![
        ("exp beyond 5 minutes", assertion(&k.key, &es, &claims(json!({"exp": now + 301})))),
        ("expired", assertion(&k.key, &es, &claims(json!({"exp": now - 1})))),
        ("another audience", assertion(&k.key, &es, &claims(json!({"aud": "https://elsewhere.example/token"})))),
        ("sub not the client", assertion(&k.key, &es, &claims(json!({"sub": "someone"})))),
        ("no jti", {
            let mut c = claims(json!({}));
            c.as_object_mut().unwrap().remove("jti");
            assertion(&k.key, &es, &c)
        }),
        ("not yet valid", assertion(&k.key, &es, &claims(json!({"nbf": now + 60})))),
        ("another key, same kid", assertion(&other.key, &es, &claims(json!({})))),
        (
            "EdDSA under the ES256 key's kid",
            assertion(&ed.key, &json!({"alg": "EdDSA", "kid": "k1"}), &claims(json!({}))),
        ),
        ("an unknown kid", assertion(&k.key, &json!({"alg": "ES256", "kid": "k2"}), &claims(json!({})))),
        ("HS256 keyed with the public key", hmac),
        ("alg none", unsigned),
    ];
    let before = d.snapshot();
    for (what, a) in &refused {
        let r = with(a);
        assert_eq!((r.status, r.json()["error"].as_str()), (401, Some("invalid_client")), "{what}: {}", r.body);
    }
    // Mixed or misplaced methods.
    let fresh = || assertion(&k.key, &es, &claims(json!({})));
    let f = fresh();
    let r = grant(&site, &[("client_assertion_type", "urn:example:other"), ("client_assertion", &f)], &[]);
    assert_eq!((r.status, r.json()["error"].as_str()), (400, Some("invalid_request")), "{}", r.body);
    let r = grant(
        &site,
        &[("client_assertion_type", TYPE), ("client_assertion", &f)],
        &[("Authorization", &basic_auth(&client_id, "x"))],
    );
    assert_eq!((r.status, r.json()["error"].as_str()), (400, Some("invalid_request")), "two methods: {}", r.body);
    let r = grant(&site, &[("client_id", &client_id), ("client_secret", "guess")], &[]);
    assert_eq!((r.status, r.json()["error"].as_str()), (401, Some("invalid_client")), "a secret: {}", r.body);
    let r = grant(&site, &[("client_id", &client_id)], &[]);
    assert_eq!((r.status, r.json()["error"].as_str()), (401, Some("invalid_client")), "nothing: {}", r.body);
    // An assertion naming a secret app is not how that app authenticates.
    let theirs = assertion(
        &k.key,
        &es,
        &json!({"iss": secret_app.client_id, "sub": secret_app.client_id, "aud": token_endpoint(&site),
                "exp": now + 60, "jti": "t1"}),
    );
    let r = with(&theirs);
    assert_eq!((r.status, r.json()["error"].as_str()), (401, Some("invalid_client")), "{}", r.body);
    assert_eq!(d.snapshot(), before, "nothing stored by a refused assertion");

    // Registration refusals.
    let private = d.dir.path().join("private.json");
    let mut with_d = k.jwk.clone();
    with_d["d"] = json!("jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI");
    std::fs::write(&private, json!({"keys": [with_d]}).to_string()).unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["--type", "m2m", "--token-auth", "private_key_jwt"],
        vec![
            "--type",
            "spa",
            "--redirect-uri",
            "https://a.example/cb",
            "--token-auth",
            "private_key_jwt",
            "--jwks",
            &file,
        ],
        vec!["--type", "m2m", "--token-auth", "private_key_jwt", "--jwks", private.to_str().unwrap()],
        vec!["--type", "m2m", "--jwks", &file],
        vec!["--type", "m2m", "--token-auth", "private_key_jwt", "--jwks-uri", "ftp://keys.example/jwks"],
    ];
    for (i, extra) in cases.iter().enumerate() {
        let mut args = vec!["app", "create", "--tenant", "acme", "--name", "Refused"];
        args.extend_from_slice(extra);
        let r = d.cli(&args);
        assert_eq!(r.code, 1, "case {i}: {}", r.stdout);
        assert!(r.stderr.contains("invalid_input"), "case {i}: {}", r.stderr);
    }
    let r = d.cli(&["app", "rotate-secret", "--tenant", "acme", &client_id]);
    assert!(r.code == 1 && r.stderr.contains("private_key_jwt"), "{}", r.stderr);
    assert_eq!(d.snapshot(), before, "nothing stored by a refused registration");

    // New keys replace the old ones.
    let k2 = client_key(SigningAlg::EdDSA, "k2");
    let file2 = jwks_file(&d, "jwks2.json", &[&k2]);
    d.cli(&["app", "update", "--tenant", "acme", &client_id, "--jwks", &file2]).ok();
    assert_eq!(with(&fresh()).status, 401, "the old key no longer authenticates");
    let r = with(&assertion(&k2.key, &json!({"alg": "EdDSA", "kid": "k2"}), &claims(json!({}))));
    assert_eq!(r.status, 200, "{}", r.body);
}

/// `/introspect` of `token`, authenticated by an assertion of `key`.
fn client_post_assertion(site: &Site, key: &SigningKey, header: &Value, claims: &Value, token: &str) -> Value {
    send_raw(
        "POST",
        &format!("{}/introspect", site.base),
        Some("application/x-www-form-urlencoded"),
        query(&[
            ("token", token),
            ("client_assertion_type", TYPE),
            ("client_assertion", &assertion(key, header, claims)),
        ])
        .into_bytes(),
        &[],
    )
    .json()
}

fn rand_id() -> String {
    URL_SAFE_NO_PAD.encode(latchkey_domain::crypto::random_bytes::<12>().unwrap())
}
