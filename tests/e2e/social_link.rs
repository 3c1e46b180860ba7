//! Linking a social account from the account page (SPEC §6): a POST from the tenant's own page,
//! only within ten minutes of a passkey sign-in in that session; the callback and the
//! confirmation belong to that session; nothing is linked before the user confirms the account
//! the page names; every new link is audited with its upstream subject; a recovery unlinks all.

use crate::oidc_support::{app, authorize_url, get, pkce, request_id};
use crate::social::{
    PEOPLE, app_sign_in, audit_outcomes, cookie_value, decide, form_token, github, last_social_detail, link,
    link_through_provider, oidc, refused, through_provider,
};
use crate::support::*;
use crate::upstream::GithubEmail;

/// The people and their ways in: users, sessions, invitations, passkeys, links and links waiting
/// for confirmation.
fn people(d: &TestDaemon) -> DbSnapshot {
    d.snapshot_of(&[PEOPLE, &["social_pending_links"]].concat())
}

fn error_code(r: &Http) -> Option<String> {
    r.json()["error"].as_str().map(str::to_owned)
}

fn linked(site: &Site, session: &str, provider: &str) -> bool {
    let list = site.api("GET", "/api/social", None, session, None);
    assert_eq!(list.status, 200, "{}", list.body);
    list.json().as_array().unwrap().iter().any(|p| p["provider"] == provider && p["linked"] == true)
}

fn sign_out(site: &Site, session: &str) {
    let url = format!("{}/logout", site.base);
    let headers = [("Cookie", session), ("Origin", site.origin.as_str())];
    let r = send_raw("POST", &url, Some("application/x-www-form-urlencoded"), vec![], &headers);
    assert!(r.status < 400, "{}: {}", r.status, r.body);
}

#[test]
fn linking_is_a_post_from_the_tenants_page_and_waits_for_the_users_confirmation() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, session) = site.user_with_passkey("ada@acme.test");
    let gh = github(&d, &[]);
    gh.set_emails(vec![GithubEmail { email: "ada@personal.test".into(), primary: true, verified: true }]);
    let before = d.snapshot();

    // The old GET, which any page could make the browser follow, starts nothing.
    let old = get(&format!("{}/login/github?link=1", site.base), Some(&session));
    assert_eq!(old.status, 400, "{}", old.body);
    assert!(old.body.contains("Link button of your account page"), "{}", old.body);
    // A POST without the tenant's Origin (another site's form, or no browser page at all) or
    // without a session starts nothing either.
    for origin in [None, Some("https://evil.example")] {
        let r = site.api("POST", "/api/social/github", None, &session, origin);
        assert_eq!((r.status, error_code(&r).as_deref()), (403, Some("origin_not_allowed")), "{origin:?}");
    }
    let url = format!("{}/api/social/github", site.base);
    let r = send_raw("POST", &url, None, vec![], &[("Origin", site.origin.as_str())]);
    assert_eq!((r.status, error_code(&r).as_deref()), (401, Some("login_required")));
    let r = site.api("POST", "/api/social/nobody", None, &session, Some(&site.origin));
    assert_eq!((r.status, error_code(&r).as_deref()), (404, Some("provider_not_found")));
    assert_eq!(d.snapshot(), before, "nothing stored");

    // The Link button: the provider, then a page naming the GitHub account, and nothing linked.
    let page = link_through_provider(&site, "github", &session);
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.header("content-type").unwrap().starts_with("text/html"));
    assert!(page.body.contains("Link your GitHub account?"), "{}", page.body);
    assert!(page.body.contains("<strong id=\"upstream-account\">octo-ada</strong>"), "{}", page.body);
    // Its form's POST must carry the page's Origin (browsers send `null` under no-referrer).
    assert!(page.body.contains("<meta name=\"referrer\" content=\"same-origin\">"), "{}", page.body);
    assert!(!linked(&site, &session, "github"), "not linked before the user confirms");
    assert_eq!(d.sql().i64("SELECT count(*) FROM social_pending_links"), 1);
    let token = form_token(&page);

    // The answer must come from the tenant's own page, in the session that started the link.
    let other = site.sign_in(&mut soft, Some("ada@acme.test"), &Default::default()).session_cookie().unwrap();
    let waiting = d.snapshot();
    let origin = site.origin.clone();
    for (cookie, from, token, decision, status) in [
        (&session, None, token.as_str(), "confirm", 403),
        (&session, Some("https://evil.example"), token.as_str(), "confirm", 403),
        (&other, Some(origin.as_str()), token.as_str(), "confirm", 400),
        (&session, Some(origin.as_str()), "forged-token", "confirm", 400),
        (&session, Some(origin.as_str()), token.as_str(), "maybe", 400),
    ] {
        let r = decide(&site, "github", cookie, token, decision, from);
        assert_eq!(r.status, status, "{from:?} {decision}: {}", r.body);
        assert!(r.header("content-type").unwrap().starts_with("text/html"));
        assert_eq!(d.snapshot(), waiting, "{from:?} {decision}: nothing changed");
    }

    // Confirm: linked, audited with the upstream subject, back on the account page.
    let done = decide(&site, "github", &session, &token, "confirm", Some(&origin));
    assert_eq!(done.status, 303, "{}", done.body);
    assert!(done.header("location").unwrap().ends_with("/acme/account"));
    assert!(linked(&site, &session, "github"));
    assert_eq!(d.sql().i64("SELECT count(*) FROM social_pending_links"), 0);
    assert_eq!(audit_outcomes(&d).last().unwrap(), &("social.link".to_owned(), "success".to_owned()));
    let detail = last_social_detail(&d);
    assert!(detail.contains("github: subject 583231") && detail.contains("octo-ada"), "{detail}");
    // Used once.
    let linked_now = d.snapshot();
    let replay = decide(&site, "github", &session, &token, "confirm", Some(&origin));
    assert_eq!(replay.status, 400, "{}", replay.body);
    assert!(replay.body.contains("expired or was already used"), "{}", replay.body);
    assert_eq!(d.snapshot(), linked_now);
    // Linked already: another link to GitHub is refused at the start.
    let again = site.api("POST", "/api/social/github", None, &session, Some(&origin));
    assert_eq!((again.status, error_code(&again).as_deref()), (409, Some("already_linked")));
    assert_eq!(d.snapshot(), linked_now);

    // Cancel forgets the account.
    assert_eq!(site.api("DELETE", "/api/social/github", None, &session, Some(&origin)).status, 204);
    let page = link_through_provider(&site, "github", &session);
    let cancelled = decide(&site, "github", &session, &form_token(&page), "cancel", Some(&origin));
    assert_eq!(cancelled.status, 303, "{}", cancelled.body);
    assert!(!linked(&site, &session, "github"));
    assert_eq!(d.sql().i64("SELECT count(*) FROM social_pending_links"), 0);
}

