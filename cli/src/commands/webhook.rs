//! `latchkey webhook add|list|remove|deliveries|redeliver`.

use latchkey::admin::{Confirm, CreateWebhook, Webhook, WebhookDelivery};

use super::{read_secret, require_yes, seg};
use crate::args::WebhookCmd;
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, fields, table};

fn deliveries_table(list: &[WebhookDelivery]) -> comfy_table::Table {
    let mut t = table(&["ID", "WEBHOOK", "EVENT", "SUBJECT", "STATUS", "ATTEMPTS", "CREATED", "ANSWER"]);
    for d in list {
        t.add_row(vec![
            d.id.to_string(),
            d.webhook.to_string(),
            d.event.clone(),
            d.subject.clone(),
            d.status.clone(),
            d.attempts.to_string(),
            d.created.clone(),
            d.answer.clone().unwrap_or_default(),
        ]);
    }
    t
}

pub fn run(client: &Client, cmd: WebhookCmd) -> Result<Output, CliError> {
    match cmd {
        WebhookCmd::Add { tenant, url, events, secret_file } => {
            let secret = secret_file.as_deref().map(|p| read_secret(p, "webhook secret")).transpose()?;
            let req = CreateWebhook { url, events, secret };
            let w: Webhook = client.post(&format!("/tenants/{}/webhooks", seg(&tenant.tenant)?), &req)?;
            let mut rows = vec![("id", w.id.to_string()), ("url", w.url.clone()), ("events", w.events.join(", "))];
            if let Some(s) = &w.secret {
                rows.push(("secret", s.clone()));
            }
            let out = Output::new(&w)?.table(fields(&rows));
            Ok(match &w.secret {
                // `-q` prints the secret alone: it is shown this once.
                Some(s) => out
                    .secret(s.clone())
                    .text(format!("Added webhook {} for {}. Give the receiver this secret:", w.id, tenant.tenant))
                    .note("The secret is shown this once; the receiver verifies webhook-signature with it."),
                None => out.secret(w.id.to_string()).text(format!("Added webhook {} for {}.", w.id, tenant.tenant)),
            })
        }
        WebhookCmd::List { tenant } => {
            let list: Vec<Webhook> = client.get(&format!("/tenants/{}/webhooks", seg(&tenant.tenant)?))?;
            let mut t = table(&["ID", "URL", "EVENTS", "PENDING", "CREATED"]);
            for w in &list {
                t.add_row(vec![
                    w.id.to_string(),
                    w.url.clone(),
                    w.events.join(", "),
                    w.pending.to_string(),
                    w.created.clone(),
                ]);
            }
            Ok(Output::new(&list)?.table(t))
        }
        WebhookCmd::Remove { tenant, id, yes } => {
            require_yes(yes, &format!("webhook {id} and its deliveries"))?;
            client.delete(&format!("/tenants/{}/webhooks/{id}", seg(&tenant.tenant)?), &Confirm { confirm: true })?;
            Ok(Output::new(&serde_json::json!({"removed": id}))?
                .text(format!("Removed webhook {id} and its deliveries.")))
        }
        WebhookCmd::Deliveries { tenant, id, failed, limit } => {
            let mut query = vec![];
            if let Some(id) = id {
                query.push(format!("webhook={id}"));
            }
            if failed {
                query.push("failed=true".to_owned());
            }
            if let Some(n) = limit {
                query.push(format!("limit={n}"));
            }
            let path = format!("/tenants/{}/webhooks/deliveries?{}", seg(&tenant.tenant)?, query.join("&"));
            let list: Vec<WebhookDelivery> = client.get(&path)?;
            Ok(Output::new(&list)?.table(deliveries_table(&list)))
        }
        WebhookCmd::Redeliver { tenant, delivery } => {
            let path = format!("/tenants/{}/webhooks/deliveries/{delivery}/redeliver", seg(&tenant.tenant)?);
            let d: WebhookDelivery = client.post(&path, &serde_json::json!({}))?;
            Ok(Output::new(&d)?.table(deliveries_table(std::slice::from_ref(&d))).text(format!(
                "Delivery {delivery} is queued again, ahead of its webhook's others: sent within seconds."
            )))
        }
    }
}
