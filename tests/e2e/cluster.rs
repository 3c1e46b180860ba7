//! Several `latchkeyd` nodes on one PostgreSQL database (SPEC §9): everything a request needs is
//! in the database, so a ceremony, an authorization request or a token may start on one node and
//! end on another; single-use things (challenges, codes, refresh tokens) are consumed exactly once
//! across nodes; a change made through one node's admin socket is served by every node within
//! 1 second; a rotated key is published before it signs; a node killed mid-load loses no
//! acknowledged write.
//!
//! The nodes are in-process daemons (`Cluster::start`) sharing the database, the key-encryption
//! key and the public URL (node A's), addressed by port; the kill test runs the real binary so
//! that it can `kill -9` it. PostgreSQL only: on SQLite one database file has one daemon.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::authenticator::{Soft, Tamper};
use crate::oidc_support::*;
use crate::support::*;

/// True (with the reason printed) when this run is not on PostgreSQL: the test is skipped.
fn skipped() -> bool {
    let other = backend() != Backend::Postgres;
    if other {
        eprintln!(
            "skipped on {:?}: several nodes share one PostgreSQL database (LATCHKEY_TEST_BACKEND=postgres)",
            backend()
        );
    }
    other
}

/// The cross-node contract: what one node changed is served by the others within 1 second.
const WITHIN: Duration = Duration::from_secs(1);
const POLL: Duration = Duration::from_millis(50);

/// Polls `probe` every 50 ms until it answers `Ok`; fails after 1 s with the last observation.
/// Returns the value and how long it took.
#[track_caller]
fn within_1s<T>(what: &str, mut probe: impl FnMut() -> Result<T, String>) -> (T, Duration) {
    let start = Instant::now();
    loop {
        match probe() {
            Ok(v) => return (v, start.elapsed()),
            Err(last) if start.elapsed() >= WITHIN => {
                panic!("{what}: not within 1 s ({:?}); last seen: {last}", start.elapsed())
            }
            Err(_) => std::thread::sleep(POLL),
        }
    }
}

fn error_of(r: &Http) -> (u16, String) {
    let code = serde_json::from_str::<Value>(&r.body).ok().and_then(|v| v["error"].as_str().map(str::to_owned));
    (r.status, code.unwrap_or_default())
}

#[track_caller]
fn assert_refused(r: &Http, status: u16, error: &str, why: &str) {
    assert_eq!(error_of(r), (status, error.to_owned()), "{why}: {}", r.body);
}

