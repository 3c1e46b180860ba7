//! The attestation policy (`tenant update --attestation-policy verified`, `--allowed-aaguid`) and
//! the FIDO metadata it trusts (`latchkey mds import|status`), with a metadata service and
//! authenticator makers of our own: a root that signs a BLOB, and attestation roots that the BLOB
//! lists for AAGUIDs, all made here with rcgen. The software authenticator sends packed
//! attestation with those certificates, self attestation, or none.

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use base64::Engine as _;
use rcgen::{BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, KeyPair, date_time_ymd};
use serde_json::{Value, json};

use crate::authenticator::{Attester, Soft, Tamper};
use crate::support::*;

/// A certificate with its key.
struct Issued {
    cert: rcgen::Certificate,
    key: KeyPair,
    pkcs8: Vec<u8>,
}

fn new_key() -> (KeyPair, Vec<u8>) {
    let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &SystemRandom::new()).unwrap();
    let pkcs8 = doc.as_ref().to_vec();
    (KeyPair::try_from(pkcs8.as_slice()).unwrap(), pkcs8)
}

/// A certificate for `cn`: a CA, or an attestation certificate as WebAuthn §8.2.1 asks (OU
/// "Authenticator Attestation", not a CA), signed by `by` (self-signed without).
fn issue(cn: &str, ca: bool, by: Option<&Issued>) -> Issued {
    let (key, pkcs8) = new_key();
    issue_for(cn, ca, by, key, pkcs8)
}

/// A CA certificate with an RSA key (as the FIDO Alliance's BLOB signer has), signed by `by`.
fn rsa_signer(cn: &str, by: &Issued) -> Issued {
    let key = KeyPair::generate_rsa_for(&rcgen::PKCS_RSA_SHA256, rcgen::RsaKeySize::_2048).unwrap();
    let pkcs8 = key.serialize_der();
    issue_for(cn, true, Some(by), key, pkcs8)
}

fn issue_for(cn: &str, ca: bool, by: Option<&Issued>, key: KeyPair, pkcs8: Vec<u8>) -> Issued {
    let mut p = CertificateParams::new(vec![]).unwrap();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CountryName, "US");
    dn.push(DnType::OrganizationName, "Test Keys Inc");
    if !ca {
        dn.push(DnType::OrganizationalUnitName, "Authenticator Attestation");
    }
    dn.push(DnType::CommonName, cn);
    p.distinguished_name = dn;
    p.is_ca = if ca { IsCa::Ca(BasicConstraints::Unconstrained) } else { IsCa::ExplicitNoCa };
    p.not_before = date_time_ymd(2020, 1, 1);
    p.not_after = date_time_ymd(2045, 1, 1);
    let cert = match by {
        Some(issuer) => p.signed_by(&key, &issuer.cert, &issuer.key).unwrap(),
        None => p.self_signed(&key).unwrap(),
    };
    Issued { cert, key, pkcs8 }
}

fn der(i: &Issued) -> Vec<u8> {
    i.cert.der().to_vec()
}

fn b64(d: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(d)
}

fn b64url(d: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(d)
}

/// A metadata BLOB (MDS3 JWS: ES256, or RS256 for an RSA signer) signed by `signer`, whose
/// certificate travels in `x5c`.
fn blob(signer: &Issued, serial: i64, entries: &[Value]) -> String {
    let rsa = signer.key.algorithm() == &rcgen::PKCS_RSA_SHA256;
    let header = json!({"alg": if rsa { "RS256" } else { "ES256" }, "typ": "JWT", "x5c": [b64(&der(signer))]});
    let payload = json!({
        "legalHeader": "test metadata, not the FIDO Alliance's",
        "no": serial,
        "nextUpdate": "2027-01-01",
        "entries": entries,
    });
    let signing_input =
        format!("{}.{}", b64url(&serde_json::to_vec(&header).unwrap()), b64url(&serde_json::to_vec(&payload).unwrap()));
    let sig = if rsa {
        let key = aws_lc_rs::rsa::KeyPair::from_pkcs8(&signer.pkcs8).unwrap();
        let mut sig = vec![0; key.public_modulus_len()];
        key.sign(&aws_lc_rs::signature::RSA_PKCS1_SHA256, &SystemRandom::new(), signing_input.as_bytes(), &mut sig)
            .unwrap();
        sig
    } else {
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &signer.pkcs8).unwrap();
        key.sign(&SystemRandom::new(), signing_input.as_bytes()).unwrap().as_ref().to_vec()
    };
    format!("{signing_input}.{}", b64url(&sig))
}

