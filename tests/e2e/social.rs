//! Social login: `latchkey social enable|list|disable` through the real CLI; secrets from files
//! and standard input, sealed at rest, never printed.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::support::*;

pub(crate) fn secret_file(dir: &std::path::Path, text: &str) -> String {
    let p = dir.join("provider.secret");
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_owned()
}

#[test]
fn providers_are_enabled_listed_and_disabled_with_sealed_secrets() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let dir = tempfile::tempdir().unwrap();
    let file = secret_file(dir.path(), "gh-very-secret-value\n");
    let enabled = d
        .cli(&[
            "social",
            "enable",
            "--tenant",
            "acme",
            "github",
            "--client-id",
            "Iv1.abc",
            "--client-secret-file",
            &file,
            "--allowed-org",
            "acme",
            // No GitHub here: saved without reading its API (see `a_provider_that_does_not_answer…`).
            "--no-verify",
            "-o",
            "json",
        ])
        .ok();
    assert!(!enabled.stdout.contains("gh-very-secret-value") && !enabled.stderr.contains("gh-very-secret-value"));
    let p = enabled.json();
    assert_eq!(p["provider"], "github");
    assert_eq!(p["callback_url"], format!("{}/acme/login/github/callback", d.base));

    // The secret on standard input, for an OIDC provider keyed by its label.
    let mut child = Command::new(bin("latchkey"))
        .args([
            "social",
            "enable",
            "--tenant",
            "acme",
            "oidc",
            "--name",
            "Work SSO",
            "--issuer",
            "https://sso.example.com",
            "--client-id",
            "cid",
            "--client-secret-file",
            "-",
            "--no-verify",
        ])
        .env("LATCHKEY_ADMIN_SOCKET", &d.socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"oidc-secret-from-stdin\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("/login/work-sso/callback"), "the redirect URI to register is shown: {said}");

    let list = d.cli(&["social", "list", "--tenant", "acme", "-o", "json"]).ok();
    assert!(!list.stdout.contains("secret-value") && !list.stdout.contains("from-stdin"), "{}", list.stdout);
    let keys: Vec<String> =
        list.json().as_array().unwrap().iter().map(|p| p["provider"].as_str().unwrap().into()).collect();
    assert_eq!(keys, ["github", "work-sso"]);
    // The table's RESTRICTED TO and CALLBACK URL columns are fields too, each once.
    let github = &list.json()[0];
    assert_eq!(github["restricted_to"], serde_json::json!(["acme"]));
    assert_eq!(github["callback_url"], format!("{}/acme/login/github/callback", d.base));
    assert_eq!(github.get("redirect_uri"), None, "not twice under two names: {github}");

    // Sealed at rest: neither secret appears in the database file's column.
    let sealed: Vec<Vec<u8>> =
        d.sql().rows("SELECT secret_sealed FROM social_providers").iter().map(|r| unhex(&r[0])).collect();
    for s in &sealed {
        let text = String::from_utf8_lossy(s);
        assert!(!text.contains("gh-very-secret-value") && !text.contains("oidc-secret-from-stdin"));
    }

    // The login page of a tenant with providers is covered by the flow tests. Disabling is
    // `social disable --tenant T PROVIDER`, no confirmation asked (--yes is still accepted).
    let out = d.cli(&["social", "disable", "--tenant", "acme", "github"]).ok();
    assert!(out.stdout.contains("Disabled"), "{}", out.stdout);
    let list = d.cli(&["social", "list", "--tenant", "acme", "-o", "json"]).ok().json();
    assert_eq!(list.as_array().unwrap().len(), 1);
    let r = d.cli(&["social", "disable", "--tenant", "acme", "github", "--yes"]);
    assert_eq!(r.code, 1, "already disabled: {}", r.stderr);
}

