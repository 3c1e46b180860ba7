//! The FIDO Metadata Service (MDS3) BLOB (`latchkey mds import FILE`) and the chain checks of
//! the `verified` attestation policy.
//!
//! The BLOB is a compact JWS: a header `{alg: RS256|ES256, typ, x5c: [signer, intermediates…]}`
//! (standard base64 DER) and a payload `{no, nextUpdate, entries: [{aaguid?, metadataStatement:
//! {description, attestationRootCertificates: [base64 DER…]}, statusReports: [{status,
//! effectiveDate}…]}]}`. It is taken only when its `x5c` chains to a trusted root — the FIDO
//! Alliance's (GlobalSign Root CA - R3, built in) or the operator's — and the signer's key
//! verifies the JWS. Every signature is checked by aws-lc-rs; certificates are parsed by
//! x509-cert. Nothing here does arithmetic of its own.

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

/// The root the FIDO Alliance's metadata service signs under (GlobalSign Root CA - R3, SHA-256
/// fingerprint CB:B5:22:D7:…:C9:63:C5:3B, valid until 2029-03-18), as published by GlobalSign.
pub const FIDO_ROOT_PEM: &str = include_str!("mds-root-globalsign-r3.pem");

/// The largest BLOB taken: the FIDO Alliance's is a few MiB.
pub const MAX_BLOB_BYTES: usize = 32 * 1024 * 1024;

/// One authenticator model the metadata lists by AAGUID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Lower case, with hyphens.
    pub aaguid: String,
    pub description: String,
    /// The status report in force: the latest by `effectiveDate` (`FIDO_CERTIFIED_L1`,
    /// `REVOKED`, `ATTESTATION_KEY_COMPROMISE`, …).
    pub status: String,
    /// The roots its attestation certificates chain to, DER.
    pub roots: Vec<Vec<u8>>,
}

/// A verified BLOB.
#[derive(Debug, Clone)]
pub struct Blob {
    /// Its serial number (`no`): each BLOB the service publishes has a greater one.
    pub serial: i64,
    /// `nextUpdate`, YYYY-MM-DD.
    pub next_update: String,
    pub entries: Vec<Entry>,
}

/// Statuses that refuse an authenticator whatever the policy says: revoked, a compromised
/// attestation or user key, or user verification that can be bypassed.
pub fn refused_status(status: &str) -> bool {
    status == "REVOKED" || status.ends_with("_COMPROMISE") || status == "USER_VERIFICATION_BYPASS"
}

/// Certificates from PEM text (any number of `CERTIFICATE` blocks) or from one DER certificate.
pub fn certificates(data: &[u8]) -> Result<Vec<Certificate>, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    if !data.starts_with(b"-----") && !data.windows(10).any(|w| w == b"-----BEGIN") {
        return Certificate::from_der(data).map(|c| vec![c]).map_err(|e| format!("not a certificate ({e})"));
    }
    let mut found = vec![];
    for der in CertificateDer::pem_slice_iter(data) {
        let der = der.map_err(|e| format!("a PEM certificate does not read ({e})"))?;
        found.push(Certificate::from_der(&der).map_err(|e| format!("a PEM block is not a certificate ({e})"))?);
    }
    if found.is_empty() {
        return Err("no certificate found (expected PEM `-----BEGIN CERTIFICATE-----` blocks)".into());
    }
    Ok(found)
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
        (oid, _) => return Err(format!("a certificate is signed with an algorithm not supported ({oid})")),
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

/// Checks `chain` (leaf first) up to one of `roots` at `now` (Unix seconds): each certificate
/// in its validity and signed by the next, a CA, whose subject is its issuer; the last one a
/// root itself or signed by one.
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

fn decoded(part: &str, what: &str) -> Result<serde_json::Value, String> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part)
        .map_err(|_| format!("the {what} is not base64url"))?;
    serde_json::from_slice(&bytes).map_err(|_| format!("the {what} is not JSON"))
}

