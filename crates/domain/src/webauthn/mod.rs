//! Passkey ceremonies: registration with webauthn-rs (one `Webauthn` per tenant: its RP id and
//! origin), sign-in assertions checked by [`assertion`]; options shaped to the seed's exact values,
//! ceremony state kept server-side in the database.

pub mod assertion;
pub mod attestation;
pub mod authdata;
pub mod authenticate;
pub mod credentials;
pub mod device;
pub mod mds;
pub mod register;

use std::time::Duration;

use latchkey::codes;
use serde::{Deserialize, Serialize};
use url::Url;
use webauthn_rs::prelude::{Webauthn, WebauthnBuilder, WebauthnError};

use crate::error::{Error, Kind};

/// The seed's timeout for both ceremonies, in milliseconds.
pub const TIMEOUT_MS: u32 = 60_000;

/// The seed's challenge size, in bytes (webauthn-rs uses the same for registrations).
pub const CHALLENGE_BYTES: usize = 32;

/// Builds the tenant's relying party: its RP id and its one origin.
pub fn relying_party(rp_id: &str, origin: &str, name: &str) -> Result<Webauthn, String> {
    let origin = Url::parse(origin).map_err(|e| format!("origin {origin:?}: {e}"))?;
    WebauthnBuilder::new(rp_id, &origin)
        .and_then(|b| b.rp_name(name).timeout(Duration::from_millis(u64::from(TIMEOUT_MS))).build())
        .map_err(|e| format!("relying party {rp_id:?} at {origin}: {e}"))
}

/// A user as the ceremony endpoints return it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct UserInfo {
    pub id: String,
    pub email: String,
    pub name: String,
}

/// A credential as the API shows it: these five fields and nothing more (no key material).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CredentialInfo {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub device: String,
    pub created: String,
    pub name: String,
}

impl CredentialInfo {
    pub fn from_row(row: &crate::store::credentials::CredentialRow) -> CredentialInfo {
        CredentialInfo {
            id: crate::crypto::b64url(&row.credential_id),
            kind: row.kind.as_str().to_owned(),
            device: device::shown_label(row),
            created: crate::clock::date(row.created_at),
            name: row.name.clone(),
        }
    }
}

fn fail(kind: Kind, code: &'static str, message: &str) -> Error {
    Error::new(kind, code, message.to_owned())
}