#[test]
fn refused_providers_change_nothing() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let dir = tempfile::tempdir().unwrap();
    let file = secret_file(dir.path(), "s3cret");
    let before = d.snapshot();
    for (args, code, said) in [
        (vec!["facebook"], 1, "facebook login is coming soon and not available"),
        (vec!["twitter"], 1, "twitter login is coming soon and not available"),
        (vec!["myspace", "--client-id", "x", "--client-secret-file", &file], 2, "invalid value"),
        (vec!["oidc", "--client-id", "x", "--client-secret-file", &file], 1, "--name is required"),
        (vec!["google", "--client-id", "x", "--client-secret-file", &file, "--create-users"], 1, "open registration"),
        (
            vec!["google", "--client-id", "x", "--client-secret-file", &file, "--issuer", "http://evil.example"],
            1,
            "https",
        ),
        (vec!["github", "--client-id", "x", "--client-secret-file", "/no/such/file"], 2, "/no/such/file"),
        (vec!["github", "--client-id", "x"], 2, "--client-secret-file"),
    ] {
        let mut all = vec!["social", "enable", "--tenant", "acme"];
        all.extend(args.iter().copied());
        let r = d.cli(&all);
        assert_eq!(r.code, code, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(said), "{args:?}: {}", r.stderr);
    }
    assert_eq!(d.snapshot(), before, "nothing stored");
    let r = d.cli(&["social", "disable", "--tenant", "acme", "google", "--yes"]);
    assert!(r.stderr.contains("provider_not_found"), "{}", r.stderr);
}

#[test]
fn a_provider_that_does_not_answer_is_refused_unless_no_verify() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let dir = tempfile::tempdir().unwrap();
    let file = secret_file(dir.path(), "s3cret");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let issuer = format!("http://127.0.0.1:{closed}");
    let api = format!("http://127.0.0.1:{closed}/api");
    let oidc =
        ["social", "enable", "--tenant", "acme", "oidc", "--name", "SSO", "--issuer", &issuer, "--client-id", "x"];
    let github = ["social", "enable", "--tenant", "acme", "github", "--github-api-url", &api, "--client-id", "x"];
    let before = d.snapshot();
    for args in [&oidc[..], &github[..]] {
        let mut all = args.to_vec();
        all.extend(["--client-secret-file", &file]);
        let r = d.cli(&all);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("provider_unreachable") && r.stderr.contains("--no-verify"), "{}", r.stderr);
    }
    assert_eq!(d.snapshot(), before, "nothing stored");
    let mut all = oidc.to_vec();
    all.extend(["--client-secret-file", &file, "--no-verify"]);
    d.cli(&all).ok();
    let list = d.cli(&["social", "list", "--tenant", "acme", "-o", "json"]).ok().json();
    assert_eq!(list.as_array().unwrap().len(), 1, "saved with --no-verify: {list}");
    // A stand-in provider that answers is checked and saved.
    let gh = crate::upstream::GithubStandin::start("gh", "upstream-secret");
    enable(&d, &["github", "--client-id", "gh", "--github-url", &gh.web_url, "--github-api-url", &gh.api_url]);
}

#[test]
fn a_provider_of_another_tenant_does_nothing_here() {
    let d = TestDaemon::start();
    d.tenant("acme");
    d.tenant("beta");
    let dir = tempfile::tempdir().unwrap();
    let file = secret_file(dir.path(), "s3cret");
    d.cli(&[
        "social",
        "enable",
        "--tenant",
        "acme",
        "github",
        "--client-id",
        "x",
        "--client-secret-file",
        &file,
        "--no-verify",
    ])
    .ok();
    let r = http_get(&format!("{}/beta/login/github?request=whatever", d.base), None);
    assert_eq!(r.status, 404, "{}", r.body);
    assert!(r.body.contains("not available here"), "{}", r.body);
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
}

// ------------------------------------------------------------------------------------------
// Flows against the stand-in providers.

use serde_json::Value;

use crate::oidc_support::{App, app, authorize_url, exchange, get, location_params, param, pkce, request_id};
use crate::upstream::{GithubEmail, GithubKnobs, GithubStandin, OidcKnobs, OidcStandin, UpstreamUser};

pub(crate) const PEOPLE: &[&str] = &["users", "social_links", "sessions", "invites", "credentials"];

