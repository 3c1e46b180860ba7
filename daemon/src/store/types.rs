//! Typed values of the store: integer row ids that must not be mixed up, and the closed sets of
//! values kept in TEXT columns. Their SQL (and JSON) form is exactly the plain integer or text the
//! columns hold; an unknown stored text reads as [`StoreError::Corrupt`](super::StoreError).

use std::fmt;

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use serde::{Deserialize, Serialize};

pub use latchkey::admin::{AppType, KeyState, Registration};

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

        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                self.0.to_sql()
            }
        }

        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                i64::column_result(value).map($name)
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

/// A stored value outside the column's set: becomes [`StoreError::Corrupt`](super::StoreError).
#[derive(Debug)]
pub(crate) struct UnknownValue {
    column: &'static str,
    value: String,
}

impl fmt::Display for UnknownValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: unknown value {:?}", self.column, self.value)
    }
}

impl std::error::Error for UnknownValue {}

fn text_to_sql<T: StoredText>(value: T) -> rusqlite::Result<ToSqlOutput<'static>> {
    Ok(ToSqlOutput::from(value.as_text()))
}

fn text_from_sql<T: StoredText>(value: ValueRef<'_>) -> FromSqlResult<T> {
    let text = value.as_str()?;
    T::from_text(text)
        .ok_or_else(|| FromSqlError::Other(Box::new(UnknownValue { column: T::COLUMN, value: text.into() })))
}

/// SQL form of a [`StoredText`] enum defined in the `latchkey` crate, which knows nothing of
/// SQLite: bind `Text(value)`, read `row.get::<_, Text<T>>(i)?.0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Text<T>(pub T);

impl<T: StoredText> ToSql for Text<T> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        text_to_sql(self.0)
    }
}

impl<T: StoredText> FromSql for Text<T> {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        text_from_sql(value).map(Text)
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

impl StoredText for Registration {
    const COLUMN: &'static str = "tenants.registration";
    fn as_text(self) -> &'static str {
        self.as_str()
    }
    fn from_text(text: &str) -> Option<Self> {
        Registration::parse(text)
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

/// An enum of the daemon's own, stored as TEXT: `as_str`, `parse`, `Display`, `ToSql`, `FromSql`.
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

        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                text_to_sql(*self)
            }
        }

        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                text_from_sql(value)
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
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let (status, app): (String, String) = conn
            .query_row("SELECT ?1, ?2", rusqlite::params![UserStatus::Active, Text(AppType::M2m)], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!((status.as_str(), app.as_str()), ("active", "m2m"));
        let back: (UserStatus, Text<AppType>) =
            conn.query_row("SELECT 'active', 'm2m'", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        assert_eq!(back, (UserStatus::Active, Text(AppType::M2m)));
    }

    #[test]
    fn ids_are_plain_integers() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let (t, u): (i64, i64) = conn
            .query_row("SELECT ?1, ?2", rusqlite::params![TenantId(3), UserId(9)], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert_eq!((t, u), (3, 9));
        let back: (TenantId, Option<UserId>) =
            conn.query_row("SELECT 3, NULL", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        assert_eq!(back, (TenantId(3), None));
    }

    #[test]
    fn unknown_text_is_corrupt() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let err: super::super::StoreError =
            conn.query_row("SELECT 'sleeping'", [], |r| r.get::<_, UserStatus>(0)).unwrap_err().into();
        assert!(
            matches!(&err, super::super::StoreError::Corrupt(m) if m.contains("users.status") && m.contains("sleeping")),
            "{err}"
        );
        let err: super::super::StoreError =
            conn.query_row("SELECT 'desktop'", [], |r| r.get::<_, Text<AppType>>(0)).unwrap_err().into();
        assert!(matches!(err, super::super::StoreError::Corrupt(_)), "{err}");
    }
}
