//! Typed values of the store: integer row ids that must not be mixed up, and the closed sets of
//! values kept in TEXT columns. Their SQL (and JSON) form is exactly the plain integer or text the
//! columns hold; an unknown stored text reads as [`StoreError::Corrupt`](super::StoreError).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::StoreError;
use super::sql::{FromValue, ToValue, Value, ValueRef};

pub use latchkey::admin::{AppType, AttestationPolicy, KeyState, Registration, SigningAlg, TokenAuth};

macro_rules! row_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub i64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl ToValue for $name {
            fn to_value(&self) -> Value<'_> {
                Value::Int(self.0)
            }
        }

        impl FromValue for $name {
            fn from_value(v: ValueRef<'_>) -> Result<Self, StoreError> {
                i64::from_value(v).map($name)
            }
        }
    };
}

row_id!(
    /// `tenants.id`.
    TenantId
);
row_id!(
    /// `users.id`: the internal id, never shown outside (that is `public_id`).
    UserId
);

/// A closed set of values stored in a TEXT column.
pub trait StoredText: Sized + Copy + 'static {
    /// `table.column`, named in the corruption message.
    const COLUMN: &'static str;
    fn as_text(self) -> &'static str;
    fn from_text(text: &str) -> Option<Self>;
}

fn text_from_value<T: StoredText>(v: ValueRef<'_>) -> Result<T, StoreError> {
    match v {
        ValueRef::Text(text) => {
            T::from_text(text).ok_or_else(|| StoreError::Corrupt(format!("{}: unknown value {text:?}", T::COLUMN)))
        }
        other => Err(StoreError::Corrupt(format!("{}: expected text, found {}", T::COLUMN, other.kind()))),
    }
}

/// SQL form of a [`StoredText`] enum defined in the `latchkey` crate, which knows nothing of
/// the store: bind `Text(value)`, read `row.get::<_, Text<T>>(i)?.0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Text<T>(pub T);

impl<T: StoredText> ToValue for Text<T> {
    fn to_value(&self) -> Value<'_> {
        Value::Text(self.0.as_text())
    }
}

impl<T: StoredText> FromValue for Text<T> {
    fn from_value(v: ValueRef<'_>) -> Result<Self, StoreError> {
        text_from_value(v).map(Text)
    }
}

impl StoredText for AppType {
    const COLUMN: &'static str = "applications.app_type";
    fn as_text(self) -> &'static str {
        self.as_str()
    }
    fn from_text(text: &str) -> Option<Self> {
        AppType::parse(text)
    }
}

impl StoredText for AttestationPolicy {
    const COLUMN: &'static str = "tenants.attestation_policy";
    fn as_text(self) -> &'static str {
        self.as_str()
    }
    fn from_text(text: &str) -> Option<Self> {
        AttestationPolicy::parse(text)
    }
}

impl StoredText for Registration {
    const COLUMN: &'static str = "tenants.registration";
    fn as_text(self) -> &'static str {
        self.as_str()
    }
    fn from_text(text: &str) -> Option<Self> {
        Registration::parse(text)
    }
}

impl StoredText for TokenAuth {
    const COLUMN: &'static str = "applications.token_auth";
    fn as_text(self) -> &'static str {
        self.as_str()
    }
    fn from_text(text: &str) -> Option<Self> {
        TokenAuth::parse(text)
    }
}

/// Stored by its JOSE name (`signing_keys.alg`, `applications.signing_alg`).
impl StoredText for SigningAlg {
    const COLUMN: &'static str = "signing_keys.alg";
    fn as_text(self) -> &'static str {
        self.as_str()
    }
    fn from_text(text: &str) -> Option<Self> {
        SigningAlg::parse(text)
    }
}