fn kids(jwks: &Http) -> Vec<String> {
    assert_eq!(jwks.status, 200, "{}", jwks.body);
    jwks.json()["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap().to_owned()).collect()
}

/// authorize → login page → passkey sign-in → resume, each step on the node its site points at.
/// Returns the code; its `iss` is the tenant's issuer, whichever node answered.
fn spread_code_flow(
    authorize: &Site,
    sign_in: &Site,
    resume: &Site,
    soft: &mut Soft,
    user: &str,
    app: &App,
    pkce: &Pkce,
) -> String {
    let page = get(&authorize_url(authorize, app, pkce, &[]), None);
    assert_eq!(page.status, 200, "login page: {}", page.body);
    let id = request_id(&page);
    let r = sign_in.sign_in(soft, Some(user), &Tamper::default());
    assert_eq!(r.status, 200, "sign-in: {}", r.body);
    let cookie = r.session_cookie().expect("session cookie");
    let back = get(&format!("{}/authorize/resume?request={id}", resume.base), Some(&cookie));
    assert_eq!(back.status, 302, "resume: {}", back.body);
    assert!(back.header("location").unwrap().starts_with(&app.redirect), "{:?}", back.header("location"));
    let params = location_params(&back);
    assert_eq!(param(&params, "state"), Some("st-123"));
    let issuer = format!("{}/{}", authorize.origin, authorize.slug);
    assert_eq!(param(&params, "iss"), Some(issuer.as_str()), "the same issuer on every node");
    param(&params, "code").expect("code").to_owned()
}

/// Runs `f(k)` for k in 0..n on n threads released together; returns the answers in k order.
fn at_once<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let barrier = Barrier::new(n);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|k| {
                let (barrier, f) = (&barrier, &f);
                s.spawn(move || {
                    barrier.wait();
                    f(k)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn a_passkey_ceremony_started_on_one_node_finishes_on_another() {
    if skipped() {
        return;
    }
    let c = Cluster::start(3);
    let a = Site::new(c.node(0), "acme", &[]);
    let b = c.site(1, &a);
    let nodes: Vec<Site> = (0..3).map(|i| c.site(i, &a)).collect();

    // Registration: the challenge is issued by A, the credential is verified and stored by B.
    let invite = a.invite("ada@acme.test", "Ada");
    let start = a.register_start("ada@acme.test", "Ada", Some(&invite), None, json!({}));
    assert_eq!(start.status, 200, "{}", start.body);
    let options = start.json();
    let mut soft = Soft::new(&a.origin);
    let credential = soft.create(&options, &Tamper::default());
    let finish = json!({"credential": credential, "challenge": options["challenge"]});
    let r = b.post("/register/finish", &finish, None);
    assert_eq!(r.status, 201, "B finishes a registration A started: {}", r.body);
    let cookie = r.session_cookie().expect("session cookie from B");
    // The challenge is gone for every node, the one that issued it included.
    assert_refused(&a.post("/register/finish", &finish, None), 400, "invalid_challenge", "replayed at A");
    // The session B opened is valid on A (and on B).
    for s in [&a, &b] {
        let list = s.api("GET", "/api/credentials", None, &cookie, None);
        assert_eq!(list.status, 200, "{}: {}", s.base, list.body);
        assert_eq!(list.json().as_array().unwrap().len(), 1);
    }

    // Sign-in: options from A, assertion verified by B; and the other way round (B, then C).
    for (from, to) in [(0, 1), (1, 2), (2, 0)] {
        let options = nodes[from].auth_start(Some("ada@acme.test"));
        let assertion = soft.get(&options, &Tamper::default());
        let body = json!({"assertion": assertion, "challenge": options["challenge"]});
        let r = nodes[to].post("/auth/finish", &body, None);
        assert_eq!(r.status, 200, "sign-in started on node {from}, finished on node {to}: {}", r.body);
        assert!(r.session_cookie().is_some());
        let r = nodes[from].post("/auth/finish", &body, None);
        assert_refused(&r, 400, "invalid_challenge", "the assertion replayed at the node that issued the challenge");
    }

    // One assertion sent 12 times at once, spread over the three nodes, signs in exactly once.
    let sessions = || c.sql().i64("SELECT count(*) FROM sessions");
    let before = sessions();
    let options = a.auth_start(None);
    let assertion = soft.get(&options, &Tamper::default());
    let body = json!({"assertion": assertion, "challenge": options["challenge"]});
    let answers = at_once(12, |k| error_of(&nodes[k % 3].post("/auth/finish", &body, None)));
    assert_eq!(answers.iter().filter(|(s, _)| *s == 200).count(), 1, "exactly one sign-in: {answers:?}");
    assert!(answers.iter().all(|(s, e)| *s == 200 || (*s == 400 && e == "invalid_challenge")), "{answers:?}");
    assert_eq!(sessions(), before + 1, "one session for one assertion");
}

#[test]
fn an_authorization_code_issued_by_one_node_is_redeemed_at_another() {
    if skipped() {
        return;
    }
    let c = Cluster::start(2);
    let a = Site::new(c.node(0), "acme", &[]);
    let b = c.site(1, &a);
    let (mut soft, _) = a.user_with_passkey("ada@acme.test");
    let web = app(&a, "web", &[]);
    let p = pkce();

    // The whole authorization on A; the code redeemed at B.
    let (code, _) = code_flow(&a, &mut soft, "ada@acme.test", &web, &p, &[]);
    let r = exchange(&b, &web, &code, &p);
    assert_eq!(r.status, 200, "B redeems A's code: {}", r.body);
    let t = r.json();
    let (_, id) = jwt_parts(t["id_token"].as_str().unwrap());
    assert_eq!(id["iss"], a.base.as_str(), "B issues under the tenant's issuer");
    assert_eq!(id["aud"], web.client_id.as_str());
    assert_eq!(id["nonce"], "n-456");
    // B's tokens are accepted by A and by B.
    let access = t["access_token"].as_str().unwrap();
    for s in [&a, &b] {
        let info = userinfo(s, access);
        assert_eq!(info.status, 200, "{}: {}", s.base, info.body);
        assert_eq!(info.json()["email"], "ada@acme.test");
    }
    // The code was consumed for both nodes: A, which issued it, refuses it now.
    assert_refused(&exchange(&a, &web, &code, &p), 400, "invalid_grant", "A's code redeemed again at A");

    // A pending authorization request is shared too: authorize at A, sign in at B, resume at B
    // (B issues the code), redeem at A.
    let code = spread_code_flow(&a, &b, &b, &mut soft, "ada@acme.test", &web, &p);
    let r = exchange(&a, &web, &code, &p);
    assert_eq!(r.status, 200, "A redeems the code of a request it started and B completed: {}", r.body);
}

#[test]
fn twenty_parallel_redemptions_of_one_code_on_three_nodes_succeed_once() {
    if skipped() {
        return;
    }
    let c = Cluster::start(3);
    let a = Site::new(c.node(0), "acme", &[]);
    let nodes: Vec<Site> = (0..3).map(|i| c.site(i, &a)).collect();
    let (mut soft, _) = a.user_with_passkey("ada@acme.test");
    let web = app(&a, "web", &[]);
    let p = pkce();
    let (code, _) = code_flow(&a, &mut soft, "ada@acme.test", &web, &p, &[]);

    let answers = at_once(20, |k| {
        let r = exchange(&nodes[k % 3], &web, &code, &p);
        let e = error_of(&r);
        (k % 3, e, if r.status == 200 { Some(r.json()) } else { None })
    });
    let summary: Vec<(usize, &(u16, String))> = answers.iter().map(|(n, e, _)| (*n, e)).collect();
    let winners: Vec<&(usize, (u16, String), Option<Value>)> = answers.iter().filter(|a| a.2.is_some()).collect();
    assert_eq!(winners.len(), 1, "exactly one redemption succeeds: {summary:?}");
    assert!(
        answers.iter().all(|(_, (s, e), t)| t.is_some() || (*s == 400 && e == "invalid_grant")),
        "every other one is invalid_grant: {summary:?}"
    );
    let tokens = winners[0].2.as_ref().unwrap();
    eprintln!("the code was redeemed at node {}", winners[0].0);

    // The code came back after it was used: what the winner got is revoked, on every node. (A
    // loser whose claim failed reads the code's row again, locked, in the transaction that
    // revokes: the winner's commit has named the grant's family and access token there by then.)
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let access = tokens["access_token"].as_str().unwrap();
    for s in &nodes {
        let r = token(s, &web, &[("grant_type", "refresh_token"), ("refresh_token", refresh)]);
        assert_refused(&r, 400, "invalid_grant", "the winner's refresh token after the reuse of its code");
        assert_eq!(userinfo(s, access).status, 401, "the winner's access token after the reuse of its code");
    }
}

#[test]
fn refresh_token_reuse_on_another_node_revokes_the_family() {
    if skipped() {
        return;
    }
    let c = Cluster::start(2);
    let a = Site::new(c.node(0), "acme", &[]);
    let b = c.site(1, &a);
    let (mut soft, _) = a.user_with_passkey("ada@acme.test");
    let web = app(&a, "web", &[]);
    let p = pkce();
    let refresh = |s: &Site, t: &str| token(s, &web, &[("grant_type", "refresh_token"), ("refresh_token", t)]);

    let (code, _) = code_flow(&a, &mut soft, "ada@acme.test", &web, &p, &[]);
    let r0 = exchange(&a, &web, &code, &p).json()["refresh_token"].as_str().unwrap().to_owned();
    let r = refresh(&a, &r0);
    assert_eq!(r.status, 200, "rotation at A: {}", r.body);
    let r1 = r.json()["refresh_token"].as_str().unwrap().to_owned();
    assert_ne!(r1, r0);
    // The rotated-out token comes back at B: B sees that A used it and ends the family.
    assert_refused(&refresh(&b, &r0), 400, "invalid_grant", "the old refresh token reused at B");
    assert_refused(&refresh(&a, &r1), 400, "invalid_grant", "the family was revoked by B: A refuses its newest token");
    assert_refused(&refresh(&b, &r1), 400, "invalid_grant", "and so does B");

    // Ten rotations of one refresh token at once over both nodes: one succeeds; the others are
    // reuse, so the family (the winner's new token included) ends.
    let (code, _) = code_flow(&a, &mut soft, "ada@acme.test", &web, &p, &[]);
    let r0 = exchange(&b, &web, &code, &p).json()["refresh_token"].as_str().unwrap().to_owned();
    let sites = [&a, &b];
    let answers = at_once(10, |k| {
        let r = refresh(sites[k % 2], &r0);
        (error_of(&r), if r.status == 200 { r.json()["refresh_token"].as_str().map(str::to_owned) } else { None })
    });
    let winners: Vec<&String> = answers.iter().filter_map(|(_, t)| t.as_ref()).collect();
    let summary: Vec<&(u16, String)> = answers.iter().map(|(e, _)| e).collect();
    assert_eq!(winners.len(), 1, "one rotation of one refresh token: {summary:?}");
    assert!(answers.iter().all(|((s, e), t)| t.is_some() || (*s == 400 && e == "invalid_grant")), "{summary:?}");
    for s in sites {
        assert_refused(&refresh(s, winners[0]), 400, "invalid_grant", "the family ended by the concurrent reuse");
    }
}

#[test]
fn a_key_rotated_through_one_node_is_published_by_every_node_and_tokens_of_both_verify() {
    if skipped() {
        return;
    }
    let c = Cluster::start(2);
    let a = Site::new(c.node(0), "acme", &[]);
    let b = c.site(1, &a);
    let m2m = app(&a, "m2m", &[]);
    let jwks = |i: usize| c.get(i, "/acme/.well-known/jwks.json");
    let jwks_url = |i: usize| c.url(i, "/acme/.well-known/jwks.json");
    // A node's access token for the m2m app (client credentials), and the kid that signed it.
    let signed_by = |s: &Site| -> (String, String) {
        let r = token(s, &m2m, &[("grant_type", "client_credentials")]);
        assert_eq!(r.status, 200, "{}: {}", s.base, r.body);
        let at = r.json()["access_token"].as_str().unwrap().to_owned();
        let kid = jwt_parts(&at).0["kid"].as_str().unwrap().to_owned();
        (at, kid)
    };
    let (a_old, old_kid) = signed_by(&a);
    let (b_old, b_kid) = signed_by(&b);
    assert_eq!(b_kid, old_kid, "one signing key for the tenant on both nodes");
    assert_eq!(kids(&jwks(1)), vec![old_kid.clone()]);

    // Rotate through A's admin socket; A answers once the key is current (A signs with it now).
    let rotated = c.cli(0, &["key", "rotate", "--tenant", "acme", "-o", "json"]).ok().json();
    assert_eq!(rotated["state"], "current");
    let new_kid = rotated["kid"].as_str().unwrap().to_owned();
    assert_ne!(new_kid, old_kid);
    let first_look = kids(&jwks(1));
    let (_, took) = within_1s("the new key in B's JWKS", || {
        let k = kids(&jwks(1));
        if k.contains(&new_kid) && k.contains(&old_kid) { Ok(()) } else { Err(format!("{k:?}")) }
    });
    eprintln!("B published the new key after {took:?}");
    // Published before it signs: A signs with the new key as soon as the rotation returns, so
    // B's JWKS must already hold it then (else a relying party that fetched it fails to verify).
    let (a_new, kid) = signed_by(&a);
    assert_eq!(kid, new_kid, "the node that rotated signs with the new key at once");
    assert!(
        first_look.contains(&new_kid),
        "B's JWKS right after the rotation returned lacks the key A already signs with: {first_look:?}"
    );
    // B switches to signing with the new key within 1 s (meanwhile the old one is still published).
    let (b_new, took) = within_1s("B signs with the new key", || {
        let (t, kid) = signed_by(&b);
        if kid == new_kid { Ok(t) } else { Err(kid) }
    });
    eprintln!("B signed with the new key after {took:?}");

    // Each token, whoever signed it, verifies with an outside JOSE library against either node's
    // JWKS (issuer and audience checked too).
    let tokens = [("A before", &a_old), ("B before", &b_old), ("A after", &a_new), ("B after", &b_new)];
    let checks: Vec<(&str, usize, &String)> =
        tokens.iter().flat_map(|(what, t)| (0..2).map(move |i| (*what, i, *t))).collect();
    let results = at_once(checks.len(), |k| {
        let (_, i, t) = checks[k];
        node("verify-jwt.mjs", &[&jwks_url(i), t, &a.base, &m2m.client_id])
    });
    for ((what, i, _), v) in checks.iter().zip(&results) {
        assert_eq!(v["ok"], true, "token signed {what} the rotation, against node {i}'s JWKS: {v}");
    }

    // Retiring the old key through A takes it out of B's JWKS within 1 s.
    c.cli(0, &["key", "retire", "--tenant", "acme", &old_kid, "--yes"]).ok();
    within_1s("the retired key gone from B's JWKS", || {
        let k = kids(&jwks(1));
        if k == [new_kid.clone()] { Ok(()) } else { Err(format!("{k:?}")) }
    });
    let v = node("verify-jwt.mjs", &[&jwks_url(1), &a_old, &a.base, &m2m.client_id]);
    assert_eq!(v["ok"], false, "a token of the retired key no longer verifies against B: {v}");
    assert_eq!(v["code"], "ERR_JWKS_NO_MATCHING_KEY");
    assert_eq!(signed_by(&b).1, new_kid);
}

#[test]
fn a_tenant_created_or_deleted_through_one_node_is_served_so_by_the_others_within_a_second() {
    if skipped() {
        return;
    }
    let c = Cluster::start(2);
    let discovery = |i: usize, slug: &str| c.get(i, &format!("/{slug}/.well-known/openid-configuration"));

    let t = c.cli(0, &["tenant", "create", "beta", "-o", "json"]).ok().json();
    let (doc, took) = within_1s("B serves the tenant created through A", || {
        let r = discovery(1, "beta");
        if r.status == 200 { Ok(r.json()) } else { Err(format!("{} {}", r.status, r.body)) }
    });
    eprintln!("B served beta after {took:?}");
    assert_eq!(doc["issuer"], t["issuer"], "the same issuer on every node");
    assert_eq!(t["issuer"], format!("{}/beta", c.public));
    let kid = c.cli(0, &["key", "list", "--tenant", "beta", "-o", "json"]).ok().json()[0]["kid"].clone();
    assert_eq!(c.get(1, "/beta/.well-known/jwks.json").json()["keys"][0]["kid"], kid, "B publishes beta's key");

    // Any node's CLI manages the shared data: a tenant made through B is served by A.
    c.cli(1, &["tenant", "create", "gamma"]).ok();
    within_1s("A serves the tenant created through B", || {
        let r = discovery(0, "gamma");
        if r.status == 200 { Ok(()) } else { Err(format!("{} {}", r.status, r.body)) }
    });
    let slugs = |i: usize| -> Vec<String> {
        let list = c.cli(i, &["tenant", "list", "-o", "json"]).ok().json();
        list.as_array().unwrap().iter().map(|t| t["slug"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(slugs(0), ["beta", "gamma"]);
    assert_eq!(slugs(1), slugs(0));

    c.cli(0, &["tenant", "delete", "beta", "--yes"]).ok();
    let (_, took) = within_1s("B stops serving the tenant deleted through A", || {
        let r = discovery(1, "beta");
        if r.status == 404 { Ok(()) } else { Err(format!("{} {}", r.status, r.body)) }
    });
    eprintln!("B answered 404 for beta after {took:?}");
    assert_eq!(c.get(1, "/beta/.well-known/jwks.json").status, 404);
    let r = c.cli(1, &["tenant", "show", "beta"]);
    assert!(r.stderr.contains("tenant_not_found"), "{}", r.stderr);
    assert_eq!(discovery(1, "gamma").status, 200, "the other tenant stays");
}

#[test]
fn tenants_applied_through_one_node_get_one_key_each_published_by_every_node() {
    if skipped() {
        return;
    }
    let c = Cluster::start(2);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tenants.toml");
    std::fs::write(&file, (0..40).map(|i| format!("[[tenant]]\nslug = \"t{i:02}\"\n\n")).collect::<String>()).unwrap();
    c.cli(0, &["apply", "-f", file.to_str().unwrap()]).ok();
    // Served by both nodes at once, keys or not.
    assert_eq!(c.get(1, "/t39/.well-known/openid-configuration").status, 200);
    // Node 0's threads make them; what they have not reached, `key list` makes at once, through
    // either node.
    let current = "SELECT COUNT(*) FROM signing_keys WHERE alg = 'RS256' AND state = 'current'";
    let started = Instant::now();
    while c.sql().i64(current) == 0 {
        assert!(started.elapsed() < Duration::from_secs(120), "no key made in the background");
        std::thread::sleep(POLL);
    }
    for i in 0..40 {
        c.cli(i % 2, &["key", "list", "--tenant", &format!("t{i:02}")]).ok();
    }
    assert_eq!(c.sql().i64(current), 40);
    assert_eq!(c.sql().i64("SELECT COUNT(*) FROM signing_keys"), 40, "one key each, none made twice");
    // A token through node 1 for a tenant whose key node 0 made: signed by the key both publish.
    let on_a = Site { d: c.node(0), slug: "t07".into(), base: format!("{}/t07", c.public), origin: c.public.clone() };
    let site = c.site(1, &on_a);
    let m2m = app(&site, "m2m", &[]);
    let token = client_credentials(&site, &m2m);
    assert_eq!(token.status, 200, "{}", token.body);
    let (header, _) = jwt_parts(token.json()["access_token"].as_str().unwrap());
    for i in 0..2 {
        assert_eq!(kids(&c.get(i, "/t07/.well-known/jwks.json")), [header["kid"].as_str().unwrap()], "node {i}");
    }
}

#[test]
fn app_user_and_provider_changes_through_one_node_are_honoured_by_another() {
    if skipped() {
        return;
    }
    let c = Cluster::start(2);
    let a = Site::new(c.node(0), "acme", &[]);
    let b = c.site(1, &a);
    let web = app(&a, "web", &[]);
    let p = pkce();
    let page_at_b = |app: &App| get(&authorize_url(&b, app, &p, &[]), None);

    // A social provider enabled through A shows its button on B's login page; disabled through
    // A, B no longer offers it.
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("github.secret");
    std::fs::write(&secret, "gh-secret\n").unwrap();
    let button = "data-provider=\"github\"";
    assert!(!page_at_b(&web).body.contains(button));
    let args = ["social", "enable", "--tenant", "acme", "github", "--client-id", "gh-client", "--client-secret-file"];
    let mut args = args.to_vec();
    args.extend([secret.to_str().unwrap(), "--no-verify"]);
    c.cli(0, &args).ok();
    within_1s("B offers the provider enabled through A", || {
        let page = page_at_b(&web);
        if page.status == 200 && page.body.contains(button) { Ok(()) } else { Err(format!("{}", page.status)) }
    });
    c.cli(0, &["social", "disable", "--tenant", "acme", "github", "--yes"]).ok();
    within_1s("B drops the provider disabled through A", || {
        let r = get(&format!("{}/login/github?request=whatever", b.base), None);
        if r.status == 404 { Ok(()) } else { Err(format!("{} {}", r.status, r.body)) }
    });
    let page = page_at_b(&web);
    assert_eq!(page.status, 200);
    assert!(!page.body.contains(button), "no button on B's login page any more");

    // A redirect URI added through A is accepted by B's /authorize, and the whole flow on B ends
    // there; the code is redeemed at A.
    let second = App {
        client_id: web.client_id.clone(),
        secret: web.secret.clone(),
        redirect: "https://app.example.com/second-callback".into(),
    };
    let before = page_at_b(&second);
    assert_eq!(before.status, 400, "an unregistered redirect URI is refused: {}", before.body);
    c.cli(0, &["app", "update", "--tenant", "acme", &web.client_id, "--add-redirect-uri", &second.redirect]).ok();
    within_1s("B accepts the redirect URI added through A", || {
        let r = page_at_b(&second);
        if r.status == 200 { Ok(()) } else { Err(format!("{} {}", r.status, r.body)) }
    });
    let (mut soft, _) = a.user_with_passkey("ada@acme.test");
    let code = spread_code_flow(&b, &b, &b, &mut soft, "ada@acme.test", &second, &p);
    let t = exchange(&a, &second, &code, &p);
    assert_eq!(t.status, 200, "{}", t.body);
    let t = t.json();
    let b_session = b.sign_in(&mut soft, Some("ada@acme.test"), &Tamper::default()).session_cookie().unwrap();

    // A user disabled through A: B refuses the sign-in, the session and the refresh token.
    c.cli(0, &["user", "disable", "--tenant", "acme", "ada@acme.test"]).ok();
    within_1s("B refuses a user disabled through A", || {
        let options = b.auth_start(None);
        let assertion = soft.get(&options, &Tamper::default());
        let r = b.post("/auth/finish", &json!({"assertion": assertion, "challenge": options["challenge"]}), None);
        match error_of(&r) {
            (403, e) if e == "user_disabled" => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });
    assert_eq!(b.api("GET", "/api/credentials", None, &b_session, None).status, 401, "B's session ended");
    let r =
        token(&b, &web, &[("grant_type", "refresh_token"), ("refresh_token", t["refresh_token"].as_str().unwrap())]);
    assert_refused(&r, 400, "invalid_grant", "the disabled user's refresh token at B");
    assert_eq!(userinfo(&b, t["access_token"].as_str().unwrap()).status, 401);
}

// ------------------------------------------------------------------------------------------
// Killing a node: the real binary, so that it can be killed with SIGKILL.

/// An invitation through the admin socket: true only for a `201 Created` answer. A refused
/// connection (a dead node) or a cut answer is no acknowledgement.
fn invite(socket: &Path, email: &str) -> bool {
    let body = serde_json::to_vec(&json!({"email": email, "name": "Load"})).unwrap();
    let request = admin_request("POST", "/admin/v1/tenants/acme/users/invite", Some("application/json"), &body);
    let Ok(mut s) = UnixStream::connect(socket) else { return false };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    if s.write_all(&request).is_err() {
        return false;
    }
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    answer.starts_with(b"HTTP/1.1 201 ")
}

#[test]
fn killing_a_node_mid_load_loses_no_acknowledged_write() {
    if skipped() {
        return;
    }
    let shared = tempfile::tempdir().unwrap();
    let guard = store_guard(shared.path());
    let a = Node::start(shared.path(), None);
    let public = format!("http://localhost:{}", a.port);
    let mut b = Node::start(shared.path(), Some(&public));
    cli(&a.socket(), &["tenant", "create", "acme"]).ok();
    let sockets = [a.socket(), b.socket()];

    // One writer alternates invitations over A and B and records what each node acknowledged.
    // B is killed once both have acknowledged writes for a while; the writer goes on (B's share
    // now fails) until A has acknowledged as many again, for as long, after the kill.
    const PER_PHASE: usize = 25;
    const PHASE: Duration = Duration::from_millis(600);
    let acked: Mutex<Vec<(usize, String, bool)>> = Mutex::new(vec![]); // (node, email, after the kill)
    let refused = Mutex::new(vec![]);
    let killed = AtomicBool::new(false);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                let node = n % 2;
                let email = format!("load{n}@acme.test");
                let after = killed.load(Ordering::SeqCst);
                if invite(&sockets[node], &email) {
                    acked.lock().unwrap().push((node, email, after));
                } else {
                    refused.lock().unwrap().push((node, email));
                }
                n += 1;
            }
        });
        let count = |f: &dyn Fn(&(usize, String, bool)) -> bool| acked.lock().unwrap().iter().filter(|w| f(w)).count();
        let deadline = Instant::now() + Duration::from_secs(15);
        let wait = |what: &str, done: &dyn Fn() -> bool| {
            while !done() {
                if Instant::now() > deadline {
                    stop.store(true, Ordering::SeqCst);
                    panic!("{what}: the writer is stuck ({} acknowledged)", acked.lock().unwrap().len());
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        };
        let phase = Instant::now();
        wait("both nodes acknowledge writes", &|| {
            phase.elapsed() >= PHASE && count(&|w| w.0 == 1) >= PER_PHASE / 2 && count(&|_| true) >= PER_PHASE
        });
        b.kill();
        killed.store(true, Ordering::SeqCst);
        let phase = Instant::now();
        wait("A goes on acknowledging after B's death", &|| {
            phase.elapsed() >= PHASE && count(&|w| w.2 && w.0 == 0) >= PER_PHASE
        });
        stop.store(true, Ordering::SeqCst);
    });
    let acked = acked.into_inner().unwrap();
    let refused = refused.into_inner().unwrap();
    assert!(refused.iter().any(|(node, _)| *node == 1), "B's share failed after the kill: {refused:?}");
    assert!(refused.iter().all(|(node, _)| *node == 1), "only the dead node failed: {refused:?}");
    assert!(!acked.iter().any(|(node, _, after)| *node == 1 && *after), "B answered after SIGKILL?");

    // Every acknowledged invitation is in the database: the user and its invite.
    let sql = guard.store.sql();
    let stored: std::collections::HashSet<String> = sql
        .rows("SELECT u.email FROM users u JOIN invites i ON i.user_id = u.id WHERE i.purpose = 'invite'")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    let lost: Vec<&(usize, String, bool)> = acked.iter().filter(|(_, email, _)| !stored.contains(email)).collect();
    assert!(lost.is_empty(), "acknowledged writes missing from the database: {lost:?}");
    eprintln!(
        "{} writes acknowledged ({} by B before its death), {} refused, {} stored",
        acked.len(),
        acked.iter().filter(|w| w.0 == 1).count(),
        refused.len(),
        stored.len()
    );

    // The survivor still serves: its public endpoints, and the users through its admin socket.
    assert_eq!(http_get(&a.url("/acme/.well-known/openid-configuration"), None).status, 200);
    let users = cli(&a.socket(), &["user", "list", "--tenant", "acme", "-o", "json"]).ok().json();
    assert_eq!(users.as_array().unwrap().len(), stored.len(), "A lists every stored user");
    drop(a);
    drop(b);
    drop(guard);
}

/// A node whose change listener cannot reach the database may serve stale tenants and keys: it
/// says so at `/readyz` (503) after 5 s, so a balancer takes it out, and is ready again once the
/// listener is back — while its pool, and so its ping, kept working all along.
#[test]
fn a_node_whose_change_listener_is_cut_off_is_not_ready() {
    if skipped() {
        return;
    }
    let d = TestDaemon::start();
    d.tenant("acme");
    assert_eq!(d.get("/readyz").status, 200);
    let TestStore::Postgres { db, .. } = &d.store else { unreachable!("postgres run") };
    let mut admin = pg_config("postgres").connect(postgres::NoTls).expect("admin connection");
    // The listener connects beside the start, not before it: /readyz is 200 as soon as the node
    // starts (its listener counts as fresh for 5 s), so wait for the connection to be there.
    let listeners = "FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE '% listener'";
    let deadline = Instant::now() + Duration::from_secs(5);
    while admin.query(&format!("SELECT pid {listeners}"), &[db]).unwrap().is_empty() {
        assert!(Instant::now() < deadline, "the listener never connected");
        std::thread::sleep(Duration::from_millis(50));
    }
    // No new connections to the daemon's database; its pool keeps the ones it has.
    admin.batch_execute(&format!("ALTER DATABASE \"{db}\" ALLOW_CONNECTIONS false")).unwrap();
    let cut = admin.query(&format!("SELECT pg_terminate_backend(pid) {listeners}"), &[db]).unwrap();
    assert_eq!(cut.len(), 1, "one listener connection");
    let deadline = Instant::now() + Duration::from_secs(12);
    let not_ready = loop {
        let r = d.get("/readyz");
        if r.status == 503 {
            break r;
        }
        assert!(Instant::now() < deadline, "still ready: {}", r.body);
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(not_ready.json()["error"], "unavailable");
    assert!(not_ready.body.contains("other nodes' changes"), "{}", not_ready.body);
    assert!(d.metrics().lines().any(|l| l.starts_with("latchkey_cluster_listener_age_seconds ")));
    // Nor does it serve its tenants meanwhile: a key rotated out elsewhere must not verify here.
    let stale = d.get("/acme/.well-known/jwks.json");
    assert_eq!((stale.status, stale.json()["error"].as_str()), (503, Some("unavailable")), "{}", stale.body);
    admin.batch_execute(&format!("ALTER DATABASE \"{db}\" ALLOW_CONNECTIONS true")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while d.get("/readyz").status != 200 {
        assert!(Instant::now() < deadline, "not ready again after the listener could reconnect");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(d.get("/acme/.well-known/jwks.json").status, 200, "serving again once caught up");
}

/// A node that is alive (its heartbeat goes on) but does not apply a change: the admin change
/// waits for it, and when it answers anyway the node already refuses to serve, so no relying
/// party can fetch a JWKS without the key the other node signs with.
#[test]
fn a_node_that_has_not_applied_a_change_is_not_ready_when_the_change_answers() {
    if skipped() {
        return;
    }
    let c = Cluster::start(2);
    let a = Site::new(c.node(0), "acme", &[]);
    let m2m = app(&a, "m2m", &[]);
    within_1s("node B serves the tenant", || {
        let r = c.get(1, "/acme/.well-known/jwks.json");
        if r.status == 200 { Ok(()) } else { Err(r.body) }
    });
    assert_eq!(c.get(1, "/readyz").status, 200);
    c.nodes[1].hold_reloads(true);
    let started = Instant::now();
    let rotated = c.cli(0, &["key", "rotate", "--tenant", "acme", "-o", "json"]).ok().json();
    let took = started.elapsed();
    let new_kid = rotated["kid"].as_str().unwrap().to_owned();
    eprintln!("the rotation answered after {took:?} with node B holding");
    assert!(took >= Duration::from_secs(5), "the rotation did not wait for node B: {took:?}");
    // Node A signs with the new key now; node B never applied it, and says so.
    let r = token(&a, &m2m, &[("grant_type", "client_credentials")]);
    assert_eq!(r.status, 200, "{}", r.body);
    let ready = c.get(1, "/readyz");
    assert_refused(&ready, 503, "unavailable", "node B's /readyz once the change answered");
    assert!(ready.body.contains("other nodes' changes"), "{}", ready.body);
    let stale = c.get(1, "/acme/.well-known/jwks.json");
    assert_refused(&stale, 503, "unavailable", "node B's JWKS without the key A signs with");

    c.nodes[1].hold_reloads(false);
    within_1s("node B ready again once it applied the change", || {
        let r = c.get(1, "/readyz");
        if r.status == 200 { Ok(()) } else { Err(r.body) }
    });
    let jwks = c.get(1, "/acme/.well-known/jwks.json");
    assert!(kids(&jwks).contains(&new_kid), "{}", jwks.body);
}

/// The pool hands out connections without testing them first (that test was a round trip before
/// every transaction). A connection the server has closed is found by its transaction's first
/// message, and the transaction starts again on another connection: a node whose pooled
/// connections were all cut (a PostgreSQL restart, `pg_terminate_backend`) answers its next
/// reads and writes as if nothing had happened.
#[test]
fn a_node_whose_pooled_connections_were_all_closed_serves_its_next_requests() {
    if skipped() {
        return;
    }
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    // Several pings at once, so that the pool holds more than one connection.
    at_once(6, |_| assert_eq!(d.get("/readyz").status, 200));
    assert_eq!(d.get("/readyz").status, 200);
    let TestStore::Postgres { db, .. } = &d.store else { unreachable!("postgres run") };
    let mut admin = pg_config("postgres").connect(postgres::NoTls).expect("admin connection");
    let pool = "FROM pg_stat_activity WHERE datname = $1 AND application_name NOT LIKE '% listener'";
    let cut: Vec<i32> = admin
        .query(&format!("SELECT pid, pg_terminate_backend(pid) {pool}"), &[db])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(!cut.is_empty(), "the pool had connections to close");
    // Wait for those to be gone, not for none at all: a background write (the audit trail of the
    // registration above) may open a new connection meanwhile.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !admin.query("SELECT pid FROM pg_stat_activity WHERE pid = ANY($1)", &[&cut]).unwrap().is_empty() {
        assert!(Instant::now() < deadline, "the closed connections are still listed");
        std::thread::sleep(Duration::from_millis(20));
    }
    // First a sign-in, whose lookups and challenge insert run without a transaction (they meet
    // the closed connections first); then a read (the ping), a write through the admin socket,
    // and the write read back.
    let r = site.sign_in(&mut soft, Some("ada@acme.test"), &Tamper::default());
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(d.get("/readyz").status, 200);
    d.cli(&["tenant", "create", "beta"]).ok();
    let tenants = d.cli(&["tenant", "list", "-o", "json"]).ok().json();
    assert!(tenants.as_array().is_some_and(|t| t.iter().any(|t| t["slug"] == "beta")), "{tenants}");
    assert_eq!(d.get("/beta/.well-known/openid-configuration").status, 200);
}

fn client_credentials(site: &Site, app: &App) -> Http {
    token(site, app, &[("grant_type", "client_credentials")])
}

/// `app` with the new secret `app rotate-secret` through node 0 gave it.
fn rotate_secret(c: &Cluster, app: &App) -> App {
    let rotated = c.cli(0, &["app", "rotate-secret", "--tenant", "acme", &app.client_id, "-o", "json"]).ok().json();
    App { secret: rotated["client_secret"].as_str().map(str::to_owned), ..app.clone() }
}

/// The client-credentials grant finds its application in memory on every node. A secret
/// rotated, an application deleted through one node: once the command has answered, every node
/// refuses the old secret, whose application it had just served from memory, and the node that
/// made the change at once.
#[test]
fn a_client_secret_rotated_through_one_node_is_refused_by_every_node_at_once() {
    if skipped() {
        return;
    }
    let c = Cluster::start(2);
    let a = Site::new(c.node(0), "acme", &[]);
    let b = c.site(1, &a);
    let m2m = app(&a, "m2m", &[]);
    let grant = client_credentials;
    for site in [&a, &b] {
        for _ in 0..3 {
            assert_eq!(grant(site, &m2m).status, 200, "served before the rotation");
        }
    }
    let new = rotate_secret(&c, &m2m);
    for site in [&a, &b] {
        assert_refused(&grant(site, &m2m), 401, "invalid_client", "the old secret after the rotation");
        assert_eq!(grant(site, &new).status, 200, "the new secret");
    }
    c.cli(0, &["app", "delete", "--tenant", "acme", &m2m.client_id, "--yes"]).ok();
    for site in [&a, &b] {
        assert_refused(&grant(site, &new), 401, "invalid_client", "a deleted application");
    }
}

/// A node whose change listener cannot reach the database stops trusting the applications it
/// keeps in memory within a second: it reads them from the database again (its pool still
/// works), so a secret rotated through another node is refused there too. The rotation itself
/// waits for the node, and answers once the node refuses every tenant request (out of step).
#[test]
fn a_node_cut_off_from_other_nodes_changes_reads_applications_from_the_database() {
    if skipped() {
        return;
    }
    let c = Cluster::start(2);
    let a = Site::new(c.node(0), "acme", &[]);
    let b = c.site(1, &a);
    let m2m = app(&a, "m2m", &[]);
    let grant = client_credentials;
    assert_eq!(grant(&b, &m2m).status, 200);
    assert_eq!(grant(&b, &m2m).status, 200, "now from B's memory");
    let TestStore::Postgres { db, .. } = &c.node(1).store else { unreachable!("postgres run") };
    let mut admin = pg_config("postgres").connect(postgres::NoTls).expect("admin connection");
    // Both nodes run in this process under one application name: B's listener is the one that
    // connected last (B started after A). New connections are refused meanwhile, so that it
    // cannot come back; both pools keep the connections they have.
    admin.batch_execute(&format!("ALTER DATABASE \"{db}\" ALLOW_CONNECTIONS false")).unwrap();
    let cut = admin
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE pid = (SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE '% listener'
                          ORDER BY backend_start DESC LIMIT 1)",
            &[db],
        )
        .unwrap();
    assert_eq!(cut.len(), 1, "B's listener connection");
    let new = std::thread::scope(|s| {
        let rotation = s.spawn(|| rotate_secret(&c, &m2m));
        // The secret changes when the rotation commits, before it waits for node B.
        std::thread::sleep(Duration::from_millis(300));
        within_1s("B refuses the secret rotated through A", || {
            let r = grant(&b, &m2m);
            if r.status == 401 { Ok(()) } else { Err(format!("{} {}", r.status, r.body)) }
        });
        rotation.join().expect("rotation")
    });
    let r = grant(&b, &new);
    assert_refused(&r, 503, "unavailable", "B, out of step when the rotation answered");
    admin.batch_execute(&format!("ALTER DATABASE \"{db}\" ALLOW_CONNECTIONS true")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while grant(&b, &new).status != 200 {
        assert!(Instant::now() < deadline, "B never served the new secret once its listener could reconnect");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn back_channel_logouts_from_three_nodes_are_delivered_once_each() {
    // Every node runs the delivery loop; one at a time takes due rows (and leases them), so each
    // logout token goes out once, whichever node ended the session.
    if skipped() {
        return;
    }
    let c = Cluster::start(3);
    let a = Site::new(c.node(0), "acme", &[]);
    let sites = [c.site(1, &a), c.site(2, &a)];
    let rx = crate::backchannel::Receiver::start();
    let web = app(&a, "web", &["--backchannel-logout-uri", &rx.url("/bcl")]);
    let p = pkce();
    let mut sids = vec![];
    for i in 0..6 {
        let email = format!("user{i}@acme.test");
        let (mut soft, _) = a.user_with_passkey(&email);
        let (code, cookie) = code_flow(&a, &mut soft, &email, &web, &p, &[]);
        let id_token = exchange(&a, &web, &code, &p).json()["id_token"].as_str().unwrap().to_owned();
        sids.push(jwt_parts(&id_token).1["sid"].as_str().unwrap().to_owned());
        // Logged out at node 0, 1, 2, 0, …
        let at = if i % 3 == 0 { &a } else { &sites[i % 3 - 1] };
        let out = get(&format!("{}/logout?{}", at.base, query(&[("id_token_hint", &id_token)])), Some(&cookie));
        assert!(matches!(out.status, 200 | 302), "{}", out.body);
    }
    let got = crate::backchannel::wait_tokens(&rx, 6, 20);
    std::thread::sleep(Duration::from_secs(3));
    let got_now = crate::backchannel::tokens(&rx);
    assert_eq!(got_now.len(), 6, "once each, none twice: {got:?}");
    let mut delivered: Vec<String> =
        got_now.iter().map(|(_, t)| jwt_parts(t).1["sid"].as_str().unwrap().to_owned()).collect();
    delivered.sort();
    sids.sort();
    assert_eq!(delivered, sids);
}

/// A DPoP proof and a private_key_jwt client assertion accepted by one node are refused by the
/// other (their `jti`s are recorded in the shared database), and a DPoP nonce issued by one node
/// is accepted by the other (nonces are derived from the shared key-encryption key).
#[test]
fn proofs_and_client_assertions_are_accepted_once_across_nodes() {
    if skipped() {
        return;
    }
    let c = Cluster::start(2);
    let a = Site::new(c.node(0), "acme", &[]);
    let b = c.site(1, &a);
    let key = holder(latchkey::admin::SigningAlg::ES256);
    let jwks = c.node(0).dir.path().join("jwks.json");
    std::fs::write(&jwks, serde_json::json!({"keys": [key.jwk]}).to_string()).unwrap();
    let args = ["--token-auth", "private_key_jwt", "--jwks", jwks.to_str().unwrap(), "--require-dpop"];
    let m2m = app(&a, "m2m", &args);
    let htu = format!("{}/token", a.base);
    let now = latchkey_domain::clock::Clock::now(&*c.node(0).clock);
    let new_assertion = || {
        let claims = serde_json::json!({
            "iss": m2m.client_id, "sub": m2m.client_id, "aud": htu, "exp": now + 60, "jti": random_jti(),
        });
        key.sign(&serde_json::json!({"alg": "ES256"}), &claims)
    };
    let assertion = new_assertion();
    let post = |site: &Site, proof: &str, assertion: &str| {
        let form = [
            ("grant_type", "client_credentials"),
            ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
            ("client_assertion", assertion),
        ];
        let body = query(&form).into_bytes();
        send_raw(
            "POST",
            &format!("{}/token", site.base),
            Some("application/x-www-form-urlencoded"),
            body,
            &[("DPoP", proof)],
        )
    };
    // Node 0's nonce, used at node 1.
    let first = post(&a, &key.proof(c.node(0), "POST", &htu, serde_json::json!({})), &new_assertion());
    assert_refused(&first, 400, "use_dpop_nonce", "a proof without the nonce an app that requires DPoP needs");
    let nonce = first.header("DPoP-Nonce").unwrap().to_owned();
    let proof = key.proof(c.node(0), "POST", &htu, serde_json::json!({"nonce": nonce}));
    let r = post(&b, &proof, &assertion);
    assert_eq!((r.status, r.json()["token_type"].as_str()), (200, Some("DPoP")), "{}", r.body);
    // The same proof (with a fresh assertion) and the same assertion (with a fresh proof) at node 0.
    assert_refused(&post(&a, &proof, &new_assertion()), 400, "invalid_dpop_proof", "a proof replayed at another node");
    let fresh_proof = key.proof(c.node(0), "POST", &htu, serde_json::json!({"nonce": nonce}));
    assert_refused(&post(&a, &fresh_proof, &assertion), 401, "invalid_client", "an assertion replayed at another node");
}