#[test]
fn linking_needs_a_passkey_sign_in_in_the_last_ten_minutes() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, session) = site.user_with_passkey("ada@acme.test");
    let _gh = github(&d, &[]);
    let _sso = oidc(&d, "oidc", &[]);
    let origin = site.origin.clone();

    // Ten minutes and a second after the passkey: the page must ask for the passkey again.
    d.clock.advance(601);
    let before = d.snapshot();
    let r = site.api("POST", "/api/social/github", None, &session, Some(&origin));
    assert_eq!((r.status, error_code(&r).as_deref()), (403, Some("passkey_required")), "{}", r.body);
    assert!(r.json()["error_description"].as_str().unwrap().contains("passkey"), "{}", r.body);
    assert!(cookie_value(&r, "latchkey_social").is_none());
    assert_eq!(d.snapshot(), before, "nothing stored");
    assert_eq!(audit_outcomes(&d).last().unwrap(), &("social.link".to_owned(), "failure: passkey_required".to_owned()));

    // The account page's step-up: the same user's passkey again (/auth/start, /auth/finish), a
    // session with a fresh passkey time, and linking goes on.
    let fresh = site.sign_in(&mut soft, Some("ada@acme.test"), &Default::default());
    assert_eq!(fresh.status, 200, "{}", fresh.body);
    let fresh = fresh.session_cookie().unwrap();
    link(&site, "github", &fresh);
    assert!(linked(&site, &fresh, "github"));

    // A session opened by a social sign-in is no passkey sign-in, however recent.
    let web = app(&site, "web", &[]);
    let id = request_id(&get(&authorize_url(&site, &web, &pkce(), &[]), None));
    let by_github = through_provider(&site, "github", &format!("request={id}"), None).session_cookie().unwrap();
    let before = d.snapshot();
    let r = site.api("POST", "/api/social/work-sso", None, &by_github, Some(&origin));
    assert_eq!((r.status, error_code(&r).as_deref()), (403, Some("passkey_required")), "{}", r.body);
    assert_eq!(d.snapshot(), before);
}

