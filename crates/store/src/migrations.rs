//! The schema's migrations: one list, read by both engines' runners (`sqlite_latest` here,
//! [`crate::pg::migrate`] for PostgreSQL). Each is a directory of `migrations/` holding the same
//! schema version in each engine's dialect (`up.sql` for SQLite, `postgres.sql`); version N is
//! the N-th entry on both, which is what "refuse a newer schema" and `migrate-store` compare.
//! Up only: a migration that has shipped is never edited.

/// One schema version in both dialects.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// Its directory under `migrations/`.
    pub name: &'static str,
    pub sqlite: &'static str,
    pub postgres: &'static str,
}

macro_rules! migration {
    ($name:literal) => {
        Migration {
            name: $name,
            sqlite: include_str!(concat!("../../../migrations/", $name, "/up.sql")),
            postgres: include_str!(concat!("../../../migrations/", $name, "/postgres.sql")),
        }
    };
}

/// Every migration, in order.
pub const MIGRATIONS: &[Migration] = &[
    migration!("0001-initial"),
    migration!("0002-passkeys"),
    migration!("0003-oidc"),
    migration!("0004-users-roles-audit"),
    migration!("0005-revocation-reach"),
    migration!("0006-social-login"),
    migration!("0007-unique-app-names"),
    migration!("0008-device-grant"),
    migration!("0009-code-family"),
    migration!("0010-challenges-by-key"),
    migration!("0011-link-authority"),
    migration!("0012-link-confirmation"),
    migration!("0013-tenant-old-urls"),
];

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
}