pub(crate) fn enable(d: &TestDaemon, args: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let file = secret_file(dir.path(), "upstream-secret");
    let mut all = vec!["social", "enable", "--tenant", "acme"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--client-secret-file", &file]);
    d.cli(&all).ok()
}

pub(crate) fn github(d: &TestDaemon, extra: &[&str]) -> GithubStandin {
    let gh = GithubStandin::start("gh-client", "upstream-secret");
    let mut args =
        vec!["github", "--client-id", "gh-client", "--github-url", &gh.web_url, "--github-api-url", &gh.api_url];
    args.extend_from_slice(extra);
    enable(d, &args);
    gh
}

pub(crate) fn oidc(d: &TestDaemon, kind: &str, extra: &[&str]) -> OidcStandin {
    let op = OidcStandin::start("op-client", "upstream-secret");
    let mut args = vec![kind, "--client-id", "op-client", "--issuer", &op.issuer];
    if kind == "oidc" {
        args.extend_from_slice(&["--name", "Work SSO"]);
    }
    args.extend_from_slice(extra);
    enable(d, &args);
    op
}

pub(crate) fn cookie_value(r: &Http, name: &str) -> Option<String> {
    r.headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("set-cookie"))
        .find_map(|(_, v)| v.split(';').next().filter(|p| p.starts_with(&format!("{name}="))).map(str::to_owned))
}

/// The browser's part of a social sign-in, by hand: our `/login/{provider}`, the provider's
/// authorize, our callback. Returns the callback's answer.
pub(crate) fn through_provider(site: &Site, provider: &str, query: &str, cookie: Option<&str>) -> Http {
    let start = get(&format!("{}/login/{provider}?{query}", site.base), cookie);
    assert_eq!(start.status, 302, "{}", start.body);
    let binding = cookie_value(&start, "latchkey_social").expect("browser-binding cookie");
    let at_provider = get(start.header("location").unwrap(), None);
    assert_eq!(at_provider.status, 302, "{}", at_provider.body);
    let back = at_provider.header("location").unwrap().to_owned();
    assert!(back.starts_with(&format!("{}/login/{provider}/callback?", site.base)), "{back}");
    let cookies = match cookie {
        Some(c) => format!("{c}; {binding}"),
        None => binding,
    };
    get(&back, Some(&cookies))
}

/// Where a social callback sends the browser on: its redirect, or, on the one-time offer of a
/// passkey (a user without one), its "Not now" link: the sign-in goes on either way.
pub(crate) fn onward(cb: &Http) -> Option<String> {
    match cb.status {
        302 | 303 => cb.header("location").map(str::to_owned),
        200 if cb.body.contains("id=\"offer-passkey\"") => {
            let at = cb.body.find("id=\"skip-passkey\"")?;
            let tag_start = cb.body[..at].rfind('<')?;
            let tag = &cb.body[tag_start..tag_start + cb.body[tag_start..].find('>')?];
            let href = tag.split("href=\"").nth(1)?.split('"').next()?;
            Some(href.replace("&amp;", "&"))
        }
        _ => None,
    }
}

/// The account page's Link button, by hand: the POST from the tenant's page with the session, the
/// provider, our callback. Returns the callback's answer (the confirmation page when all is well).
pub(crate) fn link_through_provider(site: &Site, provider: &str, session: &str) -> Http {
    let start = site.api("POST", &format!("/api/social/{provider}"), None, session, Some(&site.origin));
    assert_eq!(start.status, 200, "{}", start.body);
    let binding = cookie_value(&start, "latchkey_social").expect("browser-binding cookie");
    let at_provider = get(start.json()["redirect"].as_str().unwrap(), None);
    assert_eq!(at_provider.status, 302, "{}", at_provider.body);
    let back = at_provider.header("location").unwrap().to_owned();
    assert!(back.starts_with(&format!("{}/login/{provider}/callback?", site.base)), "{back}");
    get(&back, Some(&format!("{session}; {binding}")))
}

/// The token in a confirmation page's form.
pub(crate) fn form_token(page: &Http) -> String {
    let at = page.body.find("name=\"token\" value=\"").unwrap_or_else(|| panic!("no form token: {}", page.body));
    let rest = &page.body[at + "name=\"token\" value=\"".len()..];
    rest[..rest.find('"').unwrap()].to_owned()
}

