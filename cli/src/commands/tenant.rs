use latchkey::admin::{Confirm, CreateTenant, Registration, Tenant};

use super::{require_yes, seg};
use crate::args::{RegistrationArg, TenantCmd};
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, fields, table};

fn discovery(t: &Tenant) -> String {
    format!("{}/.well-known/openid-configuration", t.issuer)
}

/// One tenant, as a table and as JSON with the table's `discovery` too.
fn shown(t: &Tenant) -> Result<Output, CliError> {
    let url = discovery(t);
    Ok(Output::new(t)?.with_field("discovery", |_| url.clone().into()).table(show(t)))
}

fn show(t: &Tenant) -> comfy_table::Table {
    fields(&[
        ("slug", t.slug.clone()),
        ("name", t.name.clone()),
        ("issuer", t.issuer.clone()),
        ("discovery", discovery(t)),
        ("rp id", t.rp_id.clone()),
        ("registration", t.registration.as_str().to_owned()),
        ("created", t.created.clone()),
    ])
}

pub fn run(client: &Client, cmd: TenantCmd) -> Result<Output, CliError> {
    match cmd {
        TenantCmd::Create { slug, name, base_url, rp_id, registration } => {
            let req = CreateTenant {
                slug,
                name,
                base_url,
                rp_id,
                registration: Some(match registration {
                    RegistrationArg::Invite => Registration::Invite,
                    RegistrationArg::Open => Registration::Open,
                }),
            };
            let t: Tenant = client.post("/tenants", &req)?;
            let slug = t.slug.clone();
            Ok(shown(&t)?.text(format!("Created tenant {slug}.")).note(format!(
                "next: latchkey app create --tenant {slug} --name \"My App\" --type web --redirect-uri https://app.example.com/oidc-callback"
            )))
        }
        TenantCmd::List => {
            let list: Vec<Tenant> = client.get("/tenants")?;
            let mut t = table(&["SLUG", "NAME", "ISSUER", "RP ID", "REGISTRATION", "CREATED"]);
            for x in &list {
                t.add_row(vec![&x.slug, &x.name, &x.issuer, &x.rp_id, x.registration.as_str(), &x.created]);
            }
            let out = Output::new(&list)?.table(t);
            Ok(if list.is_empty() { out.note("no tenants yet: latchkey tenant create SLUG") } else { out })
        }
        TenantCmd::Show { slug } => {
            let t: Tenant = client.get(&format!("/tenants/{}", seg(&slug)?))?;
            shown(&t)
        }
        TenantCmd::Delete { slug, yes } => {
            require_yes(yes, &format!("tenant {slug:?} and everything it owns"))?;
            client.delete(&format!("/tenants/{}", seg(&slug)?), &Confirm { confirm: true })?;
            Ok(Output::new(&serde_json::json!({"deleted": slug}))?.text(format!("Deleted tenant {slug}.")))
        }
    }
}