/// Verifies a BLOB against `roots` at `now` (Unix seconds) and returns its entries by AAGUID
/// (entries of U2F and UAF authenticators, known by key id, are left out: a passkey has an
/// AAGUID).
pub fn verify(jws: &str, roots: &[Certificate], now: u64) -> Result<Blob, String> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut parts = jws.trim().split('.');
    let (Some(h), Some(p), Some(s), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err("not a metadata BLOB: a BLOB is a JWS, three parts separated by dots".into());
    };
    let header = decoded(h, "header")?;
    let chain: Vec<Certificate> = header["x5c"]
        .as_array()
        .ok_or("the header names no signer (x5c)")?
        .iter()
        .map(|c| {
            let der = b64.decode(c.as_str().unwrap_or("")).map_err(|_| "an x5c entry is not base64".to_owned())?;
            Certificate::from_der(&der).map_err(|e| format!("an x5c entry is not a certificate ({e})"))
        })
        .collect::<Result<_, _>>()?;
    chain_to_root(&chain, roots, now).map_err(|e| format!("its signer is not trusted: {e}"))?;
    let leaf = &chain.first().ok_or("the header's x5c is empty")?.tbs_certificate.subject_public_key_info;
    let alg: &'static dyn VerificationAlgorithm = match header["alg"].as_str() {
        Some("RS256") => &signature::RSA_PKCS1_2048_8192_SHA256,
        Some("ES256") if curve(leaf) == Some(P256) => &signature::ECDSA_P256_SHA256_FIXED,
        other => return Err(format!("its signature algorithm {other:?} is not RS256 or ES256 (P-256)")),
    };
    let sig =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(s).map_err(|_| "the signature is not base64url")?;
    UnparsedPublicKey::new(alg, leaf.subject_public_key.raw_bytes())
        .verify(format!("{h}.{p}").as_bytes(), &sig)
        .map_err(|_| "its signature does not verify: the file is not what its signer published".to_owned())?;
    let payload = decoded(p, "payload")?;
    let mut entries = vec![];
    for e in payload["entries"].as_array().ok_or("the payload has no entries")? {
        let Some(aaguid) = e["aaguid"].as_str() else { continue };
        let statement = &e["metadataStatement"];
        let roots = statement["attestationRootCertificates"]
            .as_array()
            .map(|a| a.iter().filter_map(|c| b64.decode(c.as_str()?).ok()).collect())
            .unwrap_or_default();
        // The report in force: the latest effectiveDate (ISO dates order as text); of equals,
        // the last (max_by_key keeps the last maximum).
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
        serial: payload["no"].as_i64().ok_or("the payload has no serial number (no)")?,
        next_update: payload["nextUpdate"].as_str().unwrap_or("").chars().take(32).collect(),
        entries,
    })
}

/// Checks an attestation's certificates (`x5c`, DER, leaf first) against an entry's roots.
pub fn attested_by(x5c: &[Vec<u8>], entry_roots: &[Vec<u8>], now: u64) -> Result<(), String> {
    let chain: Vec<Certificate> = x5c
        .iter()
        .map(|c| Certificate::from_der(c).map_err(|e| format!("an attestation certificate does not parse ({e})")))
        .collect::<Result<_, _>>()?;
    let roots: Vec<Certificate> = entry_roots.iter().filter_map(|r| Certificate::from_der(r).ok()).collect();
    chain_to_root(&chain, &roots, now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_root_is_globalsign_r3() {
        let roots = certificates(FIDO_ROOT_PEM.as_bytes()).unwrap();
        assert_eq!(roots.len(), 1);
        let der = roots[0].to_der().unwrap();
        assert_eq!(
            crate::crypto::hex(&crate::crypto::sha256(&der)),
            "cbb522d7b7f127ad6a0113865bdf1cd4102e7d0759af635a7cf4720dc963c53b"
        );
        assert!(roots[0].tbs_certificate.subject.to_string().contains("GlobalSign Root CA - R3"));
    }

    #[test]
    fn statuses_that_refuse() {
        for s in ["REVOKED", "ATTESTATION_KEY_COMPROMISE", "USER_KEY_REMOTE_COMPROMISE", "USER_VERIFICATION_BYPASS"] {
            assert!(refused_status(s), "{s}");
        }
        for s in ["FIDO_CERTIFIED", "FIDO_CERTIFIED_L1", "NOT_FIDO_CERTIFIED", "UPDATE_AVAILABLE"] {
            assert!(!refused_status(s), "{s}");
        }
    }

    #[test]
    fn refuses_what_is_not_a_blob() {
        let roots = certificates(FIDO_ROOT_PEM.as_bytes()).unwrap();
        let err = |jws: &str| verify(jws, &roots, 1_800_000_000).unwrap_err();
        assert!(err("abc").contains("three parts"));
        assert!(err("a.b.c").contains("header"));
        assert!(err("e30.e30.AA").contains("x5c"));
        assert!(certificates(b"hello").is_err());
    }
}