/// Posts the confirmation page's form (`decision` = `confirm` or `cancel`).
pub(crate) fn decide(
    site: &Site,
    provider: &str,
    cookie: &str,
    token: &str,
    decision: &str,
    origin: Option<&str>,
) -> Http {
    let mut headers = vec![("Cookie", cookie)];
    if let Some(o) = origin {
        headers.push(("Origin", o));
    }
    let body = format!("token={token}&decision={decision}").into_bytes();
    let url = format!("{}/login/{provider}/confirm", site.base);
    send_raw("POST", &url, Some("application/x-www-form-urlencoded"), body, &headers)
}

/// Links `provider` to the user of `session` (a recent passkey sign-in) and confirms.
pub(crate) fn link(site: &Site, provider: &str, session: &str) {
    let page = link_through_provider(site, provider, session);
    assert_eq!(page.status, 200, "{}", page.body);
    let done = decide(site, provider, session, &form_token(&page), "confirm", Some(&site.origin));
    assert_eq!(done.status, 303, "{}", done.body);
}

/// An application's sign-in through the provider's button: returns the tokens' JSON.
pub(crate) fn app_sign_in(site: &Site, web: &App, provider: &str) -> Result<Value, Http> {
    let p = pkce();
    let page = get(&authorize_url(site, web, &p, &[]), None);
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains(&format!("data-provider=\"{provider}\"")), "a button per provider: {}", page.body);
    let id = request_id(&page);
    let cb = through_provider(site, provider, &format!("request={id}"), None);
    let Some(next) = onward(&cb) else {
        return Err(cb);
    };
    let session = cb.session_cookie().expect("a session");
    let resumed = get(&next, Some(&session));
    assert_eq!(resumed.status, 302, "{}", resumed.body);
    let params = location_params(&resumed);
    let code = param(&params, "code").expect("code").to_owned();
    let t = exchange(site, web, &code, &p);
    assert_eq!(t.status, 200, "{}", t.body);
    Ok(t.json())
}

fn verified_claims(site: &Site, token: &str, audience: &str) -> Value {
    let jwks = format!("{}/.well-known/jwks.json", site.base);
    let v = node("verify-jwt.mjs", &[&jwks, token, &site.base, audience]);
    assert_eq!(v["ok"], true, "{v}");
    v["payload"].clone()
}

pub(crate) fn audit_outcomes(d: &TestDaemon) -> Vec<(String, String)> {
    let events = d.cli(&["audit", "--tenant", "acme", "-o", "json"]).ok().json();
    events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"].as_str().unwrap_or("").starts_with("social."))
        .map(|e| (e["action"].as_str().unwrap().to_owned(), e["outcome"].as_str().unwrap().to_owned()))
        .collect()
}