/// One entry of a BLOB: an authenticator model, its attestation root and its status history.
fn entry(aaguid: &str, description: &str, root: &Issued, statuses: &[(&str, &str)]) -> Value {
    json!({
        "aaguid": aaguid,
        "metadataStatement": {
            "description": description,
            "aaguid": aaguid,
            "attestationRootCertificates": [b64(&der(root))],
        },
        "statusReports": statuses.iter().map(|(s, d)| json!({"status": s, "effectiveDate": d})).collect::<Vec<_>>(),
        "timeOfLastStatusChange": "2026-01-01",
    })
}

fn aaguid_bytes(text: &str) -> [u8; 16] {
    unhex(&text.replace('-', "")).try_into().unwrap()
}

const GOOD: &str = "a1a1a1a1-0000-4000-8000-000000000001";
const OTHER: &str = "a2a2a2a2-0000-4000-8000-000000000002";
const REVOKED: &str = "a3a3a3a3-0000-4000-8000-000000000003";
const UNLISTED: &str = "a4a4a4a4-0000-4000-8000-000000000004";

/// An authenticator of a model: its attestation key and chain, and its AAGUID.
fn model(aaguid: &str, chain: &[&Issued], key: &Issued) -> Tamper {
    Tamper {
        aaguid: Some(aaguid_bytes(aaguid)),
        attest: Some(Attester { pkcs8: key.pkcs8.clone(), x5c: chain.iter().map(|c| der(c)).collect() }),
        ..Tamper::default()
    }
}

/// Registers an invitee with `tamper`; returns the finish reply's status, error code and
/// description, and whether the database is unchanged by the finish.
fn register(site: &Site, email: &str, tamper: &Tamper) -> (u16, String, String, bool) {
    let token = site.invite(email, "Tester");
    let start = site.register_start(email, "Tester", Some(&token), None, json!({}));
    assert_eq!(start.status, 200, "{}", start.body);
    let options = start.json();
    let before = site.d.snapshot();
    let credential = Soft::new(&site.origin).create(&options, tamper);
    let r = site.post("/register/finish", &json!({"credential": credential, "challenge": options["challenge"]}), None);
    let code = r.json()["error"].as_str().unwrap_or("").to_owned();
    let description = r.json()["error_description"].as_str().unwrap_or("").to_owned();
    if r.status != 201 {
        assert!(r.session_cookie().is_none());
    }
    (r.status, code, description, site.d.snapshot() == before)
}

/// Expects a refusal saying `why`, and nothing stored.
#[track_caller]
fn refused(site: &Site, email: &str, tamper: &Tamper, why: &str) {
    let (status, code, description, unchanged) = register(site, email, tamper);
    assert_eq!((status, code.as_str()), (403, "authenticator_not_allowed"), "{description}");
    assert!(description.contains(why), "{description:?} should say {why:?}");
    assert!(unchanged, "{why}: a refused registration stores nothing");
}

#[track_caller]
fn accepted(site: &Site, email: &str, tamper: &Tamper) {
    let (status, code, description, _) = register(site, email, tamper);
    assert_eq!((status, code.as_str()), (201, ""), "{email}: {description}");
}

fn shown(d: &TestDaemon) -> Value {
    d.cli(&["tenant", "show", "acme", "-o", "json"]).ok().json()
}

