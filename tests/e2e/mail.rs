//! Invitation e-mails, delivered to a local SMTP sink (Python's aiosmtpd from PyPI, a Maildir).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::oidc_support::{app, token};
use crate::support::*;

struct Sink {
    child: Child,
    port: u16,
    maildir: tempfile::TempDir,
}

impl Drop for Sink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sink() -> Sink {
    let ok = Command::new("python3").args(["-c", "import aiosmtpd"]).status().map(|s| s.success()).unwrap_or(false);
    assert!(ok, "aiosmtpd is not installed: run `bash scripts/test.sh`, which installs it from PyPI");
    let maildir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new("python3")
        .args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}"), "-c", "aiosmtpd.handlers.Mailbox"])
        // A path that does not exist yet: Python's Maildir then creates it with its subfolders.
        .arg(maildir.path().join("mail"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start aiosmtpd");
    let deadline = Instant::now() + Duration::from_secs(15);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "aiosmtpd did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    Sink { child, port, maildir }
}

fn messages(s: &Sink) -> Vec<String> {
    let dir = s.maildir.path().join("mail").join("new");
    let mut out = vec![];
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let raw = std::fs::read_to_string(e.path()).unwrap_or_default();
        // Undo quoted-printable soft line breaks and escapes, as a mail client would.
        out.push(raw.replace("=\r\n", "").replace("=\n", "").replace("=3D", "="));
    }
    out
}

fn smtp_daemon(port: u16) -> TestDaemon {
    TestDaemon::start_with(|f| {
        f.smtp = Some(latchkey_domain::config::SmtpSection {
            host: Some("127.0.0.1".into()),
            port: Some(port),
            from: Some("Latchkey <noreply@acme.test>".into()),
            starttls: Some(false),
            ..Default::default()
        })
    })
}

#[test]
fn invitations_are_emailed_with_links_from_the_base_url() {
    let s = sink();
    let d = smtp_daemon(s.port);
    let site = Site::new(&d, "acme", &["--name", "Acme Corp"]);
    let inv = d
        .cli(&["user", "invite", "--tenant", "acme", "--email", "ada@acme.test", "--name", "Ada", "-o", "json"])
        .ok()
        .json();
    assert_eq!(inv["emailed"], true, "{inv}");
    let url = inv["invite_url"].as_str().unwrap();
    assert!(url.starts_with(&format!("{}/invite/", site.base)));
    let mail = messages(&s);
    assert_eq!(mail.len(), 1);
    assert!(mail[0].contains("To: Ada <ada@acme.test>"), "{}", mail[0]);
    assert!(mail[0].contains("Subject: You are invited to Acme Corp"), "{}", mail[0]);
    assert!(mail[0].contains(url), "the mail carries the link: {}", mail[0]);

    // Bulk invitations are e-mailed one by one and reported per row.
    let m2m = app(&site, "m2m", &["--scope", "users:invite"]);
    let bearer =
        token(&site, &m2m, &[("grant_type", "client_credentials")]).json()["access_token"].as_str().unwrap().to_owned();
    let csv = s.maildir.path().join("u.csv");
    std::fs::write(&csv, "email,name\nbob@acme.test,Bob\ncy@acme.test,Cy\n").unwrap();
    let out = Command::new("curl")
        .args(["-sS", "-H", &format!("Authorization: Bearer {bearer}"), "-F"])
        .arg(format!("file=@{}", csv.display()))
        .arg(format!("{}/api/v1/users/invite", site.base))
        .output()
        .unwrap();
    let body: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(body["invited"].as_array().unwrap().iter().all(|i| i["emailed"] == true), "{body}");
    assert_eq!(messages(&s).len(), 3);

    // A CLI import without --links-out: the links went out by e-mail, so no warning.
    std::fs::write(
        &csv,
        "email,name
di@acme.test,Di
",
    )
    .unwrap();
    let r = d.cli(&["user", "import", "--tenant", "acme", csv.to_str().unwrap()]).ok();
    assert!(!r.stderr.contains("not saved"), "{}", r.stderr);
    assert_eq!(messages(&s).len(), 4);

    // A reinvite e-mails the new link; the table counts it rather than printing it.
    let r = d.cli(&["user", "reinvite", "--tenant", "acme", "bob@acme.test"]).ok();
    assert!(r.stdout.contains("e-mailed"), "{}", r.stdout);
    assert!(!r.stdout.contains("/invite/"), "{}", r.stdout);
    let mail = messages(&s);
    assert_eq!(mail.len(), 5);
    let r = d.cli(&["user", "reinvite", "--tenant", "acme", "bob@acme.test", "-o", "json"]).ok().json();
    assert_eq!(r["invited"][0]["emailed"], true, "{r}");
    let url = r["invited"][0]["invite_url"].as_str().unwrap();
    assert!(messages(&s).iter().any(|m| m.contains("To: Bob <bob@acme.test>") && m.contains(url)));
}

