//! What the audit trail keeps of admin calls: one event per mutation, with a typed action
//! (`app.create`, `user.disable`, …), the socket peer as actor (`uid:0`), the tenant, the object
//! as subject (an e-mail, a Client ID, a key id, a role, a provider) and the outcome (`success`,
//! or `failure: <error code>` — the same words as the end-user events). Reads are not recorded:
//! the trail is about what changed, and `--follow` polls would drown it.

use latchkey::admin::ApplyResult;

use super::route::AdminRoute;
use latchkey_domain::state::State;
use latchkey_store::audit::Event;

/// Every admin mutation the trail names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminAction {
    TenantCreate,
    TenantUpdate,
    TenantBrand,
    TenantDelete,
    AppCreate,
    AppUpdate,
    AppDelete,
    AppRotateSecret,
    KeyRotate,
    KeyRetire,
    UserInvite,
    UserImport,
    UserReinvite,
    UserDisable,
    UserEnable,
    UserDelete,
    UserRecover,
    RoleCreate,
    RoleDelete,
    RoleAssign,
    RoleUnassign,
    CredentialRevoke,
    SocialEnable,
    SocialDisable,
    Apply,
    Backup,
    MdsImport,
    ScimEnable,
    ScimRotateToken,
    ScimDisable,
    WebhookAdd,
    WebhookRemove,
    WebhookRedeliver,
}

impl AdminAction {
    pub fn as_str(self) -> &'static str {
        use AdminAction as A;
        match self {
            A::TenantCreate => "tenant.create",
            A::TenantUpdate => "tenant.update",
            A::TenantBrand => "tenant.brand",
            A::TenantDelete => "tenant.delete",
            A::AppCreate => "app.create",
            A::AppUpdate => "app.update",
            A::AppDelete => "app.delete",
            A::AppRotateSecret => "app.rotate_secret",
            A::KeyRotate => "key.rotate",
            A::KeyRetire => "key.retire",
            A::UserInvite => "user.invite",
            A::UserImport => "user.import",
            A::UserReinvite => "user.reinvite",
            A::UserDisable => "user.disable",
            A::UserEnable => "user.enable",
            A::UserDelete => "user.delete",
            A::UserRecover => "user.recover",
            A::RoleCreate => "role.create",
            A::RoleDelete => "role.delete",
            A::RoleAssign => "role.assign",
            A::RoleUnassign => "role.unassign",
            A::CredentialRevoke => "credential.revoke",
            A::SocialEnable => "social.enable",
            A::SocialDisable => "social.disable",
            A::Apply => "apply",
            A::Backup => "backup",
            A::MdsImport => "mds.import",
            A::ScimEnable => "scim.enable",
            A::ScimRotateToken => "scim.rotate_token",
            A::ScimDisable => "scim.disable",
            A::WebhookAdd => "webhook.add",
            A::WebhookRemove => "webhook.remove",
            A::WebhookRedeliver => "webhook.redeliver",
        }
    }
}

/// The action a call performs and the subject its path names; `None` for reads. Exhaustive on
/// purpose: a new route does not compile until it says whether and how it is audited.
pub fn action(route: &AdminRoute) -> Option<(AdminAction, Option<&str>)> {
    use AdminAction as Act;
    use AdminRoute as A;
    let (act, subject) = match route {
        A::Status
        | A::TenantList
        | A::TenantShow(_)
        | A::AppList(_)
        | A::AppShow(..)
        | A::KeyList(_)
        | A::UserList(_)
        | A::UserShow(..)
        | A::UserCredentials(..)
        | A::RoleList(_)
        | A::SocialList(_)
        | A::Audit(_)
        | A::AuditAll
        | A::Export(_)
        | A::MdsStatus
        | A::ScimStatus(_)
        | A::WebhookList(_)
        | A::WebhookDeliveries(_) => return None,
        A::TenantCreate => (Act::TenantCreate, None),
        A::TenantUpdate(slug) => (Act::TenantUpdate, Some(slug)),
        A::TenantBrand(slug) => (Act::TenantBrand, Some(slug)),
        A::TenantDelete(slug) => (Act::TenantDelete, Some(slug)),
        A::AppCreate(_) => (Act::AppCreate, None),
        A::AppUpdate(_, id) => (Act::AppUpdate, Some(id)),
        A::AppDelete(_, id) => (Act::AppDelete, Some(id)),
        A::AppRotateSecret(_, id) => (Act::AppRotateSecret, Some(id)),
        A::KeyRotate(_) => (Act::KeyRotate, None),
        A::KeyRetire(_, kid) => (Act::KeyRetire, Some(kid)),
        A::UserInvite(_) => (Act::UserInvite, None),
        A::UserImport(_) => (Act::UserImport, None),
        A::UserReinvite(_) => (Act::UserReinvite, None),
        A::UserDelete(_, e) => (Act::UserDelete, Some(e)),
        A::UserDisable(_, e) => (Act::UserDisable, Some(e)),
        A::UserEnable(_, e) => (Act::UserEnable, Some(e)),
        A::UserRecover(_, e) => (Act::UserRecover, Some(e)),
        A::UserCredentialRevoke(_, e, _) => (Act::CredentialRevoke, Some(e)),
        A::RoleCreate(_) => (Act::RoleCreate, None),
        A::RoleDelete(_, r) => (Act::RoleDelete, Some(r)),
        A::RoleAssign(_, r) => (Act::RoleAssign, Some(r)),
        A::RoleUnassign(_, r) => (Act::RoleUnassign, Some(r)),
        A::SocialEnable(_) => (Act::SocialEnable, None),
        A::SocialDisable(_, p) => (Act::SocialDisable, Some(p)),
        A::Apply => (Act::Apply, None),
        A::Backup => (Act::Backup, None),
        A::MdsImport => (Act::MdsImport, None),
        A::ScimSet(_, super::route::ScimChange::Enable) => (Act::ScimEnable, None),
        A::ScimSet(_, super::route::ScimChange::RotateToken) => (Act::ScimRotateToken, None),
        A::ScimSet(_, super::route::ScimChange::Disable) => (Act::ScimDisable, None),
        A::WebhookCreate(_) => (Act::WebhookAdd, None),
        A::WebhookDelete(_, id) => (Act::WebhookRemove, Some(id)),
        A::WebhookRedeliver(_, id) => (Act::WebhookRedeliver, Some(id)),
    };
    Some((act, subject.map(String::as_str)))
}

