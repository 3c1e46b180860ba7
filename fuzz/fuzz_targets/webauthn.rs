//! WebAuthn responses: what the daemon parses itself (authenticator data, the CBOR attestation
//! object) and the webauthn-rs path it relies on (credential JSON, attestation and assertion
//! parsing, then verification against a real relying party and ceremony state).
//!
//! The first byte picks the mode; the rest is the mode's input:
//! 0. credential JSON for `/register/finish` (as the daemon's `register::finish`);
//! 1. assertion JSON for `/auth/finish` (both sign-in flows of `authenticate::finish`);
//! 2. an attestation object (CBOR), posted with a valid clientDataJSON for the open ceremony;
//! 3. authenticator data of an assertion, with a valid clientDataJSON, *signed* by the
//!    registered passkey, so mutations reach what webauthn-rs checks after the signature;
//! 4. raw authenticator data; 5. raw CBOR attestation object.
//!
//! `CHALLENGE` anywhere in modes 0 and 1 is replaced by the ceremony's real challenge.

#![no_main]

use latchkey_fuzz::{CHALLENGE, assertion_json, client_data, fixture, registration_json, replace};
use latchkey_domain::webauthn::{authdata, device};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use webauthn_rs::prelude::{PublicKeyCredential, RegisterPublicKeyCredential};
use webauthn_rs_core::internals::{AttestationObject, AuthenticatorData};
use webauthn_rs_core::proto::{Authentication, Registration};

/// What `register::finish` does with the posted credential before and during verification.
fn register(value: Value) {
    let f = fixture();
    let Ok(reg) = serde_json::from_value::<RegisterPublicKeyCredential>(value.clone()) else { return };
    let Some(auth) = authdata::from_attestation_object(&reg.response.attestation_object) else { return };
    let _ = (auth.backup_eligible(), auth.backed_up(), auth.sign_count);
    let roaming = value.get("authenticatorAttachment").and_then(Value::as_str) == Some("cross-platform");
    let _ = device::label(auth.aaguid.as_ref(), Some("Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0"), roaming);
    if let Ok(passkey) = f.webauthn.finish_passkey_registration(&reg, &f.registration) {
        let _ = passkey.get_public_key().type_;
        let _ = serde_json::to_string(&passkey);
    }
}

/// What `authenticate::finish` does with the posted assertion, for both kinds of challenge.
fn authenticate(value: Value) {
    let f = fixture();
    let Ok(assertion) = serde_json::from_value::<PublicKeyCredential>(value) else { return };
    let _ = assertion.raw_id.to_vec();
    if let Some(handle) = &assertion.response.user_handle {
        let _ = handle.as_slice() == f.user_handle.as_slice();
    }
    if let Ok(result) = f.webauthn.finish_passkey_authentication(&assertion, &f.authentication) {
        let mut key = f.passkey.clone();
        key.update_credential(&result);
        let _ = (result.counter(), result.backup_state());
    }
    let _ = f.webauthn.finish_discoverable_authentication_v2(&assertion, f.discoverable.clone(), &f.passkey);
    // The daemon's own sign-in check (`webauthn::assertion`), which `authenticate::finish` runs
    // instead of webauthn-rs's, on the same input.
    use latchkey_store::{CredentialKind, credentials::CredentialRow, users::UserId};
    use latchkey_domain::webauthn::{assertion as check, client_data as parse_client_data};
    let (Ok(client), Ok((key, _))) =
        (parse_client_data(&assertion.response.client_data_json), check::stored(f.passkey.clone()))
    else {
        return;
    };
    let stored = CredentialRow {
        user_id: UserId(1),
        credential_id: f.credential_id.clone(),
        passkey: String::new(),
        kind: CredentialKind::Platform,
        aaguid: None,
        device: String::new(),
        name: String::new(),
        backup_eligible: false,
        backed_up: false,
        sign_count: 0,
        created_at: 0,
        last_used_at: None,
    };
    for (challenge, upgrade) in [(&f.authentication_challenge, true), (&f.discoverable_challenge, false)] {
        let expected = check::Expected {
            challenge: challenge.as_str(),
            rp_id: latchkey_fuzz::RP_ID,
            allow_backup_eligible_upgrade: upgrade,
        };
        let r = &assertion.response;
        let _ =
            check::verify(&client, &r.client_data_json, &r.authenticator_data, &r.signature, &key, &stored, &expected);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let f = fixture();
    match mode % 6 {
        0 => {
            let input = replace(rest, CHALLENGE, f.registration_challenge.as_bytes());
            if let Ok(v) = serde_json::from_slice::<Value>(&input) {
                register(v);
            }
        }
        1 => {
            let input = replace(rest, CHALLENGE, f.authentication_challenge.as_bytes());
            if let Ok(v) = serde_json::from_slice::<Value>(&input) {
                authenticate(v);
            }
        }
        2 => {
            let cd = client_data("webauthn.create", &f.registration_challenge);
            register(registration_json(&f.credential_id, rest, &cd));
        }
        3 => {
            let cd = client_data("webauthn.get", &f.authentication_challenge);
            let sig = f.sign(rest, &cd);
            authenticate(assertion_json(&f.credential_id, rest, &cd, &sig, Some(&f.user_handle)));
        }
        4 => {
            let _ = authdata::parse(rest);
            let _ = AuthenticatorData::<Registration>::try_from(rest);
            let _ = AuthenticatorData::<Authentication>::try_from(rest);
        }
        _ => {
            let _ = authdata::from_attestation_object(rest);
            let _ = AttestationObject::<Registration>::try_from(rest);
        }
    }
});
