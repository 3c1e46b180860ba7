//! The device authorization grant's parsers (RFC 8628): what the daemon reads of user codes,
//! of the `/device` page's query, of `/device/lookup` and `/device/decide` bodies, and of the
//! device's requests to `/device_authorization` and `/token`.
//!
//! First byte: the mode; the rest is the mode's input:
//! 0. a typed user code: `oidc::device::canonical_user_code` (a canonical code is 8 letters of
//!    the alphabet, is its own canonical form, and survives `display`), then the page's
//!    `http::device::prefill` of `?user_code=` with it, form-encoded;
//! 1. the `/device` page's query string: `http::device::prefill` and the templates' escaping;
//! 2. a `/device/lookup` body: `http::body::parse_json` into `LookupRequest`, then the code;
//! 3. a `/device/decide` body: the same into `DecideRequest`;
//! 4. `Authorization header \0 form body` of a token poll: `latchkeyd::fuzzing::device_token_request`
//!    (`clients::presented`, `grant_type`, `device_code`);
//! 5. `Authorization header \0 form body` of `/device_authorization`: `clients::presented`, and
//!    `scope` checked by `authorize::user_scopes` for a native app with the device flow.

#![no_main]

use latchkey_fuzz::split_at_byte;
use latchkeyd::http::body::{Text, parse_json};
use latchkeyd::http::device::prefill;
use latchkeyd::fuzzing::escaped as escape;
use latchkey_domain::oidc::authorize::user_scopes;
use latchkey_domain::oidc::clients::presented;
use latchkey_domain::oidc::device::{DecideRequest, GRANT_TYPE, LookupRequest, canonical_user_code, display};
use latchkey_domain::params::Params;
use latchkey_store::AppType;
use latchkey_store::apps::AppRow;
use libfuzzer_sys::fuzz_target;

const ALPHABET: &[u8] = b"BCDFGHJKLMNPQRSTVWXZ";

/// A typed code: when it reads as one, the canonical form is as the doc comment promises.
fn user_code(typed: &str) -> Option<String> {
    let code = canonical_user_code(typed)?;
    assert!(
        code.len() == 8 && code.bytes().all(|b| ALPHABET.contains(&b)),
        "device: {typed:?} read as {code:?}, not a canonical code"
    );
    assert_eq!(canonical_user_code(&code).as_deref(), Some(code.as_str()), "device: canonical form not stable");
    let shown = display(&code);
    assert_eq!(canonical_user_code(&shown).as_deref(), Some(code.as_str()), "device: {shown:?} does not read back");
    // Typed codes differ from it only in case, dashes and white space.
    let kept: String =
        typed.chars().filter(|c| *c != '-' && !c.is_whitespace()).map(|c| c.to_ascii_uppercase()).collect();
    assert_eq!(kept, code, "device: {typed:?} read as {code:?}");
    Some(code)
}

fn page(query: &[u8]) {
    let shown = prefill(&Params::parse(query));
    assert!(shown.chars().count() <= 32, "device: the code field holds at most 32 characters: {shown:?}");
    let html = escape(&shown);
    assert!(!html.contains(['<', '>', '"']), "device: the prefilled value escapes its attribute: {html:?}");
}

fn device_app() -> AppRow {
    AppRow {
        client_id: "tv-app".into(),
        name: "TV".into(),
        app_type: AppType::Native,
        secret_hash: None,
        redirect_uris: vec![],
        post_logout_redirect_uris: vec![],
        cors_origins: vec![],
        scopes: vec!["credentials".into()],
        created_at: 0,
        device_flow: true,
        require_acr: None,
        consent_explicit: false,
        backchannel_logout_uri: None,
        backchannel_logout_session_required: false,
        logo_sha: None,
        signing_alg: latchkey_store::SigningAlg::RS256,
        require_par: false,
        require_dpop: false,
        token_auth: latchkey_store::TokenAuth::Secret,
        jwks: None,
        jwks_uri: None,
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    match mode % 6 {
        0 => {
            let Ok(typed) = std::str::from_utf8(rest) else { return };
            let code = user_code(typed);
            // As `verification_uri_complete` carries it: `?user_code=` and the code, encoded.
            let mut query = b"user_code=".to_vec();
            for b in typed.bytes() {
                if b.is_ascii_alphanumeric() {
                    query.push(b);
                } else {
                    query.extend_from_slice(format!("%{b:02X}").as_bytes());
                }
            }
            let shown = prefill(&Params::parse(&query));
            // A query parameter with a control character is refused (`Params`): nothing is
            // prefilled, and the user types the code.
            match code {
                Some(code) if !typed.chars().any(char::is_control) => {
                    assert_eq!(shown, display(&code), "device: a valid code is prefilled in its display form")
                }
                _ if typed.chars().any(char::is_control) => assert_eq!(shown, "", "device: {typed:?} prefilled"),
                _ => {}
            }
        }
        1 => page(rest),
        2 => {
            if let Ok(body) = parse_json::<LookupRequest>(rest, Text::Printable) {
                user_code(&body.user_code);
            }
        }
        3 => {
            if let Ok(body) = parse_json::<DecideRequest>(rest, Text::Printable) {
                let _ = body.approve;
                user_code(&body.user_code);
            }
        }
        4 => {
            let (authorization, body) = split_at_byte(rest, 0);
            let Ok(authorization) = std::str::from_utf8(authorization) else { return };
            let authorization = (!authorization.is_empty()).then_some(authorization);
            if let Ok((client, grant, code)) = latchkeyd::fuzzing::device_token_request(authorization, body) {
                // Present and not empty, once each: what the poll looks up.
                let form = Params::parse(body);
                assert_eq!(form.get("grant_type").ok().flatten(), Some(grant.as_str()), "device: grant_type");
                assert_eq!(form.get("device_code").ok().flatten(), Some(code.as_str()), "device: device_code");
                assert!(!code.is_empty(), "device: an empty device_code passed");
                assert!(client.basic || !client.client_id.is_empty(), "device: {client:?}");
                let _ = grant == GRANT_TYPE;
            }
        }
        _ => {
            let (authorization, body) = split_at_byte(rest, 0);
            let Ok(authorization) = std::str::from_utf8(authorization) else { return };
            let form = Params::parse(body);
            if presented((!authorization.is_empty()).then_some(authorization), &form).is_err() {
                return;
            }
            let Ok(scope) = form.owned("scope") else { return };
            if let Ok(scopes) = user_scopes(&device_app(), scope.as_deref()) {
                // Only what was asked (or the default), each once.
                let asked: Vec<&str> = scope.as_deref().unwrap_or("openid").split(' ').collect();
                for (i, s) in scopes.iter().enumerate() {
                    assert!(asked.contains(s) && !scopes[..i].contains(s), "device: scope {s:?} from {scope:?}");
                }
            }
        }
    }
});
