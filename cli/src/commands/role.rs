use latchkey::admin::{Confirm, CreateRole, Emails, Role, RoleChange};

use super::{require_yes, seg};
use crate::args::RoleCmd;
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, table};

pub fn run(client: &Client, cmd: RoleCmd) -> Result<Output, CliError> {
    match cmd {
        RoleCmd::Create { tenant, name, description } => {
            let r: Role =
                client.post(&format!("/tenants/{}/roles", seg(&tenant.tenant)?), &CreateRole { name, description })?;
            Ok(Output::new(&r)?.text(format!("Created role {}.", r.name)))
        }
        RoleCmd::List { tenant } => {
            let list: Vec<Role> = client.get(&format!("/tenants/{}/roles", seg(&tenant.tenant)?))?;
            let mut t = table(&["NAME", "DESCRIPTION", "USERS", "CREATED"]);
            for r in &list {
                t.add_row(vec![r.name.clone(), r.description.clone(), r.users.to_string(), r.created.clone()]);
            }
            Ok(Output::new(&list)?.table(t))
        }
        RoleCmd::Delete { tenant, name, yes } => {
            require_yes(yes, &format!("role {name:?}"))?;
            client.delete(
                &format!("/tenants/{}/roles/{}", seg(&tenant.tenant)?, seg(&name)?),
                &Confirm { confirm: true },
            )?;
            Ok(Output::new(&serde_json::json!({"deleted": name}))?.text(format!("Deleted role {name}.")))
        }
        RoleCmd::Assign { tenant, name, emails } => change(client, &tenant.tenant, &name, emails, true),
        RoleCmd::Unassign { tenant, name, emails } => change(client, &tenant.tenant, &name, emails, false),
    }
}

fn change(client: &Client, tenant: &str, name: &str, emails: Vec<String>, assign: bool) -> Result<Output, CliError> {
    let action = if assign { "assign" } else { "unassign" };
    let r: RoleChange =
        client.post(&format!("/tenants/{}/roles/{}/{action}", seg(tenant)?, seg(name)?), &Emails { emails })?;
    let verb = if assign { "now have" } else { "no longer have" };
    let out = Output::new(&r)?.text(format!("{} user(s) {verb} role {}.", r.changed.len(), r.role));
    Ok(if r.unchanged.is_empty() { out } else { out.note(format!("unchanged: {}", r.unchanged.join(", "))) })
}
