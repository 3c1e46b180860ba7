//! Differential sign-in check: the daemon's own assertion check (what `authenticate::finish` runs:
//! `webauthn::client_data`, `origin_is`, `assertion::stored`, `assertion::verify`) against
//! webauthn-rs's `finish_passkey_authentication` (username-first) and
//! `finish_discoverable_authentication` (username-less) on the same assertion. The fixture's
//! passkey signs every input, so mutations of clientDataJSON, authenticator data (flags, counter,
//! extensions) and signature reach every check. Both must accept or both refuse; when both
//! accept, they must report the same counter and backup flags. Any other outcome panics with
//! both verdicts, unless it is one of the differences by design listed in [`by_design`].
//!
//! Input:
//! - byte 0: bit 0 username-less; bits 1-2 the stored counter (0, 1, 256, u32::MAX); bit 3 the
//!   stored backup eligibility;
//! - byte 1: how the signature is made (see [`signature`]);
//! - byte 2: n, then n bytes of authenticator data;
//! - clientDataJSON up to the first NUL (`CHALLENGE` is replaced by the ceremony's challenge);
//! - after the NUL: bytes the signature modes use.

#![no_main]

use std::sync::OnceLock;

use latchkey_fuzz::{CHALLENGE, ORIGIN, RP_ID, assertion_json, fixture, replace, split_at_byte};
use latchkey_store::CredentialKind;
use latchkey_store::credentials::CredentialRow;
use latchkey_store::users::UserId;
use latchkey_domain::webauthn::assertion::{self, Expected, Verified};
use latchkey_domain::webauthn::{check_credential_id, client_data, origin_is};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use webauthn_rs::prelude::{
    AuthenticationResult, DiscoverableAuthentication, DiscoverableKey, Passkey, PasskeyAuthentication,
    PublicKeyCredential, WebauthnError,
};
use webauthn_rs_core::internals::AuthenticatorData;
use webauthn_rs_core::proto::{Authentication, TokenBinding};

const COUNTERS: [u32; 4] = [0, 1, 256, u32::MAX];

/// A stored credential (the fixture's passkey with a counter and a backup eligibility) and a
/// sign-in of each kind open for it.
struct Stored {
    counter: u32,
    eligible: bool,
    passkey: Passkey,
    username_first: PasskeyAuthentication,
    username_first_challenge: String,
    username_less: DiscoverableAuthentication,
    username_less_challenge: String,
}

fn stored_credentials() -> &'static Vec<Stored> {
    static S: OnceLock<Vec<Stored>> = OnceLock::new();
    S.get_or_init(|| {
        let f = fixture();
        let mut out = vec![];
        for eligible in [false, true] {
            for counter in COUNTERS {
                let mut json = serde_json::to_value(&f.passkey).expect("passkey json");
                let cred = json.get_mut("cred").expect("passkey json has its credential");
                for (field, value) in [
                    ("counter", Value::from(counter)),
                    ("backup_eligible", eligible.into()),
                    ("backup_state", eligible.into()),
                ] {
                    assert!(cred.get(field).is_some(), "passkey json has no {field}: {cred}");
                    cred[field] = value;
                }
                let passkey: Passkey = serde_json::from_value(json).expect("edited passkey");
                let (rcr, username_first) =
                    f.webauthn.start_passkey_authentication(std::slice::from_ref(&passkey)).expect("start");
                let (drcr, username_less) = f.webauthn.start_discoverable_authentication().expect("start");
                out.push(Stored {
                    counter,
                    eligible,
                    passkey,
                    username_first,
                    username_first_challenge: latchkey_fuzz::b64(&rcr.public_key.challenge),
                    username_less,
                    username_less_challenge: latchkey_fuzz::b64(&drcr.public_key.challenge),
                });
            }
        }
        out
    })
}

// --- ECDSA signatures in DER, to make the variants of a real signature ----------------------------

/// The order n of P-256.
const N: [u8; 32] = [
    0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xBC, 0xE6, 0xFA,
    0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
];

