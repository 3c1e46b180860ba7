//! SCIM 2.0 provisioning (RFC 7643/7644) at `{base_url}/scim/v2`: an enterprise directory
//! (Microsoft Entra ID, Okta) creates, updates, disables and deletes a tenant's users and groups
//! (groups are roles).
//!
//! The client authenticates with the tenant's bearer token (`latchkey scim enable`, stored as
//! its SHA-256). Each resource is read as JSON ([`users`], [`groups`]), filtered ([`filter`])
//! and patched ([`patch`]) in that form, and what it says is then written to Latchkey's own rows
//! in one transaction; every change is audited with `scim` as the actor.

pub mod filter;
pub mod groups;
pub mod patch;
pub mod schemas;
pub mod users;

use latchkey::admin::ScimStatus;
use latchkey::codes;
use serde_json::{Value, json};

use crate::crypto::{b64url, sha256};
use crate::error::{Error, Kind};
use crate::registry::TenantRuntime;
use crate::state::State;
use crate::store::{self, Reader};
use crate::tenants::require;

pub const USER_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:User";
pub const GROUP_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:Group";
pub const LIST_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
pub const PATCH_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
pub const ERROR_SCHEMA: &str = "urn:ietf:params:scim:api:messages:2.0:Error";

/// The most resources one page holds (`count` above it is lowered, as RFC 7644 §3.4.2.4 allows).
pub const MAX_PAGE: usize = 500;

/// The actor of SCIM changes in the audit trail.
pub const ACTOR: &str = "scim";

/// A SCIM error: our stable code, which names its `scimType` ([`scim_type`]); 409 for a
/// uniqueness clash, else 400.
pub fn invalid(code: &'static str, detail: impl Into<String>) -> Error {
    let kind = if code == codes::SCIM_UNIQUENESS { Kind::Conflict } else { Kind::Invalid };
    Error::new(kind, code, detail)
}

/// The `scimType` of an error code, if it has one.
pub fn scim_type(code: &str) -> Option<&'static str> {
    Some(match code {
        codes::SCIM_INVALID_FILTER => "invalidFilter",
        codes::SCIM_INVALID_SYNTAX => "invalidSyntax",
        codes::SCIM_INVALID_VALUE => "invalidValue",
        codes::SCIM_INVALID_PATH => "invalidPath",
        codes::SCIM_NO_TARGET => "noTarget",
        codes::SCIM_UNIQUENESS => "uniqueness",
        codes::SCIM_MUTABILITY => "mutability",
        _ => return None,
    })
}

/// A patch error as a SCIM error.
pub fn patch_error(e: patch::PatchError) -> Error {
    let code = match e.scim_type {
        "invalidPath" => codes::SCIM_INVALID_PATH,
        "noTarget" => codes::SCIM_NO_TARGET,
        "invalidValue" => codes::SCIM_INVALID_VALUE,
        _ => codes::SCIM_INVALID_SYNTAX,
    };
    invalid(code, e.detail)
}

/// What a SCIM call answers: a status, a body, and the resource's version for `ETag`.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Option<Value>,
    pub version: Option<i64>,
    pub location: Option<String>,
}

impl Answer {
    pub fn ok(body: Value) -> Answer {
        Answer { status: 200, body: Some(body), version: None, location: None }
    }
}

/// How a resource is changed: a `PUT`'s whole body, or `PATCH` operations.
pub enum Change {
    Replace(Value),
    Patch(Vec<Value>),
}

/// The resource `change` makes of `current` (whose `id` is `id`): a `PUT`'s body, or `current`
/// with the operations applied. Either way `id` is the server's and may not change.
pub fn changed(current: Value, change: Change, id: &str) -> Result<Value, Error> {
    let wanted = match change {
        Change::Replace(body) => body,
        Change::Patch(ops) => {
            let mut r = current;
            for op in &ops {
                patch::apply(&mut r, op).map_err(patch_error)?;
            }
            r
        }
    };
    match filter::get(&wanted, "id").and_then(Value::as_str) {
        Some(other) if other != id => Err(invalid(codes::SCIM_MUTABILITY, "id cannot change")),
        _ => Ok(wanted),
    }
}

