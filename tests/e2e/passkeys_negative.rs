//! Every verification step of WebAuthn §7.1/§7.2, broken one at a time. Each case asserts the
//! status, the error code, and that no credential, session or counter changed (the whole
//! database is compared).

use serde_json::{Value, json};

use crate::authenticator::{KeyKind, Soft, Tamper, UP, UV};
use crate::support::*;

/// Registers with `tamper` and expects a refusal that stores nothing.
#[track_caller]
fn refused_registration(site: &Site, tamper: Tamper, status: u16, code: &str) {
    // Each refusal registers a new invitee: the same code may be expected more than once.
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let email = format!("{code}-{}@acme.test", N.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let token = site.invite(&email, "Tester");
    let start = site.register_start(&email, "Tester", Some(&token), None, json!({}));
    let options = start.json();
    let before = site.d.snapshot();
    let mut soft = Soft::new(&site.origin);
    let credential = soft.create(&options, &tamper);
    let r = site.post("/register/finish", &json!({"credential": credential, "challenge": options["challenge"]}), None);
    assert_eq!((r.status, r.json()["error"].as_str().unwrap_or("")), (status, code), "{}", r.body);
    assert!(r.session_cookie().is_none());
    assert_eq!(site.d.snapshot(), before, "a refused registration changes nothing");
}

/// Signs in with `tamper` and expects a refusal that changes nothing.
#[track_caller]
fn refused_sign_in(site: &Site, soft: &mut Soft, username: Option<&str>, tamper: Tamper, status: u16, code: &str) {
    let options = site.auth_start(username);
    let before = site.d.snapshot();
    let assertion = soft.get(&options, &tamper);
    let r = site.post("/auth/finish", &json!({"assertion": assertion, "challenge": options["challenge"]}), None);
    assert_eq!((r.status, r.json()["error"].as_str().unwrap_or("")), (status, code), "{}", r.body);
    assert!(r.session_cookie().is_none());
    assert_eq!(site.d.snapshot(), before, "a refused sign-in changes nothing: no session, same counter");
}

#[test]
fn registration_verification_steps() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    // Another tenant of the same daemon on its own domain: its origin is not acme's.
    d.cli(&["tenant", "create", "other", "--base-url", "https://login.other.test"]).ok();
    refused_registration(
        &site,
        Tamper { origin: Some("http://evil.example".into()), ..Tamper::default() },
        400,
        "origin_mismatch",
    );
    refused_registration(
        &site,
        Tamper { origin: Some("https://login.other.test".into()), ..Tamper::default() },
        400,
        "origin_mismatch",
    );
    refused_registration(
        &site,
        Tamper { framed_by: Some("https://evil.example"), ..Tamper::default() },
        400,
        "origin_mismatch",
    );
    // The credential id: the one attested must be the one named (rawId), not empty, not taken.
    let claimed = Tamper { claimed_id: Some(vec![7; 16]), ..Tamper::default() };
    refused_registration(&site, claimed, 400, "malformed_credential");
    let empty = Tamper { credential_id: Some(vec![]), ..Tamper::default() };
    refused_registration(&site, empty, 400, "malformed_credential");
    let (ada, _) = site.user_with_passkey("ada@acme.test");
    let taken = Tamper { credential_id: Some(ada.credentials[0].id.clone()), ..Tamper::default() };
    refused_registration(&site, taken, 409, "credential_exists");
    refused_registration(
        &site,
        Tamper { rp_id: Some("evil.example".into()), ..Tamper::default() },
        400,
        "rp_id_mismatch",
    );
    refused_registration(&site, Tamper { flags: Some(UV), ..Tamper::default() }, 400, "user_not_present");
    refused_registration(&site, Tamper { flags: Some(UP), ..Tamper::default() }, 400, "user_not_verified");
    refused_registration(
        &site,
        Tamper { key: Some(KeyKind::Rs256), ..Tamper::default() },
        400,
        "unsupported_algorithm",
    );
    refused_registration(
        &site,
        Tamper { client_data_type: Some("webauthn.get".into()), ..Tamper::default() },
        400,
        "invalid_challenge",
    );
    refused_registration(
        &site,
        Tamper { challenge: Some("AAAA".into()), ..Tamper::default() },
        400,
        "invalid_challenge",
    );
}

