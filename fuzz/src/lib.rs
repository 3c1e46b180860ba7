//! Shared fixtures of the fuzz targets: a relying party like a tenant's, a software ES256
//! authenticator that registered one passkey with it, and small encoders (base64url, CBOR).
//!
//! Everything random (keys, challenges) is made once per process. Seeds refer to the ceremony's
//! challenge with the placeholder [`CHALLENGE`], which the targets replace by the real one, so a
//! mutated input can get past the challenge check into the code behind it.

use std::sync::OnceLock;

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use webauthn_rs::prelude::{
    DiscoverableAuthentication, Passkey, PasskeyAuthentication, PasskeyRegistration, RegisterPublicKeyCredential, Uuid,
    Webauthn,
};

pub const RP_ID: &str = "localhost";
pub const ORIGIN: &str = "http://localhost:8080";
/// Replaced by the ceremony's challenge (base64url) wherever it appears in an input.
pub const CHALLENGE: &[u8] = b"CHALLENGE";

pub fn b64(data: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(data)
}

pub fn sha256(data: &[u8]) -> Vec<u8> {
    aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, data).as_ref().to_vec()
}

/// `data` with every `from` replaced by `to`.
pub fn replace(data: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    if from.is_empty() || data.len() < from.len() {
        return data.to_vec();
    }
    let mut out = Vec::with_capacity(data.len());
    let mut i = 0;
    while i < data.len() {
        if data[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(data[i]);
            i += 1;
        }
    }
    out
}

/// Splits `data` at the first `sep`: (before, after); all of it is `before` when there is none.
pub fn split_at_byte(data: &[u8], sep: u8) -> (&[u8], &[u8]) {
    match data.iter().position(|b| *b == sep) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}

// --- a minimal CBOR encoder (RFC 8949), enough for attestation objects and COSE keys ----------

