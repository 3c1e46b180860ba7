//! What `latchkeyd check-config` verifies beyond the syntax: every file the configuration names
//! can be opened and holds what it should. Each problem is reported, not only the first.

use std::path::Path;

use crate::config::Config;
use crate::crypto::Kek;

/// Every problem found, as sentences naming the key and the file; empty when all is well.
pub fn problems(config: &Config) -> Vec<String> {
    let mut found = vec![];
    if let Some(tls) = &config.tls {
        let cert_ok = readable("server.tls_cert", &tls.cert, &mut found);
        let key_ok = readable("server.tls_key", &tls.key, &mut found);
        if cert_ok
            && key_ok
            && let Err(e) = crate::http::tls::server_config(&tls.cert, &tls.key)
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
    if config.kek_file.exists() {
        if let Err(e) = Kek::load(&config.kek_file) {
            found.push(format!("keys.encryption_key_file: {e}"));
        }
    } else if std::fs::metadata(&config.storage_path).map(|m| m.len() > 0).unwrap_or(false) {
        found.push(format!(
            "keys.encryption_key_file {}: missing, but the database {} exists; the daemon will refuse to start \
             until the key file is restored",
            config.kek_file.display(),
            config.storage_path.display()
        ));
    }
    found
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