/// A metadata service of our own: its root, the certificate that signs its BLOBs, and the root's
/// PEM file (for `mds import --root`).
fn metadata_service(dir: &std::path::Path) -> (Issued, Issued, String) {
    let root = issue("Test MDS Root", true, None);
    let signer = issue("Test MDS Signer", true, Some(&root));
    let pem = write(dir, "mds-root.pem", &root.cert.pem());
    (root, signer, pem)
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn a_verified_policy_takes_only_attested_models_of_the_imported_metadata() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let dir = tempfile::tempdir().unwrap();

    // The metadata service: a root, and the certificate that signs BLOBs under it.
    let (mds_root, mds_signer, root_pem) = metadata_service(dir.path());
    // The makers: one root per maker; one maker's keys go through an intermediate.
    let maker = issue("Maker Root", true, None);
    let maker_ca = issue("Maker Intermediate", true, Some(&maker));
    let good_key = issue("Maker Key", false, Some(&maker_ca));
    let other_maker = issue("Other Maker Root", true, None);
    let other_key = issue("Other Key", false, Some(&other_maker));
    // A forger's certificate claiming the GOOD model, chaining to its own root.
    let forger = issue("Forger Root", true, None);
    let forged_key = issue("Maker Key", false, Some(&forger));

    let entries = vec![
        entry(GOOD, "Maker Key 5", &maker, &[("FIDO_CERTIFIED", "2025-01-01"), ("FIDO_CERTIFIED_L1", "2025-06-01")]),
        entry(OTHER, "Other Key", &other_maker, &[("FIDO_CERTIFIED", "2025-01-01")]),
        // Certified, then revoked: the latest report is in force.
        entry(REVOKED, "Broken Key", &maker, &[("REVOKED", "2026-03-01"), ("FIDO_CERTIFIED", "2024-01-01")]),
        json!({"attestationCertificateKeyIdentifiers": ["aa"], "metadataStatement": {"description": "a U2F key"}}),
    ];

    // Before any import: nothing to show, and a verified policy is refused.
    let none = d.cli(&["mds", "status"]);
    assert_eq!(none.code, 1);
    assert!(none.stderr.contains("latchkey mds import"), "{}", none.stderr);
    let early = d.cli(&["tenant", "update", "acme", "--attestation-policy", "verified"]);
    assert_eq!(early.code, 1);
    assert!(early.stderr.contains("mds import"), "{}", early.stderr);
    assert_eq!(shown(&d)["attestation_policy"], "any");

    // BLOBs that must not be taken, each changing nothing.
    let before = d.snapshot();
    let good_blob = blob(&mds_signer, 7, &entries);
    let good_file = write(dir.path(), "blob.jwt", &good_blob);
    // Signed under our root, which is not the FIDO Alliance's (no --root).
    let r = d.cli(&["mds", "import", &good_file, "-o", "json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("invalid_metadata") && r.stderr.contains("trusted root"), "{}", r.stderr);
    // A payload changed after signing.
    let mut parts: Vec<String> = good_blob.split('.').map(str::to_owned).collect();
    let forged_payload = json!({"no": 8, "nextUpdate": "2027-01-01", "entries": [entry(UNLISTED, "x", &forger, &[])]});
    parts[1] = b64url(&serde_json::to_vec(&forged_payload).unwrap());
    let tampered = write(dir.path(), "tampered.jwt", &parts.join("."));
    let r = d.cli(&["mds", "import", &tampered, "--root", &root_pem]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("signature does not verify"), "{}", r.stderr);
    // Signed by a certificate of another root than the one given.
    let stranger = issue("Stranger", true, None);
    let r = d.cli(&["mds", "import", &write(dir.path(), "s.jwt", &blob(&stranger, 9, &entries)), "--root", &root_pem]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("trusted root"), "{}", r.stderr);
    let r = d.cli(&["mds", "import", &write(dir.path(), "junk.jwt", "not a blob")]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("three parts"), "{}", r.stderr);
    assert_eq!(d.snapshot(), before, "refused BLOBs store nothing");

    // The real thing.
    let imported = d.cli(&["mds", "import", &good_file, "--root", &root_pem, "-o", "json"]).ok().json();
    assert_eq!(imported["serial"], 7);
    assert_eq!(imported["authenticators"], 3, "the U2F entry (no AAGUID) is left out");
    assert_eq!(imported["refused"], 1);
    assert_eq!(imported["next_update"], "2027-01-01");
    let table = d.cli(&["mds", "status"]).ok().stdout;
    assert!(table.contains("next update") && table.contains("2027-01-01"), "{table}");
    // The same serial again is a roll-back unless forced.
    let r = d.cli(&["mds", "import", &good_file, "--root", &root_pem]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("metadata_not_newer") && r.stderr.contains("--force"), "{}", r.stderr);
    // Taken with --force; this one signed with RS256 by an RSA certificate, as the FIDO
    // Alliance's are.
    let rsa_blob = blob(&rsa_signer("Test MDS RSA Signer", &mds_root), 7, &entries);
    d.cli(&["mds", "import", &write(dir.path(), "rsa.jwt", &rsa_blob), "--root", &root_pem, "--force"]).ok();
    let audit = d.cli(&["audit", "--action", "mds.import", "-o", "json"]).ok().json();
    assert!(audit.as_array().unwrap().len() >= 2, "{audit}");

    // Policies that make no sense are refused; the tenant stays as it was.
    for (args, needle) in [
        (vec!["--attestation-policy", "verified", "--allowed-aaguid", "yubikey"], "not an AAGUID"),
        (vec!["--attestation-policy", "verified", "--allowed-aaguid", UNLISTED], "not in the imported"),
        (vec!["--allowed-aaguid", GOOD], "need --attestation-policy verified"),
    ] {
        let mut all = vec!["tenant", "update", "acme"];
        all.extend(args);
        let r = d.cli(&all);
        assert_eq!(r.code, 1, "{all:?}");
        assert!(r.stderr.contains(needle), "{all:?}: {}", r.stderr);
    }
    assert_eq!(shown(&d)["attestation_policy"], "any");

    // Under `any`, an authenticator without attestation registers.
    accepted(&site, "before@acme.test", &Tamper::default());
    let (mut early, _) = site.user_with_passkey("early@acme.test");

    let t = d.cli(&["tenant", "update", "acme", "--attestation-policy", "verified", "-o", "json"]).ok().json();
    assert_eq!(
        (t["attestation_policy"].as_str(), t["allowed_aaguids"].as_array().map(Vec::len)),
        (Some("verified"), Some(0))
    );
    // The options ask for direct attestation whatever the caller asked.
    let token = site.invite("options@acme.test", "Tester");
    let start = site.register_start("options@acme.test", "Tester", Some(&token), None, json!({"attestation": "none"}));
    assert_eq!(start.json()["attestation"], "direct");

    refused(&site, "none@acme.test", &model(GOOD, &[], &good_key).without_attestation(), "sent no attestation");
    refused(
        &site,
        "self@acme.test",
        &Tamper { fmt_packed_self: true, aaguid: Some(aaguid_bytes(GOOD)), ..Tamper::default() },
        "self-signed",
    );
    refused(
        &site,
        "zero@acme.test",
        &model("00000000-0000-0000-0000-000000000000", &[&good_key, &maker_ca], &good_key),
        "gives no model",
    );
    refused(
        &site,
        "unlisted@acme.test",
        &model(UNLISTED, &[&good_key, &maker_ca], &good_key),
        "not in the FIDO metadata",
    );
    refused(&site, "revoked@acme.test", &model(REVOKED, &[&good_key, &maker_ca], &good_key), "status REVOKED");
    refused(&site, "forged@acme.test", &model(GOOD, &[&forged_key], &forged_key), "not from its maker");
    refused(&site, "wrongmodel@acme.test", &model(GOOD, &[&other_key], &other_key), "not from its maker");
    refused(&site, "nointer@acme.test", &model(GOOD, &[&good_key], &good_key), "not from its maker");

    accepted(&site, "good@acme.test", &model(GOOD, &[&good_key, &maker_ca], &good_key));
    accepted(&site, "other@acme.test", &model(OTHER, &[&other_key], &other_key));

    // A list of allowed models narrows it further.
    let t = d.cli(&["tenant", "update", "acme", "--allowed-aaguid", &OTHER.to_uppercase(), "-o", "json"]).ok().json();
    assert_eq!(t["allowed_aaguids"], json!([OTHER]));
    assert!(d.cli(&["tenant", "show", "acme"]).ok().stdout.contains(OTHER));
    refused(&site, "good2@acme.test", &model(GOOD, &[&good_key, &maker_ca], &good_key), "list of allowed");
    accepted(&site, "other2@acme.test", &model(OTHER, &[&other_key], &other_key));
    let t = d.cli(&["tenant", "update", "acme", "--allowed-aaguid", "any", "-o", "json"]).ok().json();
    assert_eq!((t["attestation_policy"].as_str(), &t["allowed_aaguids"]), (Some("verified"), &json!([])));
    accepted(&site, "good3@acme.test", &model(GOOD, &[&good_key, &maker_ca], &good_key));

    // Passkeys registered before the policy still sign in; another tenant is not bound by it.
    assert_eq!(site.sign_in(&mut early, Some("early@acme.test"), &Tamper::default()).status, 200);
    let other = Site::new(&d, "beta", &[]);
    accepted(&other, "free@beta.test", &Tamper::default());
    // Configuration as code carries the policy: export shows it, apply sets it (checked alike).
    d.cli(&["tenant", "update", "acme", "--allowed-aaguid", OTHER]).ok();
    let exported = d.cli(&["export", "--tenant", "acme"]).ok().stdout;
    assert!(exported.contains("attestation_policy = \"verified\""), "{exported}");
    assert!(exported.contains(OTHER), "{exported}");
    let file = write(dir.path(), "acme.toml", &exported);
    let again = d.cli(&["apply", "-f", &file, "-o", "json"]).ok().json();
    assert_eq!(again["changes"], json!([]), "export then apply changes nothing: {again}");
    let bad = exported.replace(OTHER, UNLISTED);
    let r = d.cli(&["apply", "-f", &write(dir.path(), "bad.toml", &bad)]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("not in the imported FIDO metadata"), "{}", r.stderr);
    let looser = exported.replace(&format!("allowed_aaguids = [\"{OTHER}\"]"), "allowed_aaguids = []");
    let plan = d.cli(&["apply", "-f", &write(dir.path(), "looser.toml", &looser)]).ok().stdout;
    assert!(plan.contains("allowed_aaguids"), "{plan}");
    assert_eq!(shown(&d)["allowed_aaguids"], json!([]));

    // Back to any: attestation is asked for no more, and none is needed.
    d.cli(&["tenant", "update", "acme", "--attestation-policy", "any"]).ok();
    accepted(&site, "after@acme.test", &Tamper::default());
    let start = site.register_start("x@acme.test", "X", None, None, json!({}));
    assert_eq!(start.status, 403, "registration by invitation only, as before");
}

trait WithoutAttestation {
    fn without_attestation(self) -> Self;
}

impl WithoutAttestation for Tamper {
    fn without_attestation(self) -> Self {
        Tamper { attest: None, ..self }
    }
}

/// Chromium's virtual security key under a verified policy: refused (in the page's language, as
/// an alert) while the metadata does not list its model, accepted once metadata listing its model
/// with its attestation certificate as the root is imported.
#[test]
fn chromium_security_key_under_a_verified_policy() {
    if sqlite_only("the page and the policy check do not depend on the engine") {
        return;
    }
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let dir = tempfile::tempdir().unwrap();
    let (_, mds_signer, root_pem) = metadata_service(dir.path());
    let maker = issue("Maker Root", true, None);
    let first = blob(&mds_signer, 1, &[entry(GOOD, "Maker Key 5", &maker, &[("FIDO_CERTIFIED", "2025-01-01")])]);
    d.cli(&["mds", "import", &write(dir.path(), "1.jwt", &first), "--root", &root_pem]).ok();
    d.cli(&["tenant", "update", "acme", "--attestation-policy", "verified"]).ok();

    let invite = |email: &str| format!("{}/invite/{}", site.base, site.invite(email, "Tester"));
    let seen = node("attested-passkey.mjs", &[&invite("ada@acme.test")]);
    assert_eq!(seen["conveyance"], "direct", "{seen}");
    assert_eq!(seen["outcome"], "refused", "{seen}");
    assert_eq!(seen["role"], "alert");
    assert!(seen["message"].as_str().unwrap().starts_with("Your organisation accepts only"), "{seen}");
    assert_eq!(seen["fmt"], "packed", "Chromium's virtual key attests: {seen}");
    let x5c: Vec<Vec<u8>> = seen["x5c"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| base64::engine::general_purpose::STANDARD.decode(c.as_str().unwrap()).unwrap())
        .collect();
    assert!(!x5c.is_empty(), "{seen}");
    assert_eq!(d.sql().i64("SELECT count(*) FROM credentials"), 0);

    // Metadata listing the model, with the top of its chain as the root.
    let aaguid = seen["aaguid"].as_str().unwrap();
    let mut listed = entry(aaguid, "Chromium virtual authenticator", &maker, &[("FIDO_CERTIFIED", "2025-01-01")]);
    listed["metadataStatement"]["attestationRootCertificates"] = json!([b64(x5c.last().unwrap())]);
    let second = blob(&mds_signer, 2, &[listed]);
    d.cli(&["mds", "import", &write(dir.path(), "2.jwt", &second), "--root", &root_pem]).ok();
    let seen = node("attested-passkey.mjs", &[&invite("bea@acme.test")]);
    assert_eq!(seen["outcome"], "account", "{seen}");
    let list = d.cli(&["credential", "list", "--tenant", "acme", "bea@acme.test", "-o", "json"]).ok().json();
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
}