#[test]
fn an_invited_user_signs_in_to_an_app_with_github() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    site.invite("ada@acme.test", "Ada");
    let web = app(&site, "web", &[]);
    let _gh = github(&d, &[]);
    let tokens = app_sign_in(&site, &web, "github").unwrap_or_else(|r| panic!("{}: {}", r.status, r.body));
    let id = verified_claims(&site, tokens["id_token"].as_str().unwrap(), &web.client_id);
    assert_eq!(id["email"], "ada@acme.test");
    assert_eq!(id["amr"], serde_json::json!(["fed", "github"]), "amr names the provider");
    let ada = d.cli(&["user", "show", "--tenant", "acme", "ada@acme.test", "-o", "json"]).ok().json();
    assert_eq!(ada["status"], "active", "the invited user is active now");
    // Again: the link by GitHub's numeric id signs Ada in even after her address changed there.
    let gh_again = _gh;
    gh_again.set_emails(vec![GithubEmail { email: "ada@new-employer.test".into(), primary: true, verified: true }]);
    let again = app_sign_in(&site, &web, "github").unwrap_or_else(|r| panic!("{}", r.body));
    assert_eq!(verified_claims(&site, again["id_token"].as_str().unwrap(), &web.client_id)["email"], "ada@acme.test");
    assert!(audit_outcomes(&d).iter().any(|(a, o)| a == "social.login" && o == "success"));

    // The tenant moves to GitHub Enterprise Server, where the same numeric id is someone else:
    // Ada's link (made at github.com) goes, and that user does not sign in as Ada.
    let ghes = GithubStandin::start("gh-client", "upstream-secret");
    ghes.set_emails(vec![GithubEmail { email: "mallory@acme.test".into(), primary: true, verified: true }]);
    let moved = enable(
        &d,
        &["github", "--client-id", "gh-client", "--github-url", &ghes.web_url, "--github-api-url", &ghes.api_url],
    );
    assert!(moved.stderr.contains("1 link(s) made at the old one were removed"), "{}", moved.stderr);
    let refused = app_sign_in(&site, &web, "github").expect_err("not signed in as Ada");
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(refused.body.contains("There is no account for mallory@acme.test"), "{}", refused.body);
    // Ada's own account there (verified address) links again on first use.
    ghes.set_emails(vec![GithubEmail { email: "ada@acme.test".into(), primary: true, verified: true }]);
    let relinked = app_sign_in(&site, &web, "github").unwrap_or_else(|r| panic!("{}", r.body));
    assert_eq!(
        verified_claims(&site, relinked["id_token"].as_str().unwrap(), &web.client_id)["email"],
        "ada@acme.test"
    );
}

#[test]
fn google_and_any_oidc_provider_with_key_rotation() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    site.user_with_passkey("ada@acme.test");
    let web = app(&site, "web", &[]);
    let google = oidc(&d, "google", &["--allowed-domain", "acme.test"]);
    google.set_user(UpstreamUser {
        sub: "g-1".into(),
        email: "ada@acme.test".into(),
        email_verified: true,
        name: "Ada".into(),
        hd: Some("acme.test".into()),
    });
    // Google's iss comes without its scheme.
    google.set_knobs(OidcKnobs { iss_without_scheme: true, ..Default::default() });
    let t = app_sign_in(&site, &web, "google").unwrap_or_else(|r| panic!("{}", r.body));
    assert_eq!(
        verified_claims(&site, t["id_token"].as_str().unwrap(), &web.client_id)["amr"],
        serde_json::json!(["fed", "google"])
    );

    let sso = oidc(&d, "oidc", &[]);
    assert!(app_sign_in(&site, &web, "work-sso").is_ok());
    // The provider rotates its key: an unknown kid fetches the key set again (not at once:
    // at most every few seconds).
    sso.rotate_key();
    d.clock.advance(6);
    let before = sso.log().iter().filter(|l| l.as_str() == "GET /jwks").count();
    assert!(app_sign_in(&site, &web, "work-sso").is_ok());
    let after = sso.log().iter().filter(|l| l.as_str() == "GET /jwks").count();
    assert_eq!(after, before + 1, "the key set was fetched again: {:?}", sso.log());

    // An issuer that ends with a slash (Auth0's do): `iss` is compared as discovery spells it.
    let slash = OidcStandin::start("op-client", "upstream-secret");
    slash.set_knobs(OidcKnobs { issuer_trailing_slash: true, ..Default::default() });
    let issuer = format!("{}/", slash.issuer);
    enable(&d, &["oidc", "--client-id", "op-client", "--issuer", &issuer, "--name", "Slash SSO"]);
    let t = app_sign_in(&site, &web, "slash-sso").unwrap_or_else(|r| panic!("{}", r.body));
    assert_eq!(
        verified_claims(&site, t["id_token"].as_str().unwrap(), &web.client_id)["amr"],
        serde_json::json!(["fed", "slash-sso"])
    );
}

/// Runs a flow expected to fail: the page's status and text, the audit's failure code, and no
/// user, link or session stored.
pub(crate) fn refused(d: &TestDaemon, site: &Site, web: &App, provider: &str, status: u16, code: &str) {
    let before = d.snapshot_of(PEOPLE);
    let r = app_sign_in(site, web, provider).err().unwrap_or_else(|| panic!("{code}: the sign-in went through"));
    assert_eq!(r.status, status, "{code}: {}", r.body);
    assert!(r.header("content-type").unwrap_or("").starts_with("text/html"), "{code}: a page");
    assert!(r.session_cookie().is_none(), "{code}: no session");
    assert_eq!(d.snapshot_of(PEOPLE), before, "{code}: nothing stored");
    let last = audit_outcomes(d).into_iter().last().unwrap();
    assert_eq!(last, ("social.login".to_owned(), format!("failure: {code}")), "{code}");
}

