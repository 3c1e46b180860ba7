//! What `latchkeyd check-config` verifies beyond the syntax: every file the configuration names
//! can be opened and holds what it should. Each problem is reported, not only the first.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use latchkey_domain::config::Config;
use latchkey_domain::crypto::Kek;
use latchkey_store::pg::PgSettings;

/// Every problem found, as sentences naming the key and the file; empty when all is well.
pub fn problems(config: &Config) -> Vec<String> {
    let mut found = vec![];
    if let Some(tls) = &config.tls {
        let cert_ok = readable("server.tls_cert", &tls.cert, &mut found);
        let key_ok = readable("server.tls_key", &tls.key, &mut found);
        if cert_ok
            && key_ok
            && let Err(e) = crate::certs::server_config(&tls.cert, &tls.key)
        {
            found.push(e);
        }
    }
    if let Some(file) = config.smtp.as_ref().and_then(|s| s.password_file.as_ref())
        && readable("smtp.password_file", file, &mut found)
        && std::fs::read_to_string(file).map(|p| p.trim().is_empty()).unwrap_or(false)
    {
        found.push(format!("smtp.password_file {}: the file is empty", file.display()));
    }
    if let Some(pg) = &config.postgres {
        postgres(pg, &mut found);
    }
    if config.kek_file.exists() {
        if let Err(e) = Kek::load(&config.kek_file) {
            found.push(format!("keys.encryption_key_file: {e}"));
        }
    } else {
        // A missing key file is normal before the first start (it creates one), and fatal once
        // the database holds keys: ask the database, changing nothing. If it does not answer,
        // the daemon's own start decides.
        let location = config.store_location();
        if let Ok(true) = location.holds_sealed_keys() {
            let restore =
                if location.is_shared() { "copy it from another node or your backup" } else { "from your backup" };
            found.push(format!(
                "keys.encryption_key_file {}: missing, but the database {} holds signing keys; the daemon will \
                 refuse to start until the key file is restored ({restore})",
                config.kek_file.display(),
                location.describe()
            ));
        }
    }
    found
}

/// The database's schema version against this release's, read without changing anything:
/// `Ok` with a line to show, or `Err` with the problem (a schema this release refuses).
pub fn database_schema(config: &Config) -> Result<String, String> {
    let location = config.store_location();
    let place = location.describe();
    match location.schema() {
        Ok(None) => Ok(format!("database {place}: none yet; latchkeyd {} creates it at start", latchkey::VERSION)),
        Ok(Some(schema)) => match schema.fit() {
            Ok(fit) => Ok(format!("database {place}: {fit}")),
            Err(e) => Err(format!("database {place}: {e}")),
        },
        // PostgreSQL may not be up yet, and a file may be unreadable to this user: the start decides.
        Err(e) => Ok(format!("database {place}: schema version not read ({e})")),
    }
}

/// The PostgreSQL files: the url_file is readable and not readable by others (it may hold a
/// password), the CA file readable, and what they say resolves with the `PG*` environment into a
/// connection and a TLS setup. The database itself is not contacted: it may not be up yet.
fn postgres(pg: &PgSettings, found: &mut Vec<String>) {
    let mut ok = true;
    for (key, file) in [("storage.url_file", &pg.url_file), ("storage.direct_url_file", &pg.direct_url_file)] {
        let Some(file) = file else { continue };
        ok &= readable(key, file, found);
        if let Ok(meta) = std::fs::metadata(file)
            && meta.permissions().mode() & 0o777 & !0o640 != 0
        {
            found.push(format!(
                "{key} {}: mode {:04o} is wider than 0640, and the file may hold a password: chmod 0600 or 0640",
                file.display(),
                meta.permissions().mode() & 0o777
            ));
        }
    }
    if let Some(file) = &pg.sslrootcert {
        ok &= readable("storage.sslrootcert", file, found);
    }
    if !ok {
        return;
    }
    match pg.resolve() {
        Ok(target) => {
            for target in [Some(&target), target.direct.as_deref()].into_iter().flatten() {
                if let Err(e) = latchkey_store::pg::tls::connector(target) {
                    found.push(format!("storage: {e}"));
                }
            }
        }
        Err(e) => found.push(format!("storage: {e}")),
    }
}

/// Whether `path` can be opened for reading; records why not.
fn readable(key: &str, path: &Path, found: &mut Vec<String>) -> bool {
    match std::fs::File::open(path) {
        Ok(_) => true,
        Err(e) => {
            found.push(format!("{key} {}: {e}", path.display()));
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use latchkey_domain::config::{Config, FileConfig, Overrides};

    fn problems_of(storage: &str) -> Vec<String> {
        let text = format!("[server]\npublic_url = \"https://id.example.com\"\n[storage]\n{storage}");
        let config = Config::from_file(FileConfig::parse(&text).unwrap(), &Overrides::default()).unwrap();
        super::problems(&config)
    }

    #[test]
    fn postgres_files_are_checked() {
        let dir = std::env::temp_dir().join(format!("lk-checkfiles-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let url = dir.join("pg.url");
        std::fs::write(&url, "postgres://app:secret@db.internal/latchkey?sslmode=verify-full").unwrap();

        std::fs::set_permissions(&url, std::fs::Permissions::from_mode(0o640)).unwrap();
        let found = problems_of(&format!("backend = \"postgres\"\nurl_file = \"{}\"", url.display()));
        assert!(found.iter().all(|p| !p.contains("storage.url_file")), "{found:?}");

        std::fs::set_permissions(&url, std::fs::Permissions::from_mode(0o644)).unwrap();
        let found = problems_of(&format!("backend = \"postgres\"\nurl_file = \"{}\"", url.display()));
        assert!(found.iter().any(|p| p.contains("mode 0644 is wider than 0640")), "{found:?}");

        std::fs::write(&url, "dbname=x sslmode=sometimes").unwrap();
        let found = problems_of(&format!("backend = \"postgres\"\nurl_file = \"{}\"", url.display()));
        assert!(found.iter().any(|p| p.contains("sslmode \"sometimes\"")), "{found:?}");

        let found = problems_of(
            "backend = \"postgres\"\nurl_file = \"/nonexistent/pg.url\"\nsslrootcert = \"/nonexistent/ca\"",
        );
        assert!(found.iter().any(|p| p.starts_with("storage.url_file /nonexistent/pg.url")), "{found:?}");
        assert!(found.iter().any(|p| p.starts_with("storage.sslrootcert /nonexistent/ca")), "{found:?}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