/// The column keeps its original values (`current`, `retired`: the CHECK of migration 0001) and
/// `retired` there means what the CLI calls `previous` — no longer signing, still published. A
/// key that is retired with `latchkey key retire` is deleted, so the column never needs a third
/// value. Renaming the stored text would mean rebuilding the STRICT table for a word.
impl StoredText for KeyState {
    const COLUMN: &'static str = "signing_keys.state";
    fn as_text(self) -> &'static str {
        match self {
            KeyState::Current => "current",
            KeyState::Previous => "retired",
        }
    }
    fn from_text(text: &str) -> Option<Self> {
        match text {
            "current" => Some(KeyState::Current),
            "retired" => Some(KeyState::Previous),
            _ => None,
        }
    }
}

/// An enum of the daemon's own, stored as TEXT: `as_str`, `parse`, `Display`, `ToValue`, `FromValue`.
macro_rules! text_enum {
    ($(#[$doc:meta])* $name:ident in $column:literal { $($(#[$vdoc:meta])* $variant:ident = $text:literal,)+ }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)+
        }

        impl $name {
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// The value for its stored text; `None` for anything else.
            pub fn parse(text: &str) -> Option<$name> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl StoredText for $name {
            const COLUMN: &'static str = $column;
            fn as_text(self) -> &'static str {
                self.as_str()
            }
            fn from_text(text: &str) -> Option<Self> {
                $name::parse(text)
            }
        }

        impl ToValue for $name {
            fn to_value(&self) -> Value<'_> {
                Value::Text(self.as_str())
            }
        }

        impl FromValue for $name {
            fn from_value(v: ValueRef<'_>) -> Result<Self, StoreError> {
                text_from_value(v)
            }
        }
    };
}

text_enum!(
    /// Where a user is in their lifecycle.
    UserStatus in "users.status" {
        /// Created by an invitation; no passkey registered yet.
        Invited = "invited",
        /// Has registered a passkey and may sign in.
        Active = "active",
        /// Switched off by an operator: cannot sign in or register.
        Disabled = "disabled",
    }
);

text_enum!(
    /// Where a device code of the device authorization grant (RFC 8628) is.
    DeviceStatus in "device_codes.status" {
        /// Waiting for the user to enter the user code and decide.
        Pending = "pending",
        /// Approved: the next poll gets the tokens.
        Approved = "approved",
        /// Denied by the user.
        Denied = "denied",
        /// The tokens were issued; a second redemption is refused.
        Redeemed = "redeemed",
    }
);

text_enum!(
    /// The WebAuthn ceremony a stored challenge belongs to.
    ChallengeKind in "challenges.kind" {
        /// Registering a credential.
        Register = "register",
        /// Signing in with a username (its credentials, or a decoy, listed).
        Authenticate = "authenticate",
        /// Signing in without a username: the credential names its user.
        Discoverable = "discoverable",
    }
);

text_enum!(
    /// What a one-time link in `invites` is for.
    InvitePurpose in "invites.purpose" {
        /// First registration of an invited user.
        Invite = "invite",
        /// A new passkey for an existing user who lost theirs.
        Recovery = "recovery",
    }
);

text_enum!(
    /// How a credential is attached to the user's device.
    CredentialKind in "credentials.kind" {
        /// Built into the device (platform authenticator).
        Platform = "platform",
        /// A separate security key (cross-platform authenticator).
        Roaming = "roaming",
    }
);

text_enum!(
    /// The protocol an upstream identity provider speaks.
    SocialKind in "social_providers.kind" {
        /// Google: OpenID Connect at accounts.google.com (or an override), `hd` for domains.
        Google = "google",
        /// GitHub: OAuth 2.0 and its REST API (github.com or an Enterprise Server).
        Github = "github",
        /// Any OpenID Connect provider, found by discovery.
        Oidc = "oidc",
    }
);

