//! The schema's migrations: one list, read by both engines' runners (`sqlite_latest` here,
//! [`crate::pg::migrate`] for PostgreSQL). Each is a directory of `migrations/` holding the same
//! schema version in each engine's dialect (`up.sql` for SQLite, `postgres.sql`); version N is
//! the N-th entry on both, which is what "refuse a newer schema" and `migrate-store` compare.
//! Up only: a migration that has shipped is never edited.
//!
//! Each entry also names the oldest release that can serve the schema it leaves
//! ([`crate::schema`]): the release that added it, unless it is additive enough for an older
//! release of the same minor version to keep serving (a new table, a new nullable column).

/// One schema version in both dialects.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// Its directory under `migrations/`.
    pub name: &'static str,
    pub sqlite: &'static str,
    pub postgres: &'static str,
    /// The oldest release that can serve the schema this migration leaves ("MAJOR.MINOR.PATCH");
    /// never older than the previous entry's.
    pub serves_from: &'static str,
}

macro_rules! migration {
    ($name:literal, $serves_from:literal) => {
        Migration {
            name: $name,
            sqlite: include_str!(concat!("../../../migrations/", $name, "/up.sql")),
            postgres: include_str!(concat!("../../../migrations/", $name, "/postgres.sql")),
            serves_from: $serves_from,
        }
    };
}

/// Every migration, in order.
pub const MIGRATIONS: &[Migration] = &[
    migration!("0001-initial", "0.1.0"),
    migration!("0002-passkeys", "0.1.0"),
    migration!("0003-oidc", "0.1.0"),
    migration!("0004-users-roles-audit", "0.1.0"),
    migration!("0005-revocation-reach", "0.1.0"),
    migration!("0006-social-login", "0.1.0"),
    migration!("0007-unique-app-names", "0.2.0"),
    migration!("0008-device-grant", "0.2.0"),
    migration!("0009-code-family", "0.2.0"),
    migration!("0010-challenges-by-key", "0.2.0"),
    migration!("0011-link-authority", "0.2.0"),
    migration!("0012-link-confirmation", "0.2.0"),
    migration!("0013-tenant-old-urls", "0.2.0"),
    migration!("0014-release-record", "0.2.0"),
    migration!("0015-requested-claims", "0.2.0"),
    migration!("0016-offline-grants", "0.2.0"),
    migration!("0017-app-acr", "0.2.0"),
    migration!("0018-consent-backchannel", "0.2.0"),
    migration!("0019-app-logo", "0.2.0"),
    migration!("0020-user-locale", "0.2.0"),
    migration!("0021-tenant-brand", "0.2.0"),
    migration!("0022-tenant-logo", "0.2.0"),
    migration!("0023-passkey-prompt", "0.2.0"),
    migration!("0024-attestation", "0.2.0"),
    migration!("0025-scim", "0.2.0"),
    migration!("0026-webhooks", "0.2.0"),
    migration!("0027-signing-algorithms", "0.2.0"),
    migration!("0028-pushed-requests", "0.2.0"),
    migration!("0029-client-assertions", "0.2.0"),
    migration!("0030-dpop", "0.2.0"),
    migration!("0031-audit-commit-order", "0.2.0"),
];

/// The schema version this release brings a database to.
pub const SCHEMA_VERSION: usize = MIGRATIONS.len();

#[cfg(test)]
mod tests {
    use super::MIGRATIONS;

    #[test]
    fn every_directory_is_listed_in_order_with_both_dialects() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
        let mut dirs: Vec<String> =
            std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        dirs.sort();
        let listed: Vec<&str> = MIGRATIONS.iter().map(|m| m.name).collect();
        assert_eq!(dirs, listed, "every directory of migrations/ is listed, in order");
        for m in MIGRATIONS {
            assert!(!m.sqlite.trim().is_empty() && !m.postgres.trim().is_empty(), "{}", m.name);
        }
    }

    #[test]
    fn releases_that_serve_each_schema_never_go_back_and_include_this_one() {
        use crate::schema::Release;
        let this = Release::parse(env!("CARGO_PKG_VERSION")).unwrap();
        let mut previous = Release::parse("0.0.0").unwrap();
        for m in MIGRATIONS {
            let r = Release::parse(m.serves_from).unwrap_or_else(|| panic!("{}: {}", m.name, m.serves_from));
            assert!(
                r >= previous && r <= this,
                "{}: {} after {previous:?}, this release {this:?}",
                m.name,
                m.serves_from
            );
            previous = r;
        }
    }
}
