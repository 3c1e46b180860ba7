//! SCIM `Groups`: a role as a SCIM group, its `members` the users who have it.
//!
//! `id` is the role's number. A group created by a client becomes a role named after its
//! `displayName` in the role alphabet (`Sales Team` → `sales-team`, the `roles` claim of tokens);
//! the role keeps that name when the group is renamed, so tokens do not change under the apps.

use std::collections::HashMap;
use std::sync::Arc;

use latchkey::codes;
use serde_json::{Map, Value, json};

use super::filter::{self, Filter};
use super::{Answer, GROUP_SCHEMA, invalid};
use crate::clock::Timestamp;
use crate::error::Error;
use crate::registry::TenantRuntime;
use crate::state::State;
use crate::store::roles::RoleRow;
use crate::store::scim::ScimGroup;
use crate::store::{self, Reader, TenantId, WriteTx};
use crate::users::roles::valid_name;

/// What a group resource says.
#[derive(Debug, Clone, PartialEq)]
pub struct Desired {
    pub display_name: String,
    pub external_id: Option<String>,
    /// Its members' ids (user public ids), without repeats.
    pub members: Vec<String>,
}

/// Reads a group resource.
pub fn desired(resource: &Value) -> Result<Desired, Error> {
    let Some(obj) = resource.as_object() else {
        return Err(invalid(codes::SCIM_INVALID_SYNTAX, "a Group is a JSON object"));
    };
    for k in obj.keys() {
        let lower = k.to_ascii_lowercase();
        let known = ["schemas", "id", "externalid", "meta", "displayname", "members"].contains(&lower.as_str())
            || lower.starts_with(&GROUP_SCHEMA.to_ascii_lowercase());
        if !known {
            let shown: String = k.chars().take(64).collect();
            return Err(invalid(codes::SCIM_INVALID_SYNTAX, format!("unknown attribute {shown:?} of a Group")));
        }
    }
    let display_name = filter::get(resource, "displayName")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty() && s.chars().count() <= 256 && !s.chars().any(char::is_control))
        .ok_or_else(|| invalid(codes::SCIM_INVALID_VALUE, "displayName is required: 1-256 printable characters"))?
        .to_owned();
    let external_id = match filter::get(resource, "externalId") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.len() <= 256 => Some(s.clone()),
        Some(_) => return Err(invalid(codes::SCIM_INVALID_VALUE, "externalId must be a string")),
    };
    let mut members: Vec<String> = vec![];
    match filter::get(resource, "members") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for m in items {
                let id = filter::get(m, "value")
                    .and_then(Value::as_str)
                    .ok_or_else(|| invalid(codes::SCIM_INVALID_VALUE, "each member needs a value (a user's id)"))?;
                if !members.iter().any(|x| x == id) {
                    members.push(id.to_owned());
                }
            }
        }
        Some(_) => return Err(invalid(codes::SCIM_INVALID_SYNTAX, "members must be an array")),
    }
    Ok(Desired { display_name, external_id, members })
}

/// The role name for a group's display name: lower case letters and digits, other runs as `-`.
pub fn role_name(display: &str) -> String {
    let mut out = String::new();
    for c in display.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out: String = out.trim_end_matches('-').chars().take(64).collect();
    if out.is_empty() { "group".to_owned() } else { out.trim_end_matches('-').to_owned() }
}

/// A role as a SCIM group.
pub fn resource(tenant: &TenantRuntime, role: &RoleRow, g: Option<&ScimGroup>, members: &[String]) -> Value {
    let mut out = Map::new();
    out.insert("schemas".into(), json!([GROUP_SCHEMA]));
    out.insert("id".into(), json!(role.id.to_string()));
    out.insert("displayName".into(), json!(g.map(|g| g.display_name.as_str()).unwrap_or(&role.name)));
    if let Some(x) = g.and_then(|g| g.external_id.as_deref()) {
        out.insert("externalId".into(), json!(x));
    }
    let m: Vec<Value> = members
        .iter()
        .map(|id| json!({"value": id, "$ref": format!("{}/scim/v2/Users/{id}", tenant.base_url), "type": "User"}))
        .collect();
    out.insert("members".into(), Value::Array(m));
    let (version, updated) = version_of(role, g);
    let location = format!("{}/scim/v2/Groups/{}", tenant.base_url, role.id);
    out.insert("meta".into(), super::meta("Group", role.created_at, updated, version, location));
    Value::Object(out)
}

fn version_of(role: &RoleRow, g: Option<&ScimGroup>) -> (i64, Timestamp) {
    g.map(|g| (g.version, g.updated_at)).unwrap_or((0, role.created_at))
}

fn not_found(id: &str) -> Error {
    let shown: String = id.chars().take(64).collect();
    Error::not_found(codes::UNKNOWN_ROLE, format!("no group {shown:?} in this tenant"))
}

