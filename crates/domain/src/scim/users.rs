//! SCIM `Users`: a Latchkey user as a SCIM resource, and back.
//!
//! `id` is the user's public id (the `sub` of its tokens). `userName` is what the client chose —
//! usually the e-mail, any unique string otherwise, and then the primary of `emails` is the
//! user's e-mail. `displayName` gives the user's name; `active` its status (`false`: disabled);
//! `groups` its roles (read-only). The other attributes of the core and enterprise User schemas
//! are kept as given and returned as they were.

use std::collections::HashMap;
use std::sync::Arc;

use latchkey::codes;
use serde_json::{Map, Value, json};

use super::filter::{self, Filter};
use super::patch::ENTERPRISE;
use super::{Answer, USER_SCHEMA, invalid};
use crate::clock::Timestamp;
use crate::error::Error;
use crate::registry::TenantRuntime;
use crate::state::State;
use crate::store::scim::ScimUser;
use crate::store::users::{NewUser, UserId, UserRow, normalise_email};
use crate::store::{self, Reader, TenantId, UserStatus, WriteTx};
use crate::webauthn::valid_email;

/// Attributes of the core User schema a client may set, lower case (RFC 7643 §4.1).
const CORE: &[&str] = &[
    "schemas",
    "id",
    "externalid",
    "meta",
    "username",
    "name",
    "displayname",
    "nickname",
    "profileurl",
    "title",
    "usertype",
    "preferredlanguage",
    "locale",
    "timezone",
    "active",
    "emails",
    "phonenumbers",
    "ims",
    "photos",
    "addresses",
    "groups",
    "entitlements",
    "roles",
    "x509certificates",
];

/// Attributes Latchkey answers for itself, never kept among the client's.
const OWN: &[&str] = &["schemas", "id", "meta", "username", "externalid", "groups"];

/// What a resource says, read for Latchkey's rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Desired {
    pub user_name: String,
    pub email: String,
    pub name: String,
    pub active: bool,
    pub external_id: Option<String>,
    /// The other attributes, as given.
    pub attributes: Map<String, Value>,
}

fn bool_of(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        // Entra sends "True" and "False".
        Value::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
        Value::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
        _ => None,
    }
}

fn text(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned)
}

/// The e-mail a resource gives: the primary of `emails`, else a work one, else the first, else
/// `userName` when it is an address.
fn email_of(resource: &Value, user_name: &str) -> Option<String> {
    let emails: Vec<&Value> =
        filter::get(resource, "emails").and_then(Value::as_array).map(|a| a.iter().collect()).unwrap_or_default();
    let pick = emails
        .iter()
        .find(|e| filter::get(e, "primary").and_then(bool_of) == Some(true))
        .or_else(|| emails.iter().find(|e| filter::get(e, "type").and_then(Value::as_str) == Some("work")))
        .or_else(|| emails.first())
        .and_then(|e| text(filter::get(e, "value")));
    pick.or_else(|| valid_email(user_name).then(|| user_name.to_owned()))
}

