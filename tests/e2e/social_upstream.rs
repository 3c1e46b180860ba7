//! Hostile or sloppy upstream providers (SPEC §6): discovery documents naming endpoints that are
//! not the issuer's own, failures at the start of a flow, ID tokens for several audiences, and
//! verified addresses that are no addresses. Each is refused with nothing stored, and audited.

use crate::oidc_support::{App, app, authorize_url, get, pkce, request_id};
use crate::social::{PEOPLE, app_sign_in, audit_outcomes, enable, github, last_social_detail, oidc, refused};
use crate::support::*;
use crate::upstream::{GithubEmail, OidcKnobs, OidcStandin, Recorder, UpstreamUser};

/// Enables the OIDC provider "Work SSO" at a new stand-in with these knobs (a new issuer: the
/// daemon caches the discovery documents it accepted).
fn provider_with(d: &TestDaemon, knobs: OidcKnobs) -> OidcStandin {
    let op = OidcStandin::start("op-client", "upstream-secret");
    op.set_knobs(knobs);
    // Saved without `social enable`'s own check: these tests are about the flow's checks.
    enable(d, &["oidc", "--client-id", "op-client", "--issuer", &op.issuer, "--name", "Work SSO", "--no-verify"]);
    op
}

/// The provider's button on an application's login page, refused before the browser leaves:
/// a page, no browser-binding cookie, nothing stored, the refusal audited with its cause.
fn refused_at_start(d: &TestDaemon, site: &Site, web: &App, provider: &str) -> String {
    let page = get(&authorize_url(site, web, &pkce(), &[]), None);
    assert_eq!(page.status, 200, "{}", page.body);
    let id = request_id(&page);
    let before = d.snapshot();
    let r = get(&format!("{}/login/{provider}?request={id}", site.base), None);
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    assert!(r.body.contains("did not confirm who you are"), "{}", r.body);
    assert!(r.set_cookie().is_none(), "no flow started");
    assert_eq!(d.snapshot(), before, "nothing stored");
    let last = audit_outcomes(d).pop().unwrap();
    assert_eq!(last, ("social.login".to_owned(), "failure: upstream_refused".to_owned()));
    last_social_detail(d)
}

#[test]
fn discovery_endpoints_off_the_issuers_origin_are_refused_before_any_request_to_them() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    site.invite("ada@acme.test", "Ada");
    let web = app(&site, "web", &[]);
    // Another port of the same loopback host: where the daemon sent the code and the client
    // secret before this was checked.
    let thief = Recorder::start();
    for (knobs, named) in [
        (OidcKnobs { token_endpoint: Some(format!("{}/token", thief.url)), ..Default::default() }, "token_endpoint"),
        (OidcKnobs { jwks_uri: Some(format!("{}/jwks", thief.url)), ..Default::default() }, "jwks_uri"),
        (
            OidcKnobs { token_endpoint: Some("https://evil.example/token".into()), ..Default::default() },
            "token_endpoint",
        ),
    ] {
        let _op = provider_with(&d, knobs);
        let detail = refused_at_start(&d, &site, &web, "work-sso");
        assert!(detail.starts_with("work-sso: discovery_endpoint_refused: "), "{detail}");
        assert!(detail.contains(named) && detail.contains("not at the issuer's own origin"), "{detail}");
    }
    assert!(thief.log().is_empty(), "nothing was sent there: {:?}", thief.log());
    // The same provider with its own endpoints signs Ada in.
    let _op = provider_with(&d, OidcKnobs::default());
    assert!(app_sign_in(&site, &web, "work-sso").is_ok());
}

#[test]
fn failures_at_the_start_of_a_flow_are_audited_with_their_cause() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let web = app(&site, "web", &[]);
    // Discovery names another issuer (a long one: the audited cause is bounded).
    let other = format!("https://other.example/{}", "x".repeat(1000));
    let _op = provider_with(&d, OidcKnobs { discovery_issuer: Some(other), ..Default::default() });
    let detail = refused_at_start(&d, &site, &web, "work-sso");
    assert!(detail.starts_with("work-sso: discovery_mismatch: discovery names issuer"), "{detail}");
    assert!(detail.chars().count() <= "work-sso: ".len() + 300, "bounded: {} chars", detail.chars().count());
    // A provider that does not answer.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let issuer = format!("http://127.0.0.1:{closed}");
    enable(&d, &["oidc", "--client-id", "op-client", "--issuer", &issuer, "--name", "Work SSO", "--no-verify"]);
    let detail = refused_at_start(&d, &site, &web, "work-sso");
    assert!(detail.starts_with("work-sso: provider_unreachable: "), "{detail}");
}

#[test]
fn an_id_token_for_several_audiences_needs_azp_naming_this_client() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    site.invite("ada@acme.test", "Ada");
    let web = app(&site, "web", &[]);
    let op = oidc(&d, "oidc", &[]);
    for (knobs, reason) in [
        (OidcKnobs { extra_audience: true, no_azp: true, ..Default::default() }, "2 audiences and no azp"),
        (OidcKnobs { extra_audience: true, azp: Some("another-party".into()), ..Default::default() }, "azp"),
        (OidcKnobs { azp: Some("another-party".into()), ..Default::default() }, "azp \"another-party\""),
    ] {
        op.set_knobs(knobs);
        refused(&d, &site, &web, "work-sso", 403, "upstream_refused");
        let detail = last_social_detail(&d);
        assert!(detail.contains("invalid_id_token") && detail.contains(reason), "{reason}: {detail}");
    }
    // One audience needs no azp; several are fine with azp naming this client.
    op.set_knobs(OidcKnobs { no_azp: true, ..Default::default() });
    assert!(app_sign_in(&site, &web, "work-sso").is_ok());
    op.set_knobs(OidcKnobs { extra_audience: true, ..Default::default() });
    assert!(app_sign_in(&site, &web, "work-sso").is_ok());
}

#[test]
fn an_upstream_address_is_checked_as_an_invitations_wherever_it_is_used() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &["--registration", "open"]);
    site.invite("ada@acme.test", "Ada");
    let web = app(&site, "web", &[]);
    // The review's case: a verified `a@b@example.com` passed `--allowed-domain example.com` and
    // `--create-users` made a user of it.
    let gh = github(&d, &["--create-users", "--allowed-domain", "example.com"]);
    for bad in ["a@b@example.com", "ada@example.com\r\nBcc: all@example.com", "@example.com", "ada@exa mple.com"] {
        gh.set_emails(vec![GithubEmail { email: bad.into(), primary: true, verified: true }]);
        refused(&d, &site, &web, "github", 403, "invalid_email");
    }
    // Matching an existing user by the address is no different.
    let op = oidc(&d, "oidc", &[]);
    op.set_user(UpstreamUser {
        sub: "s-1".into(),
        email: "ada@acme.test@evil.test".into(),
        email_verified: true,
        name: "Ada".into(),
        hd: None,
    });
    refused(&d, &site, &web, "work-sso", 403, "invalid_email");
    assert_eq!(d.sql().i64("SELECT count(*) FROM users"), 1, "only the invited user");
    // A valid address goes through.
    gh.set_emails(vec![GithubEmail { email: "new@example.com".into(), primary: true, verified: true }]);
    let before = d.snapshot_of(PEOPLE);
    assert!(app_sign_in(&site, &web, "github").is_ok());
    assert_ne!(d.snapshot_of(PEOPLE), before);
    let made = d.cli(&["user", "show", "--tenant", "acme", "new@example.com", "-o", "json"]).ok().json();
    assert_eq!(made["status"], "active");
}
