use latchkey::admin::{Confirm, Invitation, InviteUser, Recovery, Reinvite, User};

use super::import::Import;
use super::{require_yes, seg};
use crate::args::{Format, UserCmd};
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, fields, table};

fn user_fields(u: &User) -> comfy_table::Table {
    fields(&[
        ("email", u.email.clone()),
        ("name", u.name.clone()),
        ("status", u.status.clone()),
        ("roles", if u.roles.is_empty() { "-".into() } else { u.roles.join(", ") }),
        ("credentials", u.credentials.to_string()),
        ("id", u.id.clone()),
        ("created", u.created.clone()),
    ])
}

/// `?k=v&…` for the given values (percent-encoded), or nothing.
fn query(pairs: &[(&str, Option<&str>)]) -> Result<String, CliError> {
    let mut parts = vec![];
    for (k, v) in pairs {
        if let Some(v) = v {
            parts.push(format!("{k}={}", seg(v)?));
        }
    }
    Ok(if parts.is_empty() { String::new() } else { format!("?{}", parts.join("&")) })
}

pub fn run(client: &Client, cmd: UserCmd, format: Format, quiet: bool) -> Result<Output, CliError> {
    match cmd {
        UserCmd::Import { tenant, file, dry_run, links_out, force } => {
            let import = Import { tenant: tenant.tenant, file, dry_run, links_out, force };
            super::import::run(client, import, format, quiet)
        }
        UserCmd::Reinvite { tenant, emails, all_pending, dry_run, links_out, force } => {
            let req = Reinvite { emails, all_pending, dry_run };
            super::reinvite::run(client, &tenant.tenant, req, links_out, force, format, quiet)
        }
        UserCmd::Invite { tenant, email, name, roles, locale } => {
            let req = InviteUser { email, name, roles, locale };
            let inv: Invitation = client.post(&format!("/tenants/{}/users/invite", seg(&tenant.tenant)?), &req)?;
            Ok(Output::new(&inv)?
                .secret(inv.invite_url.clone())
                .table(fields(&[
                    ("email", inv.email.clone()),
                    ("name", inv.name.clone()),
                    ("invite url", inv.invite_url.clone()),
                    ("expires", inv.expires_at.clone()),
                ]))
                .note("Send the link to the user: it works once, and they register their passkey with it."))
        }
        UserCmd::List { tenant, role, status } => {
            let q = query(&[("role", role.as_deref()), ("status", status.as_deref())])?;
            let list: Vec<User> = client.get(&format!("/tenants/{}/users{q}", seg(&tenant.tenant)?))?;
            let mut t = table(&["EMAIL", "NAME", "STATUS", "ROLES", "CREDENTIALS", "CREATED"]);
            for u in &list {
                t.add_row(vec![
                    u.email.clone(),
                    u.name.clone(),
                    u.status.clone(),
                    u.roles.join(", "),
                    u.credentials.to_string(),
                    u.created.clone(),
                ]);
            }
            Ok(Output::new(&list)?.table(t))
        }
        UserCmd::Show { tenant, email } => {
            let u: User = client.get(&format!("/tenants/{}/users/{}", seg(&tenant.tenant)?, seg(&email)?))?;
            Ok(Output::new(&u)?.table(user_fields(&u)))
        }
        UserCmd::Disable { tenant, email } => {
            let path = format!("/tenants/{}/users/{}/disable", seg(&tenant.tenant)?, seg(&email)?);
            let u: User = client.post(&path, &serde_json::json!({}))?;
            Ok(Output::new(&u)?.text(format!("Disabled {}: their sessions and refresh tokens have ended.", u.email)))
        }
        UserCmd::Enable { tenant, email } => {
            let path = format!("/tenants/{}/users/{}/enable", seg(&tenant.tenant)?, seg(&email)?);
            let u: User = client.post(&path, &serde_json::json!({}))?;
            Ok(Output::new(&u)?.text(format!("Enabled {} ({}).", u.email, u.status)))
        }
        UserCmd::Delete { tenant, email, yes } => {
            require_yes(yes, &format!("user {email:?} with their credentials and sessions"))?;
            client.delete(
                &format!("/tenants/{}/users/{}", seg(&tenant.tenant)?, seg(&email)?),
                &Confirm { confirm: true },
            )?;
            Ok(Output::new(&serde_json::json!({"deleted": email}))?.text(format!("Deleted user {email}.")))
        }
        UserCmd::Recover { tenant, email } => {
            let slug = seg(&tenant.tenant)?;
            let rec: Recovery =
                client.post(&format!("/tenants/{slug}/users/{}/recover", seg(&email)?), &serde_json::json!({}))?;
            Ok(Output::new(&rec)?
                .secret(rec.recovery_url.clone())
                .table(fields(&[
                    ("email", rec.email.clone()),
                    ("recovery url", rec.recovery_url.clone()),
                    ("expires", rec.expires_at.clone()),
                ]))
                .note("The link works once. When it is used, the user's other sessions end."))
        }
    }
}