/// Reads a resource (a POST or PUT body, or the result of a PATCH) for Latchkey's rows.
pub fn desired(resource: &Value) -> Result<Desired, Error> {
    let Some(obj) = resource.as_object() else {
        return Err(invalid(codes::SCIM_INVALID_SYNTAX, "a User is a JSON object"));
    };
    let mut attributes = Map::new();
    for (k, v) in obj {
        let lower = k.to_ascii_lowercase();
        if lower == "password" {
            // Okta sends one when password sync is on: Latchkey has none, so it is dropped,
            // never stored or logged.
            continue;
        }
        if lower.starts_with("urn:") {
            if k == ENTERPRISE || k.eq_ignore_ascii_case(ENTERPRISE) {
                if !v.is_object() {
                    return Err(invalid(codes::SCIM_INVALID_SYNTAX, format!("{k} must be an object")));
                }
                attributes.insert(ENTERPRISE.to_owned(), v.clone());
                continue;
            }
            if lower.starts_with(&USER_SCHEMA.to_ascii_lowercase()) {
                continue; // `urn:…:User:attr` names are not kept that way
            }
            return Err(invalid(codes::SCIM_INVALID_SYNTAX, format!("unknown schema extension {k:?}")));
        }
        if !CORE.contains(&lower.as_str()) {
            let shown: String = k.chars().take(64).collect();
            return Err(invalid(codes::SCIM_INVALID_SYNTAX, format!("unknown attribute {shown:?} of a User")));
        }
        if !OWN.contains(&lower.as_str()) && !v.is_null() {
            attributes.insert(k.clone(), v.clone());
        }
    }
    let user_name = text(filter::get(resource, "userName"))
        .ok_or_else(|| invalid(codes::SCIM_INVALID_VALUE, "userName is required"))?;
    if user_name.chars().count() > 256 || user_name.chars().any(char::is_control) {
        return Err(invalid(codes::SCIM_INVALID_VALUE, "userName must be 1-256 printable characters"));
    }
    let email = email_of(resource, &user_name).ok_or_else(|| {
        invalid(codes::SCIM_INVALID_VALUE, "a user needs an e-mail address: give emails, or an address as userName")
    })?;
    if !valid_email(&email) {
        return Err(invalid(codes::SCIM_INVALID_VALUE, format!("{email:?} is not an e-mail address")));
    }
    let name_obj = filter::get(resource, "name");
    let given = name_obj.and_then(|n| text(filter::get(n, "givenName")));
    let family = name_obj.and_then(|n| text(filter::get(n, "familyName")));
    let name = text(filter::get(resource, "displayName"))
        .or_else(|| name_obj.and_then(|n| text(filter::get(n, "formatted"))))
        .or_else(|| match (given, family) {
            (Some(g), Some(f)) => Some(format!("{g} {f}")),
            (g, f) => g.or(f),
        })
        .unwrap_or_else(|| user_name.clone());
    let name: String = name.chars().filter(|c| !c.is_control()).take(64).collect();
    let active = match filter::get(resource, "active") {
        None | Some(Value::Null) => true,
        Some(v) => bool_of(v).ok_or_else(|| invalid(codes::SCIM_INVALID_VALUE, "active must be true or false"))?,
    };
    // Kept as a boolean, whatever form it came in ("False" from Entra).
    if let Some(k) = attributes.keys().find(|k| k.eq_ignore_ascii_case("active")).cloned() {
        attributes.insert(k, json!(active));
    }
    let external_id = match filter::get(resource, "externalId") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.len() <= 256 => Some(s.clone()),
        Some(_) => return Err(invalid(codes::SCIM_INVALID_VALUE, "externalId must be a string of at most 256 bytes")),
    };
    Ok(Desired { user_name, email, name, active, external_id, attributes })
}

/// A user as a SCIM resource. `groups`: its roles' (id, display name).
pub fn resource(tenant: &TenantRuntime, u: &UserRow, s: Option<&ScimUser>, groups: &[(i64, String)]) -> Value {
    let mut out: Map<String, Value> =
        s.and_then(|s| serde_json::from_str::<Map<String, Value>>(&s.attributes).ok()).unwrap_or_default();
    let mut schemas = vec![json!(USER_SCHEMA)];
    if out.contains_key(ENTERPRISE) {
        schemas.push(json!(ENTERPRISE));
    }
    // The user's e-mail is among the addresses (the client's flags on it are kept).
    let mut emails: Vec<Value> = out.remove("emails").and_then(|v| v.as_array().cloned()).unwrap_or_default();
    let own = normalise_email(&u.email);
    let found = emails
        .iter()
        .any(|e| filter::get(e, "value").and_then(Value::as_str).is_some_and(|v| normalise_email(v) == own));
    if !found {
        for e in emails.iter_mut().filter_map(Value::as_object_mut) {
            e.insert("primary".into(), json!(false));
        }
        emails.insert(0, json!({"value": u.email, "type": "work", "primary": true}));
    }
    out.insert("emails".into(), Value::Array(emails));
    out.insert("schemas".into(), Value::Array(schemas));
    out.insert("id".into(), json!(u.public_id));
    out.insert("userName".into(), json!(s.map(|s| s.user_name.as_str()).unwrap_or(&u.email)));
    if let Some(x) = s.and_then(|s| s.external_id.as_deref()) {
        out.insert("externalId".into(), json!(x));
    }
    // `displayName` and `active` as the client gave them (a user it never named has the name
    // Latchkey knows); a disabled user is `active: false` whoever disabled them.
    if s.is_none() {
        out.insert("displayName".into(), json!(u.name));
        out.insert("active".into(), json!(u.status != UserStatus::Disabled));
    }
    if u.status == UserStatus::Disabled {
        out.insert("active".into(), json!(false));
    } else if out.get("active").and_then(bool_of) == Some(false) {
        // Enabled again from the CLI.
        out.insert("active".into(), json!(true));
    }
    if !groups.is_empty() {
        let g: Vec<Value> = groups
            .iter()
            .map(|(id, name)| {
                json!({"value": id.to_string(), "display": name, "$ref": format!("{}/scim/v2/Groups/{id}", tenant.base_url)})
            })
            .collect();
        out.insert("groups".into(), Value::Array(g));
    }
    let (version, updated) = version_of(u, s);
    let location = format!("{}/scim/v2/Users/{}", tenant.base_url, u.public_id);
    out.insert("meta".into(), super::meta("User", u.created_at, updated, version, location));
    Value::Object(out)
}

