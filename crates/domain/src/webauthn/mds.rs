//! WIP (compiles; not wired to any command yet): the FIDO Metadata Service (MDS3) BLOB check for
//! issue 49 item 5 (`latchkey mds import FILE`). To go in crates/domain/src/webauthn/mds.rs with
//! `x509-cert = "0.2"` (already in the lock through another crate) and `der`/`const-oid`.
//!
//! The BLOB is a compact JWS: header {alg: RS256|ES256, typ: JWT, x5c: [leaf, intermediates…]}
//! (standard base64 DER), payload {legalHeader, no, nextUpdate, entries: [{aaguid?,
//! metadataStatement: {description, attestationRootCertificates: [base64 DER…], …},
//! statusReports: [{status, effectiveDate?}…], timeOfLastStatusChange}]}.
//! Checked: each certificate signed by the next (name chaining, CA basic constraint, validity at
//! `now`), the last signed by (or equal to) a trusted root, the JWS signature by the leaf's key.

use aws_lc_rs::signature::{self, UnparsedPublicKey, VerificationAlgorithm};
use base64::Engine as _;
use der::asn1::ObjectIdentifier;
use der::{Decode, Encode};
use x509_cert::Certificate;
use x509_cert::ext::pkix::BasicConstraints;
use x509_cert::spki::SubjectPublicKeyInfoOwned;

const RSA_SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.11");
const RSA_SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.12");
const ECDSA_SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.2");
const ECDSA_SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.3");
const P256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
const P384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.34");

pub struct Entry {
    pub aaguid: String,
    pub description: String,
    /// The latest status report's status (FIDO_CERTIFIED, REVOKED, ATTESTATION_KEY_COMPROMISE…).
    pub status: String,
    pub roots: Vec<Vec<u8>>,
}

pub struct Blob {
    pub no: i64,
    pub next_update: String,
    pub entries: Vec<Entry>,
}

/// Statuses that refuse an authenticator whatever the policy says.
pub fn refused_status(status: &str) -> bool {
    status == "REVOKED" || status.ends_with("_COMPROMISE") || status == "USER_VERIFICATION_BYPASS"
}

fn curve(spki: &SubjectPublicKeyInfoOwned) -> Option<ObjectIdentifier> {
    spki.algorithm.parameters.as_ref()?.decode_as::<ObjectIdentifier>().ok()
}

/// Whether `child` carries a signature that `issuer`'s key verifies.
fn signed_by(child: &Certificate, issuer: &SubjectPublicKeyInfoOwned) -> Result<(), String> {
    let tbs = child.tbs_certificate.to_der().map_err(|e| e.to_string())?;
    let alg: &'static dyn VerificationAlgorithm = match (child.signature_algorithm.oid, curve(issuer)) {
        (RSA_SHA256, _) => &signature::RSA_PKCS1_2048_8192_SHA256,
        (RSA_SHA384, _) => &signature::RSA_PKCS1_2048_8192_SHA384,
        (ECDSA_SHA256, Some(P256)) => &signature::ECDSA_P256_SHA256_ASN1,
        (ECDSA_SHA256, Some(P384)) => &signature::ECDSA_P384_SHA256_ASN1,
        (ECDSA_SHA384, Some(P256)) => &signature::ECDSA_P256_SHA384_ASN1,
        (ECDSA_SHA384, Some(P384)) => &signature::ECDSA_P384_SHA384_ASN1,
        (oid, _) => return Err(format!("a certificate signed with an unsupported algorithm ({oid})")),
    };
    UnparsedPublicKey::new(alg, issuer.subject_public_key.raw_bytes())
        .verify(&tbs, child.signature.raw_bytes())
        .map_err(|_| "a certificate's signature does not verify".to_owned())
}

fn in_validity(c: &Certificate, now: u64) -> Result<(), String> {
    let v = &c.tbs_certificate.validity;
    let (from, to) = (v.not_before.to_unix_duration().as_secs(), v.not_after.to_unix_duration().as_secs());
    if now < from || now > to { Err("a certificate of the chain is expired or not yet valid".into()) } else { Ok(()) }
}

fn is_ca(c: &Certificate) -> bool {
    matches!(c.tbs_certificate.get::<BasicConstraints>(), Ok(Some((_, bc))) if bc.ca)
}