/// Maps a verification failure to a stable code. Registration failures are 400; a failed
/// sign-in is 401. The library's own wording is logged, not sent.
pub fn verification_error(e: WebauthnError, signing_in: bool) -> Error {
    use WebauthnError as W;
    let denied = if signing_in { Kind::Unauthenticated } else { Kind::Invalid };
    let mut err = match &e {
        W::InvalidRPOrigin | W::CredentialCrossOrigin => {
            fail(denied, codes::ORIGIN_MISMATCH, "the credential was made for another origin than this tenant's")
        }
        W::InvalidRPIDHash => {
            fail(denied, codes::RP_ID_MISMATCH, "the authenticator signed for another relying party id")
        }
        W::UserNotPresent => fail(denied, codes::USER_NOT_PRESENT, "the authenticator did not confirm user presence"),
        W::UserNotVerified | W::InconsistentUserVerificationPolicy => {
            fail(denied, codes::USER_NOT_VERIFIED, "user verification (biometric or PIN) is required")
        }
        W::MismatchedChallenge | W::ChallengeNotFound | W::InvalidClientDataType => {
            fail(Kind::Invalid, codes::INVALID_CHALLENGE, "the response does not answer this challenge")
        }
        W::CredentialAlteredAlgFromRequest
        | W::COSEKeyInvalidAlgorithm
        | W::COSEKeyEDUnsupported
        | W::COSEKeyInvalidType
        | W::CredentialInsecureCryptography => {
            fail(Kind::Invalid, codes::UNSUPPORTED_ALGORITHM, "only ES256 (alg -7) credentials are accepted")
        }
        W::AuthenticationFailure | W::SignatureInvalid | W::AttestationStatementSigInvalid => {
            fail(denied, codes::INVALID_SIGNATURE, "the signature does not verify")
        }
        W::CredentialPossibleCompromise => fail(
            denied,
            codes::COUNTER_REGRESSION,
            "the signature counter went backwards: this authenticator may have been cloned",
        ),
        W::CredentialNotFound => fail(denied, codes::UNKNOWN_CREDENTIAL, "this credential is not registered here"),
        W::CredentialExcludedFromRequest | W::CredentialAlreadyExists => {
            fail(Kind::Conflict, codes::CREDENTIAL_EXISTS, "this credential is already registered")
        }
        W::InvalidUserUniqueId => fail(denied, codes::INVALID_USER_HANDLE, "the user handle does not match"),
        W::ParseBase64Failure(_)
        | W::ParseCBORFailure(_)
        | W::ParseJSONFailure(_)
        | W::ParseNOMFailure
        | W::ParseInsufficientBytesAvailable
        | W::COSEKeyInvalidCBORValue
        | W::COSEKeyECDSAXYInvalid
        | W::COSEKeyECDSAInvalidCurve
        | W::MissingAttestationCredentialData
        | W::AttestationStatementMapInvalid
        | W::EcdsaPointInvalid => {
            fail(Kind::Invalid, codes::MALFORMED_CREDENTIAL, "the credential data could not be parsed")
        }
        _ => fail(denied, codes::VERIFICATION_FAILED, "the credential did not pass verification"),
    };
    err.cause = Some(format!("webauthn: {e:?}"));
    tracing::debug!(code = err.code, cause = ?e, "ceremony refused");
    err
}

/// A response that cannot be read. The parser's own words go to the log, not to the caller.
pub fn malformed(what: &str, detail: impl std::fmt::Display) -> Error {
    Error::invalid(
        codes::MALFORMED_CREDENTIAL,
        format!("{what} is not a valid WebAuthn response; send the object the browser returned, as JSON"),
    )
    .caused_by(detail)
}

/// The parts of `clientDataJSON` read here. A sign-in checks all three itself
/// ([`assertion::verify`]); a registration checks the origin here, before the library's checks.
#[derive(Deserialize)]
pub struct ClientData {
    #[serde(rename = "type")]
    pub kind: String,
    pub challenge: String,
    pub origin: String,
    /// True when the ceremony ran in a frame of another origin (WebAuthn §5.8.1; `topOrigin`
    /// names it). The tenant's pages are never framed (`frame-ancestors 'none'`), so a ceremony
    /// that says so was not theirs: refused, as webauthn-rs refuses it at registration.
    #[serde(default, rename = "crossOrigin")]
    pub cross_origin: bool,
}

/// Parses `clientDataJSON`; the parser's words go to the log.
pub fn client_data(json: &[u8]) -> Result<ClientData, Error> {
    serde_json::from_slice(json).map_err(|e| malformed("clientDataJSON", e))
}

/// The origin the browser reports must be the tenant's, character for character: scheme, host and
/// port, with no path, user info or trailing slash (the library compares more loosely).
pub fn check_origin(client_data_json: &[u8], tenant_origin: &str, signing_in: bool) -> Result<(), Error> {
    origin_is(&client_data(client_data_json)?, tenant_origin, signing_in)
}

/// [`check_origin`] on client data already parsed.
pub fn origin_is(data: &ClientData, tenant_origin: &str, signing_in: bool) -> Result<(), Error> {
    if data.origin == tenant_origin && !data.cross_origin {
        return Ok(());
    }
    let kind = if signing_in { Kind::Unauthenticated } else { Kind::Invalid };
    if data.cross_origin {
        return Err(fail(kind, codes::ORIGIN_MISMATCH, "the ceremony ran in a frame of another site")
            .caused_by(format!("clientDataJSON crossOrigin true, origin {:?}", data.origin)));
    }
    Err(fail(kind, codes::ORIGIN_MISMATCH, "the credential was made for another origin than this tenant's")
        .caused_by(format!("clientDataJSON origin {:?}", data.origin)))
}

