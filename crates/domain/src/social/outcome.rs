//! What a social login flow ends in, shared by the sign-in flow ([`super::flow`]) and the link
//! flow ([`super::link`]): the upstream identity, the finished flow, the account awaiting a link's
//! confirmation, and the refusals both can answer.

use latchkey::codes;

use crate::error::{Error, Kind};
use crate::sessions::Issued;
use crate::store::SocialPurpose;

pub fn failed(kind: Kind, code: &'static str, message: impl Into<String>) -> Error {
    Error::new(kind, code, message)
}

pub fn provider_gone(slug: &str) -> Error {
    failed(
        Kind::NotFound,
        codes::PROVIDER_NOT_FOUND,
        format!("Sign-in with {slug:?} is not available here: the administrator has not set it up."),
    )
}

pub fn sign_in_first() -> Error {
    failed(Kind::Unauthenticated, codes::LOGIN_REQUIRED, "Sign in first, then link your account from the account page.")
}

/// The upstream identity, checked against the provider's policy.
#[derive(Debug, Clone)]
pub struct Identity {
    pub subject: String,
    /// Present only when the provider verified it, and a valid address (as an invitation's).
    pub verified_email: Option<String>,
    pub name: Option<String>,
    /// The account as the provider's users know it, to name it on the confirmation page: the
    /// GitHub login, or the e-mail (else the name, else the subject) of an OpenID provider.
    pub account: String,
}

/// The upstream account on the confirmation page.
#[derive(Debug, Clone)]
pub struct Confirm {
    /// The form's token (only its hash is stored).
    pub token: String,
    pub provider: String,
    pub label: String,
    pub account: String,
}

#[derive(Debug)]
pub struct Finished {
    pub redirect: String,
    /// A new session (sign-in); `None` when a signed-in user linked an account.
    pub session: Option<Issued>,
    pub email: String,
    pub purpose: SocialPurpose,
    /// A `link` flow: the upstream account waiting for the user's confirmation.
    pub confirm: Option<Confirm>,
    /// A sign-in of a user who has no passkey and was never offered one: their display name, for
    /// the one-time "add a passkey" step shown before going on to `redirect`.
    pub offer_passkey: Option<String>,
}

pub fn already_linked(label: &str) -> Error {
    failed(
        Kind::Conflict,
        codes::ALREADY_LINKED,
        format!("This account is already linked to another {label} account. Unlink it on the account page first."),
    )
}
