//! Device authorization grant (RFC 8628) for `native` apps created with `--device-flow`: a CLI,
//! a TV or any device without a browser asks `POST {base_url}/device_authorization` for a device
//! code and a user code, shows the user code, and polls `/token` with the device code while the
//! user enters the code at `{base_url}/device`, signs in and approves or denies. The polling
//! itself is in [`super::grants`].
//!
//! User codes are 8 letters from an alphabet without vowels (no words) and without letters that
//! read alike (`BCDFGHJKLMNPQRSTVWXZ`: 20^8 ≈ 2.56e10 codes), shown `XXXX-XXXX`, read
//! case-insensitively with dashes and spaces ignored, single use, and stored hashed like device
//! codes. Wrong user codes are counted per client address (see `http::device`).

use latchkey::codes;
use serde::{Deserialize, Serialize};

use super::authorize::user_scopes;
use super::clients::{Presented, authenticate};
use super::error::OAuthError;
use crate::clock::Timestamp;
use crate::crypto::{CryptoError, random_bytes, random_token, sha256};
use crate::error::Error;
use crate::params::Params;
use crate::registry::TenantRuntime;
use crate::sessions;
use crate::store::Db;
use crate::store::device::{Approval, NewDevice};
use crate::store::{self, AppType, TenantId};

/// The device grant's `grant_type` (RFC 8628 §3.4), named where discovery advertises it.
pub use super::discovery::DEVICE_GRANT_TYPE as GRANT_TYPE;
/// How long a device code and its user code live: 10 minutes.
pub const EXPIRES_IN: i64 = 600;
/// The polling interval first given to the client, in seconds.
pub const INTERVAL: i64 = 5;
/// What each `slow_down` adds to the interval (RFC 8628 §3.5).
pub const SLOW_DOWN_STEP: i64 = 5;
/// Wrong user codes one client address may try per minute (at `/device/lookup` and
/// `/device/decide` together) before every attempt from it is refused until the next minute.
pub const WRONG_CODES_PER_MINUTE: u32 = 10;

const ALPHABET: &[u8; 20] = b"BCDFGHJKLMNPQRSTVWXZ";
const LENGTH: usize = 8;

/// The answer of `/device_authorization` (RFC 8628 §3.2).
#[derive(Debug, Serialize)]
pub struct DeviceAuthorization {
    pub device_code: String,
    pub user_code: String,
    pub verification_uri: String,
    pub verification_uri_complete: String,
    pub expires_in: i64,
    pub interval: i64,
}

/// A new user code in its canonical form (8 letters, no dash).
pub fn new_user_code() -> Result<String, CryptoError> {
    let mut code = String::with_capacity(LENGTH);
    while code.len() < LENGTH {
        for b in random_bytes::<16>()? {
            // 240 = 12 × 20: rejecting larger bytes keeps every letter equally likely.
            if b < 240 && code.len() < LENGTH {
                code.push(char::from(ALPHABET[usize::from(b % 20)]));
            }
        }
    }
    Ok(code)
}

/// What the user typed, in canonical form: case-insensitive, dashes and white space ignored;
/// `None` when it cannot be a user code at all.
pub fn canonical_user_code(typed: &str) -> Option<String> {
    let code: String =
        typed.chars().filter(|c| *c != '-' && !c.is_whitespace()).map(|c| c.to_ascii_uppercase()).collect();
    (code.len() == LENGTH && code.bytes().all(|b| ALPHABET.contains(&b))).then_some(code)
}

/// `XXXX-XXXX`, as shown to people.
pub fn display(canonical: &str) -> String {
    let (a, b) = canonical.split_at(canonical.len().min(LENGTH / 2));
    format!("{a}-{b}")
}

fn user_code_hash(canonical: &str) -> [u8; 32] {
    sha256(canonical.as_bytes())
}

