//! Sign-in assertions, verified here rather than by webauthn-rs (WebAuthn Level 3 §7.2).
//!
//! Why: a sign-in's costliest step is its P-256 signature check, and webauthn-rs checks it with
//! the pure-Rust `p256` crate, several times slower than aws-lc's (which we already link for
//! tokens and TLS). Every credential we hold is ES256 — registration, still done by webauthn-rs,
//! refuses any other algorithm — so one key type covers them all. The steps, their order and the
//! refusals are webauthn-rs-core's (`verify_credential_internal` and
//! `authenticate_single_credential` with `UserVerificationPolicy::Required` and a valid counter
//! required), returned as its `WebauthnError`s so that [`super::verification_error`] gives every
//! failure the same code as before.
//!
//! The credential's counter and backup flags are read from their own columns (kept by every
//! sign-in), not from the stored `Passkey` JSON, which is only parsed for the public key.

use aws_lc_rs::signature::{ECDSA_P256_SHA256_ASN1, UnparsedPublicKey};
use webauthn_rs::prelude::{COSEAlgorithm, COSEKey, COSEKeyType, Credential, ECDSACurve, Passkey, WebauthnError};

use super::ClientData;
use super::authdata::{self, FLAG_UP, FLAG_UV};
use crate::crypto::sha256;
use crate::store::credentials::CredentialRow;

/// What the relying party expects of this assertion.
pub struct Expected<'a> {
    /// The challenge as sent (base64url); `clientDataJSON.challenge` must be exactly it.
    pub challenge: &'a str,
    pub rp_id: &'a str,
    /// A credential registered as not backup-eligible may become so (a passkey synced after an
    /// upgrade): allowed for username-first sign-ins, refused for username-less ones, as
    /// webauthn-rs does.
    pub allow_backup_eligible_upgrade: bool,
}

/// What a verified assertion tells about the credential, to be stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verified {
    pub sign_count: u32,
    pub backup_eligible: bool,
    pub backed_up: bool,
}

/// The public key and the backup eligibility recorded in a stored `Passkey`. Until 2026-11 the
/// eligibility gained by a credential (false → true) was written to the JSON but not to its
/// column: such a credential is eligible when either says so.
pub fn stored(passkey: Passkey) -> Result<([u8; 65], bool), WebauthnError> {
    let credential = Credential::from(passkey);
    Ok((point(&credential.cred)?, credential.backup_eligible))
}

fn point(key: &COSEKey) -> Result<[u8; 65], WebauthnError> {
    let COSEKeyType::EC_EC2(ec) = &key.key else { return Err(WebauthnError::COSEKeyInvalidType) };
    if key.type_ != COSEAlgorithm::ES256 || ec.curve != ECDSACurve::SECP256R1 {
        return Err(WebauthnError::COSEKeyInvalidType);
    }
    if ec.x.len() != 32 || ec.y.len() != 32 {
        return Err(WebauthnError::COSEKeyECDSAXYInvalid);
    }
    let mut point = [0u8; 65];
    point[0] = 0x04;
    point[1..33].copy_from_slice(&ec.x);
    point[33..].copy_from_slice(&ec.y);
    Ok(point)
}

/// Checks an assertion made with `stored` (whose public key is `key`) against what was asked.
pub fn verify(
    client: &ClientData,
    client_data_json: &[u8],
    authenticator_data: &[u8],
    signature: &[u8],
    key: &[u8; 65],
    stored: &CredentialRow,
    expected: &Expected<'_>,
) -> Result<Verified, WebauthnError> {
    use WebauthnError as W;
    if client.kind != "webauthn.get" {
        return Err(W::InvalidClientDataType);
    }
    // Browsers send the challenge back in the very encoding it was given (base64url, unpadded).
    if client.challenge != expected.challenge {
        return Err(W::MismatchedChallenge);
    }
    // rpIdHash (32 bytes), flags (1), signCount (4); attested data and extensions may follow and
    // are covered by the signature.
    let parsed = authdata::parse(authenticator_data).ok_or(W::ParseInsufficientBytesAvailable)?;
    if authenticator_data[..32] != sha256(expected.rp_id.as_bytes()) {
        return Err(W::InvalidRPIDHash);
    }
    let flags = parsed.flags;
    if flags & FLAG_UP == 0 {
        return Err(W::UserNotPresent);
    }
    if flags & FLAG_UV == 0 {
        return Err(W::UserNotVerified);
    }
    let (eligible, backed_up) = (parsed.backup_eligible(), parsed.backed_up());
    if eligible != stored.backup_eligible && !(expected.allow_backup_eligible_upgrade && eligible) {
        return Err(W::CredentialBackupEligibilityInconsistent);
    }
    if backed_up && !stored.backup_eligible {
        return Err(W::CredentialMayNotBeHardwareBound);
    }

    let mut signed = Vec::with_capacity(authenticator_data.len() + 32);
    signed.extend_from_slice(authenticator_data);
    signed.extend_from_slice(&sha256(client_data_json));
    UnparsedPublicKey::new(&ECDSA_P256_SHA256_ASN1, key)
        .verify(&signed, signature)
        .map_err(|_| W::AuthenticationFailure)?;

    let sign_count = parsed.sign_count;
    // A counter that does not go up (when either side has one) means a possible clone.
    if (sign_count > 0 || stored.sign_count > 0) && sign_count <= stored.sign_count {
        return Err(W::CredentialPossibleCompromise);
    }
    Ok(Verified { sign_count, backup_eligible: stored.backup_eligible || eligible, backed_up })
}

