//! `latchkey scim enable|rotate-token|disable|status`.

use latchkey::admin::ScimStatus;

use super::seg;
use crate::args::ScimCmd;
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, fields};

fn shown(s: &ScimStatus) -> Result<Output, CliError> {
    let mut rows = vec![
        ("tenant", s.tenant.clone()),
        ("enabled", if s.enabled { "yes" } else { "no" }.to_owned()),
        ("base url", s.base_url.clone()),
    ];
    if let Some(t) = &s.token {
        rows.push(("token", t.clone()));
    }
    let out = Output::new(s)?.table(fields(&rows));
    // `-q` prints the token alone: it is shown this once.
    Ok(match &s.token {
        Some(t) => out.secret(t.clone()),
        None => out,
    })
}

pub fn run(client: &Client, cmd: ScimCmd) -> Result<Output, CliError> {
    let (tenant, action) = match cmd {
        ScimCmd::Enable { tenant } => (tenant.tenant, Some("enable")),
        ScimCmd::RotateToken { tenant } => (tenant.tenant, Some("rotate-token")),
        ScimCmd::Disable { tenant } => (tenant.tenant, Some("disable")),
        ScimCmd::Status { tenant } => (tenant.tenant, None),
    };
    let path = format!("/tenants/{}/scim", seg(&tenant)?);
    let s: ScimStatus = match action {
        Some(a) => client.post(&format!("{path}/{a}"), &serde_json::json!({}))?,
        None => client.get(&path)?,
    };
    let out = shown(&s)?;
    Ok(match (action, s.enabled) {
        (Some("disable"), _) => out.text(format!("SCIM is off for {tenant}: its token no longer works.")),
        (Some(_), true) => out
            .text(format!("SCIM is on for {tenant}. Give the directory the Tenant URL and this token:"))
            .note("The token is shown this once; `latchkey scim rotate-token` replaces it."),
        _ => out,
    })
}