/// The detail of the last social event in the audit: the provider, and for a refusal by the
/// provider's answer which check failed.
pub(crate) fn last_social_detail(d: &TestDaemon) -> String {
    let events = d.cli(&["audit", "--tenant", "acme", "-o", "json"]).ok().json();
    let mut social =
        events.as_array().unwrap().iter().filter(|e| e["action"].as_str().unwrap_or("").starts_with("social."));
    social.next_back().unwrap()["detail"].as_str().unwrap_or("").to_owned()
}

#[test]
fn every_oidc_refusal_ends_on_a_page_with_nothing_stored() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    site.invite("ada@acme.test", "Ada");
    let web = app(&site, "web", &[]);
    let op = oidc(&d, "oidc", &[]);
    let user = |verified: bool| UpstreamUser {
        sub: "s-1".into(),
        email: "ada@acme.test".into(),
        email_verified: verified,
        name: "Ada".into(),
        hd: None,
    };
    op.set_user(user(false));
    refused(&d, &site, &web, "work-sso", 403, "email_not_verified");
    op.set_user(user(true));
    // Each refusal is audited with its reason (SPEC: "with failure reason").
    for (knobs, reason) in [
        (OidcKnobs { wrong_aud: true, ..Default::default() }, "invalid_id_token"),
        (OidcKnobs { wrong_nonce: true, ..Default::default() }, "nonce"),
        (OidcKnobs { wrong_iss: true, ..Default::default() }, "iss \"https://evil.example\""),
        (OidcKnobs { expired: true, ..Default::default() }, "expired"),
        (OidcKnobs { unknown_key: true, ..Default::default() }, "unknown_key"),
        (OidcKnobs { token_error: true, ..Default::default() }, "token_refused"),
        (OidcKnobs { deny: true, ..Default::default() }, "access_denied"),
    ] {
        op.set_knobs(knobs);
        refused(&d, &site, &web, "work-sso", 403, "upstream_refused");
        let detail = last_social_detail(&d);
        assert!(detail.starts_with("work-sso: ") && detail.contains(reason), "{reason}: {detail}");
    }
    op.set_knobs(OidcKnobs::default());
    assert!(app_sign_in(&site, &web, "work-sso").is_ok(), "with every knob off it works");
}

#[test]
fn google_domains_github_addresses_and_organisations() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    site.invite("ada@acme.test", "Ada");
    let web = app(&site, "web", &[]);
    let google = oidc(&d, "google", &["--allowed-domain", "acme.test"]);
    google.set_user(UpstreamUser {
        sub: "g-1".into(),
        email: "ada@acme.test".into(),
        email_verified: true,
        name: "Ada".into(),
        hd: Some("other.test".into()),
    });
    refused(&d, &site, &web, "google", 403, "domain_not_allowed");

    let gh = github(&d, &["--allowed-org", "acme"]);
    gh.set_org("acme", "pending");
    refused(&d, &site, &web, "github", 403, "org_not_allowed");
    gh.set_org("acme", "active");
    gh.set_emails(vec![
        GithubEmail { email: "ada@acme.test".into(), primary: true, verified: false },
        GithubEmail { email: "ada@elsewhere.test".into(), primary: false, verified: true },
    ]);
    refused(&d, &site, &web, "github", 403, "email_not_verified");
    gh.set_emails(vec![GithubEmail { email: "ada@acme.test".into(), primary: false, verified: true }]);
    refused(&d, &site, &web, "github", 403, "email_not_verified");
    gh.set_emails(vec![GithubEmail { email: "ada@acme.test".into(), primary: true, verified: true }]);
    gh.set_knobs(GithubKnobs { token_error: true, ..Default::default() });
    refused(&d, &site, &web, "github", 403, "upstream_refused");
    gh.set_knobs(GithubKnobs::default());
    assert!(app_sign_in(&site, &web, "github").is_ok());
    // A second GitHub account with Ada's address cannot take her account over.
    gh.set_id(999);
    refused(&d, &site, &web, "github", 409, "already_linked");
}

