//! A software FIDO2 authenticator for API tests: ES256 (P-256) keys from aws-lc-rs, attestation
//! objects and assertions encoded by hand in CBOR, and a [`Tamper`] knob for every step the
//! server must verify (origin, RP id hash, flags, counter, signature, user handle, key type).

#![allow(dead_code)]

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

pub fn b64(data: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(data)
}

pub fn unb64(s: &str) -> Vec<u8> {
    URL_SAFE_NO_PAD.decode(s).expect("base64url")
}

fn sha256(data: &[u8]) -> Vec<u8> {
    aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, data).as_ref().to_vec()
}

// --- a minimal CBOR encoder (RFC 8949), enough for attestation objects and COSE keys -----------

pub enum Cbor {
    Int(i64),
    Bytes(Vec<u8>),
    Text(String),
    Array(Vec<Cbor>),
    Map(Vec<(Cbor, Cbor)>),
}

fn head(out: &mut Vec<u8>, major: u8, n: u64) {
    let m = major << 5;
    match n {
        0..=23 => out.push(m | n as u8),
        24..=0xff => out.extend_from_slice(&[m | 24, n as u8]),
        0x100..=0xffff => {
            out.push(m | 25);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        _ => {
            out.push(m | 26);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        }
    }
}

impl Cbor {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![];
        self.write(&mut out);
        out
    }
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Cbor::Int(i) if *i >= 0 => head(out, 0, *i as u64),
            Cbor::Int(i) => head(out, 1, (-1 - *i) as u64),
            Cbor::Bytes(b) => {
                head(out, 2, b.len() as u64);
                out.extend_from_slice(b);
            }
            Cbor::Text(t) => {
                head(out, 3, t.len() as u64);
                out.extend_from_slice(t.as_bytes());
            }
            Cbor::Array(a) => {
                head(out, 4, a.len() as u64);
                for v in a {
                    v.write(out);
                }
            }
            Cbor::Map(m) => {
                head(out, 5, m.len() as u64);
                for (k, v) in m {
                    k.write(out);
                    v.write(out);
                }
            }
        }
    }
}

fn text(s: &str) -> Cbor {
    Cbor::Text(s.to_owned())
}

// --- the authenticator ---------------------------------------------------------------------------

pub const UP: u8 = 0x01;
pub const UV: u8 = 0x04;
pub const BE: u8 = 0x08;
pub const BS: u8 = 0x10;
pub const AT: u8 = 0x40;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    Es256,
    /// An RSA key (COSE alg -257): the server offers alg -7 only and must refuse it.
    Rs256,
}

/// What to do wrong. The default does everything right.
#[derive(Clone, Debug, Default)]
pub struct Tamper {
    pub origin: Option<String>,
    pub rp_id: Option<String>,
    pub flags: Option<u8>,
    pub counter: Option<u32>,
    pub flip_signature_bit: bool,
    pub omit_user_handle: bool,
    pub client_data_type: Option<String>,
    pub challenge: Option<String>,
    pub key: Option<KeyKind>,
    pub aaguid: Option<[u8; 16]>,
    pub attachment: Option<&'static str>,
    /// Use this credential id (another user's, an unknown one) in the assertion, or as the new
    /// credential's (one registered already, an empty one) in a registration.
    pub credential_id: Option<Vec<u8>>,
    pub fmt_packed_self: bool,
    /// Packed attestation with a certificate chain (basic attestation), as security keys send.
    pub attest: Option<Attester>,
    /// The ceremony ran in a frame of this other site (`crossOrigin: true`, `topOrigin`).
    pub framed_by: Option<&'static str>,
    /// A registration whose `id`/`rawId` name another credential than the one attested.
    pub claimed_id: Option<Vec<u8>>,
}

/// An attestation key and its certificates (DER, the attestation certificate first).
#[derive(Clone, Debug)]
pub struct Attester {
    /// The key's PKCS#8 document (P-256).
    pub pkcs8: Vec<u8>,
    pub x5c: Vec<Vec<u8>>,
}

pub struct SoftCredential {
    pub id: Vec<u8>,
    key: EcdsaKeyPair,
    pub user_handle: Vec<u8>,
    pub rp_id: String,
    pub counter: u32,
}