/// (r, s) of a minimal DER `SEQUENCE { INTEGER r, INTEGER s }` as aws-lc writes it, as 32 bytes each.
fn der_parse(sig: &[u8]) -> Option<([u8; 32], [u8; 32])> {
    let rest = sig.strip_prefix(&[0x30])?;
    let (&len, rest) = rest.split_first()?;
    if usize::from(len) != rest.len() {
        return None;
    }
    let int = |d: &[u8]| -> Option<([u8; 32], usize)> {
        let d = d.strip_prefix(&[0x02])?;
        let (&l, d) = d.split_first()?;
        let v = d.get(..usize::from(l))?;
        let v = v.strip_prefix(&[0]).unwrap_or(v);
        let mut out = [0u8; 32];
        out.get_mut(32usize.checked_sub(v.len())?..)?.copy_from_slice(v);
        Some((out, 2 + usize::from(l)))
    };
    let (r, used) = int(rest)?;
    let (s, _) = int(&rest[used..])?;
    Some((r, s))
}

/// A DER INTEGER of the unsigned big-endian `v`, with `pad` extra leading zero bytes.
fn der_int(v: &[u8], pad: usize) -> Vec<u8> {
    let v = &v[v.iter().position(|b| *b != 0).unwrap_or(v.len().saturating_sub(1))..];
    let mut body = vec![0u8; pad];
    if v.first().is_some_and(|b| b & 0x80 != 0) {
        body.push(0);
    }
    body.extend_from_slice(v);
    let mut out = vec![0x02, body.len() as u8];
    out.extend(body);
    out
}

fn der_seq(parts: &[Vec<u8>], long_form: bool) -> Vec<u8> {
    let body: Vec<u8> = parts.concat();
    let mut out = vec![0x30];
    if long_form {
        out.push(0x81);
    }
    out.push(body.len() as u8);
    out.extend(body);
    out
}

/// `a - b` (a ≥ b) or `a + b` on 32-byte big-endian numbers; the sum keeps its carry (33 bytes).
fn sub(a: &[u8; 32], b: &[u8; 32]) -> [u8; 32] {
    let mut out = [0u8; 32];
    let mut borrow = 0i16;
    for i in (0..32).rev() {
        let mut d = i16::from(a[i]) - i16::from(b[i]) - borrow;
        borrow = i16::from(d < 0);
        if d < 0 {
            d += 256;
        }
        out[i] = d as u8;
    }
    out
}

fn add(a: &[u8; 32], b: &[u8; 32]) -> Vec<u8> {
    let mut out = vec![0u8; 33];
    let mut carry = 0u16;
    for i in (0..32).rev() {
        let s = u16::from(a[i]) + u16::from(b[i]) + carry;
        out[i + 1] = s as u8;
        carry = s >> 8;
    }
    out[0] = carry as u8;
    out
}

/// The signature to send, from the real one (over the fuzzed authenticator data and
/// clientDataJSON) and the input's extra bytes:
/// 0 the real one; 1 the extra bytes; 2 the real one XOR the extra bytes; 3 the other valid
/// signature (s → n − s); 4 the real one with the extra bytes after it; 5 r and s with leading
/// zero bytes (non-minimal DER); 6 a long-form DER length; 7 raw r‖s (IEEE P1363, not DER);
/// 8 s + n; 9 the extra bytes written over the real one from the offset their first byte gives.
fn signature(mode: u8, real: &[u8], extra: &[u8]) -> Vec<u8> {
    let parsed = der_parse(real);
    match (mode % 10, parsed) {
        (1, _) => extra.to_vec(),
        (2, _) => real.iter().enumerate().map(|(i, b)| b ^ extra.get(i).copied().unwrap_or(0)).collect(),
        (3, Some((r, s))) => der_seq(&[der_int(&r, 0), der_int(&sub(&N, &s), 0)], false),
        (4, _) => [real, extra].concat(),
        (5, Some((r, s))) => {
            let pad = usize::from(extra.first().copied().unwrap_or(1) % 3);
            der_seq(&[der_int(&r, pad), der_int(&s, 1)], false)
        }
        (6, Some((r, s))) => der_seq(&[der_int(&r, 0), der_int(&s, 0)], true),
        (7, Some((r, s))) => [r, s].concat(),
        (8, Some((r, s))) => der_seq(&[der_int(&r, 0), der_int(&add(&s, &N), 0)], false),
        (9, _) => {
            let mut sig = real.to_vec();
            if let Some((&at, bytes)) = extra.split_first() {
                let at = usize::from(at) % sig.len().max(1);
                for (i, b) in bytes.iter().enumerate() {
                    match sig.get_mut(at + i) {
                        Some(x) => *x = *b,
                        None => sig.push(*b),
                    }
                }
            }
            sig
        }
        _ => real.to_vec(),
    }
}

