//! Configuration through the real binary: `check-config`, unknown keys, environment overrides.

use std::process::Command;

use crate::support::*;

fn check(config: &std::path::Path, env: &[(&str, &str)]) -> Run {
    let mut c = Command::new(bin("latchkeyd"));
    c.arg("check-config").arg("--config").arg(config);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap().into()
}

#[test]
fn example_config_is_valid() {
    let r = check(&repo_root().join("config.example.toml"), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("public_url = \"https://id.example.com\""), "{}", r.stdout);
}

#[test]
fn every_key_of_the_example_is_a_real_key() {
    // Uncomment every commented `key = value` line: the result must still parse, so the
    // example documents no key that the daemon does not know.
    let text = std::fs::read_to_string(repo_root().join("config.example.toml")).unwrap();
    let uncommented: String = text
        .lines()
        .map(|l| {
            let t = l.trim_start();
            match t.strip_prefix("# ") {
                Some(rest) if rest.contains(" = ") && !rest.starts_with(' ') => rest.to_owned(),
                Some(rest) if rest.starts_with('[') && rest.ends_with(']') => rest.to_owned(),
                _ => l.to_owned(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    latchkey_domain::config::FileConfig::parse(&uncommented).unwrap_or_else(|e| panic!("{e}\n---\n{uncommented}"));
}

#[test]
fn unknown_key_is_named_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(&path, "[server]\npublic_url = \"https://id.example.com\"\n\n[tokens]\nsession_tll = \"8h\"\n")
        .unwrap();
    let r = check(&path, &[]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("session_tll"), "{}", r.stderr);
    assert!(r.stderr.contains("line 5"), "{}", r.stderr);
}

#[test]
fn bad_values_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    for (body, expect) in [
        ("[server]\npublic_url = \"http://id.example.com\"\n", "plain http"),
        ("[server]\npublic_url = \"https://id.example.com\"\n[tokens]\nsession_ttl = \"soon\"\n", "tokens.session_ttl"),
        ("[server]\npublic_url = \"https://id.example.com\"\n[keys]\nrsa_bits = 1024\n", "keys.rsa_bits"),
        ("[server]\nlisten = \"0.0.0.0:8080\"\n", "server.public_url"),
    ] {
        std::fs::write(&path, body).unwrap();
        let r = check(&path, &[]);
        assert_eq!(r.code, 1, "{body}");
        assert!(r.stderr.contains(expect), "{body}: {}", r.stderr);
    }
    let r = check(&dir.path().join("missing.toml"), &[]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("--dev"), "a missing file suggests --dev: {}", r.stderr);
}

#[test]
fn every_problem_is_reported_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    // Five invalid values and a file that cannot be read: one run names them all.
    let body = format!(
        "[server]\npublic_url = \"https://id.example.com\"\nlog_format = \"xml\"\nmax_connections = 0\n\
         [tokens]\nsession_ttl = \"soon\"\n[keys]\nrsa_bits = 1024\n[limits]\njson_body_max = \"big\"\n\
         [smtp]\nhost = \"localhost\"\nfrom = \"id@example.com\"\npassword_file = \"{}/nopass\"\n",
        dir.path().display()
    );
    std::fs::write(&path, body).unwrap();
    let r = check(&path, &[("LATCHKEY_SERVER_PUBLIC_URL", "https://id.example.com")]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    for needle in [
        "server.log_format",
        "server.max_connections",
        "tokens.session_ttl",
        "keys.rsa_bits",
        "limits.json_body_max",
        "smtp.password_file",
        "6 problem(s)",
    ] {
        assert!(r.stderr.contains(needle), "{needle}: {}", r.stderr);
    }
    // The daemon itself refuses to start with all of them listed too.
    let out: Run = Command::new(bin("latchkeyd")).arg("--config").arg(&path).output().unwrap().into();
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("5 problems in the configuration"), "{}", out.stderr);
}

#[test]
fn environment_overrides_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(&path, "[server]\npublic_url = \"https://id.example.com\"\n").unwrap();
    let r = check(
        &path,
        &[("LATCHKEY_SERVER_PUBLIC_URL", "https://login.example.org"), ("LATCHKEY_TOKENS_SESSION_TTL", "2h")],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("public_url = \"https://login.example.org\""), "{}", r.stdout);
    assert!(r.stdout.contains("session_ttl = \"2h\""), "{}", r.stdout);
    // A stray variable (a typo here) is a warning naming it, not a reason to stop the daemon.
    let r = check(&path, &[("LATCHKEY_TOKENS_SESION_TTL", "2h")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("LATCHKEY_TOKENS_SESION_TTL"), "{}", r.stderr);
    assert!(!r.stdout.contains("session_ttl = \"2h\""), "{}", r.stdout);
    // A known key with a bad value still stops it, naming the variable.
    let r = check(&path, &[("LATCHKEY_TOKENS_SESSION_TTL", "soon")]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("session_ttl"), "{}", r.stderr);
}
