//! Passkey registration and sign-in through the real HTTP endpoints with a software
//! authenticator: invitations, username-first and username-less sign-in, a second (roaming)
//! credential, credential management, options with the seed's exact values.

use serde_json::{Value, json};

use crate::authenticator::{BE, BS, Soft, Tamper, UP, UV, unb64};
use crate::support::*;

fn count(d: &TestDaemon, table: &str) -> i64 {
    d.sql().i64(&format!("SELECT count(*) FROM {table}"))
}

#[test]
fn registration_options_carry_the_seeds_values() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let token = site.invite("ada@acme.test", "Ada Lovelace");
    let o = site.register_start("ada@acme.test", "Ada Lovelace", Some(&token), None, json!({})).json();
    assert_eq!(unb64(o["challenge"].as_str().unwrap()).len(), 32, "32 random bytes");
    assert_eq!(o["rp"]["id"], "localhost");
    assert_eq!(o["rp"]["name"], "acme");
    assert_eq!(o["user"]["name"], "ada@acme.test");
    assert_eq!(o["user"]["displayName"], "Ada Lovelace");
    let handle = o["user"]["id"].as_str().unwrap();
    assert!(!String::from_utf8_lossy(&unb64(handle)).contains("ada"), "user.id is opaque, never the e-mail");
    assert_eq!(o["pubKeyCredParams"], json!([{"type": "public-key", "alg": -7}]));
    assert_eq!(o["timeout"], 60000);
    assert_eq!(
        o["authenticatorSelection"],
        json!({"authenticatorAttachment": "platform", "residentKey": "preferred", "requireResidentKey": false, "userVerification": "required"})
    );
    assert_eq!(o["attestation"], "none");
    assert_eq!(o["excludeCredentials"], json!([]));

    // Every call issues a new challenge; roaming and direct attestation on request.
    let again = site
        .register_start(
            "ada@acme.test",
            "Ada Lovelace",
            Some(&token),
            None,
            json!({"authenticator": "roaming", "attestation": "direct"}),
        )
        .json();
    assert_ne!(again["challenge"], o["challenge"]);
    assert_eq!(again["authenticatorSelection"]["authenticatorAttachment"], "cross-platform");
    assert_eq!(again["attestation"], "direct");
    assert_eq!(again["user"]["id"], o["user"]["id"], "the same user keeps the same handle");
    assert_eq!(count(&d, "challenges"), 2);
}

#[test]
fn invited_user_registers_then_signs_in_both_ways() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let token = site.invite("Ada@Acme.test", "Ada Lovelace");
    let user_status = d.sql().text("SELECT status FROM users");
    assert_eq!(user_status, "invited");

    let mut soft = Soft::new(&site.origin);
    soft.flags = UP | UV | BE | BS; // a synced passkey
    let reg = site.register(&mut soft, "ada@acme.test", Some(&token), None, &Tamper::default());
    assert_eq!(reg.status, 201, "{}", reg.body);
    let body = reg.json();
    assert_eq!(body["user"]["email"], "Ada@Acme.test");
    assert_eq!(body["user"]["name"], "Ada Lovelace");
    let cred = body["credential"].as_object().unwrap();
    let mut keys: Vec<&str> = cred.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, ["created", "device", "id", "name", "type"], "exactly the seed's fields");
    assert_eq!(cred["type"], "platform");
    assert_eq!(cred["created"].as_str().unwrap().len(), 10, "YYYY-MM-DD");
    let cookie = reg.set_cookie().unwrap();
    for attr in ["latchkey_session=", "HttpOnly", "SameSite=Lax", "Path=/acme", "Max-Age=28800"] {
        assert!(cookie.contains(attr), "{attr} in {cookie}");
    }
    assert!(!cookie.contains("Secure"), "http://localhost is not https");
    let sql = d.sql();
    let joined = "FROM users u JOIN credentials c ON c.user_id = u.id";
    let status = sql.text(&format!("SELECT u.status {joined}"));
    let backed_up = sql.bool(&format!("SELECT c.backed_up {joined}"));
    let be = sql.bool(&format!("SELECT c.backup_eligible {joined}"));
    assert_eq!(status, "active");
    assert!(backed_up && be, "synced passkey recorded as backed up");
    let session_token = reg.session_cookie().unwrap();
    let stored = hex(&d.sql().bytes("SELECT token_hash FROM sessions")).to_uppercase();
    // 6 bytes of time (so that sessions append to their index), then SHA-256 of the token.
    assert!(!session_token.contains(&stored) && stored.len() == 76, "only the hash of the session token is stored");

    // The invite is spent.
    let reuse = site.register_start("ada@acme.test", "Ada", Some(&token), None, json!({}));
    assert_eq!(reuse.status, 403);
    assert_eq!(reuse.json()["error"], "registration_not_allowed");

    // Username-first sign-in: options list the credential.
    let options = site.auth_start(Some("ADA@acme.test"));
    assert_eq!(unb64(options["challenge"].as_str().unwrap()).len(), 32);
    assert_eq!(options["timeout"], 60000);
    assert_eq!(options["userVerification"], "required");
    assert_eq!(options["rpId"], "localhost");
    assert_eq!(options["allowCredentials"], json!([{"type": "public-key", "id": cred["id"]}]));
    let assertion = soft.get(&options, &Tamper::default());
    let r = site.post("/auth/finish", &json!({"assertion": assertion, "challenge": options["challenge"]}), None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["user"]["email"], "Ada@Acme.test");
    assert!(r.json()["session"]["expires_at"].as_str().unwrap().ends_with('Z'));
    assert!(r.session_cookie().is_some());
    let counter = d.sql().i64("SELECT sign_count FROM credentials");
    assert_eq!(counter, 1, "the counter is persisted after each sign-in");

    // Username-less: empty allowCredentials, the user handle identifies the user.
    let options = site.auth_start(None);
    assert_eq!(options["allowCredentials"], json!([]));
    let assertion = soft.get(&options, &Tamper::default());
    let r = site.post("/auth/finish", &json!({"assertion": assertion, "challenge": options["challenge"]}), None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["user"]["name"], "Ada Lovelace");
    assert_eq!(count(&d, "sessions"), 3);
    let last_used = d.sql().opt_i64("SELECT last_used_at FROM credentials");
    assert!(last_used.is_some());
}