pub struct Soft {
    pub origin: String,
    pub credentials: Vec<SoftCredential>,
    /// Flags on every response unless tampered: UP + UV, plus BE/BS for a synced passkey.
    pub flags: u8,
}

impl Soft {
    pub fn new(origin: &str) -> Soft {
        Soft { origin: origin.to_owned(), credentials: vec![], flags: UP | UV }
    }

    fn client_data(&self, kind: &str, challenge: &str, t: &Tamper) -> Vec<u8> {
        let mut c = json!({
            "type": t.client_data_type.clone().unwrap_or_else(|| kind.to_owned()),
            "challenge": t.challenge.clone().unwrap_or_else(|| challenge.to_owned()),
            "origin": t.origin.clone().unwrap_or_else(|| self.origin.clone()),
            "crossOrigin": false,
        });
        if let Some(top) = t.framed_by {
            c["crossOrigin"] = json!(true);
            c["topOrigin"] = json!(top);
        }
        serde_json::to_vec(&c).unwrap()
    }

    /// `navigator.credentials.create()` for these options; returns the credential's JSON form.
    pub fn create(&mut self, options: &Value, t: &Tamper) -> Value {
        let rp_id = options["rp"]["id"].as_str().expect("rp.id").to_owned();
        let challenge = options["challenge"].as_str().expect("challenge");
        let user_handle = unb64(options["user"]["id"].as_str().expect("user.id"));
        let rng = SystemRandom::new();
        let key = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_ASN1_SIGNING).unwrap();
        let mut id = vec![0u8; 16];
        aws_lc_rs::rand::SecureRandom::fill(&rng, &mut id).unwrap();
        if let Some(chosen) = &t.credential_id {
            id = chosen.clone();
        }

