//! JSON request bodies: every admin-socket request type of `latchkey::admin` and the public
//! ceremony bodies, through `serde_json` and the daemon's own `http::body::parse_json`, then the
//! pure validation the daemon applies next (`tenants::validate`, `apps::validate`, role names,
//! e-mail addresses and display names). A body that parses must also survive the trip the CLI
//! makes: serialised again, it must parse to the same request.

#![no_main]

use latchkey::admin::{ApplyRequest, Confirm, CreateApp, CreateRole, CreateTenant, Declared, Emails, InviteUser};
use latchkeyd::http::body::{Text, parse_json};
use latchkey_domain::webauthn::{authenticate, credentials, register, valid_email, valid_name};
use libfuzzer_sys::fuzz_target;
use serde::Serialize;
use serde::de::DeserializeOwned;

const PUBLIC_URL: &str = "http://localhost:8080";

/// Parses `data` as `T` both ways, with the daemon's rule for text (`Text::NoNul` on the admin
/// socket, `Text::Printable` on the public API); they must agree, except that the daemon refuses
/// a string holding what the rule forbids, and then only with `invalid_request`. Returns the
/// value when it parsed.
fn both_with<T: DeserializeOwned>(data: &[u8], text: Text) -> Option<T> {
    let direct = serde_json::from_slice::<T>(data);
    let daemon = parse_json::<T>(data, text);
    match (&direct, &daemon) {
        (Ok(_), Err(e)) => assert_eq!(e.code, latchkey::codes::INVALID_REQUEST, "parse_json refused valid JSON: {e}"),
        _ => assert_eq!(direct.is_ok(), daemon.is_ok(), "serde_json and parse_json disagree"),
    }
    daemon.ok()
}

fn both<T: DeserializeOwned>(data: &[u8]) -> Option<T> {
    both_with(data, Text::NoNul)
}

fn public<T: DeserializeOwned>(data: &[u8]) -> Option<T> {
    both_with(data, Text::Printable)
}

/// What the CLI sends is what the daemon reads back.
fn round_trip<T: Serialize + DeserializeOwned>(value: &T) {
    let text = serde_json::to_vec(value).expect("serialising a request");
    let again: T = serde_json::from_slice(&text).expect("a serialised request parses again");
    assert_eq!(serde_json::to_vec(&again).expect("serialising again"), text, "round trip changed the request");
}

fn tenant(req: &CreateTenant) {
    let _ = latchkey_domain::tenants::validate(req, PUBLIC_URL);
}

fn app(req: &CreateApp) {
    let _ = latchkey_domain::apps::validate(req);
}

fn declared(d: &Declared) {
    for t in &d.tenants {
        let req = CreateTenant {
            slug: t.slug.clone(),
            name: t.name.clone(),
            base_url: t.base_url.clone(),
            rp_id: t.rp_id.clone(),
            registration: t.registration,
        };
        tenant(&req);
        for r in &t.roles {
            let _ = latchkey_domain::users::roles::valid_name(&r.name);
        }
        for a in &t.apps {
            app(&CreateApp {
                name: a.name.clone(),
                app_type: a.app_type,
                redirect_uris: a.redirect_uris.clone(),
                post_logout_redirect_uris: a.post_logout_redirect_uris.clone(),
                cors_origins: a.cors_origins.clone(),
                scopes: a.scopes.clone(),
                device_flow: a.device_flow,
                require_acr: a.require_acr.clone(),
                consent: a.consent.clone(),
                backchannel_logout_uri: a.backchannel_logout_uri.clone(),
                backchannel_logout_session_required: a.backchannel_logout_session_required,
                logo_png: None,
                signing_alg: a.signing_alg.clone(),
                require_par: a.require_par,
                require_dpop: a.require_dpop,
                token_auth: a.token_auth.clone(),
                jwks: a.jwks.clone(),
                jwks_uri: a.jwks_uri.clone(),
            });
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if let Some(r) = both::<CreateTenant>(data) {
        round_trip(&r);
        tenant(&r);
    }
    if let Some(r) = both::<CreateApp>(data) {
        round_trip(&r);
        app(&r);
    }
    if let Some(r) = both::<CreateRole>(data) {
        round_trip(&r);
        let _ = latchkey_domain::users::roles::valid_name(&r.name);
    }
    if let Some(r) = both::<InviteUser>(data) {
        round_trip(&r);
        let _ = (valid_email(&r.email), valid_name(&r.name));
    }
    if let Some(r) = both::<Emails>(data) {
        round_trip(&r);
        for e in &r.emails {
            let _ = valid_email(e);
        }
    }
    if let Some(r) = both::<Confirm>(data) {
        round_trip(&r);
    }
    if let Some(r) = both::<ApplyRequest>(data) {
        round_trip(&r);
        declared(&r.declared);
    }
    if let Some(r) = both::<Declared>(data) {
        round_trip(&r);
    }
    // Public ceremony bodies (their webauthn payloads have their own targets).
    if let Some(r) = public::<register::StartRequest>(data) {
        let _ = (valid_email(r.username.trim()), valid_name(&r.display_name));
    }
    let _ = public::<register::FinishRequest>(data);
    if let Some(r) = public::<authenticate::StartRequest>(data) {
        let _ = r.username.map(|u| latchkey_store::users::normalise_email(&u));
    }
    let _ = public::<authenticate::FinishRequest>(data);
    let _ = public::<credentials::Rename>(data);
});