/// A user's version and last change: its SCIM row's, else 0 and its creation.
fn version_of(u: &UserRow, s: Option<&ScimUser>) -> (i64, Timestamp) {
    s.map(|s| (s.version, s.updated_at)).unwrap_or((0, u.created_at))
}

fn not_found(id: &str) -> Error {
    let shown: String = id.chars().take(64).collect();
    Error::not_found(codes::USER_NOT_FOUND, format!("no user {shown:?} in this tenant"))
}

/// One user's resource and version.
fn one(tx: &impl Reader, tenant: &TenantRuntime, id: &str) -> Result<(Value, i64, UserRow, Option<ScimUser>), Error> {
    let u = store::users::by_public_id(tx, tenant.id, id)?.ok_or_else(|| not_found(id))?;
    let s = store::scim::user(tx, tenant.id, u.id)?;
    let groups = store::scim::groups_of_user(tx, tenant.id, u.id)?;
    let (version, _) = version_of(&u, s.as_ref());
    Ok((resource(tenant, &u, s.as_ref(), &groups), version, u, s))
}

pub async fn get(state: &State, tenant: &Arc<TenantRuntime>, id: String) -> Result<Answer, Error> {
    let t = Arc::clone(tenant);
    let (body, version) = state
        .db
        .read(move |tx| -> Result<(Value, i64), Error> {
            let (v, version, ..) = one(tx, &t, &id)?;
            Ok((v, version))
        })
        .await?;
    Ok(Answer { status: 200, body: Some(body), version: Some(version), location: None })
}

