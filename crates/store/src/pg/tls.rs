//! TLS to PostgreSQL through our rustls (aws-lc-rs provider, as on the public listener), one
//! `ClientConfig` per libpq `sslmode`. tokio-postgres-rustls adds `tls-server-end-point` channel
//! binding, so SCRAM-SHA-256-PLUS works over it.
//!
//! | sslmode | rustls |
//! |---|---|
//! | disable | never used (tokio-postgres does not ask for TLS) |
//! | allow, prefer, require | any certificate; handshake signatures checked (libpq verifies nothing either) |
//! | verify-ca | chain to a root of `sslrootcert` (else the system's), any host name |
//! | verify-full | chain to a root and the host name connected to |

use std::path::Path;
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::config::{PgTarget, SslMode};

/// The connector for `target`'s sslmode; an error names the file or setting at fault.
pub fn connector(target: &PgTarget) -> Result<MakeRustlsConnect, String> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    // As libpq does: `require` with a CA file verifies the chain (like verify-ca).
    let mode = match target.ssl_mode {
        SslMode::Require if target.sslrootcert.is_some() => SslMode::VerifyCa,
        other => other,
    };
    let config = match mode {
        SslMode::Disable | SslMode::Allow | SslMode::Prefer | SslMode::Require => {
            builder.dangerous().with_custom_certificate_verifier(Arc::new(EncryptOnly(provider))).with_no_client_auth()
        }
        SslMode::VerifyFull => {
            builder.with_root_certificates(roots(target.sslrootcert.as_deref())?).with_no_client_auth()
        }
        SslMode::VerifyCa => {
            let roots = Arc::new(roots(target.sslrootcert.as_deref())?);
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider)
                .build()
                .map_err(|e| format!("sslrootcert: {e}"))?;
            builder.dangerous().with_custom_certificate_verifier(Arc::new(AnyName(webpki))).with_no_client_auth()
        }
    };
    Ok(MakeRustlsConnect::new(config))
}

/// The roots of `sslrootcert` (PEM), or the system's trust store when it is unset or `system`
/// (libpq's keyword for the same).
fn roots(sslrootcert: Option<&Path>) -> Result<RootCertStore, String> {
    let certs: Vec<CertificateDer<'static>> = match sslrootcert.filter(|p| p.as_os_str() != "system") {
        Some(path) => CertificateDer::pem_file_iter(path)
            .and_then(|it| it.collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?,
        None => crate::trust::system_roots().to_vec(),
    };
    let mut store = RootCertStore::empty();
    let (added, _ignored) = store.add_parsable_certificates(certs);
    if added == 0 {
        return Err(match sslrootcert {
            Some(path) => format!("sslrootcert {}: no usable CA certificate in the file", path.display()),
            None => "sslmode verify-ca/verify-full: no sslrootcert and no CA certificate in the system's trust store"
                .to_owned(),
        });
    }
    Ok(store)
}

/// `require` (and `prefer`): encrypted, the server not authenticated. The handshake signatures
/// are still checked, so the certificate's key is the one the server holds.
#[derive(Debug)]
struct EncryptOnly(Arc<CryptoProvider>);

impl ServerCertVerifier for EncryptOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the WebPKI chain check, with a name mismatch forgiven.
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pg::config::PgSettings;

    #[test]
    fn a_connector_for_every_mode_and_clear_errors_for_bad_roots() {
        let target = |mode: &str, root: Option<&str>| {
            let s = PgSettings { sslrootcert: root.map(Into::into), ..PgSettings::default() };
            s.resolve_with(|k| (k == "PGSSLMODE").then(|| mode.to_owned())).unwrap()
        };
        for mode in ["disable", "allow", "prefer", "require"] {
            assert!(connector(&target(mode, None)).is_ok(), "{mode}");
        }
        let err = connector(&target("verify-full", Some("/nonexistent/ca.pem"))).err().unwrap();
        assert!(err.contains("/nonexistent/ca.pem"), "{err}");
        let empty = std::env::temp_dir().join(format!("lk-empty-ca-{}.pem", std::process::id()));
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let err = connector(&target("verify-ca", empty.to_str())).err().unwrap();
        assert!(err.contains("no usable CA certificate"), "{err}");
        let _ = std::fs::remove_file(empty);
    }
}
