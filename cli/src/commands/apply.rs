//! `latchkey apply` and `latchkey export`.

use std::path::Path;

use latchkey::admin::{ApplyRequest, ApplyResult, Declared, FieldChange};

use super::seg;
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, table};

/// Replaces each provider's `client_secret_file` by the secret it holds (relative paths are
/// relative to the configuration file). The secret itself may not be written in the file. A file
/// that does not exist (as an export names one) is sent by name: a provider that exists keeps
/// its stored secret, a new one is refused naming the file. Returns a note per such file.
fn read_social_secrets(file: &Path, declared: &mut Declared) -> Result<Vec<String>, CliError> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut missing = vec![];
    for t in &mut declared.tenants {
        for s in &mut t.social {
            let entry = format!("{}: tenant {}, social {}", file.display(), t.slug, s.kind);
            if s.client_secret.is_some() {
                return Err(CliError::Usage(format!(
                    "{entry}: do not write the secret in the file; put it in a file named by client_secret_file"
                )));
            }
            if let Some(name) = s.client_secret_file.take() {
                let path = dir.join(&name);
                match std::fs::read_to_string(&path) {
                    Ok(text) => s.client_secret = Some(text.trim_end_matches(['\r', '\n']).to_owned()),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        missing.push(format!(
                            "{} does not exist: an existing provider keeps its stored secret",
                            path.display()
                        ));
                        s.client_secret_file = Some(path.display().to_string());
                    }
                    Err(e) => return Err(CliError::File(format!("{entry}: cannot read {}: {e}", path.display()))),
                }
            }
        }
    }
    Ok(missing)
}

/// Replaces each tenant's `logo_file` by the logo it holds (base64; `none` removes the logo).
/// A file that does not exist (as an export names one) keeps the logo set: a note says so.
fn read_logos(file: &Path, declared: &mut Declared) -> Result<Vec<String>, CliError> {
    use base64::Engine as _;
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut missing = vec![];
    for t in &mut declared.tenants {
        if t.logo.is_some() {
            return Err(CliError::Usage(format!(
                "{}: tenant {}: name the logo's file with logo_file, not its bytes",
                file.display(),
                t.slug
            )));
        }
        match t.logo_file.take() {
            None => {}
            Some(name) if name.trim() == "none" => t.logo = Some("none".into()),
            Some(name) => {
                let path = dir.join(&name);
                match std::fs::read(&path) {
                    Ok(bytes) => t.logo = Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => missing.push(format!(
                        "{} does not exist: tenant {} keeps its logo (save it with curl -o from the tenant's /logo)",
                        path.display(),
                        t.slug
                    )),
                    Err(e) => {
                        return Err(CliError::File(format!(
                            "{}: tenant {}: cannot read {}: {e}",
                            file.display(),
                            t.slug,
                            path.display()
                        )));
                    }
                }
            }
        }
    }
    Ok(missing)
}

/// `old → new` of one field; a list also says what it gains (+) and loses (−).
fn field_change(c: &FieldChange) -> String {
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::Null => "(secret)".to_owned(),
        serde_json::Value::String(s) => format!("{s:?}"),
        serde_json::Value::Array(items) => {
            format!(
                "[{}]",
                items.iter().map(|i| format!("{:?}", i.as_str().unwrap_or_default())).collect::<Vec<_>>().join(", ")
            )
        }
        other => other.to_string(),
    };
    let mut line = format!("{} → {}", text(&c.old), text(&c.new));
    for a in &c.added {
        line.push_str(&format!("\n+ {a}"));
    }
    for r in &c.removed {
        line.push_str(&format!("\n− {r}"));
    }
    line
}

pub fn apply(client: &Client, file: &Path, dry_run: bool) -> Result<Output, CliError> {
    let text =
        std::fs::read_to_string(file).map_err(|e| CliError::File(format!("cannot read {}: {e}", file.display())))?;
    let mut declared: Declared = toml::from_str(&text)
        .map_err(|e| CliError::Usage(format!("{}: {}", file.display(), e.to_string().trim_end())))?;
    let mut missing = read_social_secrets(file, &mut declared)?;
    missing.extend(read_logos(file, &mut declared)?);
    let r: ApplyResult = client.post("/apply", &ApplyRequest { declared, dry_run })?;
    let headline = match (r.changes.is_empty(), r.dry_run) {
        (true, _) => "No changes: the daemon already matches the file.".to_owned(),
        (false, true) => format!("Plan ({} change(s), nothing applied):", r.changes.len()),
        (false, false) => format!("Applied {} change(s):", r.changes.len()),
    };
    let mut out = Output::new(&r)?.text(headline);
    if !r.plan.is_empty() {
        // One row per step; an update lists each field it changes, old → new.
        let mut t = table(&["CHANGE", "FIELD", "OLD → NEW"]);
        for step in &r.plan {
            let what = format!("{} {} {}/{}", step.action, step.kind, step.tenant, step.name);
            if step.changes.is_empty() {
                t.add_row(vec![what.clone(), String::new(), String::new()]);
            }
            for (i, c) in step.changes.iter().enumerate() {
                let head = if i == 0 { what.clone() } else { String::new() };
                t.add_row(vec![head, c.field.clone(), field_change(c)]);
            }
        }
        out = out.table(t);
        if r.plan.iter().flat_map(|s| &s.changes).any(|c| c.old.is_array()) {
            out = out.note("A list in the file replaces the stored list: values missing from the file are removed.");
        }
    } else if !r.changes.is_empty() {
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
            if let Some(secret) = &a.client_secret {
                out = out.secret(format!("{}\t{}\t{}\t{secret}", a.tenant, a.name, a.client_id));
            }
        }
        // On stdout, like `app create`'s: a secret must not be lost with `2>/dev/null`.
        out = out.more_table(t).note("New client secrets are shown this once: keep them now.");
    }
    for note in missing {
        out = out.note(note);
    }
    Ok(out)
}

pub fn export(client: &Client, tenant: &str) -> Result<Output, CliError> {
    let d: Declared = client.get(&format!("/tenants/{}/export", seg(tenant)?))?;
    let text = toml::to_string(&d).map_err(|e| CliError::Internal(e.to_string()))?;
    Ok(Output::new(&d)?.text(format!(
        "# latchkey export --tenant {tenant}\n# Secrets are not exported. Applied here, this changes nothing; on another install, apply\n\
         # creates new application secrets, and each social provider needs its client secret in the\n\
         # file its client_secret_file names (next to this file), and a logo_file is saved with\n\
         # curl -o FILE {{base_url}}/logo.\n{}",
        text.trim_end()
    )))
}