// --- the two verdicts ------------------------------------------------------------------------------

/// Why the daemon refused: the step and its code or webauthn-rs error.
#[derive(Debug)]
enum DaemonRefusal {
    CredentialId,
    ClientData,
    Origin,
    Stored,
    Verify(WebauthnError),
}

/// What `authenticate::finish` does with the assertion once the challenge, the user and the
/// credential are found: the same calls, in the same order.
fn daemon(a: &PublicKeyCredential, s: &Stored, discoverable: bool, challenge: &str) -> Result<Verified, DaemonRefusal> {
    check_credential_id(&a.id, a.raw_id.as_ref()).map_err(|_| DaemonRefusal::CredentialId)?;
    let client = client_data(&a.response.client_data_json).map_err(|_| DaemonRefusal::ClientData)?;
    origin_is(&client, ORIGIN, true).map_err(|_| DaemonRefusal::Origin)?;
    let (key, eligible) = assertion::stored(s.passkey.clone()).map_err(|_| DaemonRefusal::Stored)?;
    let mut row = CredentialRow {
        user_id: UserId(1),
        credential_id: fixture().credential_id.clone(),
        passkey: String::new(),
        kind: CredentialKind::Platform,
        aaguid: None,
        device: String::new(),
        name: String::new(),
        backup_eligible: s.eligible,
        backed_up: s.eligible,
        sign_count: s.counter,
        created_at: 0,
        last_used_at: None,
    };
    row.backup_eligible |= eligible;
    let expected = Expected { challenge, rp_id: RP_ID, allow_backup_eligible_upgrade: !discoverable };
    let r = &a.response;
    assertion::verify(&client, &r.client_data_json, &r.authenticator_data, &r.signature, &key, &row, &expected)
        .map_err(DaemonRefusal::Verify)
}

#[allow(deprecated)] // `finish_discoverable_authentication`: the `_v2` runs the same core check
fn library(a: &PublicKeyCredential, s: &Stored, discoverable: bool) -> Result<AuthenticationResult, WebauthnError> {
    let f = fixture();
    if discoverable {
        let keys = [DiscoverableKey::from(&s.passkey)];
        f.webauthn.finish_discoverable_authentication(a, s.username_less.clone(), &keys)
    } else {
        f.webauthn.finish_passkey_authentication(a, &s.username_first)
    }
}