#[test]
fn the_callback_and_the_confirmation_belong_to_the_session_that_started_the_link() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, session) = site.user_with_passkey("ada@acme.test");
    let _gh = github(&d, &[]);
    let origin = site.origin.clone();
    // Up to the provider's answer, by hand, to change the session before the callback.
    let to_callback = |cookie: &str| {
        let start = site.api("POST", "/api/social/github", None, cookie, Some(&origin));
        assert_eq!(start.status, 200, "{}", start.body);
        let binding = cookie_value(&start, "latchkey_social").unwrap();
        let back = get(start.json()["redirect"].as_str().unwrap(), None);
        (back.header("location").unwrap().to_owned(), binding)
    };
    let expect_ended = |r: &Http| {
        assert_eq!(r.status, 401, "{}", r.body);
        assert!(r.body.contains("The session that started linking has ended"), "{}", r.body);
    };

    // The browser comes back with another session (signed in again meanwhile).
    let (back, binding) = to_callback(&session);
    let other = site.sign_in(&mut soft, Some("ada@acme.test"), &Default::default()).session_cookie().unwrap();
    let before = people(&d);
    expect_ended(&get(&back, Some(&format!("{other}; {binding}"))));
    assert_eq!(people(&d), before, "nothing kept, nothing linked");

    // The session ended (signed out) before the provider answered.
    let (back, binding) = to_callback(&other);
    sign_out(&site, &other);
    let before = people(&d);
    expect_ended(&get(&back, Some(&format!("{other}; {binding}"))));
    assert_eq!(people(&d), before, "nothing kept, nothing linked");
    let (action, outcome) = audit_outcomes(&d).pop().unwrap();
    assert_eq!((action.as_str(), outcome.as_str()), ("social.login", "failure: login_required"));

    // Signed out on the confirmation page: the account waiting there goes with the session.
    let page = link_through_provider(&site, "github", &session);
    assert_eq!(page.status, 200, "{}", page.body);
    sign_out(&site, &session);
    let before = d.snapshot();
    let r = decide(&site, "github", &session, &form_token(&page), "confirm", Some(&origin));
    assert_eq!(r.status, 401, "{}", r.body);
    assert_eq!(d.snapshot(), before);
    assert_eq!(d.sql().i64("SELECT count(*) FROM social_links"), 0, "nothing linked");
}

#[test]
fn a_recovery_removes_the_users_social_links() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (_, session) = site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    // Someone with Ada's session (and her passkey) links a GitHub account of theirs.
    let gh = github(&d, &[]);
    gh.set_emails(vec![GithubEmail { email: "mallory@elsewhere.test".into(), primary: true, verified: true }]);
    link(&site, "github", &session);
    assert!(app_sign_in(&site, &web, "github").is_ok(), "the GitHub account signs in as Ada");

    // Ada recovers her account with a new passkey: the link is gone with her other sessions.
    let token = site.recover("ada@acme.test");
    let mut fresh = crate::authenticator::Soft::new(&site.origin);
    let r = site.register(&mut fresh, "ada@acme.test", Some(&token), None, &Default::default());
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(d.sql().i64("SELECT count(*) FROM social_links"), 0);
    refused(&d, &site, &web, "github", 403, "no_account");
}

#[test]
fn chromium_links_a_provider_after_the_account_pages_passkey_step_up() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let token = site.invite("ada@acme.test", "Ada");
    let _gh = github(&d, &[]);
    let sso = oidc(&d, "oidc", &[]);
    sso.set_user(crate::upstream::UpstreamUser {
        sub: "work-1".into(),
        email: "ada.lovelace@work.test".into(),
        email_verified: true,
        name: "Ada".into(),
        hd: None,
    });
    let out = node("social-link.mjs", &[&format!("{}/invite/{token}", site.base), "work-sso"]);
    assert!(out.get("error").is_none(), "{out}");
    assert!(out["asked"].as_str().unwrap().contains("confirm it is you with your passkey"), "{out}");
    assert_eq!(out["confirmHeading"], "Link your Work SSO account?", "{out}");
    assert_eq!(out["confirmAccount"], "ada.lovelace@work.test", "{out}");
    assert_eq!(out["linked"], serde_json::json!([["github", true], ["work-sso", true]]), "{out}");
    assert_eq!(out["consoleErrors"], serde_json::json!([]), "{out}");
    let links = d.sql().rows("SELECT provider, subject FROM social_links ORDER BY provider");
    assert_eq!(links, [["github", "583231"], ["work-sso", "work-1"]]);
}