/// A credential's `id` is the base64url form of its `rawId` (WebAuthn §5.1).
pub fn check_credential_id(id: &str, raw_id: &[u8]) -> Result<(), Error> {
    match crate::crypto::b64url_decode(id) {
        Some(decoded) if decoded == raw_id => Ok(()),
        _ => Err(Error::invalid(
            codes::MALFORMED_CREDENTIAL,
            "the credential's id is not the base64url form of its rawId",
        )),
    }
}

pub fn invalid_challenge() -> Error {
    Error::invalid(codes::INVALID_CHALLENGE, "unknown, used or expired challenge; start the ceremony again")
}

/// Whether `s` is an e-mail address users can be invited at: an RFC 5322 addr-spec (checked by the
/// `email_address` crate: no display name, no domain literal) of at most 254 characters, whose
/// domain is a host name of two or more valid labels (letters, digits and inner hyphens, 1–63
/// characters each). Used by every way users are added: invite, import, the invite API, sign-up.
pub fn valid_email(s: &str) -> bool {
    let s = s.trim();
    let options = email_address::Options::default().without_display_text().without_domain_literal();
    if s.len() > 254 || email_address::EmailAddress::parse_with_options(s, options).is_err() {
        return false;
    }
    let Some((_, domain)) = s.rsplit_once('@') else { return false };
    let labels: Vec<&str> = domain.split('.').collect();
    let label_ok = |l: &&str| {
        (1..=63).contains(&l.len())
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    labels.len() >= 2 && labels.iter().all(label_ok) && !labels.iter().all(|l| l.bytes().all(|b| b.is_ascii_digit()))
}

/// A display name: 1–64 printable characters.
pub fn valid_name(s: &str) -> bool {
    let n = s.trim().chars().count();
    (1..=64).contains(&n) && !s.chars().any(unprintable)
}

/// Control characters, and the invisible ones that change how the text around them reads:
/// zero-width characters and the bidirectional overrides (a name shown reversed, `U+202E`).
pub fn unprintable(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}' | '\u{061C}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_and_names() {
        assert!(valid_email("ada@example.com"));
        assert!(valid_email("Ada.Lovelace+x@sub.example.co.uk"));
        for bad in [
            "",
            "ada",
            "ada@",
            "@example.com",
            "ada@example",
            "a da@example.com",
            "ada@example.com.",
            "<a@b.c>",
            "Ada <ada@example.com>",
            "a@b@c.com",
            "@@x.com",
            "a..b@c.com",
            ".a@c.com",
            "a.@c.com",
            "a@b..com",
            "a@-b.com",
            "a@b-.com",
            "a@[127.0.0.1]",
            "a@1.2.3.4",
            "a@b_c.com",
        ] {
            assert!(!valid_email(bad), "{bad}");
        }
        for good in ["a@b.co", "first.last@sub.example.com", "x-y+tag@a-b.example.org", "o'brien@example.ie"] {
            assert!(valid_email(good), "{good}");
        }
        assert!(valid_name("Ada Lovelace"));
        assert!(!valid_name(""));
        assert!(!valid_name("   "));
        assert!(!valid_name(&"x".repeat(65)));
        assert!(!valid_name("a\nb"));
        assert!(!valid_name("a\u{200b}b"), "zero-width space");
        assert!(!valid_name("evil\u{202e}gpj.exe"), "right-to-left override");
        assert!(valid_name("Zoë Ångström 李"), "letters of any script");
    }

    #[test]
    fn relying_party_for_localhost_and_custom_domains() {
        assert!(relying_party("localhost", "http://localhost:8080", "dev").is_ok());
        assert!(relying_party("acme.com", "https://login.acme.com", "acme").is_ok());
        assert!(relying_party("evil.com", "https://login.acme.com", "acme").is_err());
    }
}