#[test]
fn unknown_usernames_get_the_same_shape() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    site.user_with_passkey("ada@acme.test");
    let known = site.auth_start(Some("ada@acme.test"));
    let unknown = site.auth_start(Some("nobody@acme.test"));
    let shape = |v: &Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        (
            k,
            v["allowCredentials"].as_array().unwrap().len(),
            v["allowCredentials"][0].as_object().unwrap().keys().cloned().collect::<Vec<_>>(),
        )
    };
    assert_eq!(shape(&known), shape(&unknown));
    let again = site.auth_start(Some("nobody@acme.test"));
    assert_eq!(again["allowCredentials"], unknown["allowCredentials"], "stable across calls, so nothing to compare");
    // An invited user without a passkey cannot sign in: it looks the same as unknown.
    site.invite("bob@acme.test", "Bob");
    let invited = site.auth_start(Some("bob@acme.test"));
    assert_eq!(shape(&invited), shape(&known));
}

#[test]
fn a_signed_in_user_adds_a_roaming_key_and_manages_credentials() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, cookie) = site.user_with_passkey("ada@acme.test");

    // Add a backup security key from the session: excludeCredentials lists the passkey.
    let start = site.register_start("ada@acme.test", "Ada", None, Some(&cookie), json!({"authenticator": "roaming"}));
    assert_eq!(start.status, 200, "{}", start.body);
    let options = start.json();
    assert_eq!(options["excludeCredentials"].as_array().unwrap().len(), 1);
    let mut key = Soft::new(&site.origin);
    let credential = key.create(&options, &Tamper { attachment: Some("cross-platform"), ..Tamper::default() });
    let r = site.post(
        "/register/finish",
        &json!({"credential": credential, "challenge": options["challenge"]}),
        Some(&cookie),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.json()["credential"]["type"], "roaming");
    assert!(r.session_cookie().is_none(), "the existing session stays");

    let list = site.api("GET", "/api/credentials", None, &cookie, None).json();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["type"], "platform");
    assert_eq!(list[1]["type"], "roaming");
    let passkey_id = list[0]["id"].as_str().unwrap().to_owned();
    let key_id = list[1]["id"].as_str().unwrap().to_owned();

    // Rename: cookie requests that change state need this tenant's Origin.
    let path = format!("/api/credentials/{key_id}");
    let r = site.api("PATCH", &path, Some(&json!({"name": "Blue YubiKey"})), &cookie, Some(&site.origin));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["name"], "Blue YubiKey");
    let before = d.snapshot();
    let r = site.api("PATCH", &path, Some(&json!({"name": "x"})), &cookie, None);
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (403, "origin_not_allowed"));
    let r = site.api("PATCH", &path, Some(&json!({"name": "x"})), &cookie, Some("http://evil.example"));
    assert_eq!(r.status, 403);
    let r = site.api("PATCH", &path, Some(&json!({"name": ""})), &cookie, Some(&site.origin));
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (400, "invalid_name"));
    let r = site.api("PATCH", &path, Some(&json!({"name": "x".repeat(65)})), &cookie, Some(&site.origin));
    assert_eq!(r.status, 400);
    assert_eq!(d.snapshot(), before);

    // Another user's credential reads as not found.
    let (_, bob_cookie) = site.user_with_passkey("bob@acme.test");
    let before = d.snapshot();
    let r = site.api("DELETE", &path, None, &bob_cookie, Some(&site.origin));
    assert_eq!(r.status, 404);
    let r = site.api("PATCH", &path, Some(&json!({"name": "mine now"})), &bob_cookie, Some(&site.origin));
    assert_eq!(r.status, 404);
    assert_eq!(d.snapshot(), before);
    let r = site.api("GET", "/api/credentials", None, "latchkey_session=forged", None);
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (401, "login_required"));

    // Revoke the passkey; the last credential cannot go.
    let r = site.api("DELETE", &format!("/api/credentials/{passkey_id}"), None, &cookie, Some(&site.origin));
    assert_eq!(r.status, 204);
    let before = d.snapshot();
    let r = site.api("DELETE", &path, None, &cookie, Some(&site.origin));
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (409, "last_credential"));
    assert_eq!(d.snapshot(), before);

    // The revoked passkey no longer signs in; the security key does.
    let options = site.auth_start(Some("ada@acme.test"));
    assert_eq!(options["allowCredentials"].as_array().unwrap().len(), 1);
    let r = site.sign_in(&mut key, Some("ada@acme.test"), &Tamper::default());
    assert_eq!(r.status, 200, "{}", r.body);
    let _ = &mut soft;

    // Operators see and revoke credentials too.
    let listed = d.cli(&["credential", "list", "--tenant", "acme", "ada@acme.test", "-o", "json"]).ok().json();
    assert_eq!(listed[0]["name"], "Blue YubiKey");
    assert_eq!(listed[0]["type"], "roaming");
    d.cli(&["credential", "revoke", "--tenant", "acme", "ada@acme.test", &key_id]).ok();
    assert_eq!(
        d.cli(&["credential", "list", "--tenant", "acme", "ada@acme.test", "-o", "json"]).ok().json(),
        json!([])
    );
}

