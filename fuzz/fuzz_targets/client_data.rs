//! clientDataJSON: the daemon hands it to webauthn-rs unparsed, which decodes it, then checks
//! type, challenge, origin and cross-origin before anything else. Here it travels inside
//! otherwise valid responses, so every check on it runs, and for sign-ins the assertion is
//! signed over the fuzzed bytes, so an accepted clientDataJSON leads to a full verification.
//!
//! First byte: 0 registration, 1 sign-in, 2 username-less sign-in, else the bare
//! `CollectedClientData` parse. `CHALLENGE` is replaced by the ceremony's challenge.

#![no_main]

use latchkey_fuzz::{CHALLENGE, assertion_auth_data, assertion_json, fixture, registration_json, replace};
use libfuzzer_sys::fuzz_target;
use webauthn_rs::prelude::{PublicKeyCredential, RegisterPublicKeyCredential};
use webauthn_rs_core::proto::CollectedClientData;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let f = fixture();
    match mode % 4 {
        0 => {
            let cd = replace(rest, CHALLENGE, f.registration_challenge.as_bytes());
            let json = registration_json(&f.credential_id, &f.attestation_object, &cd);
            if let Ok(reg) = serde_json::from_value::<RegisterPublicKeyCredential>(json) {
                let _ = f.webauthn.finish_passkey_registration(&reg, &f.registration);
            }
        }
        1 => {
            let cd = replace(rest, CHALLENGE, f.authentication_challenge.as_bytes());
            let auth = assertion_auth_data(1);
            let sig = f.sign(&auth, &cd);
            let json = assertion_json(&f.credential_id, &auth, &cd, &sig, None);
            if let Ok(a) = serde_json::from_value::<PublicKeyCredential>(json) {
                let _ = f.webauthn.finish_passkey_authentication(&a, &f.authentication);
            }
        }
        2 => {
            let cd = replace(rest, CHALLENGE, f.discoverable_challenge.as_bytes());
            let auth = assertion_auth_data(1);
            let sig = f.sign(&auth, &cd);
            let json = assertion_json(&f.credential_id, &auth, &cd, &sig, Some(&f.user_handle));
            if let Ok(a) = serde_json::from_value::<PublicKeyCredential>(json) {
                let _ = f.webauthn.finish_discoverable_authentication_v2(&a, f.discoverable.clone(), &f.passkey);
            }
        }
        _ => {
            let _ = serde_json::from_slice::<CollectedClientData>(rest);
        }
    }
});