pub enum Cbor {
    Int(i64),
    Bytes(Vec<u8>),
    Text(String),
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

pub fn text(s: &str) -> Cbor {
    Cbor::Text(s.to_owned())
}

// --- the relying party and its one registered passkey -------------------------------------------

pub const UP: u8 = 0x01;
pub const UV: u8 = 0x04;
pub const AT: u8 = 0x40;

pub struct Fixture {
    pub webauthn: Webauthn,
    /// A registration in progress (`finish` does not consume it).
    pub registration: PasskeyRegistration,
    pub registration_challenge: String,
    /// A sign-in in progress for [`Fixture::passkey`].
    pub authentication: PasskeyAuthentication,
    pub authentication_challenge: String,
    /// A username-less sign-in in progress.
    pub discoverable: DiscoverableAuthentication,
    pub discoverable_challenge: String,
    pub passkey: Passkey,
    pub key: EcdsaKeyPair,
    pub credential_id: Vec<u8>,
    pub user_handle: Vec<u8>,
    /// A valid authenticator data (with attested credential data) and attestation object ("none").
    pub auth_data: Vec<u8>,
    pub attestation_object: Vec<u8>,
}

/// Authenticator data for a sign-in: RP id hash, UP|UV, counter.
pub fn assertion_auth_data(counter: u32) -> Vec<u8> {
    let mut auth = sha256(RP_ID.as_bytes());
    auth.push(UP | UV);
    auth.extend_from_slice(&counter.to_be_bytes());
    auth
}

pub fn client_data(kind: &str, challenge: &str) -> Vec<u8> {
    let c = json!({"type": kind, "challenge": challenge, "origin": ORIGIN, "crossOrigin": false});
    serde_json::to_vec(&c).unwrap_or_default()
}

/// The JSON a browser posts for `navigator.credentials.create()`.
pub fn registration_json(credential_id: &[u8], attestation_object: &[u8], client_data_json: &[u8]) -> Value {
    json!({
        "id": b64(credential_id),
        "rawId": b64(credential_id),
        "type": "public-key",
        "response": {"attestationObject": b64(attestation_object), "clientDataJSON": b64(client_data_json)},
        "extensions": {},
        "authenticatorAttachment": "platform",
    })
}

/// The JSON a browser posts for `navigator.credentials.get()`.
pub fn assertion_json(
    credential_id: &[u8],
    auth_data: &[u8],
    client_data_json: &[u8],
    signature: &[u8],
    user_handle: Option<&[u8]>,
) -> Value {
    let mut response = json!({
        "authenticatorData": b64(auth_data),
        "clientDataJSON": b64(client_data_json),
        "signature": b64(signature),
    });
    if let Some(h) = user_handle {
        response["userHandle"] = json!(b64(h));
    }
    json!({"id": b64(credential_id), "rawId": b64(credential_id), "type": "public-key", "response": response, "extensions": {}})
}

impl Fixture {
    /// ES256 signature over `auth_data || SHA-256(client_data_json)` with the passkey's key.
    pub fn sign(&self, auth_data: &[u8], client_data_json: &[u8]) -> Vec<u8> {
        let mut signed = auth_data.to_vec();
        signed.extend_from_slice(&sha256(client_data_json));
        self.key.sign(&SystemRandom::new(), &signed).map(|s| s.as_ref().to_vec()).unwrap_or_default()
    }
}

fn build() -> Fixture {
    let webauthn = latchkey_domain::webauthn::relying_party(RP_ID, ORIGIN, "fuzz").expect("relying party");
    let user_handle = vec![7u8; 16];
    let uuid = Uuid::from_slice(&user_handle).expect("uuid");

    // Register one ES256 passkey the way a browser would.
    let (ccr, state) =
        webauthn.start_passkey_registration(uuid, "ada@example.test", "Ada", None).expect("start registration");
    let challenge = b64(&ccr.public_key.challenge);
    let key = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_ASN1_SIGNING).expect("P-256 key");
    let credential_id = vec![0x42u8; 16];
    let point = key.public_key().as_ref().to_vec();
    let cose = Cbor::Map(vec![
        (Cbor::Int(1), Cbor::Int(2)),
        (Cbor::Int(3), Cbor::Int(-7)),
        (Cbor::Int(-1), Cbor::Int(1)),
        (Cbor::Int(-2), Cbor::Bytes(point[1..33].to_vec())),
        (Cbor::Int(-3), Cbor::Bytes(point[33..65].to_vec())),
    ]);
    let mut auth_data = sha256(RP_ID.as_bytes());
    auth_data.push(UP | UV | AT);
    auth_data.extend_from_slice(&0u32.to_be_bytes());
    auth_data.extend_from_slice(&[0u8; 16]);
    auth_data.extend_from_slice(&(credential_id.len() as u16).to_be_bytes());
    auth_data.extend_from_slice(&credential_id);
    auth_data.extend_from_slice(&cose.encode());
    let attestation_object = Cbor::Map(vec![
        (text("fmt"), text("none")),
        (text("attStmt"), Cbor::Map(vec![])),
        (text("authData"), Cbor::Bytes(auth_data.clone())),
    ])
    .encode();
    let cd = client_data("webauthn.create", &challenge);
    let reg: RegisterPublicKeyCredential =
        serde_json::from_value(registration_json(&credential_id, &attestation_object, &cd)).expect("credential json");
    let passkey = webauthn.finish_passkey_registration(&reg, &state).expect("fixture registration verifies");

    // Ceremonies left open for the targets.
    let (ccr, registration) =
        webauthn.start_passkey_registration(uuid, "ada@example.test", "Ada", None).expect("start registration");
    let registration_challenge = b64(&ccr.public_key.challenge);
    let (rcr, authentication) =
        webauthn.start_passkey_authentication(std::slice::from_ref(&passkey)).expect("start authentication");
    let authentication_challenge = b64(&rcr.public_key.challenge);
    let (rcr, discoverable) = webauthn.start_discoverable_authentication().expect("start discoverable");
    let discoverable_challenge = b64(&rcr.public_key.challenge);

    Fixture {
        webauthn,
        registration,
        registration_challenge,
        authentication,
        authentication_challenge,
        discoverable,
        discoverable_challenge,
        passkey,
        key,
        credential_id,
        user_handle,
        auth_data,
        attestation_object,
    }
}

pub fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(build)
}

/// Whether `FUZZ_VERBOSE` is set: targets then print their verdicts (to check that seeds reach
/// what they are meant to, e.g. `FUZZ_VERBOSE=1 fuzz/target/…/assertion_diff -runs=0 seeds/assertion_diff`).
pub fn verbose() -> bool {
    static V: OnceLock<bool> = OnceLock::new();
    *V.get_or_init(|| std::env::var_os("FUZZ_VERBOSE").is_some())
}
