//! The RSA signing engine (`[signing] rsa_engine`, SPEC §12): aws-lc by default; the AVX-512 IFMA
//! pair signer only when asked for (and the CPU has it). `latchkey status` names the engine in
//! use, and every token either signs verifies under the tenant's published key.

use aws_lc_rs::signature::{RSA_PKCS1_2048_8192_SHA256, RsaPublicKeyComponents};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use latchkey_domain::config::RsaEngine;
use serde_json::Value;

use crate::oidc_support::*;
use crate::support::*;

/// Whether `token` is an RS256 JWT whose signature aws-lc verifies under the tenant's JWKS key
/// named by its `kid`.
fn verifies(site: &Site, token: &str) -> bool {
    let jwks = http_get(&format!("{}/.well-known/jwks.json", site.base), None).json();
    let (header, _) = jwt_parts(token);
    let Some(jwk) = jwks["keys"].as_array().and_then(|k| k.iter().find(|k| k["kid"] == header["kid"])) else {
        return false;
    };
    let part = |v: &Value| URL_SAFE_NO_PAD.decode(v.as_str().unwrap()).unwrap();
    let (input, sig) = token.rsplit_once('.').unwrap();
    let public = RsaPublicKeyComponents { n: part(&jwk["n"]), e: part(&jwk["e"]) };
    header["alg"] == "RS256"
        && public.verify(&RSA_PKCS1_2048_8192_SHA256, input.as_bytes(), &URL_SAFE_NO_PAD.decode(sig).unwrap()).is_ok()
}

/// A code exchange (an ID token and an access token: signed as a pair when the engine pairs) and
/// client-credentials grants (one token each: paired across requests when they meet), all of
/// which must verify.
fn issue_and_verify(d: &TestDaemon) {
    let site = Site::new(d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let p = pkce();
    let (code, _) = code_flow(&site, &mut soft, "ada@acme.test", &web, &p, &[]);
    let r = exchange(&site, &web, &code, &p);
    assert_eq!(r.status, 200, "{}", r.body);
    let t = r.json();
    for name in ["id_token", "access_token"] {
        assert!(verifies(&site, t[name].as_str().unwrap()), "the {name} of a code exchange verifies");
    }
    let m2m = app(&site, "m2m", &[]);
    let grants: Vec<String> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    let r = token(&site, &m2m, &[("grant_type", "client_credentials")]);
                    assert_eq!(r.status, 200, "{}", r.body);
                    r.json()["access_token"].as_str().unwrap().to_owned()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    for (i, access) in grants.iter().enumerate() {
        assert!(verifies(&site, access), "client-credentials token {i} verifies");
    }
}

fn engine_in_status(d: &TestDaemon) -> String {
    let status = d.cli(&["status", "-o", "json"]).ok().json();
    let table = d.cli(&["status"]).ok().stdout;
    let engine = status["rsa_engine"].as_str().unwrap_or_else(|| panic!("no rsa_engine in {status}")).to_owned();
    assert!(
        table.lines().any(|l| l.contains("rsa engine") && l.contains(&format!(" {engine} "))),
        "the table shows the engine too:\n{table}"
    );
    engine
}

/// Signatures made two at a time so far (the counter is the process's: no other test asks for
/// the pair signer).
fn vector_pairs(d: &TestDaemon) -> u64 {
    let metrics = d.metrics();
    let line = "latchkey_token_signatures_total{method=\"vector_pair\"} ";
    let value = metrics.lines().find_map(|l| l.strip_prefix(line)).unwrap_or_else(|| panic!("{line} in {metrics}"));
    value.parse().unwrap()
}

#[test]
fn aws_lc_signs_by_default_and_the_pair_signer_is_opt_in() {
    let d = TestDaemon::start();
    assert_eq!(engine_in_status(&d), "aws-lc");
    let before = vector_pairs(&d);
    issue_and_verify(&d);
    assert_eq!(vector_pairs(&d), before, "aws-lc makes no vector signature");
    drop(d);

    let d = TestDaemon::start_with(|f| f.signing.rsa_engine = Some("ifma-pairs".into()));
    // On a CPU without AVX-512 IFMA the daemon warns and signs with aws-lc, and says so.
    let engine = latchkey_domain::oidc::signer::effective(RsaEngine::IfmaPairs);
    assert_eq!(engine_in_status(&d), engine.as_str());
    let before = vector_pairs(&d);
    issue_and_verify(&d);
    if engine == RsaEngine::IfmaPairs {
        // At least the code exchange's ID and access tokens.
        assert!(vector_pairs(&d) >= before + 2, "the pair signer signed");
    }
}
