//! Queuing deliveries: in the audit writer's transaction, so an event is in the trail if and only
//! if its deliveries are queued (and they are as durable as it is).

use serde::Serialize;

use crate::clock::{Timestamp, rfc3339};
use crate::store::audit::Event;
use crate::store::webhooks::{self, NewDelivery};
use crate::store::{StoreError, WriteTx};

/// A delivery's body, as the Standard Webhooks specification suggests: `type`, `timestamp`,
/// `data`.
#[derive(Serialize)]
struct Payload<'a> {
    r#type: &'a str,
    timestamp: String,
    data: Data<'a>,
}

/// The event's fields, as `latchkey audit -o json` shows them.
#[derive(Serialize)]
struct Data<'a> {
    tenant: &'a str,
    actor: &'a str,
    action: &'a str,
    outcome: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    subject: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ip: Option<&'a str>,
}

/// The JSON body of an event's deliveries.
pub fn payload(e: &Event, tenant: &str) -> String {
    let p = Payload {
        r#type: &e.action,
        timestamp: rfc3339(e.at),
        data: Data {
            tenant,
            actor: &e.actor,
            action: &e.action,
            outcome: &e.outcome,
            subject: e.subject.as_deref(),
            detail: e.detail.as_deref(),
            ip: e.ip.as_deref(),
        },
    };
    // Strings and an integer only: serialising cannot fail.
    serde_json::to_string(&p).unwrap_or_default()
}

/// Queues a delivery of each event to each subscription of its tenant whose globs match it.
/// Returns how many. Daemon-wide events (no tenant) go nowhere.
pub fn for_events(tx: &WriteTx<'_>, events: &[Event], now: Timestamp) -> Result<usize, StoreError> {
    let subs = webhooks::all(tx)?;
    if subs.is_empty() {
        return Ok(0);
    }
    let mut rows = vec![];
    for e in events {
        let Some(slug) = e.tenant.as_deref() else { continue };
        let mut body: Option<String> = None;
        for (s_slug, tenant_id, w) in &subs {
            if s_slug != slug || !webhooks::matches(&w.events, &e.action) {
                continue;
            }
            let payload = body.get_or_insert_with(|| payload(e, slug)).clone();
            rows.push(NewDelivery {
                tenant_id: *tenant_id,
                webhook_id: w.id,
                url: w.url.clone(),
                event: e.action.clone(),
                subject: e.subject.clone().unwrap_or_default(),
                payload,
                created_at: now,
            });
        }
    }
    webhooks::queue(tx, &rows)?;
    Ok(rows.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_names_the_event_and_leaves_out_what_it_lacks() {
        let e = Event {
            at: 1_614_265_330,
            tenant: Some("acme".into()),
            actor: "uid:0".into(),
            action: "user.invite".into(),
            outcome: "success".into(),
            subject: Some("ada@acme.test".into()),
            ..Event::default()
        };
        let v: serde_json::Value = serde_json::from_str(&payload(&e, "acme")).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "type": "user.invite",
                "timestamp": "2021-02-25T15:02:10Z",
                "data": {"tenant": "acme", "actor": "uid:0", "action": "user.invite", "outcome": "success",
                         "subject": "ada@acme.test"}
            })
        );
    }
}