#[test]
fn packed_self_attestation_is_verified_when_direct_is_asked() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let token = site.invite("ada@acme.test", "Ada");
    let options =
        site.register_start("ada@acme.test", "Ada", Some(&token), None, json!({"attestation": "direct"})).json();
    let mut soft = Soft::new(&site.origin);
    let credential = soft.create(&options, &Tamper { fmt_packed_self: true, ..Tamper::default() });
    let r = site.post("/register/finish", &json!({"credential": credential, "challenge": options["challenge"]}), None);
    assert_eq!(r.status, 201, "{}", r.body);
}

#[test]
fn challenge_rules() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let other = Site::new(&d, "other", &[]);
    let token = site.invite("ada@acme.test", "Ada");
    let options = site.register_start("ada@acme.test", "Ada", Some(&token), None, json!({})).json();
    let mut soft = Soft::new(&site.origin);
    let credential = soft.create(&options, &Tamper::default());
    let finish = json!({"credential": credential, "challenge": options["challenge"]});

    // Another tenant's finish endpoint does not know this challenge.
    let before = d.snapshot();
    let r = other.post("/register/finish", &finish, None);
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (400, "invalid_challenge"));
    // A registration challenge is not an authentication challenge.
    let r = site.post("/auth/finish", &json!({"assertion": credential, "challenge": options["challenge"]}), None);
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(d.snapshot(), before);

    assert_eq!(site.post("/register/finish", &finish, None).status, 201);
    // Replayed: the challenge was used.
    let before = d.snapshot();
    let r = site.post("/register/finish", &finish, None);
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (400, "invalid_challenge"));
    assert_eq!(d.snapshot(), before);

    // Replayed sign-in.
    let options = site.auth_start(Some("ada@acme.test"));
    let assertion = soft.get(&options, &Tamper::default());
    let body = json!({"assertion": assertion, "challenge": options["challenge"]});
    assert_eq!(site.post("/auth/finish", &body, None).status, 200);
    let before = d.snapshot();
    let r = site.post("/auth/finish", &body, None);
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (400, "invalid_challenge"));
    assert_eq!(d.snapshot(), before);

    // Expired: 61 seconds on the daemon's clock.
    let options = site.auth_start(Some("ada@acme.test"));
    let assertion = soft.get(&options, &Tamper::default());
    d.clock.advance(61);
    let before = d.snapshot();
    let r = site.post("/auth/finish", &json!({"assertion": assertion, "challenge": options["challenge"]}), None);
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (400, "invalid_challenge"));
    assert_eq!(d.snapshot(), before);
}