text_enum!(
    /// What a social login flow was started for.
    SocialPurpose in "social_states.purpose" {
        /// Signing in to continue a pending authorization request.
        Login = "login",
        /// Accepting an invitation.
        Invite = "invite",
        /// Linking the provider to the signed-in user's account.
        Link = "link",
    }
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::{Conn, ConnExt, params};

    fn round_trip<T: StoredText + PartialEq + fmt::Debug>(all: &[T]) {
        for v in all {
            assert_eq!(T::from_text(v.as_text()), Some(*v));
        }
        assert_eq!(T::from_text("bogus"), None);
        assert_eq!(T::from_text(""), None);
    }

    #[test]
    fn text_round_trips() {
        round_trip(&[UserStatus::Invited, UserStatus::Active, UserStatus::Disabled]);
        round_trip(&[ChallengeKind::Register, ChallengeKind::Authenticate, ChallengeKind::Discoverable]);
        round_trip(&[InvitePurpose::Invite, InvitePurpose::Recovery]);
        round_trip(&[CredentialKind::Platform, CredentialKind::Roaming]);
        round_trip(&[AppType::Web, AppType::Spa, AppType::Native, AppType::M2m]);
        round_trip(&[Registration::Invite, Registration::Open]);
        round_trip(&[KeyState::Current, KeyState::Previous]);
        round_trip(&SigningAlg::ALL);
        round_trip(&[TokenAuth::Secret, TokenAuth::PrivateKeyJwt]);
        assert_eq!(KeyState::Previous.as_text(), "retired", "the stored spelling of migration 0001");
        round_trip(&[SocialKind::Google, SocialKind::Github, SocialKind::Oidc]);
        round_trip(&[SocialPurpose::Login, SocialPurpose::Invite, SocialPurpose::Link]);
    }

    #[test]
    fn stored_text_is_unchanged() {
        assert_eq!(UserStatus::Invited.to_string(), "invited");
        assert_eq!(ChallengeKind::Discoverable.as_str(), "discoverable");
        assert_eq!(InvitePurpose::Recovery.as_str(), "recovery");
        assert_eq!(CredentialKind::Roaming.as_str(), "roaming");
        assert_eq!(TenantId(42).to_string(), "42");
        assert_eq!(format!("{}/x", TenantId(-3)), "-3/x");
        assert_eq!(serde_json::to_string(&UserId(7)).unwrap(), "7");
        assert_eq!(serde_json::from_str::<UserId>("7").unwrap(), UserId(7));
    }

    #[test]
    fn sql_values_are_plain() {
        let c = crate::testing::sqlite_memory();
        let db: &dyn Conn = &c;
        let (status, app): (String, String) = db
            .query_one("SELECT ?1, ?2", params![UserStatus::Active, Text(AppType::M2m)], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert_eq!((status.as_str(), app.as_str()), ("active", "m2m"));
        let back: (UserStatus, Text<AppType>) =
            db.query_one("SELECT 'active', 'm2m'", params![], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        assert_eq!(back, (UserStatus::Active, Text(AppType::M2m)));
    }

    #[test]
    fn ids_are_plain_integers() {
        let c = crate::testing::sqlite_memory();
        let db: &dyn Conn = &c;
        let (t, u): (i64, i64) =
            db.query_one("SELECT ?1, ?2", params![TenantId(3), UserId(9)], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        assert_eq!((t, u), (3, 9));
        let back: (TenantId, Option<UserId>) =
            db.query_one("SELECT 3, NULL", params![], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        assert_eq!(back, (TenantId(3), None));
    }

    #[test]
    fn unknown_text_is_corrupt() {
        let c = crate::testing::sqlite_memory();
        let db: &dyn Conn = &c;
        let err = db.query_one("SELECT 'sleeping'", params![], |r| r.get::<_, UserStatus>(0)).unwrap_err();
        assert!(
            matches!(&err, StoreError::Corrupt(m) if m.contains("users.status: unknown value \"sleeping\"")),
            "{err}"
        );
        let err = db.query_one("SELECT 'desktop'", params![], |r| r.get::<_, Text<AppType>>(0)).unwrap_err();
        assert!(matches!(&err, StoreError::Corrupt(m) if m.contains("applications.app_type")), "{err}");
        let err = db.query_one("SELECT 7", params![], |r| r.get::<_, UserStatus>(0)).unwrap_err();
        assert!(matches!(&err, StoreError::Corrupt(m) if m.contains("users.status: expected text")), "{err}");
    }
}