#[test]
fn the_state_is_single_use_and_bound_to_the_browser() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    site.invite("ada@acme.test", "Ada");
    let web = app(&site, "web", &[]);
    let _gh = github(&d, &[]);
    let p = pkce();
    let page = get(&authorize_url(&site, &web, &p, &[]), None);
    let id = request_id(&page);
    let start = get(&format!("{}/login/github?request={id}", site.base), None);
    let binding = cookie_value(&start, "latchkey_social").unwrap();
    let back = get(start.header("location").unwrap(), None).header("location").unwrap().to_owned();
    let before = d.snapshot_of(PEOPLE);
    // Another browser (no binding cookie, or another one) cannot finish the flow…
    let stolen = get(&back, Some("latchkey_social=someone-elses"));
    assert_eq!(stolen.status, 400, "{}", stolen.body);
    assert!(stolen.body.contains("another browser"), "{}", stolen.body);
    // …and the state is spent: not even the right browser can use it now.
    let replay = get(&back, Some(&binding));
    assert_eq!(replay.status, 400);
    assert_eq!(d.snapshot_of(PEOPLE), before);
    // A made-up state.
    let forged = get(&format!("{}/login/github/callback?code=x&state=y", site.base), Some(&binding));
    assert_eq!(forged.status, 400);
    assert_eq!(d.snapshot_of(PEOPLE), before);
}

#[test]
fn chromium_signs_in_through_the_provider_button_and_an_invite_is_accepted_by_github() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let token = site.invite("ada@acme.test", "Ada");
    let web = app(&site, "web", &[]);
    let _gh = github(&d, &[]);
    // The invitation page's GitHub button: Ada becomes active and lands on her account page.
    let invite = format!("{}/invite/{token}", site.base);
    // She has no passkey yet: the one-time offer, where she adds one, then goes on.
    let out = node("social-login.mjs", &[&invite, "github", "https://app.example.com/", "add"]);
    assert!(out["landed"].as_str().unwrap_or("").ends_with("/acme/account"), "{out}");
    assert_eq!(out["offered"].as_bool(), Some(true), "{out}");
    let ada = d.cli(&["user", "show", "--tenant", "acme", "ada@acme.test", "-o", "json"]).ok().json();
    assert_eq!(ada["status"], "active");
    let creds = d.cli(&["credential", "list", "--tenant", "acme", "ada@acme.test", "-o", "json"]).ok().json();
    assert_eq!(creds.as_array().map(Vec::len), Some(1), "the passkey she added: {creds}");
    // An application's sign-in: login page → GitHub button → stand-in GitHub → back → the code.
    let p = pkce();
    let out = node("social-login.mjs", &[&authorize_url(&site, &web, &p, &[]), "github", "https://app.example.com/"]);
    let landed = out["landed"].as_str().unwrap_or_else(|| panic!("{out}"));
    assert_eq!(out["offered"].as_bool(), Some(false), "offered once only: {out}");
    let code = url::Url::parse(landed).unwrap().query_pairs().find(|(k, _)| k == "code").map(|(_, v)| v.into_owned());
    let t = exchange(&site, &web, &code.expect("a code"), &p);
    assert_eq!(t.status, 200, "{}", t.body);
    let id = verified_claims(&site, t.json()["id_token"].as_str().unwrap(), &web.client_id);
    assert_eq!((id["email"].as_str(), id["amr"][1].as_str()), (Some("ada@acme.test"), Some("github")));
}