/// `GET /Users`: filtered, paged. A lookup by `userName`, `externalId` or `id` with `eq` (what
/// provisioning clients send before each creation) reads only the rows it names.
pub async fn list(
    state: &State,
    tenant: &Arc<TenantRuntime>,
    filter: Option<Filter>,
    start: usize,
    count: usize,
) -> Result<Answer, Error> {
    let t = Arc::clone(tenant);
    let all = state
        .db
        .read(move |tx| -> Result<Vec<Value>, Error> {
            let tid = t.id;
            let candidates: Vec<UserRow> = match filter.as_ref().and_then(filter::simple_eq) {
                Some(("username", name)) => match store::scim::user_by_name(tx, tid, name)? {
                    Some(s) => store::users::by_id(tx, tid, s.user_id)?.into_iter().collect(),
                    // A user without a SCIM row answers to their e-mail.
                    None => match store::users::by_email(tx, tid, name)? {
                        Some(u) if store::scim::user(tx, tid, u.id)?.is_none() => vec![u],
                        _ => vec![],
                    },
                },
                Some(("externalid", x)) => {
                    let mut v = vec![];
                    for s in store::scim::users_by_external_id(tx, tid, x)? {
                        v.extend(store::users::by_id(tx, tid, s.user_id)?);
                    }
                    v
                }
                Some(("id", id)) => store::users::by_public_id(tx, tid, id)?.into_iter().collect(),
                _ => store::users::list(tx, tid, None, None)?,
            };
            let mut out = vec![];
            if candidates.len() <= 1 {
                // A lookup: this user's rows only, however large the tenant.
                for u in &candidates {
                    let r = resource(
                        &t,
                        u,
                        store::scim::user(tx, tid, u.id)?.as_ref(),
                        &store::scim::groups_of_user(tx, tid, u.id)?,
                    );
                    if filter.as_ref().is_none_or(|f| filter::matches(f, &r)) {
                        out.push(r);
                    }
                }
                return Ok(out);
            }
            // A listing: every SCIM row, role and group name of the tenant, each read once.
            let rows: HashMap<UserId, ScimUser> =
                store::scim::users(tx, tid)?.into_iter().map(|s| (s.user_id, s)).collect();
            let roles = store::roles::by_user(tx, tid)?;
            let role_ids: HashMap<String, i64> =
                store::roles::list(tx, tid)?.into_iter().map(|r| (r.name, r.id)).collect();
            let displays: HashMap<i64, String> =
                store::scim::groups(tx, tid)?.into_iter().map(|g| (g.role_id, g.display_name)).collect();
            for u in &candidates {
                let groups: Vec<(i64, String)> = roles
                    .get(&u.id)
                    .map(|names| {
                        names
                            .iter()
                            .filter_map(|n| {
                                role_ids.get(n).map(|id| (*id, displays.get(id).cloned().unwrap_or(n.clone())))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let r = resource(&t, u, rows.get(&u.id), &groups);
                if filter.as_ref().is_none_or(|f| filter::matches(f, &r)) {
                    out.push(r);
                }
            }
            Ok(out)
        })
        .await?;
    Ok(Answer::ok(super::list_response(all, start, count)))
}

/// Refuses a userName or e-mail another user has.
fn check_unique(tx: &impl Reader, tenant: TenantId, d: &Desired, me: Option<UserId>) -> Result<(), Error> {
    let taken = |what: &str| invalid(codes::SCIM_UNIQUENESS, format!("{what} is already another user's"));
    if let Some(s) = store::scim::user_by_name(tx, tenant, &d.user_name)?
        && Some(s.user_id) != me
    {
        return Err(taken(&format!("userName {:?}", d.user_name)));
    }
    // A userName that is another user's e-mail (users invited by the CLI answer to theirs).
    if let Some(u) = store::users::by_email(tx, tenant, &d.user_name)?
        && Some(u.id) != me
        && store::scim::user(tx, tenant, u.id)?.is_none()
    {
        return Err(taken(&format!("userName {:?}", d.user_name)));
    }
    if let Some(u) = store::users::by_email(tx, tenant, &d.email)?
        && Some(u.id) != me
    {
        return Err(taken(&format!("the e-mail address {:?}", d.email)));
    }
    Ok(())
}

/// A userName or e-mail taken by a concurrent call on another node (PostgreSQL): the same
/// answer as [`check_unique`]'s.
fn taken_meanwhile(e: store::StoreError) -> Error {
    if e.is_unique_violation() {
        invalid(codes::SCIM_UNIQUENESS, "the userName or e-mail was taken meanwhile by another user")
    } else {
        e.into()
    }
}

fn attributes_json(d: &Desired) -> Result<String, Error> {
    serde_json::to_string(&d.attributes).map_err(Error::internal)
}

/// Writes what `d` says of an existing user: name, e-mail, status, SCIM row (next version).
fn store_change(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    u: &UserRow,
    cur: Option<&ScimUser>,
    d: &Desired,
    now: Timestamp,
) -> Result<i64, Error> {
    check_unique(tx, tenant, d, Some(u.id))?;
    if d.name != u.name {
        store::users::set_name(tx, tenant, u.id, &d.name)?;
    }
    if normalise_email(&d.email) != normalise_email(&u.email) {
        store::users::set_email(tx, tenant, u.id, &d.email)?;
    }
    match (d.active, u.status) {
        (false, UserStatus::Disabled) | (true, UserStatus::Active | UserStatus::Invited) => {}
        (false, _) => {
            // Disabled: every session ends (the apps told of them get a logout token), every
            // grant is revoked.
            store::users::set_status(tx, tenant, u.id, UserStatus::Disabled)?;
            store::users::sign_out_everywhere(tx, tenant, u.id, now)?;
        }
        (true, UserStatus::Disabled) => {
            let has = store::credentials::count_for_user(tx, tenant, u.id)? > 0;
            store::users::set_status(tx, tenant, u.id, if has { UserStatus::Active } else { UserStatus::Invited })?;
        }
    }
    let version = cur.map(|c| c.version).unwrap_or(0) + 1;
    store::scim::put_user(
        tx,
        tenant,
        &ScimUser {
            user_id: u.id,
            user_name: d.user_name.clone(),
            external_id: d.external_id.clone(),
            attributes: attributes_json(d)?,
            version,
            updated_at: now,
        },
    )
    .map_err(taken_meanwhile)?;
    Ok(version)
}

/// `POST /Users`: a new user, invited (e-mailed when `[smtp]` is set) unless created inactive.
pub async fn create(state: &State, tenant: &Arc<TenantRuntime>, body: Value) -> Result<Answer, Error> {
    let d = desired(&body)?;
    let now = state.clock.now();
    let ids = crate::ids::new_user()?;
    let expires_at = now + state.config.tokens.invite.as_secs() as i64;
    let t = Arc::clone(tenant);
    let (answer, invite) = state
        .db
        .write(move |tx| -> Result<(Value, Option<(String, String)>), Error> {
            let tid = t.id;
            check_unique(tx, tid, &d, None)?;
            let status = if d.active { UserStatus::Invited } else { UserStatus::Disabled };
            let id = store::users::insert(
                tx,
                tid,
                &NewUser {
                    public_id: &ids.public_id,
                    user_handle: &ids.handle,
                    email: &d.email,
                    name: &d.name,
                    status,
                    created_at: now,
                },
            )
            .map_err(taken_meanwhile)?;
            store::scim::put_user(
                tx,
                tid,
                &ScimUser {
                    user_id: id,
                    user_name: d.user_name.clone(),
                    external_id: d.external_id.clone(),
                    attributes: attributes_json(&d)?,
                    version: 1,
                    updated_at: now,
                },
            )
            .map_err(taken_meanwhile)?;
            let invite = if d.active {
                store::invites::insert(tx, tid, id, &ids.token_key, store::InvitePurpose::Invite, now, expires_at)?;
                Some((d.email.clone(), format!("{}/invite/{}", t.base_url, ids.token)))
            } else {
                None
            };
            let (v, ..) = one(tx, &t, &ids.public_id)?;
            Ok((v, invite))
        })
        .await?;
    let id = answer["id"].as_str().unwrap_or_default().to_owned();
    super::audit(state, tenant, "user.invite", answer["userName"].as_str().unwrap_or_default(), "success");
    if let Some((email, url)) = invite {
        let name = answer["displayName"].as_str().unwrap_or_default();
        crate::users::send_invitation(state, tenant, &email, name, &url, expires_at).await;
    }
    Ok(Answer {
        status: 201,
        location: Some(format!("{}/scim/v2/Users/{id}", tenant.base_url)),
        version: Some(1),
        body: Some(answer),
    })
}

/// `PUT /Users/{id}` (a whole resource) or `PATCH` (operations on the current one).
pub async fn update(
    state: &State,
    tenant: &Arc<TenantRuntime>,
    id: String,
    change: super::Change,
    if_match: Option<String>,
) -> Result<Answer, Error> {
    let now = state.clock.now();
    let t = Arc::clone(tenant);
    let (body, version, was_active) = state
        .db
        .write(move |tx| -> Result<(Value, i64, bool), Error> {
            let (current, version, u, s) = one(tx, &t, &id)?;
            super::check_if_match(if_match.as_deref(), version)?;
            store::users::lock(tx, t.id, u.id)?;
            let wanted = super::changed(current, change, &u.public_id)?;
            let d = desired(&wanted)?;
            let was_active = u.status != UserStatus::Disabled;
            let version = store_change(tx, t.id, &u, s.as_ref(), &d, now)?;
            let (v, ..) = one(tx, &t, &u.public_id)?;
            Ok((v, version, was_active))
        })
        .await?;
    let subject = body["userName"].as_str().unwrap_or_default().to_owned();
    let active = body["active"].as_bool().unwrap_or(true);
    let action = match (was_active, active) {
        (true, false) => "user.disable",
        (false, true) => "user.enable",
        _ => "user.update",
    };
    super::audit(state, tenant, action, &subject, "success");
    Ok(Answer { status: 200, body: Some(body), version: Some(version), location: None })
}

/// `DELETE /Users/{id}`: the user and everything they own go; their sessions end.
pub async fn delete(
    state: &State,
    tenant: &Arc<TenantRuntime>,
    id: String,
    if_match: Option<String>,
) -> Result<Answer, Error> {
    let now = state.clock.now();
    let t = Arc::clone(tenant);
    let subject = state
        .db
        .write(move |tx| -> Result<String, Error> {
            let (current, version, u, _) = one(tx, &t, &id)?;
            super::check_if_match(if_match.as_deref(), version)?;
            store::users::delete(tx, t.id, u.id, now)?;
            Ok(current["userName"].as_str().unwrap_or_default().to_owned())
        })
        .await?;
    super::audit(state, tenant, "user.delete", &subject, "success");
    Ok(Answer { status: 204, body: None, version: None, location: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_entra_and_okta_users() {
        let entra = json!({
            "schemas": [USER_SCHEMA, ENTERPRISE],
            "externalId": "ada", "userName": "ada@contoso.com", "active": "True",
            "displayName": "Ada Lovelace",
            "emails": [{"primary": true, "type": "work", "value": "ada@contoso.com"}],
            "name": {"formatted": "Ada Lovelace", "familyName": "Lovelace", "givenName": "Ada"},
            "title": "Countess", "preferredLanguage": "en-GB",
            ENTERPRISE: {"department": "Maths", "employeeNumber": "1"}
        });
        let d = desired(&entra).unwrap();
        assert_eq!((d.email.as_str(), d.name.as_str(), d.active), ("ada@contoso.com", "Ada Lovelace", true));
        assert_eq!(d.external_id.as_deref(), Some("ada"));
        assert!(d.attributes.contains_key("title") && d.attributes.contains_key(ENTERPRISE));
        assert!(!d.attributes.contains_key("userName") && d.attributes.contains_key("active"));
        let okta = json!({"userName": "bea", "name": {"givenName": "Bea", "familyName": "Smith"},
                          "emails": [{"value": "bea@okta.test", "type": "work", "primary": true}], "active": true});
        let d = desired(&okta).unwrap();
        assert_eq!((d.user_name.as_str(), d.email.as_str(), d.name.as_str()), ("bea", "bea@okta.test", "Bea Smith"));
    }

    #[test]
    fn refuses_what_a_user_cannot_be() {
        let code = |v: Value| desired(&v).unwrap_err().code;
        assert_eq!(code(json!({"emails": [{"value": "a@b.c"}]})), codes::SCIM_INVALID_VALUE);
        assert_eq!(code(json!({"userName": "ada"})), codes::SCIM_INVALID_VALUE, "no e-mail");
        assert_eq!(code(json!({"userName": "a@b.c", "shoeSize": 9})), codes::SCIM_INVALID_SYNTAX);
        assert!(!desired(&json!({"userName": "a@b.c", "password": "x"})).unwrap().attributes.contains_key("password"));
        assert_eq!(code(json!({"userName": "a@b.c", "active": "maybe"})), codes::SCIM_INVALID_VALUE);
        assert_eq!(code(json!({"userName": "a@b.c", "urn:x:y": {}})), codes::SCIM_INVALID_SYNTAX);
        assert_eq!(code(json!([1])), codes::SCIM_INVALID_SYNTAX);
    }
}