/// The differences by design between the two checks, each a case where the daemon is stricter
/// or reads less than webauthn-rs (README.md, "assertion_diff"). `None`: not one of them.
fn by_design(
    a: &PublicKeyCredential,
    daemon: &Result<Verified, DaemonRefusal>,
    library: &Result<AuthenticationResult, WebauthnError>,
) -> Option<&'static str> {
    let cd = &a.response.client_data_json;
    let value = serde_json::from_slice::<Value>(cd).ok();
    match (daemon, library) {
        (Err(DaemonRefusal::Origin), Ok(_)) => {
            let parsed = client_data(cd).ok()?;
            if parsed.origin != ORIGIN {
                // The daemon compares the origin character for character (`webauthn::origin_is`);
                // webauthn-rs compares parsed URLs (a trailing slash, a path, a default port,
                // letter case in the host all pass there).
                Some("origin compared as text")
            } else if parsed.cross_origin {
                // `crossOrigin: true` (a framed ceremony) is refused at sign-in too, the tenant's
                // pages are never framed; webauthn-rs does not read it when signing in.
                Some("crossOrigin refused at sign-in")
            } else {
                None
            }
        }
        // The challenge is compared as sent (base64url, unpadded); webauthn-rs decodes it first,
        // and takes it padded too. Its acceptance proves the bytes are the challenge's, so only
        // the spelling differs.
        (Err(DaemonRefusal::Verify(WebauthnError::MismatchedChallenge)), Ok(_)) => Some("challenge compared as sent"),
        // `crossOrigin` is a boolean (WebAuthn §5.8.1); webauthn-rs reads it as optional and
        // takes `null` for absent, the daemon refuses it as malformed.
        (Err(DaemonRefusal::ClientData), Ok(_)) => {
            value.filter(|v| v.get("crossOrigin") == Some(&Value::Null)).map(|_| "crossOrigin: null refused")
        }
        // The daemon reads the rpIdHash, the flags and the counter (and needs the AAGUID after an
        // AT flag), and lets the signature cover the rest; webauthn-rs parses attested credential
        // data and extensions and refuses authenticator data whose tail does not parse, or with
        // bytes after it. Only the authenticator can make signed authenticator data, so this
        // lets in nothing an attacker could make.
        (Ok(_), Err(_))
            if AuthenticatorData::<Authentication>::try_from(a.response.authenticator_data.as_ref()).is_err() =>
        {
            Some("authenticator data parsed only as far as read")
        }
        // Nor does the daemon decode clientDataJSON members it does not read: webauthn-rs
        // refuses invalid UTF-8 or a lone surrogate (`\udc00`) in any member, since it keeps them
        // all, and a `tokenBinding` that is not `{status, id?}` (Token Binding is gone from
        // WebAuthn Level 3 and neither side checks it). Signed, as above; and WebAuthn's own
        // "UTF-8 decode" of clientDataJSON replaces invalid bytes rather than refusing them.
        (Ok(_), Err(WebauthnError::ParseJSONFailure(_))) => match value {
            None => Some("clientDataJSON members not read are not decoded"),
            Some(v) => serde_json::from_value::<Option<TokenBinding>>(v["tokenBinding"].clone())
                .is_err()
                .then_some("tokenBinding not read"),
        },
        _ => None,
    }
}

fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).escape_debug().to_string()
}

fuzz_target!(|data: &[u8]| {
    let [select, sig_mode, len, rest @ ..] = data else { return };
    let discoverable = select & 1 == 1;
    let s = &stored_credentials()[usize::from((select >> 1) & 3) + if select & 8 != 0 { 4 } else { 0 }];
    let auth_data = &rest[..usize::from(*len).min(rest.len())];
    let (cd, extra) = split_at_byte(&rest[auth_data.len()..], 0);
    let challenge = if discoverable { &s.username_less_challenge } else { &s.username_first_challenge };
    let cd = replace(cd, CHALLENGE, challenge.as_bytes());

    let f = fixture();
    let real = f.sign(auth_data, &cd);
    let sig = signature(*sig_mode, &real, extra);
    let json = assertion_json(&f.credential_id, auth_data, &cd, &sig, Some(&f.user_handle));
    let Ok(a) = serde_json::from_value::<PublicKeyCredential>(json) else { return };

    let ours = daemon(&a, s, discoverable, challenge);
    let theirs = library(&a, s, discoverable);
    if latchkey_fuzz::verbose() {
        eprintln!("assertion_diff: daemon {ours:?}; webauthn-rs {theirs:?}");
    }
    match (&ours, &theirs) {
        (Ok(v), Ok(r)) => {
            let same = v.sign_count == r.counter()
                && v.backed_up == r.backup_state()
                && v.backup_eligible == r.backup_eligible();
            assert!(
                same,
                "assertion_diff: both accept but report differently: daemon {v:?}, webauthn-rs counter {} \
                 backup_eligible {} backup_state {}",
                r.counter(),
                r.backup_eligible(),
                r.backup_state()
            );
        }
        (Err(_), Err(_)) => {}
        _ => {
            if by_design(&a, &ours, &theirs).is_none() {
                panic!(
                    "assertion_diff: the daemon and webauthn-rs disagree on a sign-in\n  daemon: {ours:?}\n  webauthn-rs: \
                     {theirs:?}\n  username-less: {discoverable}, stored counter {}, stored backup eligible {}\n  \
                     clientDataJSON: \"{}\"\n  authenticatorData: {:02x?}\n  signature (mode {}): {:02x?}",
                    s.counter,
                    s.eligible,
                    show(&cd),
                    auth_data,
                    sig_mode % 10,
                    sig
                );
            }
        }
    }
});