/// Checks `chain` (leaf first) up to one of `roots` (DER) at `now` (Unix seconds).
pub fn chain_to_root(chain: &[Certificate], roots: &[Certificate], now: u64) -> Result<(), String> {
    let Some(last) = chain.last() else { return Err("no certificate".into()) };
    for (i, c) in chain.iter().enumerate() {
        in_validity(c, now)?;
        if let Some(parent) = chain.get(i + 1) {
            if !is_ca(parent) || c.tbs_certificate.issuer != parent.tbs_certificate.subject {
                return Err("the certificates do not chain".into());
            }
            signed_by(c, &parent.tbs_certificate.subject_public_key_info)?;
        }
    }
    let anchored = roots.iter().any(|root| {
        root == last
            || (last.tbs_certificate.issuer == root.tbs_certificate.subject
                && in_validity(root, now).is_ok()
                && signed_by(last, &root.tbs_certificate.subject_public_key_info).is_ok())
    });
    if anchored { Ok(()) } else { Err("the chain does not end at a trusted root".into()) }
}

/// Verifies a BLOB and returns its entries.
pub fn verify(jws: &str, roots: &[Certificate], now: u64) -> Result<Blob, String> {
    let b64url = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut parts = jws.trim().split('.');
    let (Some(h), Some(p), Some(s), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err("not a compact JWS (three dot-separated parts)".into());
    };
    let header: serde_json::Value =
        serde_json::from_slice(&b64url.decode(h).map_err(|_| "bad header")?).map_err(|_| "bad header")?;
    let chain: Vec<Certificate> = header["x5c"]
        .as_array()
        .ok_or("the header names no x5c chain")?
        .iter()
        .map(|c| {
            let der = b64.decode(c.as_str().unwrap_or("")).map_err(|_| "an x5c entry is not base64".to_owned())?;
            Certificate::from_der(&der).map_err(|e| format!("an x5c entry is not a certificate ({e})"))
        })
        .collect::<Result<_, _>>()?;
    chain_to_root(&chain, roots, now)?;
    let leaf = &chain[0].tbs_certificate.subject_public_key_info;
    let alg: &'static dyn VerificationAlgorithm = match header["alg"].as_str() {
        Some("RS256") => &signature::RSA_PKCS1_2048_8192_SHA256,
        Some("ES256") if curve(leaf) == Some(P256) => &signature::ECDSA_P256_SHA256_FIXED,
        other => return Err(format!("unsupported alg {other:?}")),
    };
    let sig = b64url.decode(s).map_err(|_| "bad signature encoding")?;
    UnparsedPublicKey::new(alg, leaf.subject_public_key.raw_bytes())
        .verify(format!("{h}.{p}").as_bytes(), &sig)
        .map_err(|_| "the signature does not verify: not the metadata its signer published".to_owned())?;
    let payload: serde_json::Value =
        serde_json::from_slice(&b64url.decode(p).map_err(|_| "bad payload")?).map_err(|_| "bad payload")?;
    let mut entries = vec![];
    for e in payload["entries"].as_array().ok_or("no entries")? {
        let Some(aaguid) = e["aaguid"].as_str() else { continue }; // U2F/UAF entries: by key id
        let statement = &e["metadataStatement"];
        let roots = statement["attestationRootCertificates"]
            .as_array()
            .map(|a| a.iter().filter_map(|c| b64.decode(c.as_str()?).ok()).collect())
            .unwrap_or_default();
        // The report in force: the latest effectiveDate (ISO dates order as text); of equals, the
        // last (max_by_key keeps the last maximum).
        let status = e["statusReports"]
            .as_array()
            .and_then(|r| r.iter().max_by_key(|r| r["effectiveDate"].as_str().unwrap_or("").to_owned()))
            .and_then(|r| r["status"].as_str())
            .unwrap_or("NOT_FIDO_CERTIFIED")
            .to_owned();
        entries.push(Entry {
            aaguid: aaguid.to_ascii_lowercase(),
            description: statement["description"].as_str().unwrap_or("").chars().take(200).collect(),
            status,
            roots,
        });
    }
    Ok(Blob {
        no: payload["no"].as_i64().ok_or("no serial number")?,
        next_update: payload["nextUpdate"].as_str().unwrap_or("").to_owned(),
        entries,
    })
}
