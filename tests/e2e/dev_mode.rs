//! The README's quick start, with the real binaries: `latchkeyd --dev` in a fresh directory, then
//! `latchkey tenant create acme` next to it, discovery, and an outside JOSE library verifying a
//! token signed with the tenant's key against the served JWKS. Also systemd notification,
//! graceful SIGTERM, and recovery from a stale socket after `kill -9`.

use std::io::{BufRead, BufReader};
use std::os::unix::net::UnixDatagram;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::*;

pub(crate) struct DevDaemon {
    pub(crate) child: Child,
    pub(crate) banner: Vec<String>,
}

/// Port 8080 as the README says, unless something else holds it.
fn pick_listen() -> String {
    match std::net::TcpListener::bind("127.0.0.1:8080") {
        Ok(l) => {
            drop(l);
            "127.0.0.1:8080".into()
        }
        Err(_) => {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            format!("127.0.0.1:{}", l.local_addr().unwrap().port())
        }
    }
}

pub(crate) fn start_dev(cwd: &std::path::Path, listen: &str, notify: Option<&std::path::Path>) -> DevDaemon {
    let mut c = Command::new(bin("latchkeyd"));
    c.args(["--dev", "--listen", listen]).current_dir(cwd).stdout(Stdio::piped()).stderr(Stdio::null());
    c.env_remove("LATCHKEY_ADMIN_SOCKET");
    if let Some(n) = notify {
        c.env("NOTIFY_SOCKET", n);
    }
    let mut child = c.spawn().expect("start latchkeyd --dev");
    // The banner is printed once the daemon is ready; read it up to the last line.
    let mut banner = vec![];
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let mut line = String::new();
        if out.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        let done = line.starts_with("Stop with");
        banner.push(line.trim_end().to_owned());
        if done {
            break;
        }
    }
    DevDaemon { child, banner }
}

fn sigterm(child: &mut Child) -> i32 {
    // `systemctl reload` sends SIGHUP: the daemon keeps running.
    let _ = Command::new("kill").args(["-HUP", &child.id().to_string()]).status();
    std::thread::sleep(Duration::from_millis(300));
    assert!(child.try_wait().unwrap().is_none(), "SIGHUP must not stop the daemon");
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s.code().unwrap_or(-1);
        }
        assert!(Instant::now() < deadline, "daemon did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn cli_in(cwd: &std::path::Path, args: &[&str]) -> Run {
    Command::new(bin("latchkey"))
        .args(args)
        .current_dir(cwd)
        .env_remove("LATCHKEY_ADMIN_SOCKET")
        .output()
        .unwrap()
        .into()
}

#[test]
fn readme_quick_start_works_and_a_jose_library_agrees() {
    let cwd = tempfile::tempdir().unwrap();
    let listen = pick_listen();
    let port = listen.rsplit(':').next().unwrap().to_owned();
    let public = format!("http://localhost:{port}");
    let notify_path = cwd.path().join("notify.sock");
    let notify = UnixDatagram::bind(&notify_path).unwrap();
    notify.set_read_timeout(Some(Duration::from_secs(10))).unwrap();

    let mut dev = start_dev(cwd.path(), &listen, Some(&notify_path));
    let banner = dev.banner.join("\n");
    assert!(banner.contains(&format!("{public}/dev")), "the banner shows the dev issuer:\n{banner}");
    assert!(banner.contains("latchkey-data/admin.sock"), "the banner shows the socket:\n{banner}");
    assert!(banner.contains("latchkey tenant create acme"), "the banner shows what to try next:\n{banner}");
    let mut buf = [0u8; 64];
    let n = notify.recv(&mut buf).expect("READY=1 on NOTIFY_SOCKET");
    assert_eq!(&buf[..n], b"READY=1");

    // Next to a --dev daemon, the CLI finds ./latchkey-data/admin.sock by itself.
    let t = cli_in(cwd.path(), &["tenant", "create", "acme", "-o", "json"]).ok().json();
    assert_eq!(t["issuer"], format!("{public}/acme"));
    let doc = http_get(&format!("{public}/acme/.well-known/openid-configuration"), None).json();
    assert_eq!(doc["issuer"], format!("{public}/acme"));
    assert_eq!(doc["jwks_uri"], format!("{public}/acme/.well-known/jwks.json"));

    // Its first key follows in a moment; `key list` waits for it.
    cli_in(cwd.path(), &["key", "list", "--tenant", "acme"]).ok();
    let data = cwd.path().join("latchkey-data");
    let claims =
        json!({"iss": format!("{public}/acme"), "aud": "portal", "sub": "u1", "iat": now(), "exp": now() + 300});
    let (token, kid) =
        sign_with_current_key_at(&data.join("latchkey.db"), &data.join("key-encryption.key"), "acme", &claims);
    let v =
        node("verify-jwt.mjs", &[doc["jwks_uri"].as_str().unwrap(), &token, doc["issuer"].as_str().unwrap(), "portal"]);
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["kid"], kid.as_str());
    // The same token presented to another tenant's key set is rejected.
    let other = http_get(&format!("{public}/dev/.well-known/jwks.json"), None);
    assert_eq!(other.status, 200);
    let v = node(
        "verify-jwt.mjs",
        &[&format!("{public}/dev/.well-known/jwks.json"), &token, doc["issuer"].as_str().unwrap(), "portal"],
    );
    assert_eq!(v["ok"], false);

    assert_eq!(sigterm(&mut dev.child), 0, "SIGTERM ends the daemon with exit 0");
    let n = notify.recv(&mut buf).expect("STOPPING=1 on NOTIFY_SOCKET");
    assert_eq!(&buf[..n], b"STOPPING=1");
    assert!(!data.join("admin.sock").exists(), "the admin socket is removed on shutdown");
    // After a clean stop the database file alone holds every commit: a copy of it without its
    // WAL (an operator's `cp latchkey.db`) has the tenant created above.
    let copy = cwd.path().join("copy.db");
    std::fs::copy(data.join("latchkey.db"), &copy).unwrap();
    let slugs: Vec<String> = rusqlite::Connection::open(&copy)
        .unwrap()
        .prepare("SELECT slug FROM tenants ORDER BY slug")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(slugs, ["acme", "dev"], "the database file alone, after SIGTERM");

    // kill -9 leaves a stale socket; the next start removes it and carries on with the same data.
    let mut dev = start_dev(cwd.path(), &listen, None);
    dev.child.kill().unwrap();
    dev.child.wait().unwrap();
    assert!(data.join("admin.sock").exists(), "kill -9 leaves the socket behind");
    let mut dev = start_dev(cwd.path(), &listen, None);
    let list = cli_in(cwd.path(), &["tenant", "list", "-o", "json"]).ok().json();
    let slugs: Vec<&str> = list.as_array().unwrap().iter().map(|t| t["slug"].as_str().unwrap()).collect();
    assert_eq!(slugs, ["acme", "dev"], "data survives; dev is not created twice");
    assert_eq!(sigterm(&mut dev.child), 0);
}