#[cfg(test)]
mod tests {
    use aws_lc_rs::rand::SystemRandom;
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair};

    use super::*;
    use crate::store::testing::credential_row;
    use crate::store::users::UserId;
    use crate::webauthn::authdata::{FLAG_BE, FLAG_BS};

    struct Case {
        pair: EcdsaKeyPair,
        stored: CredentialRow,
    }

    impl Case {
        fn new() -> Case {
            let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &SystemRandom::new()).unwrap();
            let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref()).unwrap();
            let mut stored = credential_row(UserId(1), &[1]);
            (stored.backup_eligible, stored.sign_count) = (false, 4);
            Case { pair, stored }
        }

        fn key(&self) -> [u8; 65] {
            self.pair.public_key().as_ref().try_into().unwrap()
        }

        /// Authenticator data for `rp_id` with `flags` and `count`, and its signature.
        fn sign(&self, rp_id: &str, flags: u8, count: u32, client: &[u8]) -> (Vec<u8>, Vec<u8>) {
            let mut auth = sha256(rp_id.as_bytes()).to_vec();
            auth.push(flags);
            auth.extend_from_slice(&count.to_be_bytes());
            let mut signed = auth.clone();
            signed.extend_from_slice(&sha256(client));
            let sig = self.pair.sign(&SystemRandom::new(), &signed).unwrap().as_ref().to_vec();
            (auth, sig)
        }

        fn check(&self, flags: u8, count: u32, upgrade: bool) -> Result<Verified, WebauthnError> {
            let json = br#"{"type":"webauthn.get","challenge":"abc","origin":"https://a.test"}"#;
            let (auth, sig) = self.sign("a.test", flags, count, json);
            let client = client("webauthn.get", "abc");
            let expected = Expected { challenge: "abc", rp_id: "a.test", allow_backup_eligible_upgrade: upgrade };
            verify(&client, json, &auth, &sig, &self.key(), &self.stored, &expected)
        }
    }

    const OK: u8 = FLAG_UP | FLAG_UV;

    fn client(kind: &str, challenge: &str) -> ClientData {
        ClientData {
            kind: kind.into(),
            challenge: challenge.into(),
            origin: "https://a.test".into(),
            cross_origin: false,
        }
    }

    #[test]
    fn a_good_assertion_verifies_and_reports_counter_and_flags() {
        let c = Case::new();
        assert_eq!(
            c.check(OK, 5, false).unwrap(),
            Verified { sign_count: 5, backup_eligible: false, backed_up: false }
        );
        let mut eligible = Case::new();
        eligible.stored.backup_eligible = true;
        let v = eligible.check(OK | FLAG_BE | FLAG_BS, 9, false).unwrap();
        assert_eq!(v, Verified { sign_count: 9, backup_eligible: true, backed_up: true });
    }

    #[test]
    fn each_refusal_is_the_one_webauthn_rs_gives() {
        use WebauthnError as W;
        let c = Case::new();
        let is = |r: Result<Verified, WebauthnError>, want: W| {
            assert_eq!(format!("{:?}", r.unwrap_err()), format!("{want:?}"))
        };
        is(c.check(FLAG_UV, 5, false), W::UserNotPresent);
        is(c.check(FLAG_UP, 5, false), W::UserNotVerified);
        is(c.check(OK, 4, false), W::CredentialPossibleCompromise);
        is(c.check(OK, 0, false), W::CredentialPossibleCompromise);
        is(c.check(OK | FLAG_BS, 5, false), W::CredentialMayNotBeHardwareBound);
        is(c.check(OK | FLAG_BE, 5, false), W::CredentialBackupEligibilityInconsistent);
        assert!(c.check(OK | FLAG_BE, 5, true).unwrap().backup_eligible);

        let json = br#"{"type":"webauthn.get","challenge":"abc","origin":"https://a.test"}"#;
        let expected = Expected { challenge: "abc", rp_id: "a.test", allow_backup_eligible_upgrade: false };
        let good = client("webauthn.get", "abc");
        let (auth, sig) = c.sign("a.test", OK, 5, json);
        let run = |client: &ClientData, auth: &[u8], sig: &[u8]| {
            verify(client, json, auth, sig, &c.key(), &c.stored, &expected)
        };
        is(run(&client("webauthn.create", "abc"), &auth, &sig), W::InvalidClientDataType);
        is(run(&client("webauthn.get", "abd"), &auth, &sig), W::MismatchedChallenge);
        is(run(&good, &auth[..36], &sig), W::ParseInsufficientBytesAvailable);
        let (other_rp, other_sig) = c.sign("b.test", OK, 5, json);
        is(run(&good, &other_rp, &other_sig), W::InvalidRPIDHash);
        let mut bad = sig.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        is(run(&good, &auth, &bad), W::AuthenticationFailure);
        let mut altered = auth.clone();
        altered[36] ^= 1;
        is(run(&good, &altered, &sig), W::AuthenticationFailure);
        // Signed by another key.
        let (_, foreign) = Case::new().sign("a.test", OK, 5, json);
        is(run(&good, &auth, &foreign), W::AuthenticationFailure);
        assert!(run(&good, &auth, &sig).is_ok());
    }

    #[test]
    fn zero_counters_on_both_sides_are_accepted() {
        let mut c = Case::new();
        c.stored.sign_count = 0;
        assert_eq!(c.check(OK, 0, false).unwrap().sign_count, 0);
    }
}