#[test]
fn a_signed_in_user_links_and_unlinks_on_the_account_page() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (_, session) = site.user_with_passkey("ada@acme.test");
    let gh = github(&d, &[]);
    // Linking needs a session; any GitHub address will do for the signed-in user.
    gh.set_emails(vec![GithubEmail { email: "ada@personal.test".into(), primary: true, verified: false }]);
    let anonymous =
        send_raw("POST", &format!("{}/api/social/github", site.base), None, vec![], &[("Origin", &site.origin)]);
    assert_eq!((anonymous.status, anonymous.json()["error"].as_str()), (401, Some("login_required")));
    link(&site, "github", &session);
    let origin = site.origin.clone();
    let list = site.api("GET", "/api/social", None, &session, None);
    assert_eq!(list.status, 200, "{}", list.body);
    assert_eq!(list.json()[0]["linked"], true);
    // Unlinking by cookie needs the tenant's own Origin.
    assert_eq!(site.api("DELETE", "/api/social/github", None, &session, None).status, 403);
    let r = site.api("DELETE", "/api/social/github", None, &session, Some(&origin));
    assert_eq!(r.status, 204, "{}", r.body);
    assert_eq!(site.api("GET", "/api/social", None, &session, None).json()[0]["linked"], false);
    let actions: Vec<String> = audit_outcomes(&d).into_iter().map(|(a, o)| format!("{a} {o}")).collect();
    assert!(actions.contains(&"social.link success".to_owned()), "{actions:?}");
    assert!(actions.contains(&"social.unlink success".to_owned()), "{actions:?}");

    // A user whose only way in is GitHub cannot unlink it.
    d.cli(&["tenant", "create", "beta", "--registration", "open"]).ok();
    let beta = Site { d: &d, slug: "beta".into(), base: format!("{}/beta", d.base), origin: d.base.clone() };
    let dir = tempfile::tempdir().unwrap();
    let file = secret_file(dir.path(), "upstream-secret");
    d.cli(&[
        "social",
        "enable",
        "--tenant",
        "beta",
        "github",
        "--client-id",
        "gh-client",
        "--github-url",
        &gh.web_url,
        "--github-api-url",
        &gh.api_url,
        "--create-users",
        "--client-secret-file",
        &file,
    ])
    .ok();
    gh.set_emails(vec![GithubEmail { email: "new@beta.test".into(), primary: true, verified: true }]);
    gh.set_id(4242);
    let web = app(&beta, "web", &[]);
    let p = pkce();
    let id = request_id(&get(&authorize_url(&beta, &web, &p, &[]), None));
    let cb = through_provider(&beta, "github", &format!("request={id}"), None);
    // The new user has no passkey: they are offered one, once, before going on.
    assert_eq!(cb.status, 200, "--create-users made the user: {}", cb.body);
    assert!(cb.body.contains("id=\"offer-passkey\""), "{}", cb.body);
    assert!(onward(&cb).unwrap().contains("/authorize/resume?request="), "{}", cb.body);
    let only = cb.session_cookie().unwrap();
    let r = beta.api("DELETE", "/api/social/github", None, &only, Some(&origin));
    assert_eq!((r.status, r.json()["error"].as_str()), (409, Some("last_credential")));

    // The tenant closes its registration: the provider creates no one any more, though it was
    // enabled with --create-users. Its linked user still signs in.
    let file = dir.path().join("beta.toml");
    std::fs::write(&file, "[[tenant]]\nslug = \"beta\"\nregistration = \"invite\"\n").unwrap();
    d.cli(&["apply", "-f", file.to_str().unwrap()]).ok();
    gh.set_emails(vec![GithubEmail { email: "newer@beta.test".into(), primary: true, verified: true }]);
    gh.set_id(4343);
    let users = d.snapshot_of(&["users", "social_links"]);
    let id = request_id(&get(&authorize_url(&beta, &web, &p, &[]), None));
    let cb = through_provider(&beta, "github", &format!("request={id}"), None);
    assert_eq!(cb.status, 403, "{}", cb.body);
    assert!(cb.body.contains("There is no account for newer@beta.test"), "{}", cb.body);
    assert_eq!(d.snapshot_of(&["users", "social_links"]), users, "no user created, nothing linked");
    gh.set_id(4242);
    let id = request_id(&get(&authorize_url(&beta, &web, &p, &[]), None));
    assert_eq!(through_provider(&beta, "github", &format!("request={id}"), None).status, 302);
}