/// A resource's `meta` (RFC 7643 §3.1).
pub fn meta(resource_type: &str, created: i64, updated: i64, version: i64, location: String) -> Value {
    json!({
        "resourceType": resource_type,
        "created": crate::clock::rfc3339(created),
        "lastModified": crate::clock::rfc3339(updated),
        "version": etag(version),
        "location": location,
    })
}

/// `W/"N"`: a resource's version as an entity tag.
pub fn etag(version: i64) -> String {
    format!("W/\"{version}\"")
}

/// Refuses a change whose `If-Match` names another version than `current`.
pub fn check_if_match(if_match: Option<&str>, current: i64) -> Result<(), Error> {
    match if_match.map(str::trim) {
        None | Some("*") => Ok(()),
        Some(tags) if tags.split(',').any(|t| t.trim() == etag(current) || t.trim() == format!("\"{current}\"")) => {
            Ok(())
        }
        Some(_) => Err(Error::new(
            Kind::Conflict,
            codes::PRECONDITION_FAILED,
            format!("the resource changed: its version is now {}; read it again", etag(current)),
        )),
    }
}

/// The scope an application's access token needs to call the SCIM endpoint.
pub const SCOPE: &str = "scim";

/// Checks the caller of a SCIM request: the tenant's SCIM token (`lks_…`), or an access token of
/// the tenant with the `scim` scope (an m2m app's, from the client credentials grant). Either
/// way SCIM must be on for the tenant.
pub fn authenticate(tx: &impl Reader, tenant: &TenantRuntime, token: Option<&str>, now: i64) -> Result<(), Error> {
    let Some(hash) = store::scim::token(tx, tenant.id)? else {
        return Err(Error::not_found(
            codes::NOT_FOUND,
            "SCIM is not enabled for this tenant (latchkey scim enable --tenant SLUG)",
        ));
    };
    let refused = || {
        Error::unauthenticated(
            codes::INVALID_TOKEN,
            "the SCIM bearer token is missing, wrong or rotated (latchkey scim rotate-token), or the access token is \
             not valid",
        )
    };
    let token = token.map(str::trim).filter(|t| !t.is_empty()).ok_or_else(refused)?;
    if token.starts_with("lks_") {
        let given = sha256(token.as_bytes());
        return match aws_lc_rs::constant_time::verify_slices_are_equal(&given, &hash) {
            Ok(()) => Ok(()),
            Err(_) => Err(refused()),
        };
    }
    // An application's own token (client credentials: no user behind it), never a user's, even
    // of an app that has the scope: provisioning is the application's power, not its users'.
    match crate::oidc::introspection::check_access(tx, tenant, token, now) {
        // SCIM clients send Bearer tokens only; a DPoP-bound token is its key holder's alone.
        Ok((claims, _)) if claims.cnf.is_some() => Err(Error::unauthenticated(
            codes::INVALID_TOKEN,
            "a DPoP-bound access token is not accepted as a Bearer token: get one without a DPoP proof",
        )),
        Ok((claims, None)) if claims.has_scope(SCOPE) => Ok(()),
        Ok((_, Some(_))) => Err(Error::forbidden(
            codes::INSUFFICIENT_SCOPE,
            "a user's access token cannot provision: use the application's client-credentials token",
        )),
        Ok(_) => Err(Error::forbidden(codes::INSUFFICIENT_SCOPE, "the access token lacks the scim scope")),
        Err(_) => Err(refused()),
    }
}