/// `POST {base_url}/device_authorization`: client authentication as at `/token`; only a `native`
/// app with the device flow switched on; `scope` checked as at `/authorize`.
pub async fn authorize(
    db: &Db,
    now: Timestamp,
    tenant: &TenantRuntime,
    client: Presented,
    form: Params,
) -> Result<DeviceAuthorization, OAuthError> {
    let t = tenant.id;
    let scope = form.owned("scope")?;
    let (client_id, scope) = db
        .read(move |tx| -> Result<(String, String), OAuthError> {
            let app = authenticate(tx, t, &client)?;
            if app.app_type != AppType::Native || !app.device_flow {
                return Err(OAuthError::unauthorized_client(
                    "this application may not use the device authorization grant \
                     (latchkey app update --device-flow true, native apps only)",
                ));
            }
            let scopes = user_scopes(&app, scope.as_deref()).map_err(OAuthError::invalid_scope)?;
            Ok((app.client_id, scopes.join(" ")))
        })
        .await?;
    // A user code already pending in this tenant is a unique violation: draw another.
    for _ in 0..5 {
        let device_code = random_token()?;
        let user_code = new_user_code()?;
        let (device_hash, code_hash) = (sha256(device_code.as_bytes()), user_code_hash(&user_code));
        let (cid, sc) = (client_id.clone(), scope.clone());
        let stored = db
            .write(move |tx| {
                let new = NewDevice {
                    device_hash: &device_hash,
                    user_code_hash: &code_hash,
                    client_id: &cid,
                    scope: &sc,
                    interval: INTERVAL,
                    expires_at: now + EXPIRES_IN,
                };
                store::device::insert(tx, t, &new, now)
            })
            .await;
        match stored {
            Ok(()) => {
                let shown = display(&user_code);
                let verification_uri = format!("{}/device", tenant.base_url);
                return Ok(DeviceAuthorization {
                    device_code,
                    verification_uri_complete: format!("{verification_uri}?user_code={shown}"),
                    user_code: shown,
                    verification_uri,
                    expires_in: EXPIRES_IN,
                    interval: INTERVAL,
                });
            }
            Err(e) if e.is_unique_violation() => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(OAuthError::server_error("no free user code after 5 draws"))
}

/// `POST /device/lookup` and `/device/decide` bodies.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LookupRequest {
    pub user_code: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecideRequest {
    pub user_code: String,
    pub approve: bool,
}

/// What the page shows before the user decides.
#[derive(Debug, Serialize)]
pub struct Lookup {
    pub client_name: String,
    pub scopes: Vec<String>,
    pub user_code: String,
}

#[derive(Debug, Serialize)]
pub struct Decided {
    pub status: &'static str,
}

/// The refusal of a wrong, used or expired user code.
pub fn invalid_user_code() -> Error {
    Error::invalid(
        codes::INVALID_USER_CODE,
        "this code is not valid: it is mistyped, was used already or has expired; check the code on your device",
    )
}

/// The pending request of a user code; `None` when the code is wrong, used or expired.
pub async fn lookup(db: &Db, now: Timestamp, tenant: TenantId, typed: &str) -> Result<Option<Lookup>, Error> {
    let Some(code) = canonical_user_code(typed) else { return Ok(None) };
    db.read(move |tx| -> Result<Option<Lookup>, Error> {
        let Some(row) = store::device::pending_by_user_code(tx, tenant, &user_code_hash(&code), now)? else {
            return Ok(None);
        };
        let Some(app) = store::apps::get(tx, tenant, &row.client_id)? else { return Ok(None) };
        Ok(Some(Lookup {
            client_name: app.name,
            scopes: super::tokens::scopes(&row.scope).map(str::to_owned).collect(),
            user_code: display(&code),
        }))
    })
    .await
}

/// How a decision went.
#[derive(Debug)]
pub enum Decision {
    /// Approved or denied: the client id and the user's e-mail, for the audit log.
    Done { approved: bool, client_id: String, email: String },
    /// No valid session: sign in first.
    LoginRequired,
    /// Wrong, used or expired user code.
    UnknownCode,
}

/// Approves or denies the request of a user code as the signed-in user of `session_token`.
pub async fn decide(
    db: &Db,
    now: Timestamp,
    tenant: TenantId,
    session_token: Option<String>,
    typed: &str,
    approve: bool,
) -> Result<Decision, Error> {
    let Some(token) = session_token else { return Ok(Decision::LoginRequired) };
    let code = canonical_user_code(typed);
    db.write(move |tx| -> Result<Decision, Error> {
        let Some((session, user)) = sessions::lookup(tx, tenant, &token, now)? else {
            return Ok(Decision::LoginRequired);
        };
        let Some(code) = code else { return Ok(Decision::UnknownCode) };
        let hash = user_code_hash(&code);
        let Some(row) = store::device::pending_by_user_code(tx, tenant, &hash, now)? else {
            return Ok(Decision::UnknownCode);
        };
        let approval =
            Approval { user_id: user.id, session_id: session.id, auth_time: session.auth_time, amr: &session.amr };
        if !store::device::decide(tx, tenant, &hash, approve.then_some(&approval), now)? {
            return Ok(Decision::UnknownCode);
        }
        Ok(Decision::Done { approved: approve, client_id: row.client_id, email: user.email })
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_codes_are_canonical_and_shown_with_a_dash() {
        for _ in 0..200 {
            let code = new_user_code().unwrap();
            assert_eq!(code.len(), 8);
            assert!(code.bytes().all(|b| ALPHABET.contains(&b)), "{code}");
            assert_eq!(canonical_user_code(&display(&code)).as_deref(), Some(code.as_str()));
        }
        assert_eq!(display("BCDFGHJK"), "BCDF-GHJK");
        assert_eq!(canonical_user_code("bcdf-ghjk").as_deref(), Some("BCDFGHJK"));
        assert_eq!(canonical_user_code(" BCDF ghjk\t").as_deref(), Some("BCDFGHJK"));
        assert_eq!(canonical_user_code("BC-DF-GH-JK").as_deref(), Some("BCDFGHJK"));
        for bad in ["", "BCDFGHJ", "BCDFGHJKL", "ABCDEFGH", "BCDF-GHJ0", "BCDFGHJÄ", "BCDF_GHJK"] {
            assert_eq!(canonical_user_code(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_alphabet_has_no_vowels_and_no_look_alikes() {
        for c in b"AEIOUY01LO" {
            if *c != b'L' {
                assert!(!ALPHABET.contains(c), "{}", char::from(*c));
            }
        }
        let mut sorted = ALPHABET.to_vec();
        sorted.dedup();
        assert_eq!(sorted.len(), 20);
    }
}
