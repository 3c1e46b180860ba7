//! `latchkey audit`: the audit log, once or followed.

use latchkey::admin::AuditEvent;

use super::seg;
use crate::args::Format;
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, table};

fn rows(events: &[AuditEvent]) -> comfy_table::Table {
    let mut t = table(&["TIME", "ACTOR", "ACTION", "OUTCOME", "IP", "SUBJECT", "DETAIL"]);
    for e in events {
        let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        t.add_row(vec![
            e.at.clone(),
            e.actor.clone(),
            e.action.clone(),
            e.outcome.clone(),
            opt(&e.ip),
            opt(&e.subject),
            opt(&e.detail),
        ]);
    }
    t
}

pub fn run(
    client: &Client,
    tenant: &str,
    since: Option<&str>,
    user: Option<&str>,
    follow: bool,
    format: Format,
) -> Result<Output, CliError> {
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    let since = match since {
        None => 0,
        Some(text) => {
            let d = humantime::parse_duration(text)
                .map_err(|e| CliError::Usage(format!("--since {text:?} is not a duration like 15m, 1h or 7d: {e}")))?;
            now - d.as_secs() as i64
        }
    };
    let mut base = format!("/tenants/{}/audit?since={since}", seg(tenant)?);
    if let Some(u) = user {
        base.push_str(&format!("&user={}", seg(u)?));
    }
    let events: Vec<AuditEvent> = client.get(&base)?;
    if !follow {
        return Ok(Output::new(&events)?.table(rows(&events)));
    }
    // Follow: print what there is, then poll for newer events.
    let mut last = events.last().map(|e| e.id).unwrap_or(0);
    let print = |batch: &[AuditEvent]| -> Result<(), CliError> {
        for e in batch {
            let line = match format {
                Format::Json => serde_json::to_string(e).map_err(|e| CliError::Internal(e.to_string()))?,
                Format::Table => format!(
                    "{}  {:<28} {:<34} {:<24} {}",
                    e.at,
                    e.actor,
                    e.action,
                    e.outcome,
                    e.subject.clone().unwrap_or_default()
                ),
            };
            crate::output::print_out(&line)?;
        }
        Ok(())
    };
    print(&events)?;
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
        let batch: Vec<AuditEvent> = client.get(&format!("{base}&after={last}"))?;
        if let Some(e) = batch.last() {
            last = e.id;
        }
        print(&batch)?;
    }
}