#[test]
fn a_failed_delivery_is_reported_and_loses_no_invitation() {
    // An SMTP server that is not there.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let d = smtp_daemon(closed);
    let site = Site::new(&d, "acme", &[]);
    let inv = d
        .cli(&["user", "invite", "--tenant", "acme", "--email", "ada@acme.test", "--name", "Ada", "-o", "json"])
        .ok()
        .json();
    assert_eq!(inv["emailed"], false);
    assert!(inv["email_error"].as_str().unwrap().len() > 3);
    // The invitation stands: the link registers a passkey.
    let token = inv["invite_url"].as_str().unwrap().rsplit('/').next().unwrap().to_owned();
    let mut soft = crate::authenticator::Soft::new(&site.origin);
    assert_eq!(site.register(&mut soft, "ada@acme.test", Some(&token), None, &Default::default()).status, 201);
}

#[test]
fn a_new_social_link_is_emailed_to_the_user() {
    let s = sink();
    let d = smtp_daemon(s.port);
    let site = Site::new(&d, "acme", &["--name", "Acme Corp"]);
    let (_, session) = site.user_with_passkey("ada@acme.test");
    let _gh = crate::social::github(&d, &[]);
    crate::social::link(&site, "github", &session);
    // Sent in the background, after the browser is back on its account page.
    let deadline = Instant::now() + Duration::from_secs(15);
    let notice = loop {
        if let Some(m) = messages(&s).into_iter().find(|m| m.contains("GitHub sign-in added")) {
            break m;
        }
        assert!(Instant::now() < deadline, "no notice: {:?}", messages(&s));
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(notice.contains("To: \"Test User\" <ada@acme.test>"), "{notice}");
    assert!(notice.contains("Subject: GitHub sign-in added to your Acme Corp account"), "{notice}");
    assert!(notice.contains("with GitHub (octo-ada)"), "the upstream account is named: {notice}");
    assert!(notice.contains(&format!("{}/account", site.base)), "{notice}");
}

/// Each message's subject and text body, decoded as a mail client would (Python's `email`).
fn decoded(s: &Sink) -> Vec<(String, String)> {
    let dir = s.maildir.path().join("mail").join("new");
    let script = "import email, email.header, email.policy, json, os, sys\n\
        out = []\n\
        for n in sorted(os.listdir(sys.argv[1]), key=lambda n: os.stat(os.path.join(sys.argv[1], n)).st_mtime_ns):\n\
        \x20   m = email.message_from_binary_file(open(os.path.join(sys.argv[1], n), 'rb'), policy=email.policy.default)\n\
        \x20   out.append([str(m['Subject']), m.get_content()])\n\
        print(json.dumps(out))\n";
    let out = Command::new("python3").args(["-c", script]).arg(&dir).output().expect("python3");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn an_invitation_is_emailed_in_the_invitees_language() {
    let s = sink();
    let d = smtp_daemon(s.port);
    Site::new(&d, "acme", &["--name", "Acme Corp"]);
    let invite = |email: &str, name: &str, locale: Option<&str>| {
        let mut args = vec!["user", "invite", "--tenant", "acme", "--email", email, "--name", name, "-o", "json"];
        if let Some(l) = locale {
            args.extend(["--locale", l]);
        }
        d.cli(&args)
    };
    // A language Latchkey does not speak: refused, nothing stored, nothing sent.
    let before = d.snapshot_of(&["users", "invites"]);
    let r = invite("ada@acme.test", "Ada", Some("tlh"));
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stderr.contains("invalid_input") && r.stderr.contains("pt-BR"), "{}", r.stderr);
    assert_eq!(d.snapshot_of(&["users", "invites"]), before);
    assert!(messages(&s).is_empty());

    // German, then again without --locale: still German (kept with the user). Japanese for Bob.
    assert_eq!(invite("ada@acme.test", "Ada", Some("de-AT")).ok().json()["emailed"], true);
    assert_eq!(invite("ada@acme.test", "Ada", None).ok().json()["emailed"], true);
    assert_eq!(invite("bob@acme.test", "Bob", Some("ja")).ok().json()["emailed"], true);
    let mail = decoded(&s);
    assert_eq!(mail.len(), 3, "{mail:?}");
    for (subject, body) in &mail[..2] {
        assert_eq!(subject, "Ihre Einladung zu Acme Corp");
        assert!(body.starts_with("Hallo Ada,") && body.contains("ohne Passwort an"), "{body}");
    }
    assert_eq!(mail[2].0, "Acme Corp への招待");
    assert!(mail[2].1.contains("パスワードなしでサインインできます"), "{}", mail[2].1);
}

#[test]
fn a_csv_import_emails_each_row_in_its_language() {
    let s = sink();
    let d = smtp_daemon(s.port);
    Site::new(&d, "acme", &["--name", "Acme Corp"]);
    let csv = s.maildir.path().join("people.csv");
    std::fs::write(&csv, "email,name,locale\nana@acme.test,Ana,pt-BR\nli@acme.test,Li,zh-CN\nzed@acme.test,Zed,\n")
        .unwrap();
    let out = d.cli(&["user", "import", "--tenant", "acme", csv.to_str().unwrap(), "-o", "json"]).ok().json();
    assert_eq!(out["invited"].as_array().map(Vec::len), Some(3), "{out}");
    let mut subjects: Vec<String> = decoded(&s).into_iter().map(|(subject, _)| subject).collect();
    subjects.sort();
    assert_eq!(subjects, ["Você foi convidado para Acme Corp", "You are invited to Acme Corp", "您受邀加入 Acme Corp"]);
    // A reinvitation keeps each user's language.
    d.cli(&["user", "reinvite", "--tenant", "acme", "li@acme.test"]).ok();
    let again = decoded(&s);
    assert_eq!(again.iter().filter(|(subject, _)| subject == "您受邀加入 Acme Corp").count(), 2, "{again:?}");
}

/// A user a directory creates over SCIM is e-mailed the invitation; the directory never sees
/// the link. One created inactive is not invited.
#[test]
fn a_user_created_over_scim_is_emailed_an_invitation() {
    let s = sink();
    let d = smtp_daemon(s.port);
    let site = Site::new(&d, "acme", &["--name", "Acme Corp"]);
    let token = d.cli(&["scim", "enable", "--tenant", "acme", "-q"]).ok().stdout.trim().to_owned();
    let auth = format!("Bearer {token}");
    let create = |user: &str, active: bool| {
        let body = serde_json::json!({"userName": user, "displayName": "Ada Lovelace", "active": active,
                                      "emails": [{"value": user, "primary": true}]});
        send_raw(
            "POST",
            &format!("{}/scim/v2/Users", site.base),
            Some("application/scim+json"),
            serde_json::to_vec(&body).unwrap(),
            &[("Authorization", &auth)],
        )
    };
    let r = create("ada@acme.test", true);
    assert_eq!(r.status, 201, "{}", r.body);
    assert!(!r.body.contains("/invite/"), "the link is not the directory's: {}", r.body);
    let mail = messages(&s);
    assert_eq!(mail.len(), 1);
    assert!(mail[0].contains("To: \"Ada Lovelace\" <ada@acme.test>"), "{}", mail[0]);
    assert!(mail[0].contains("Subject: You are invited to Acme Corp"), "{}", mail[0]);
    assert!(mail[0].contains(&format!("{}/invite/", site.base)), "{}", mail[0]);
    assert_eq!(create("bea@acme.test", false).status, 201);
    assert_eq!(messages(&s).len(), 1, "an inactive user is not invited");
}
