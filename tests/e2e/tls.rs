//! TLS on the public listener, checked with curl against a self-signed certificate.

use std::process::Command;

use crate::support::*;

pub fn self_signed(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let ok = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"])
        .args(["-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl");
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    (cert, key)
}

fn curl(args: &[&str]) -> (String, String) {
    let out = Command::new("curl").args(["-sS"]).args(args).output().expect("curl");
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn serves_https_with_http2_and_https_issuers() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = self_signed(dir.path());
    let d = TestDaemon::start_knowing_port(0, |port, f| {
        f.server.public_url = Some(format!("https://localhost:{port}"));
        f.server.tls_cert = Some(cert.clone());
        f.server.tls_key = Some(key.clone());
    });
    d.tenant("acme");
    let ca = cert.to_str().unwrap();
    let base = d.base.clone();
    let port: u16 = base.rsplit(':').next().and_then(|p| p.parse().ok()).expect("the base URL names the port");
    let (body, err) = curl(&["--cacert", ca, &format!("{base}/healthz")]);
    assert_eq!(body, "ok\n", "{err}");
    let (version, _) =
        curl(&["--cacert", ca, "--http2", "-o", "/dev/null", "-w", "%{http_version}", &format!("{base}/healthz")]);
    assert_eq!(version, "2", "HTTP/2 is negotiated by ALPN");
    // HSTS, since this daemon serves TLS itself (a year unless server.hsts_max_age says otherwise).
    let (head, _) =
        curl(&["--cacert", ca, "-D", "-", "-o", "/dev/null", &format!("{base}/acme/.well-known/jwks.json")]);
    assert!(
        head.lines().any(|l| l.trim().eq_ignore_ascii_case("strict-transport-security: max-age=31536000")),
        "{head}"
    );
    let (doc, _) = curl(&["--cacert", ca, &format!("{base}/acme/.well-known/openid-configuration")]);
    let doc: serde_json::Value = serde_json::from_str(&doc).unwrap();
    assert_eq!(doc["issuer"], format!("{base}/acme"));
    // Plain HTTP on the TLS port is not served.
    let (body, _) = curl(&["--max-time", "5", &format!("http://localhost:{port}/healthz")]);
    assert_ne!(body, "ok\n");
    // A client that never finishes its handshake does not hold up others.
    let _silent = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let (body, _) = curl(&["--cacert", ca, &format!("{base}/healthz")]);
    assert_eq!(body, "ok\n");
}

#[test]
fn bad_tls_files_stop_the_daemon_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("c.toml");
    std::fs::write(
        &conf,
        format!(
            "[server]\npublic_url = \"https://localhost:1\"\nlisten = \"127.0.0.1:0\"\nmetrics_listen = \"\"\ntls_cert = \"{0}/missing.pem\"\ntls_key = \"{0}/missing.key\"\n\
             {1}[admin]\nsocket = \"{0}/s\"\n[keys]\nencryption_key_file = \"{0}/kek\"\n",
            dir.path().display(),
            store_toml(dir.path()),
        ),
    )
    .unwrap();
    let _store = store_guard(dir.path());
    let out: Run = Command::new(bin("latchkeyd")).arg("--config").arg(&conf).output().unwrap().into();
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("server.tls_cert"), "{}", out.stderr);
}
