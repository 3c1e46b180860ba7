//! `latchkey apply` and `latchkey export`.

use std::path::Path;

use latchkey::admin::{ApplyRequest, ApplyResult, Declared};

use super::seg;
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, table};

pub fn apply(client: &Client, file: &Path, dry_run: bool) -> Result<Output, CliError> {
    let text =
        std::fs::read_to_string(file).map_err(|e| CliError::Local(format!("cannot read {}: {e}", file.display())))?;
    let declared: Declared = toml::from_str(&text)
        .map_err(|e| CliError::Usage(format!("{}: {}", file.display(), e.to_string().trim_end())))?;
    let r: ApplyResult = client.post("/apply", &ApplyRequest { declared, dry_run })?;
    let headline = match (r.changes.is_empty(), r.dry_run) {
        (true, _) => "No changes: the daemon already matches the file.".to_owned(),
        (false, true) => format!("Plan ({} change(s), nothing applied):", r.changes.len()),
        (false, false) => format!("Applied {} change(s):", r.changes.len()),
    };
    let mut out = Output::new(&r)?.text(headline);
    if !r.changes.is_empty() {
        let mut t = table(&["CHANGE"]);
        for c in &r.changes {
            t.add_row(vec![c.clone()]);
        }
        out = out.table(t);
    }
    if !r.created_apps.is_empty() {
        let mut t = table(&["TENANT", "APP", "CLIENT ID", "CLIENT SECRET"]);
        for a in &r.created_apps {
            t.add_row(vec![
                a.tenant.clone(),
                a.name.clone(),
                a.client_id.clone(),
                a.client_secret.clone().unwrap_or_else(|| "-".into()),
            ]);
        }
        out = out.note(t.to_string()).note("New client secrets are shown this once: keep them now.");
    }
    Ok(out)
}

pub fn export(client: &Client, tenant: &str) -> Result<Output, CliError> {
    let d: Declared = client.get(&format!("/tenants/{}/export", seg(tenant)?))?;
    let text = toml::to_string(&d).map_err(|e| CliError::Local(e.to_string()))?;
    Ok(Output::new(&d)?.text(format!(
        "# latchkey export --tenant {tenant}\n# Secrets are not exported; apply creates new ones.\n{}",
        text.trim_end()
    )))
}
