//! Sign-in: `POST {base_url}/auth/start` and `/auth/finish` (docs/http-api.md).
//!
//! With a username, the options list that user's credentials; for an unknown username (or one
//! without credentials, or disabled) they list a stand-in credential id derived from the username
//! with a secret key, so the answer has the same shape and is stable: no user enumeration.
//! Without a username, the discoverable flow: empty `allowCredentials`, and finish identifies the
//! user from the credential's user handle.

use std::sync::Arc;

use latchkey::codes;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use webauthn_rs::prelude::{Passkey, PublicKeyCredential};

use super::assertion::{self, Verified};
use super::{UserInfo, invalid_challenge, malformed};
use crate::clock::rfc3339;
use crate::crypto::{b64url, random_bytes};
use crate::error::{Error, Kind};
use crate::registry::TenantRuntime;
use crate::sessions::{self, Issued};
use crate::state::State;
use crate::store::challenges::ChallengeRow;
use crate::store::credentials::CredentialRow;
use crate::store::users::{UserId, normalise_email};
use crate::store::{self, ChallengeKind, UserStatus, WriteCost};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartRequest {
    #[serde(default)]
    pub username: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FinishRequest {
    /// Kept as its text, checked but not yet parsed, so that the assertion is parsed once, into
    /// its type, rather than into a `Value` first (a sign-in's costliest JSON).
    pub assertion: Box<RawValue>,
    pub challenge: String,
}

#[derive(Debug, Serialize)]
pub struct SessionInfo {
    pub expires_at: String,
}

#[derive(Debug, Serialize)]
pub struct FinishResponse {
    pub user: UserInfo,
    pub session: SessionInfo,
}

pub struct Finished {
    pub response: FinishResponse,
    pub session: Issued,
    pub user_id: UserId,
}

fn denied(code: &'static str, message: &str) -> Error {
    Error::new(Kind::Unauthenticated, code, message)
}

pub async fn start(state: &State, tenant: Arc<TenantRuntime>, req: StartRequest) -> Result<Value, Error> {
    // A tenant without passkeys (an IP address as RP ID) says so, as a registration does.
    tenant.hot()?.relying_party()?;
    let now = state.clock.now();
    let expires_at = now + state.config.challenge_ttl.as_secs() as i64;
    let username = req.username.map(|u| normalise_email(&u)).filter(|u| !u.is_empty());
    let decoy = username.as_ref().map(|u| state.kek.decoy_credential_id(tenant.id, u));
    let t = tenant.id;
    let challenge = b64url(&random_bytes::<{ super::CHALLENGE_BYTES }>()?);
    let options = |allow: &[Vec<u8>]| {
        let allow: Vec<Value> = allow.iter().map(|id| json!({"type": "public-key", "id": b64url(id)})).collect();
        json!({
            "challenge": challenge,
            "allowCredentials": allow,
            "timeout": super::TIMEOUT_MS,
            "userVerification": "required",
            "rpId": tenant.rp_id,
        })
    };

    // PostgreSQL: the lookup and the challenge's insert are one statement, one round trip
    // (store::sign_in::start).
    if let (Some(u), Some(decoy), WriteCost::RoundTrips) = (&username, &decoy, state.db.write_cost()) {
        let row = ChallengeRow {
            challenge: challenge.clone(),
            kind: ChallengeKind::Authenticate,
            user_id: None,
            state: "{}".into(),
            context: "{}".into(),
            expires_at,
        };
        let u = u.clone();
        let ids = state.db.write_one_unsynced(move |tx| store::sign_in::start(tx, t, &u, &row)).await?;
        // Unknown, disabled or without passkeys: the same shape as a known user, nothing to sign with.
        return Ok(options(if ids.is_empty() { std::slice::from_ref(decoy) } else { &ids }));
    }

    // SQLite: the user's credentials come from a read transaction beside the writer; the write
    // queue only carries the challenge's insert.
    let known = match username {
        Some(u) => {
            state
                .db
                .read_now(move |tx| -> Result<_, Error> {
                    match store::users::by_email_with_credentials(tx, t, &u)? {
                        Some((user, creds)) if user.status == UserStatus::Active && !creds.is_empty() => {
                            Ok(Some((user, creds)))
                        }
                        _ => Ok(None),
                    }
                })
                .await?
        }
        None => None,
    };
    // The options are ours to build (the seed's exact fields and values): nothing of webauthn-rs
    // is needed until the assertion comes back, and the challenge row needs no ceremony state.
    let (allow, kind, user_id) = match (known, decoy) {
        (Some((user, creds)), _) => {
            let ids: Vec<Vec<u8>> = creds.into_iter().map(|c| c.credential_id).collect();
            (ids, ChallengeKind::Authenticate, Some(user.id))
        }
        // Unknown username: same shape as a known one, nothing to sign with.
        (None, Some(decoy)) => (vec![decoy], ChallengeKind::Authenticate, None),
        (None, None) => (vec![], ChallengeKind::Discoverable, None),
    };
    let options = options(&allow);
    let row = ChallengeRow { challenge, kind, user_id, state: "{}".into(), context: "{}".into(), expires_at };
    // A challenge lost in a power cut only means the user starts again: no fsync to wait for.
    state.db.write_one_unsynced(move |tx| store::challenges::insert_unsynced(tx, t, &row)).await?;
    Ok(options)
}

fn passkey(row: &CredentialRow) -> Result<Passkey, Error> {
    serde_json::from_str(&row.passkey).map_err(|e| Error::internal(format!("stored passkey: {e}")))
}

pub async fn finish(state: &State, tenant: Arc<TenantRuntime>, req: FinishRequest) -> Result<Finished, Error> {
    tenant.hot()?.relying_party()?;
    let assertion: PublicKeyCredential =
        serde_json::from_str(req.assertion.get()).map_err(|e| malformed("assertion", e))?;
    super::check_credential_id(&assertion.id, assertion.raw_id.as_ref())?;
    let client = super::client_data(&assertion.response.client_data_json)?;
    super::origin_is(&client, &tenant.origin, true)?;
    let now = state.clock.now();
    let session_ttl = state.config.tokens.session.as_secs() as i64;
    let t = tenant.id;
    let challenge = req.challenge;
    let cred_id = assertion.raw_id.to_vec();
    let unknown = || denied(codes::UNKNOWN_CREDENTIAL, "this credential is not registered here");

    // 1. Read the challenge (without taking it), the user and the credential beside the writer,
    // in one statement (store::sign_in::lookup).
    let handle = assertion.response.user_handle.clone();
    let (c, id) = (challenge.clone(), cred_id.clone());
    let (row, user, mut credential) = state
        .db
        .read_now(move |tx| -> Result<_, Error> {
            let kinds = (ChallengeKind::Authenticate, ChallengeKind::Discoverable);
            let (row, found) = store::sign_in::lookup(tx, t, &c, kinds, &id, now)?;
            let row = row.ok_or_else(invalid_challenge)?;
            // The credential must belong to the user the sign-in is for: the one whose handle
            // the authenticator returned (username-less), or the one the challenge was issued
            // to. Anyone else's reads as unknown.
            let (credential, user) = if row.kind == ChallengeKind::Discoverable {
                let handle = handle.as_ref().ok_or_else(|| {
                    Error::invalid(
                        codes::MISSING_USER_HANDLE,
                        "a username-less sign-in needs the credential's user handle",
                    )
                })?;
                found.filter(|(_, owner)| owner.user_handle.as_slice() == handle.as_slice())
            } else {
                let user_id = row.user_id.ok_or_else(unknown)?;
                found.filter(|(_, owner)| owner.id == user_id)
            }
            .ok_or_else(unknown)?;
            Ok((row, user, credential))
        })
        .await?;

    // 2. Verify the signature here, not in the write queue: it is the costly step.
    let discoverable = row.kind == ChallengeKind::Discoverable;
    if !discoverable
        && let Some(handle) = &assertion.response.user_handle
        && handle.as_slice() != user.user_handle.as_slice()
    {
        return Err(denied(codes::INVALID_USER_HANDLE, "the credential's user handle belongs to another user"));
    }
    let refused = |e| super::verification_error(e, true);
    let (key, eligible) = assertion::stored(passkey(&credential)?).map_err(refused)?;
    credential.backup_eligible |= eligible;
    let expected = assertion::Expected {
        challenge: &challenge,
        rp_id: &tenant.rp_id,
        allow_backup_eligible_upgrade: !discoverable,
    };
    let response = &assertion.response;
    let verified = assertion::verify(
        &client,
        &response.client_data_json,
        &response.authenticator_data,
        &response.signature,
        &key,
        &credential,
        &expected,
    )
    .map_err(refused)?;
    if user.status != UserStatus::Active {
        return Err(Error::new(Kind::Forbidden, codes::USER_DISABLED, "this account is disabled"));
    }

    // 3. One write: take the challenge (of two concurrent finishes only one still finds it), record
    // the use, open the session. Nothing is kept if any step fails; on PostgreSQL it is one
    // statement (store::sign_in).
    let user_id = user.id;
    let pending = sessions::Pending::new(user_id, sessions::passkey_amr(verified.backup_eligible), now, session_ttl)?;
    let stored = pending.clone();
    let session_id = state
        .db
        .write_one(move |tx| -> Result<i64, Error> {
            let Verified { sign_count, backup_eligible, backed_up } = verified;
            let used = store::sign_in::CredentialUse {
                challenge: &challenge,
                credential_id: &cred_id,
                sign_count,
                backup_eligible,
                backed_up,
            };
            store::sign_in::finish(tx, t, &used, &stored.row(), now)?.ok_or_else(invalid_challenge)
        })
        .await?;
    let session = pending.issued(session_id);
    Ok(Finished {
        response: FinishResponse {
            user: UserInfo { id: user.public_id, email: user.email, name: user.name },
            session: SessionInfo { expires_at: rfc3339(session.expires_at) },
        },
        session,
        user_id,
    })
}