/// A role with its SCIM row (if a client has written it) and its members' user ids.
type Group = (RoleRow, Option<ScimGroup>, Vec<String>);

/// Every group of a tenant with its SCIM row and members.
fn all(tx: &impl Reader, tenant: TenantId) -> Result<Vec<Group>, Error> {
    let mut scim: HashMap<i64, ScimGroup> =
        store::scim::groups(tx, tenant)?.into_iter().map(|g| (g.role_id, g)).collect();
    let mut members: HashMap<i64, Vec<String>> = HashMap::new();
    for (role, user) in store::scim::memberships(tx, tenant)? {
        members.entry(role).or_default().push(user);
    }
    Ok(store::roles::list(tx, tenant)?
        .into_iter()
        .map(|r| {
            let g = scim.remove(&r.id);
            let m = members.remove(&r.id).unwrap_or_default();
            (r, g, m)
        })
        .collect())
}

fn one(tx: &impl Reader, tenant: TenantId, id: &str) -> Result<Group, Error> {
    find(&all(tx, tenant)?, id)
}

/// The group `id` names among `groups`.
fn find(groups: &[Group], id: &str) -> Result<Group, Error> {
    let n: i64 = id.parse().map_err(|_| not_found(id))?;
    groups.iter().find(|(r, ..)| r.id == n).cloned().ok_or_else(|| not_found(id))
}

/// Whether the client asked to leave `members` out (`excludedAttributes=members`).
fn without_members(mut v: Value, excluded: bool) -> Value {
    if excluded && let Some(o) = v.as_object_mut() {
        o.remove("members");
    }
    v
}

pub async fn get(
    state: &State,
    tenant: &Arc<TenantRuntime>,
    id: String,
    exclude_members: bool,
) -> Result<Answer, Error> {
    let t = Arc::clone(tenant);
    let (body, version) = state
        .db
        .read(move |tx| -> Result<(Value, i64), Error> {
            let (r, g, m) = one(tx, t.id, &id)?;
            Ok((resource(&t, &r, g.as_ref(), &m), version_of(&r, g.as_ref()).0))
        })
        .await?;
    Ok(Answer {
        status: 200,
        body: Some(without_members(body, exclude_members)),
        version: Some(version),
        location: None,
    })
}

pub async fn list(
    state: &State,
    tenant: &Arc<TenantRuntime>,
    filter: Option<Filter>,
    start: usize,
    count: usize,
    exclude_members: bool,
) -> Result<Answer, Error> {
    let t = Arc::clone(tenant);
    let found = state
        .db
        .read(move |tx| -> Result<Vec<Value>, Error> {
            Ok(all(tx, t.id)?
                .iter()
                .map(|(r, g, m)| resource(&t, r, g.as_ref(), m))
                .filter(|v| filter.as_ref().is_none_or(|f| filter::matches(f, v)))
                .map(|v| without_members(v, exclude_members))
                .collect())
        })
        .await?;
    Ok(Answer::ok(super::list_response(found, start, count)))
}

/// Makes the role's members those of `wanted`; unknown user ids are refused.
fn set_members(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    role: i64,
    current: &[String],
    wanted: &[String],
) -> Result<(), Error> {
    for id in wanted.iter().filter(|id| !current.contains(id)) {
        let u = store::users::by_public_id(tx, tenant, id)?
            .ok_or_else(|| invalid(codes::SCIM_INVALID_VALUE, format!("member {id:?} is not a user of this tenant")))?;
        store::roles::assign(tx, tenant, u.id, role)?;
    }
    for id in current.iter().filter(|id| !wanted.contains(id)) {
        if let Some(u) = store::users::by_public_id(tx, tenant, id)? {
            store::roles::unassign(tx, tenant, u.id, role)?;
        }
    }
    Ok(())
}

fn check_display_free(groups: &[Group], d: &Desired, me: Option<i64>) -> Result<(), Error> {
    let taken = groups.iter().any(|(r, g, _)| {
        Some(r.id) != me && g.as_ref().map_or(&r.name, |g| &g.display_name).eq_ignore_ascii_case(&d.display_name)
    });
    if taken {
        return Err(invalid(codes::SCIM_UNIQUENESS, format!("a group named {:?} exists", d.display_name)));
    }
    Ok(())
}

