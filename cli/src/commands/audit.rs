//! `latchkey audit`: the audit log, once or followed.

use latchkey::admin::AuditEvent;

use super::seg;
use crate::args::{AuditArgs, Format};
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, escape, table};

/// A query-string value: a path segment's encoding, and `+` too (a query reads it as a space).
fn query_value(v: &str) -> Result<String, CliError> {
    Ok(seg(v)?.replace('+', "%2B"))
}

fn opt(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "-".into())
}

/// The table; the TENANT column only when the events are not of one tenant.
fn rows(events: &[AuditEvent], with_tenant: bool) -> comfy_table::Table {
    let mut head = vec!["TIME", "TENANT", "ACTOR", "ACTION", "SUBJECT", "OUTCOME", "DETAIL", "IP"];
    if !with_tenant {
        head.remove(1);
    }
    let mut t = table(&head);
    for e in events {
        let mut row = vec![
            e.time.clone(),
            opt(&e.tenant),
            e.actor.clone(),
            e.action.clone(),
            opt(&e.subject),
            e.outcome.clone(),
            opt(&e.detail),
            opt(&e.ip),
        ];
        if !with_tenant {
            row.remove(1);
        }
        t.add_row(row);
    }
    t
}

/// WHEN as Unix seconds: a duration back from `now`, or an RFC 3339 time.
fn when(flag: &str, text: &str, now: i64) -> Result<i64, CliError> {
    if let Ok(d) = humantime::parse_duration(text) {
        return Ok(now - d.as_secs() as i64);
    }
    let t = humantime::parse_rfc3339_weak(text).map_err(|_| {
        CliError::Usage(format!(
            "{flag} {text:?} is neither a duration like 15m, 1h or 7d nor an RFC 3339 time like 2026-11-01T00:00:00Z"
        ))
    })?;
    Ok(t.duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0))
}

pub fn run(client: &Client, args: AuditArgs, format: Format) -> Result<Output, CliError> {
    let AuditArgs { tenant, since, until, user, action, actor, app, outcome, limit, follow } = args;
    let tenant = tenant.as_deref();
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    let since = match since {
        None => 0,
        Some(text) => when("--since", &text, now)?,
    };
    let mut base = format!("/audit?since={since}");
    if let Some(text) = until {
        base.push_str(&format!("&until={}", when("--until", &text, now)?));
    }
    if let Some(t) = tenant {
        base.push_str(&format!("&tenant={}", query_value(t)?));
    }
    for (name, value) in [("user", user), ("action", action), ("actor", actor), ("app", app), ("outcome", outcome)] {
        if let Some(v) = value {
            base.push_str(&format!("&{name}={}", query_value(&v)?));
        }
    }
    if let Some(n) = limit {
        base.push_str(&format!("&limit={n}"));
    }
    if !follow {
        let events: Vec<AuditEvent> = client.get(&base)?;
        return Ok(Output::new(&events)?.table(rows(&events, tenant.is_none())));
    }
    // Follow: print what there is, then poll for newer events. The daemon answers `cursor=` in
    // commit order and gives each event its cursor: on PostgreSQL an event can commit after one
    // with a larger id, which a follow by id would step over. A daemon of 0.2.0 ignores
    // `cursor=` and gives none: follow it by id, as it did.
    let page = limit.map_or(1000, |n| n.clamp(1, 10_000)) as usize;
    let mut at = Position::Cursor(String::new());
    let print = |batch: &[AuditEvent]| -> Result<(), CliError> {
        for e in batch {
            let line = match format {
                Format::Json => serde_json::to_string(e).map_err(|e| CliError::Internal(e.to_string()))?,
                Format::Table => format!(
                    "{}  {:<12} {:<10} {:<20} {:<32} {}",
                    e.time,
                    escape(&opt(&e.tenant)),
                    escape(&e.actor),
                    escape(&e.action),
                    escape(&opt(&e.subject)),
                    escape(&e.outcome)
                ),
            };
            crate::output::print_out(&line)?;
        }
        Ok(())
    };
    loop {
        let batch: Vec<AuditEvent> = match &at {
            Position::Cursor(c) => {
                let c = percent_encoding::utf8_percent_encode(c, percent_encoding::NON_ALPHANUMERIC);
                client.get(&format!("{base}&cursor={c}"))?
            }
            Position::Id(id) => client.get(&format!("{base}&after={id}"))?,
        };
        if let Some(next) = Position::after(&batch) {
            at = next;
        }
        print(&batch)?;
        // A full page means more is waiting: read it at once.
        if batch.len() < page {
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
    }
}

/// Where `audit --follow` reads next.
#[derive(Debug, PartialEq)]
enum Position {
    /// After this event's cursor, in commit order (`""`: from the start).
    Cursor(String),
    /// After this id (a daemon that gives no cursors).
    Id(i64),
}

impl Position {
    /// Past the last event of `batch`; `None` when it is empty (stay where it was).
    fn after(batch: &[AuditEvent]) -> Option<Position> {
        let last = batch.last()?;
        Some(match &last.cursor {
            Some(c) => Position::Cursor(c.clone()),
            None => Position::Id(last.id),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(id: i64, cursor: Option<&str>) -> AuditEvent {
        AuditEvent {
            id,
            time: "2026-11-29T12:00:00Z".into(),
            tenant: None,
            actor: "uid:0".into(),
            action: "app.create".into(),
            subject: None,
            outcome: "success".into(),
            detail: None,
            ip: None,
            cursor: cursor.map(str::to_owned),
        }
    }

    #[test]
    fn a_follow_goes_on_by_cursor_or_by_id_from_a_daemon_that_gives_none() {
        assert_eq!(Position::after(&[]), None);
        assert_eq!(
            Position::after(&[event(9, Some("7.9")), event(8, Some("8.8"))]),
            Some(Position::Cursor("8.8".into())),
            "commit order: the last event's cursor, whatever its id"
        );
        assert_eq!(Position::after(&[event(8, None), event(9, None)]), Some(Position::Id(9)), "a 0.2.0 daemon");
    }
}