/// `startIndex` and `count` of a list request, checked.
pub fn page(start: Option<&str>, count: Option<&str>) -> Result<(usize, usize), Error> {
    let num = |v: Option<&str>, name: &str, default: i64| -> Result<i64, Error> {
        match v {
            None => Ok(default),
            Some(t) => t
                .trim()
                .parse::<i64>()
                .map_err(|_| invalid(codes::SCIM_INVALID_VALUE, format!("{name} {t:?} is not a number"))),
        }
    };
    let start = num(start, "startIndex", 1)?.max(1) as usize;
    let count = num(count, "count", 100)?.clamp(0, MAX_PAGE as i64) as usize;
    Ok((start, count))
}

/// A list response of `all` (filtered, in order), one page of it.
pub fn list_response(all: Vec<Value>, start: usize, count: usize) -> Value {
    let total = all.len();
    let page: Vec<Value> = all.into_iter().skip(start - 1).take(count).collect();
    json!({
        "schemas": [LIST_SCHEMA],
        "totalResults": total,
        "itemsPerPage": page.len(),
        "startIndex": start,
        "Resources": page,
    })
}

/// A fresh bearer token and its stored hash.
fn new_token() -> Result<(String, Vec<u8>), Error> {
    let token = format!("lks_{}", b64url(&crate::crypto::random_bytes::<32>()?));
    let hash = sha256(token.as_bytes()).to_vec();
    Ok((token, hash))
}

fn status_of(tenant: &store::tenants::TenantRow, enabled: bool, token: Option<String>) -> ScimStatus {
    ScimStatus { tenant: tenant.slug.clone(), enabled, base_url: format!("{}/scim/v2", tenant.base_url), token }
}

/// `latchkey scim enable|rotate-token` (`rotate`: only when enabled) and `disable`.
pub async fn set(state: &State, slug: String, enable: bool, rotate: bool) -> Result<ScimStatus, Error> {
    let fresh = if enable { Some(new_token()?) } else { None };
    let status = state
        .db
        .write(move |tx| -> Result<ScimStatus, Error> {
            crate::store::cluster::admin_lock(tx)?;
            let tenant = require(tx, &slug)?;
            let on = store::scim::token(tx, tenant.id)?.is_some();
            if rotate && !on {
                return Err(Error::invalid(
                    codes::INVALID_INPUT,
                    format!("SCIM is not enabled for {slug}: latchkey scim enable --tenant {slug}"),
                ));
            }
            if enable && on && !rotate {
                return Err(Error::conflict(
                    codes::INVALID_INPUT,
                    format!(
                        "SCIM is already enabled for {slug}; a new token is `latchkey scim rotate-token --tenant {slug}` \
                         (the current one stops working)"
                    ),
                ));
            }
            match fresh {
                Some((token, hash)) => {
                    store::scim::set_token(tx, tenant.id, Some(&hash))?;
                    Ok(status_of(&tenant, true, Some(token)))
                }
                None => {
                    store::scim::set_token(tx, tenant.id, None)?;
                    Ok(status_of(&tenant, false, None))
                }
            }
        })
        .await?;
    Ok(status)
}

/// `latchkey scim status`.
pub async fn status(state: &State, slug: String) -> Result<ScimStatus, Error> {
    state
        .db
        .read(move |tx| -> Result<ScimStatus, Error> {
            let tenant = require(tx, &slug)?;
            let on = store::scim::token(tx, tenant.id)?.is_some();
            Ok(status_of(&tenant, on, None))
        })
        .await
}

/// Records a SCIM change in the audit trail.
pub fn audit(state: &State, tenant: &TenantRuntime, action: &str, subject: &str, outcome: &str) {
    let mut e = crate::audit::event(state.clock.now(), Some(&tenant.slug), ACTOR, action, outcome);
    e.subject = Some(subject.to_owned());
    state.audit.record(e);
}

/// A body's JSON object, or a SCIM `invalidSyntax`.
pub fn object(body: &[u8]) -> Result<Value, Error> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| invalid(codes::SCIM_INVALID_SYNTAX, format!("the body is not JSON: {e}")))?;
    if !v.is_object() {
        return Err(invalid(codes::SCIM_INVALID_SYNTAX, "the body must be a JSON object"));
    }
    Ok(v)
}