#[test]
fn who_may_register() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (_, ada_cookie) = site.user_with_passkey("ada@acme.test");
    let before = d.snapshot();
    // No invite on an invite-only tenant.
    let r = site.register_start("eve@acme.test", "Eve", None, None, json!({}));
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (403, "registration_not_allowed"));
    // Adding a credential to someone else's account without their session.
    let r = site.register_start("ada@acme.test", "Ada", None, None, json!({}));
    assert_eq!(r.status, 403);
    // Someone else's session does not help either.
    let bob_token = site.invite("bob@acme.test", "Bob");
    let before_bob = d.snapshot();
    let r = site.register_start("bob@acme.test", "Bob", None, Some(&ada_cookie), json!({}));
    assert_eq!(r.status, 403);
    // An invite is for its own e-mail address only.
    let r = site.register_start("eve@acme.test", "Eve", Some(&bob_token), None, json!({}));
    assert_eq!(r.status, 403);
    let r = site.register_start("ada@acme.test", "Ada", Some("not-a-token"), None, json!({}));
    assert_eq!(r.status, 403);
    assert_eq!(d.snapshot(), before_bob);
    drop(before);

    // Open registration: a free username registers; a taken one does not.
    let open = Site::new(&d, "public", &["--registration", "open"]);
    let mut soft = Soft::new(&open.origin);
    let r = open.register(&mut soft, "new@public.test", None, None, &Tamper::default());
    assert_eq!(r.status, 201, "{}", r.body);
    // The same kind of id (`sub`) as an invited user's: a UUID in text form.
    let id = r.json()["user"]["id"].as_str().unwrap().to_owned();
    d.cli(&["user", "invite", "--tenant", "public", "--email", "inv@public.test", "--name", "Inv"]).ok();
    let invited = d.cli(&["user", "show", "--tenant", "public", "inv@public.test", "-o", "json"]).ok().json();
    let invited_id = invited["id"].as_str().unwrap().to_owned();
    for id in [&id, &invited_id] {
        let groups: Vec<usize> = id.split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12], "{id}");
    }
    let r = open.register_start("new@public.test", "Again", None, None, json!({}));
    assert_eq!(r.status, 403);
    // Tenants do not share users: the same e-mail is free in another tenant.
    let r = open.register_start("ada@acme.test", "Ada elsewhere", None, None, json!({}));
    assert_eq!(r.status, 200);
}

