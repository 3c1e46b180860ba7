//! The certificates the daemon trusts for every outbound TLS connection: the system's trust store
//! (`/etc/ssl/certs` on Debian, or the files `SSL_CERT_FILE` / `SSL_CERT_DIR` name), read once.
//! PostgreSQL (`sslmode=verify-*` without `sslrootcert`), SMTP (STARTTLS) and the identity
//! providers of social login all take their roots from here, so one change to the system's store
//! (a company CA added, a root withdrawn) reaches all three alike.

use std::sync::OnceLock;

use rustls_pki_types::CertificateDer;

/// The system's trusted roots, loaded on first use and kept (an unreadable one is skipped, as
/// `rustls-native-certs` does; an empty list makes every verified connection fail with a clear
/// error where it is used).
pub fn system_roots() -> &'static [CertificateDer<'static>] {
    static ROOTS: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    ROOTS.get_or_init(|| rustls_native_certs::load_native_certs().certs)
}