/// `POST /Groups`: a new role and its members.
pub async fn create(state: &State, tenant: &Arc<TenantRuntime>, body: Value) -> Result<Answer, Error> {
    let d = desired(&body)?;
    let now = state.clock.now();
    let t = Arc::clone(tenant);
    let body = state
        .db
        .write(move |tx| -> Result<Value, Error> {
            check_display_free(&all(tx, t.id)?, &d, None)?;
            let name = role_name(&d.display_name);
            if !valid_name(&name) || store::roles::by_name(tx, t.id, &name)?.is_some() {
                return Err(invalid(
                    codes::SCIM_UNIQUENESS,
                    format!("the role {name:?} that the group would be exists; rename the group"),
                ));
            }
            store::roles::insert(tx, t.id, &name, &d.display_name, now)?;
            let role = store::roles::by_name(tx, t.id, &name)?.ok_or_else(|| Error::internal("role vanished"))?;
            store::scim::put_group(
                tx,
                t.id,
                &ScimGroup {
                    role_id: role.id,
                    display_name: d.display_name.clone(),
                    external_id: d.external_id.clone(),
                    version: 1,
                    updated_at: now,
                },
            )?;
            set_members(tx, t.id, role.id, &[], &d.members)?;
            let (r, g, m) = one(tx, t.id, &role.id.to_string())?;
            Ok(resource(&t, &r, g.as_ref(), &m))
        })
        .await?;
    super::audit(state, tenant, "role.create", body["displayName"].as_str().unwrap_or_default(), "success");
    let id = body["id"].as_str().unwrap_or_default().to_owned();
    Ok(Answer {
        status: 201,
        location: Some(format!("{}/scim/v2/Groups/{id}", tenant.base_url)),
        version: Some(1),
        body: Some(body),
    })
}

/// `PUT` or `PATCH /Groups/{id}`.
pub async fn update(
    state: &State,
    tenant: &Arc<TenantRuntime>,
    id: String,
    change: super::Change,
    if_match: Option<String>,
) -> Result<Answer, Error> {
    let now = state.clock.now();
    let t = Arc::clone(tenant);
    let (body, version) = state
        .db
        .write(move |tx| -> Result<(Value, i64), Error> {
            let groups = all(tx, t.id)?;
            let (role, g, members) = find(&groups, &id)?;
            let (current_version, _) = version_of(&role, g.as_ref());
            super::check_if_match(if_match.as_deref(), current_version)?;
            let current = resource(&t, &role, g.as_ref(), &members);
            let wanted = super::changed(current, change, &role.id.to_string())?;
            let d = desired(&wanted)?;
            check_display_free(&groups, &d, Some(role.id))?;
            set_members(tx, t.id, role.id, &members, &d.members)?;
            if d.display_name != role.description {
                store::roles::set_description(tx, t.id, role.id, &d.display_name)?;
            }
            let version = current_version + 1;
            store::scim::put_group(
                tx,
                t.id,
                &ScimGroup {
                    role_id: role.id,
                    display_name: d.display_name,
                    external_id: d.external_id,
                    version,
                    updated_at: now,
                },
            )?;
            let (r, g, m) = one(tx, t.id, &role.id.to_string())?;
            Ok((resource(&t, &r, g.as_ref(), &m), version))
        })
        .await?;
    super::audit(state, tenant, "role.update", body["displayName"].as_str().unwrap_or_default(), "success");
    Ok(Answer { status: 200, body: Some(body), version: Some(version), location: None })
}

/// `DELETE /Groups/{id}`: the role goes; its users keep everything else.
pub async fn delete(
    state: &State,
    tenant: &Arc<TenantRuntime>,
    id: String,
    if_match: Option<String>,
) -> Result<Answer, Error> {
    let t = Arc::clone(tenant);
    let name = state
        .db
        .write(move |tx| -> Result<String, Error> {
            let (role, g, _) = one(tx, t.id, &id)?;
            super::check_if_match(if_match.as_deref(), version_of(&role, g.as_ref()).0)?;
            store::roles::delete(tx, t.id, role.id)?;
            Ok(role.name)
        })
        .await?;
    super::audit(state, tenant, "role.delete", &name, "success");
    Ok(Answer { status: 204, body: None, version: None, location: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_names_from_display_names() {
        assert_eq!(role_name("Sales Team"), "sales-team");
        assert_eq!(role_name("  R&D / Europe "), "r-d-europe");
        assert_eq!(role_name("管理者"), "group");
        assert!(valid_name(&role_name("Ops: Night Shift (EU)")));
    }

    #[test]
    fn reads_groups() {
        let d = desired(
            &json!({"schemas": [GROUP_SCHEMA], "displayName": "Staff", "members": [{"value": "a"}, {"value": "a"}]}),
        )
        .unwrap();
        assert_eq!(d.members, vec!["a".to_owned()]);
        assert_eq!(desired(&json!({"displayName": ""})).unwrap_err().code, codes::SCIM_INVALID_VALUE);
        assert_eq!(desired(&json!({"displayName": "x", "owner": 1})).unwrap_err().code, codes::SCIM_INVALID_SYNTAX);
    }
}