        let cose = match t.key.unwrap_or(KeyKind::Es256) {
            KeyKind::Es256 => {
                let point = key.public_key().as_ref();
                Cbor::Map(vec![
                    (Cbor::Int(1), Cbor::Int(2)),
                    (Cbor::Int(3), Cbor::Int(-7)),
                    (Cbor::Int(-1), Cbor::Int(1)),
                    (Cbor::Int(-2), Cbor::Bytes(point[1..33].to_vec())),
                    (Cbor::Int(-3), Cbor::Bytes(point[33..65].to_vec())),
                ])
            }
            KeyKind::Rs256 => {
                let rsa = aws_lc_rs::rsa::KeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).unwrap();
                let public = rsa.public_key();
                Cbor::Map(vec![
                    (Cbor::Int(1), Cbor::Int(3)),
                    (Cbor::Int(3), Cbor::Int(-257)),
                    (Cbor::Int(-1), Cbor::Bytes(public.modulus().big_endian_without_leading_zero().to_vec())),
                    (Cbor::Int(-2), Cbor::Bytes(public.exponent().big_endian_without_leading_zero().to_vec())),
                ])
            }
        };
        let mut auth = sha256(t.rp_id.as_deref().unwrap_or(&rp_id).as_bytes());
        auth.push(t.flags.unwrap_or(self.flags) | AT);
        auth.extend_from_slice(&t.counter.unwrap_or(0).to_be_bytes());
        auth.extend_from_slice(&t.aaguid.unwrap_or([0; 16]));
        auth.extend_from_slice(&(id.len() as u16).to_be_bytes());
        auth.extend_from_slice(&id);
        auth.extend_from_slice(&cose.encode());

        let client_data = self.client_data("webauthn.create", challenge, t);
        let att_stmt = if let Some(a) = &t.attest {
            let mut signed = auth.clone();
            signed.extend_from_slice(&sha256(&client_data));
            let attestation_key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &a.pkcs8).unwrap();
            let sig = attestation_key.sign(&rng, &signed).unwrap();
            Cbor::Map(vec![
                (text("alg"), Cbor::Int(-7)),
                (text("sig"), Cbor::Bytes(sig.as_ref().to_vec())),
                (text("x5c"), Cbor::Array(a.x5c.iter().map(|c| Cbor::Bytes(c.clone())).collect())),
            ])
        } else if t.fmt_packed_self {
            let mut signed = auth.clone();
            signed.extend_from_slice(&sha256(&client_data));
            let sig = key.sign(&rng, &signed).unwrap();
            Cbor::Map(vec![(text("alg"), Cbor::Int(-7)), (text("sig"), Cbor::Bytes(sig.as_ref().to_vec()))])
        } else {
            Cbor::Map(vec![])
        };
        let fmt = if t.fmt_packed_self || t.attest.is_some() { "packed" } else { "none" };
        let object = Cbor::Map(vec![
            (text("fmt"), text(fmt)),
            (text("attStmt"), att_stmt),
            (text("authData"), Cbor::Bytes(auth)),
        ]);

        self.credentials.push(SoftCredential {
            id: id.clone(),
            key,
            user_handle,
            rp_id,
            counter: t.counter.unwrap_or(0),
        });
        let shown = t.claimed_id.clone().unwrap_or_else(|| id.clone());
        json!({
            "id": b64(&shown),
            "rawId": b64(&shown),
            "type": "public-key",
            "authenticatorAttachment": t.attachment.unwrap_or("platform"),
            "response": {
                "clientDataJSON": b64(&client_data),
                "attestationObject": b64(&object.encode()),
                "transports": ["internal"],
            },
            "clientExtensionResults": {},
        })
    }

    /// `navigator.credentials.get()`: signs with a credential listed in `allowCredentials`, or, when
    /// the list is empty (username-less), with the first credential for the RP id.
    pub fn get(&mut self, options: &Value, t: &Tamper) -> Value {
        let rp_id = options["rpId"].as_str().expect("rpId").to_owned();
        let challenge = options["challenge"].as_str().expect("challenge").to_owned();
        let allowed: Vec<Vec<u8>> = options["allowCredentials"]
            .as_array()
            .map(|a| a.iter().map(|c| unb64(c["id"].as_str().unwrap())).collect())
            .unwrap_or_default();
        let origin_flags = self.flags;
        let client_data = self.client_data("webauthn.get", &challenge, t);
        let cred = self
            .credentials
            .iter_mut()
            .find(|c| c.rp_id == rp_id && (allowed.is_empty() || allowed.contains(&c.id)))
            .expect("no credential for these options");
        cred.counter += 1;
        let counter = t.counter.unwrap_or(cred.counter);
        let mut auth = sha256(t.rp_id.as_deref().unwrap_or(&rp_id).as_bytes());
        auth.push(t.flags.unwrap_or(origin_flags));
        auth.extend_from_slice(&counter.to_be_bytes());
        let mut signed = auth.clone();
        signed.extend_from_slice(&sha256(&client_data));
        let mut sig = cred.key.sign(&SystemRandom::new(), &signed).unwrap().as_ref().to_vec();
        if t.flip_signature_bit {
            let last = sig.len() - 1;
            sig[last] ^= 0x01;
        }
        let id = t.credential_id.clone().unwrap_or_else(|| cred.id.clone());
        let user_handle = if t.omit_user_handle { Value::Null } else { json!(b64(&cred.user_handle)) };
        json!({
            "id": b64(&id),
            "rawId": b64(&id),
            "type": "public-key",
            "response": {
                "clientDataJSON": b64(&client_data),
                "authenticatorData": b64(&auth),
                "signature": b64(&sig),
                "userHandle": user_handle,
            },
            "clientExtensionResults": {},
        })
    }
}

#[test]
fn cbor_encodes_like_the_rfc_examples() {
    assert_eq!(Cbor::Int(10).encode(), [0x0a]);
    assert_eq!(Cbor::Int(-1).encode(), [0x20]);
    assert_eq!(Cbor::Int(-257).encode(), [0x39, 0x01, 0x00]);
    assert_eq!(Cbor::Int(1000).encode(), [0x19, 0x03, 0xe8]);
    assert_eq!(text("a").encode(), [0x61, 0x61]);
    assert_eq!(Cbor::Map(vec![(Cbor::Int(1), Cbor::Int(2))]).encode(), [0xa1, 0x01, 0x02]);
}