/// Writes of concurrent requests share commits (group commit): one assertion sent 12 times at
/// once still signs in exactly once, and a refused copy leaves nothing behind; sign-ins of
/// different users at the same moment all succeed.
#[test]
fn concurrent_finishes_of_one_challenge_sign_in_once() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut ada, _) = site.user_with_passkey("ada@acme.test");
    let sessions = || -> i64 { d.sql().i64("SELECT count(*) FROM sessions") };
    let before = sessions();
    let options = site.auth_start(Some("ada@acme.test"));
    let assertion = ada.get(&options, &Tamper::default());
    let body = json!({"assertion": assertion, "challenge": options["challenge"]});
    let statuses: Vec<(u16, String)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..12)
            .map(|_| {
                s.spawn(|| {
                    let r = site.post("/auth/finish", &body, None);
                    (r.status, r.json()["error"].as_str().unwrap_or_default().to_owned())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(statuses.iter().filter(|(s, _)| *s == 200).count(), 1, "{statuses:?}");
    assert!(statuses.iter().all(|(s, e)| *s == 200 || (*s == 400 && e == "invalid_challenge")), "{statuses:?}");
    assert_eq!(sessions(), before + 1);

    let mut users: Vec<(String, Soft)> = (0..6)
        .map(|i| {
            let email = format!("u{i}@acme.test");
            let (soft, _) = site.user_with_passkey(&email);
            (email, soft)
        })
        .collect();
    let before = sessions();
    std::thread::scope(|s| {
        for (email, soft) in users.iter_mut() {
            let site = &site;
            s.spawn(move || {
                for _ in 0..3 {
                    let r = site.sign_in(soft, Some(email.as_str()), &Tamper::default());
                    assert_eq!(r.status, 200, "{}", r.body);
                }
            });
        }
    });
    assert_eq!(sessions(), before + 18);
}

#[test]
fn sign_in_verification_steps() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut ada, _) = site.user_with_passkey("ada@acme.test");
    let (bob, _) = site.user_with_passkey("bob@acme.test");
    let ada_user = Some("ada@acme.test");

    refused_sign_in(
        &site,
        &mut ada,
        ada_user,
        Tamper { origin: Some("http://evil.example".into()), ..Tamper::default() },
        401,
        "origin_mismatch",
    );
    d.cli(&["tenant", "create", "other", "--base-url", "https://login.other.test"]).ok();
    let other_origin = Tamper { origin: Some("https://login.other.test".into()), ..Tamper::default() };
    refused_sign_in(&site, &mut ada, ada_user, other_origin, 401, "origin_mismatch");
    // The tenant's origin, but in a frame of another site (its pages are never framed).
    let framed = Tamper { framed_by: Some("https://evil.example"), ..Tamper::default() };
    refused_sign_in(&site, &mut ada, ada_user, framed, 401, "origin_mismatch");
    refused_sign_in(
        &site,
        &mut ada,
        ada_user,
        Tamper { rp_id: Some("evil.example".into()), ..Tamper::default() },
        401,
        "rp_id_mismatch",
    );
    refused_sign_in(
        &site,
        &mut ada,
        ada_user,
        Tamper { flags: Some(UV), ..Tamper::default() },
        401,
        "user_not_present",
    );
    refused_sign_in(
        &site,
        &mut ada,
        ada_user,
        Tamper { flags: Some(UP), ..Tamper::default() },
        401,
        "user_not_verified",
    );
    refused_sign_in(
        &site,
        &mut ada,
        ada_user,
        Tamper { flip_signature_bit: true, ..Tamper::default() },
        401,
        "invalid_signature",
    );

    // A good sign-in moves the counter forward; presenting an older counter is refused.
    assert_eq!(site.sign_in(&mut ada, ada_user, &Tamper::default()).status, 200);
    let stored = d.sql().i64("SELECT max(sign_count) FROM credentials");
    assert!(stored > 1);
    refused_sign_in(
        &site,
        &mut ada,
        ada_user,
        Tamper { counter: Some(1), ..Tamper::default() },
        401,
        "counter_regression",
    );

    refused_sign_in(
        &site,
        &mut ada,
        ada_user,
        Tamper { credential_id: Some(vec![7; 16]), ..Tamper::default() },
        401,
        "unknown_credential",
    );
    // Bob's credential id presented for Ada.
    refused_sign_in(
        &site,
        &mut ada,
        ada_user,
        Tamper { credential_id: Some(bob.credentials[0].id.clone()), ..Tamper::default() },
        401,
        "unknown_credential",
    );
    // Username-less without a user handle.
    refused_sign_in(
        &site,
        &mut ada,
        None,
        Tamper { omit_user_handle: true, ..Tamper::default() },
        400,
        "missing_user_handle",
    );
    // Unknown username: the stand-in credential can never sign in.
    let options = site.auth_start(Some("nobody@acme.test"));
    let before = d.snapshot();
    let mut fake = Soft::new(&site.origin);
    let _ =
        fake.create(&json!({"rp": {"id": "localhost"}, "challenge": "AA", "user": {"id": "AA"}}), &Tamper::default());
    let assertion = fake.get(
        &json!({"rpId": "localhost", "challenge": options["challenge"], "allowCredentials": []}),
        &Tamper::default(),
    );
    let r = site.post("/auth/finish", &json!({"assertion": assertion, "challenge": options["challenge"]}), None);
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (401, "unknown_credential"));
    assert_eq!(d.snapshot(), before);
}