#[test]
fn recovery_link_registers_a_new_passkey_and_ends_other_sessions() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (_lost, old_cookie) = site.user_with_passkey("ada@acme.test");
    let token = site.recover("ada@acme.test");
    let mut fresh = Soft::new(&site.origin);
    let r = site.register(&mut fresh, "ada@acme.test", Some(&token), None, &Tamper::default());
    assert_eq!(r.status, 201, "{}", r.body);
    let new_cookie = r.session_cookie().unwrap();
    assert_eq!(site.api("GET", "/api/credentials", None, &old_cookie, None).status, 401, "the old session ended");
    let creds = site.api("GET", "/api/credentials", None, &new_cookie, None).json();
    assert_eq!(creds.as_array().unwrap().len(), 2);
    let r = site.register_start("ada@acme.test", "Ada", Some(&token), None, json!({}));
    assert_eq!(r.status, 403, "a recovery link works once");
}

#[test]
fn a_registration_begun_in_a_session_that_has_ended_adds_nothing() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (_, stolen_cookie) = site.user_with_passkey("ada@acme.test");
    // Someone with the session's cookie begins adding their own passkey ...
    let start = site.register_start("ada@acme.test", "Ada", None, Some(&stolen_cookie), json!({}));
    assert_eq!(start.status, 200, "{}", start.body);
    let options = start.json();
    // ... the user recovers the account meanwhile, which ends every other session ...
    let token = site.recover("ada@acme.test");
    let r = site.register(&mut Soft::new(&site.origin), "ada@acme.test", Some(&token), None, &Tamper::default());
    assert_eq!(r.status, 201, "{}", r.body);
    // ... and the finish in the ended session is refused, storing nothing.
    let before = d.snapshot();
    let credential = Soft::new(&site.origin).create(&options, &Tamper::default());
    let body = json!({"credential": credential, "challenge": options["challenge"]});
    let r = site.post("/register/finish", &body, Some(&stolen_cookie));
    assert_eq!((r.status, r.json()["error"].as_str()), (401, Some("login_required")), "{}", r.body);
    assert_eq!(d.snapshot(), before);
}

#[test]
fn a_restart_between_start_and_finish_loses_nothing() {
    let mut d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let token = site.invite("ada@acme.test", "Ada");
    let options = site.register_start("ada@acme.test", "Ada", Some(&token), None, json!({})).json();
    let mut soft = Soft::new(&site.origin);
    let credential = soft.create(&options, &Tamper::default());
    let origin = site.origin.clone();
    d.stop();
    let dir = d.dir.path().to_owned();
    let port: u16 = origin.rsplit(':').next().unwrap().parse().unwrap();
    let same = d.same_store();
    let again = TestDaemon::start_on(port, |f| {
        same(f);
        f.keys.encryption_key_file = Some(dir.join("key-encryption.key"));
    });
    let r = send_json(
        "POST",
        &format!("{}/acme/register/finish", again.base),
        &json!({"credential": credential, "challenge": options["challenge"]}),
        &[],
    );
    assert_eq!(r.status, 201, "{}", r.body);
}

#[test]
fn a_sign_in_start_commits_its_challenge_without_an_fsync_and_the_finish_with_one() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    // Reading the audit trail writes out what is still queued for it: nothing else writes now.
    d.cli(&["audit", "--tenant", "acme", "-o", "json"]).ok();
    let quiet = commits(&d);
    let options = site.auth_start(Some("ada@acme.test"));
    let started = commits(&d);
    let sqlite = backend() == Backend::Sqlite;
    // PostgreSQL commits every write on its own; the challenge's without waiting for the WAL
    // flush (checked by the store's PostgreSQL tests), the finish's with it.
    let expected = if sqlite { (quiet.0 + 1, quiet.1 + 1) } else { (quiet.0 + 1, 0) };
    assert_eq!(started, expected, "the start's commit");
    // The finish reads the challenge that commit made visible, and its own commit is durable.
    let assertion = soft.get(&options, &Tamper::default());
    let body = json!({"assertion": assertion, "challenge": options["challenge"]});
    let r = site.post("/auth/finish", &body, None);
    assert_eq!(r.status, 200, "{}", r.body);
    let finished = commits(&d);
    assert!(finished.0 > started.0);
    assert_eq!(finished.1, started.1, "the finish waited for its fsync");
    assert_eq!(site.post("/auth/finish", &body, None).status, 400, "the challenge was taken");
}
