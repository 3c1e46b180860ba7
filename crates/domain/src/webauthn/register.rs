//! Registration: `POST {base_url}/register/start` and `/register/finish` (docs/http-api.md).
//!
//! Who may register: the holder of a valid invite or recovery token for that username; a
//! signed-in user adding a credential to their own account; anyone for a free username when the
//! tenant's policy is `open`. Start only records a challenge; finish verifies, stores the
//! credential, consumes the invite and opens a session in one transaction.

use std::sync::Arc;

use latchkey::admin::Registration;
use latchkey::codes;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use webauthn_rs::prelude::{COSEAlgorithm, PasskeyRegistration, RegisterPublicKeyCredential, Uuid};

use super::{CredentialInfo, UserInfo, authdata, device, invalid_challenge, malformed, valid_email, valid_name};
use crate::crypto::{b64url, b64url_decode};
use crate::error::{Error, Kind};
use crate::registry::TenantRuntime;
use crate::sessions::{self, Issued};
use crate::state::State;
use crate::store::challenges::ChallengeRow;
use crate::store::credentials::CredentialRow;
use crate::store::invites::InviteId;
use crate::store::users::{NewUser, UserId, UserRow, normalise_email};
use crate::store::{self, ChallengeKind, CredentialKind, InvitePurpose, TenantId, UserStatus, WriteTx};

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Attachment {
    #[default]
    Platform,
    Roaming,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Conveyance {
    #[default]
    None,
    Indirect,
    Direct,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartRequest {
    pub username: String,
    pub display_name: String,
    #[serde(default)]
    pub invite: Option<String>,
    #[serde(default)]
    pub authenticator: Option<Attachment>,
    #[serde(default)]
    pub attestation: Option<Conveyance>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FinishRequest {
    pub credential: Value,
    pub challenge: String,
}

#[derive(Debug, Serialize)]
pub struct FinishResponse {
    pub credential: CredentialInfo,
    pub user: UserInfo,
}

/// What the start call established, kept with the challenge.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
enum Who {
    Invite {
        user_id: UserId,
        invite_id: InviteId,
        recovery: bool,
    },
    /// `session_key`: the session cookie's stored key, to find the very same session at the
    /// finish (an id alone may be given to a new session once the old one is deleted). Absent
    /// in a challenge of an earlier release: its finish asks to sign in again.
    Session {
        user_id: UserId,
        session_id: i64,
        #[serde(default)]
        session_key: Option<String>,
    },
    Open {
        handle: String,
        public_id: String,
    },
}

#[derive(Debug, Serialize, Deserialize)]
struct Context {
    who: Who,
    username: String,
    display_name: String,
    attachment: Attachment,
    user_agent: Option<String>,
}

fn not_allowed(message: &str) -> Error {
    Error::new(Kind::Forbidden, codes::REGISTRATION_NOT_ALLOWED, message)
}

/// Everything a start call needs besides its body.
pub struct Caller {
    pub session_token: Option<String>,
    pub user_agent: Option<String>,
}

pub async fn start(
    state: &State,
    tenant: Arc<TenantRuntime>,
    req: StartRequest,
    caller: Caller,
) -> Result<Value, Error> {
    let username = req.username.trim().to_owned();
    if !valid_email(&username) {
        return Err(Error::invalid(codes::INVALID_EMAIL, "username must be an e-mail address"));
    }
    if !valid_name(&req.display_name) {
        return Err(Error::invalid(codes::INVALID_NAME, "display_name must be 1-64 printable characters"));
    }
    let display_name = req.display_name.trim().to_owned();
    let now = state.clock.now();
    let expires_at = now + state.config.challenge_ttl.as_secs() as i64;
    let invite_hash = req.invite.as_deref().map(crate::ids::token_key);
    let attachment = req.authenticator.unwrap_or_default();
    // Under a `verified` policy the authenticator must prove its model, whatever was asked.
    let conveyance = match tenant.attestation.policy {
        latchkey::admin::AttestationPolicy::Verified => Conveyance::Direct,
        latchkey::admin::AttestationPolicy::Any => req.attestation.unwrap_or_default(),
    };
    // The same kinds of identifiers as invited and imported users get (UUIDv7s).
    let fresh_handle = crate::ids::user_handle()?;
    let fresh_public_id = crate::ids::public_id()?;

    // Only the challenge is written (the rest is read): a challenge lost in a power cut only
    // means the user starts again, so there is no fsync to wait for.
    state
        .db
        .write_unsynced(move |tx| -> Result<Value, Error> {
            let t = tenant.id;
            let (who, handle, user_id, excluded) = if let Some(hash) = invite_hash {
                let invite = store::invites::valid(tx, t, &hash, now)?.ok_or_else(|| {
                    not_allowed("this invitation link is invalid, used or expired; ask for a new one")
                })?;
                let user = store::users::by_id(tx, t, invite.user_id)?.ok_or_else(|| not_allowed("unknown user"))?;
                if normalise_email(&user.email) != normalise_email(&username) {
                    return Err(not_allowed("this invitation is for another e-mail address"));
                }
                if user.status == UserStatus::Disabled {
                    return Err(not_allowed("this account is disabled"));
                }
                let excluded = credential_ids(tx, t, user.id)?;
                let who = Who::Invite {
                    user_id: user.id,
                    invite_id: invite.id,
                    recovery: invite.purpose == InvitePurpose::Recovery,
                };
                (who, user.user_handle, Some(user.id), excluded)
            } else if let Some((session, user)) = match &caller.session_token {
                Some(token) => sessions::lookup(tx, t, token, now)?,
                None => None,
            } {
                if normalise_email(&user.email) != normalise_email(&username) {
                    return Err(not_allowed("you are signed in as another user"));
                }
                let excluded = credential_ids(tx, t, user.id)?;
                let who = Who::Session {
                    user_id: user.id,
                    session_id: session.id,
                    session_key: caller.session_token.as_deref().map(|t| b64url(&crate::ids::token_key(t))),
                };
                (who, user.user_handle, Some(user.id), excluded)
            } else if tenant.registration == Registration::Open {
                if store::users::by_email(tx, t, &username)?.is_some() {
                    return Err(not_allowed(
                        "this username is taken; sign in, or ask an administrator for a recovery link",
                    ));
                }
                let who = Who::Open { handle: b64url(&fresh_handle), public_id: fresh_public_id };
                (who, fresh_handle.to_vec(), None, vec![])
            } else {
                return Err(not_allowed(
                    "registration is by invitation only: open the invitation link you received, or sign in first",
                ));
            };

            let uuid = Uuid::from_slice(&handle).map_err(Error::internal)?;
            let exclude = excluded;
            let (ccr, reg_state) = tenant
                .hot()?
                .relying_party()?
                .start_passkey_registration(uuid, &username, &display_name, Some(exclude))
                .map_err(Error::internal)?;
            let challenge = b64url(&ccr.public_key.challenge);
            let options =
                shape_options(serde_json::to_value(&ccr.public_key).map_err(Error::internal)?, attachment, conveyance);
            let context = Context { who, username, display_name, attachment, user_agent: caller.user_agent };
            store::challenges::insert_unsynced(
                tx,
                t,
                &ChallengeRow {
                    challenge,
                    kind: ChallengeKind::Register,
                    user_id,
                    state: serde_json::to_string(&reg_state).map_err(Error::internal)?,
                    context: serde_json::to_string(&context).map_err(Error::internal)?,
                    expires_at,
                },
            )?;
            Ok(options)
        })
        .await
}

fn credential_ids(tx: &WriteTx<'_>, tenant: TenantId, user: UserId) -> Result<Vec<Vec<u8>>, Error> {
    Ok(store::credentials::for_user(tx, tenant, user)?.into_iter().map(|c| c.credential_id).collect())
}

/// The seed's exact values on top of what webauthn-rs generates: ES256 only, 60000 ms, the
/// requested attachment, resident key preferred, user verification required, attestation as asked.
fn shape_options(mut options: Value, attachment: Attachment, conveyance: Conveyance) -> Value {
    options["pubKeyCredParams"] = json!([{"type": "public-key", "alg": -7}]);
    options["timeout"] = json!(super::TIMEOUT_MS);
    options["authenticatorSelection"] = json!({
        "authenticatorAttachment": match attachment { Attachment::Platform => "platform", Attachment::Roaming => "cross-platform" },
        "residentKey": "preferred",
        "requireResidentKey": false,
        "userVerification": "required",
    });
    options["attestation"] = json!(match conveyance {
        Conveyance::None => "none",
        Conveyance::Indirect => "indirect",
        Conveyance::Direct => "direct",
    });
    options
}

/// Result of a finished registration: what to answer, and the session to set (if a new one).
pub struct Finished {
    pub response: FinishResponse,
    pub session: Option<Issued>,
    /// How the registration was allowed: invite, recovery, session or open.
    pub via: &'static str,
}

pub async fn finish(state: &State, tenant: Arc<TenantRuntime>, req: FinishRequest) -> Result<Finished, Error> {
    let reg: RegisterPublicKeyCredential =
        serde_json::from_value(req.credential.clone()).map_err(|e| malformed("credential", e))?;
    super::check_credential_id(&reg.id, reg.raw_id.as_ref())?;
    super::check_origin(reg.response.client_data_json.as_ref(), &tenant.origin, false)?;
    let auth = authdata::from_attestation_object(&reg.response.attestation_object)
        .ok_or_else(|| malformed("credential", "attestationObject carries no readable authenticator data"))?;
    let reported_attachment = req.credential.get("authenticatorAttachment").and_then(Value::as_str).map(str::to_owned);
    let now = state.clock.now();
    let session_ttl = state.config.tokens.session.as_secs() as i64;

    state
        .db
        .write(move |tx| -> Result<Finished, Error> {
            let t = tenant.id;
            let row = store::challenges::take(
                tx,
                t,
                &req.challenge,
                (ChallengeKind::Register, ChallengeKind::Register),
                now,
            )?
            .ok_or_else(invalid_challenge)?;
            let reg_state: PasskeyRegistration = serde_json::from_str(&row.state).map_err(Error::internal)?;
            let ctx: Context = serde_json::from_str(&row.context).map_err(Error::internal)?;
            // Before the library, which answers a credential of the user's own exclude list
            // with an "altered algorithm" error: an authenticator registered already is a 409.
            if store::credentials::by_credential_id(tx, t, reg.raw_id.as_ref())?.is_some() {
                return Err(Error::conflict(codes::CREDENTIAL_EXISTS, "this credential is already registered"));
            }
            let passkey = tenant
                .hot()?
                .relying_party()?
                .finish_passkey_registration(&reg, &reg_state)
                .map_err(|e| super::verification_error(e, false))?;
            // The options offered alg -7 only; hold the authenticator to it.
            if passkey.get_public_key().type_ != COSEAlgorithm::ES256 {
                return Err(Error::invalid(
                    codes::UNSUPPORTED_ALGORITHM,
                    "only ES256 (alg -7) credentials are accepted",
                ));
            }
            // The tenant's attestation policy, on the statement webauthn-rs has just verified.
            super::attestation::check(tx, &tenant.attestation, &reg.response.attestation_object, auth.aaguid, now)?;
            // WebAuthn §7.1: the credential id the authenticator attested is the one the response
            // names (rawId), and at most 1,023 bytes; an empty one could never be managed.
            let cred_id: Vec<u8> = passkey.cred_id().to_vec();
            let raw_id: &[u8] = reg.raw_id.as_ref();
            if cred_id.as_slice() != raw_id || cred_id.is_empty() || cred_id.len() > 1023 {
                return Err(malformed(
                    "credential",
                    format!("attested credential id of {} bytes differs from rawId or is out of range", cred_id.len()),
                ));
            }
            // (Not registered already: checked above for rawId, which it equals, in this
            // transaction.)

            // Who gets the credential; consume the invite in this same transaction.
            let via = match &ctx.who {
                Who::Invite { recovery: true, .. } => "recovery",
                Who::Invite { .. } => "invite",
                Who::Session { .. } => "session",
                Who::Open { .. } => "open",
            };
            let (user, new_session) = match &ctx.who {
                Who::Invite { user_id, invite_id, recovery } => {
                    if !store::invites::consume(tx, t, *invite_id, now)? {
                        return Err(not_allowed("this invitation link was used or has expired"));
                    }
                    let user = existing_user(tx, t, *user_id)?;
                    if user.status == UserStatus::Invited {
                        store::users::set_status(tx, t, user.id, UserStatus::Active)?;
                    }
                    // The invitation reached this address: it is the user's.
                    store::users::set_email_verified(tx, t, user.id)?;
                    if *recovery {
                        // A recovered account starts afresh: every other browser is signed out and
                        // every grant made before (refresh and access tokens) is revoked, and every
                        // social account linked to it is unlinked (whoever took the account may
                        // have linked one of theirs as a way back in).
                        store::users::sign_out_everywhere(tx, t, user.id, now)?;
                        store::social::delete_links_of_user(tx, t, user.id)?;
                    }
                    (user, true)
                }
                Who::Session { user_id, session_id, session_key } => {
                    // The session that began the registration must still be live: one ended
                    // meanwhile (signed out, or by the user's recovery, which ends every other
                    // session) adds no passkey, whoever holds its cookie.
                    let live = match session_key.as_deref().and_then(b64url_decode) {
                        Some(key) => store::sessions::valid(tx, t, &key, now)?
                            .is_some_and(|s| s.user_id == *user_id && s.id == *session_id),
                        None => false,
                    };
                    if !live {
                        return Err(Error::unauthenticated(
                            codes::LOGIN_REQUIRED,
                            "the session that began this registration has ended: sign in again",
                        ));
                    }
                    (existing_user(tx, t, *user_id)?, false)
                }
                Who::Open { handle, public_id } => {
                    if store::users::by_email(tx, t, &ctx.username)?.is_some() {
                        return Err(not_allowed("this username was taken meanwhile"));
                    }
                    let handle = b64url_decode(handle).ok_or_else(|| Error::internal("stored handle"))?;
                    let id = store::users::insert(
                        tx,
                        t,
                        &NewUser {
                            public_id,
                            user_handle: &handle,
                            email: &ctx.username,
                            name: &ctx.display_name,
                            status: UserStatus::Active,
                            created_at: now,
                        },
                    )
                    // Taken by a concurrent registration on another node (PostgreSQL): the same
                    // answer as the check above.
                    .map_err(|e| {
                        if e.is_unique_violation() {
                            not_allowed("this username was taken meanwhile")
                        } else {
                            Error::from(e)
                        }
                    })?;
                    (existing_user(tx, t, id)?, true)
                }
            };
            if user.status == UserStatus::Disabled {
                return Err(not_allowed("this account is disabled"));
            }

            let kind = match reported_attachment.as_deref() {
                Some("platform") => CredentialKind::Platform,
                Some("cross-platform") => CredentialKind::Roaming,
                _ if ctx.attachment == Attachment::Roaming => CredentialKind::Roaming,
                _ => CredentialKind::Platform,
            };
            let label = device::label(auth.aaguid.as_ref(), ctx.user_agent.as_deref(), kind == CredentialKind::Roaming);
            let credential = CredentialRow {
                user_id: user.id,
                credential_id: cred_id,
                passkey: serde_json::to_string(&passkey).map_err(Error::internal)?,
                kind,
                aaguid: auth.aaguid.map(|a| a.to_vec()),
                device: label.clone(),
                name: label,
                backup_eligible: auth.backup_eligible(),
                backed_up: auth.backed_up(),
                sign_count: auth.sign_count,
                created_at: now,
                last_used_at: None,
            };
            store::credentials::insert(tx, t, &credential)?;
            let session = if new_session {
                let amr = sessions::passkey_amr(credential.backup_eligible);
                Some(sessions::create(tx, t, user.id, amr, now, session_ttl)?)
            } else {
                None
            };
            let user = store::users::by_id(tx, t, user.id)?.ok_or_else(|| Error::internal("user vanished"))?;
            Ok(Finished {
                response: FinishResponse {
                    credential: CredentialInfo::from_row(&credential),
                    user: UserInfo { id: user.public_id, email: user.email, name: user.name },
                },
                session,
                via,
            })
        })
        .await
}

fn existing_user(tx: &WriteTx<'_>, tenant: TenantId, id: UserId) -> Result<UserRow, Error> {
    store::users::by_id(tx, tenant, id)?.ok_or_else(|| not_allowed("this account no longer exists"))
}