#[test]
fn malformed_requests() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut ada, _) = site.user_with_passkey("ada@acme.test");
    let token = site.invite("eve@acme.test", "Eve");
    let people = ["users", "credentials", "sessions", "invites"];
    let before = d.snapshot_of(&people);
    let url = |p: &str| format!("{}{p}", site.base);
    let expect = |r: Http, status: u16, code: &str| {
        assert_eq!((r.status, r.json()["error"].as_str().unwrap_or("")), (status, code), "{}", r.body);
    };

    // Malformed CBOR in the attestation object; malformed clientDataJSON in an assertion.
    let options = site.register_start("eve@acme.test", "Eve", Some(&token), None, json!({})).json();
    let mut soft = Soft::new(&site.origin);
    let mut credential = soft.create(&options, &Tamper::default());
    credential["response"]["attestationObject"] = Value::from("oWNmbXQ");
    expect(
        site.post("/register/finish", &json!({"credential": credential, "challenge": options["challenge"]}), None),
        400,
        "malformed_credential",
    );
    let options = site.auth_start(Some("ada@acme.test"));
    let mut assertion = ada.get(&options, &Tamper::default());
    assertion["response"]["clientDataJSON"] = Value::from("bm90IGpzb24");
    expect(
        site.post("/auth/finish", &json!({"assertion": assertion, "challenge": options["challenge"]}), None),
        400,
        "malformed_credential",
    );
    assertion["response"] = json!("nope");
    expect(
        site.post("/auth/finish", &json!({"assertion": assertion, "challenge": options["challenge"]}), None),
        400,
        "malformed_credential",
    );

    // Malformed JSON, missing fields, unknown fields, wrong content type, oversized body.
    expect(
        send_raw("POST", &url("/auth/finish"), Some("application/json"), b"{\"assertion\":".to_vec(), &[]),
        400,
        "malformed_json",
    );
    expect(send_json("POST", &url("/register/start"), &json!({"username": "a@b.test"}), &[]), 400, "invalid_input");
    expect(send_json("POST", &url("/auth/finish"), &json!({"challenge": "x"}), &[]), 400, "invalid_input");
    expect(
        send_json("POST", &url("/auth/start"), &json!({"username": "a@b.test", "admin": true}), &[]),
        400,
        "invalid_input",
    );
    expect(
        send_raw("POST", &url("/register/start"), Some("text/plain"), b"{}".to_vec(), &[]),
        415,
        "unsupported_media_type",
    );
    let big = format!("{{\"username\":\"{}\"}}", "a".repeat(70_000));
    expect(
        send_raw("POST", &url("/auth/start"), Some("application/json"), big.into_bytes(), &[]),
        413,
        "payload_too_large",
    );
    expect(
        send_json("POST", &url("/register/start"), &json!({"username": "not-an-email", "display_name": "x"}), &[]),
        400,
        "invalid_email",
    );
    expect(send_json("GET", &url("/register/start"), &json!({}), &[]), 405, "method_not_allowed");

    // Only the challenges issued by the start calls above were added.
    let challenges = d.sql().i64("SELECT count(*) FROM challenges");
    assert_eq!(challenges, 2);
    assert_eq!(d.snapshot_of(&people), before, "no credential, session, user or invite changed");
}

#[test]
fn ceremonies_are_rate_limited_per_address() {
    let d = TestDaemon::start_with(|f| f.limits.ceremony_rate_per_minute = Some(3));
    let site = Site::new(&d, "acme", &[]);
    for _ in 0..3 {
        site.auth_start(None);
    }
    let r = site.post("/auth/start", &json!({}), None);
    assert_eq!((r.status, r.json()["error"].as_str().unwrap()), (429, "rate_limited"));
    assert_eq!(r.header("retry-after"), Some("60"));
    d.clock.advance(60);
    site.auth_start(None);

    // /authorize stores a pending request for each caller without a session: the same limit,
    // counted apart from the ceremonies (a sign-in through an app makes both).
    let web = crate::oidc_support::app(&site, "web", &[]);
    let p = crate::oidc_support::pkce();
    let url = crate::oidc_support::authorize_url(&site, &web, &p, &[]);
    for _ in 0..3 {
        assert_eq!(crate::oidc_support::get(&url, None).status, 200);
    }
    let before = d.snapshot();
    let r = crate::oidc_support::get(&url, None);
    assert_eq!((r.status, r.json()["error"].as_str()), (429, Some("rate_limited")), "{}", r.body);
    assert_eq!(d.snapshot(), before, "nothing stored past the limit");
    site.auth_start(None);
}