/// The actor of an admin call: the socket peer's uid (SO_PEERCRED).
pub fn actor(uid: u32) -> String {
    format!("uid:{uid}")
}

/// What a call adds to its event beyond its route: filled by the handler as it learns it (the
/// slug of a new tenant, the Client ID of a new app, a detail), so a refused call still names what
/// it was about.
#[derive(Debug, Default)]
pub struct Note {
    pub tenant: Option<String>,
    pub subject: Option<String>,
    pub detail: Option<String>,
    /// `apply`: one event per tenant of the file, with that tenant's changes.
    pub per_tenant: Vec<(String, Option<String>)>,
    /// One event per subject (a role given to several users: each user is the subject of one,
    /// so `latchkey audit --user` finds who was given it).
    pub per_subject: Vec<String>,
    /// The handler records the event itself (a streamed import, whose counts come at the end),
    /// or records nothing (a dry run changes nothing).
    pub recorded_elsewhere: bool,
}

impl Note {
    /// Fills `per_tenant` from an apply's result: each tenant's change lines.
    pub fn applied(&mut self, result: &ApplyResult) {
        for (slug, detail) in &mut self.per_tenant {
            let lines: Vec<&str> = result
                .plan
                .iter()
                .zip(&result.changes)
                .filter(|(p, _)| &p.tenant == slug)
                .map(|(_, line)| line.as_str())
                .collect();
            *detail = Some(if lines.is_empty() { "no changes".into() } else { lines.join("; ") });
        }
    }
}

/// Records the events of one admin call.
pub fn record(state: &State, route: &AdminRoute, uid: u32, note: Note, outcome: &str) {
    let Some((act, path_subject)) = action(route) else { return };
    if note.recorded_elsewhere {
        return;
    }
    let subject = note.subject.clone().or_else(|| path_subject.map(str::to_owned));
    let event = |tenant: Option<String>, subject: Option<String>, detail: Option<String>| Event {
        at: state.clock.now(),
        tenant,
        actor: actor(uid),
        action: act.as_str().to_owned(),
        outcome: outcome.to_owned(),
        ip: None,
        subject,
        detail,
    };
    let tenant = || note.tenant.clone().or_else(|| route.tenant().map(str::to_owned));
    if !note.per_subject.is_empty() {
        for s in &note.per_subject {
            state.audit.record(event(tenant(), Some(s.clone()), note.detail.clone()));
        }
    } else if note.per_tenant.is_empty() {
        state.audit.record(event(tenant(), subject, note.detail.clone()));
    } else {
        for (slug, detail) in &note.per_tenant {
            state.audit.record(event(
                Some(slug.clone()),
                subject.clone(),
                detail.clone().or_else(|| note.detail.clone()),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use latchkey::admin::{FieldChange, PlannedChange};

    #[test]
    fn reads_are_not_audited_and_mutations_name_their_subject() {
        let t = || "acme".to_owned();
        assert_eq!(action(&AdminRoute::UserShow(t(), "a@b.c".into())), None);
        assert_eq!(action(&AdminRoute::AuditAll), None);
        assert_eq!(
            action(&AdminRoute::UserDisable(t(), "a@b.c".into())),
            Some((AdminAction::UserDisable, Some("a@b.c")))
        );
        assert_eq!(
            action(&AdminRoute::UserCredentialRevoke(t(), "a@b.c".into(), "cred".into())),
            Some((AdminAction::CredentialRevoke, Some("a@b.c")))
        );
        assert_eq!(AdminAction::AppRotateSecret.as_str(), "app.rotate_secret");
        assert_eq!(AdminAction::UserReinvite.as_str(), "user.reinvite");
        assert_eq!(actor(0), "uid:0");
    }

    #[test]
    fn apply_details_are_split_by_tenant() {
        let step = |tenant: &str, name: &str| PlannedChange {
            action: "create".into(),
            kind: "role".into(),
            tenant: tenant.into(),
            name: name.into(),
            changes: Vec::<FieldChange>::new(),
        };
        let result = ApplyResult {
            dry_run: false,
            changes: vec!["create role a/x".into(), "create role b/y".into(), "create role a/z".into()],
            plan: vec![step("a", "x"), step("b", "y"), step("a", "z")],
            created_apps: vec![],
        };
        let mut note =
            Note { per_tenant: vec![("a".into(), None), ("b".into(), None), ("c".into(), None)], ..Note::default() };
        note.applied(&result);
        assert_eq!(
            note.per_tenant,
            [
                ("a".to_owned(), Some("create role a/x; create role a/z".to_owned())),
                ("b".to_owned(), Some("create role b/y".to_owned())),
                ("c".to_owned(), Some("no changes".to_owned())),
            ]
        );
    }
}
