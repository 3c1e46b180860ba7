//! Webhooks (the Standard Webhooks specification): a tenant's subscriptions to its audit events.
//!
//! The audit writer queues a delivery for each event a subscription's globs match, in the
//! transaction that writes the event ([`queue::for_events`]), and the outbox's delivery loop sends
//! each subscription's deliveries in order ([`deliver`]), signed at each attempt ([`sign`]).

pub mod deliver;
pub mod queue;
pub mod sign;

use base64::Engine as _;
use latchkey::admin::{CreateWebhook, Webhook, WebhookDelivery};
use latchkey::codes;

use crate::clock::rfc3339;
use crate::crypto::{Kek, random_bytes};
use crate::error::Error;
use crate::state::State;
use crate::store::webhooks::{DeliveryRow, Redeliver, WebhookRow};
use crate::store::{self, TenantId};
use crate::tenants::require;

/// Subscriptions per tenant, and globs per subscription.
pub const MAX_PER_TENANT: usize = 20;
pub const MAX_GLOBS: usize = 20;
const MAX_GLOB_LEN: usize = 64;
const MAX_URL_LEN: usize = 2000;
/// Deliveries `latchkey webhook deliveries` lists by default, and at most.
pub const LIST_DEFAULT: i64 = 100;
pub const LIST_MAX: i64 = 10_000;

fn bad(message: impl Into<String>) -> Error {
    Error::invalid(codes::INVALID_WEBHOOK, message)
}

/// A delivery URL: callable as a provider's is (`https`, plain `http` on loopback only), and
/// without credentials or a fragment.
pub fn valid_url(text: &str) -> Result<String, Error> {
    if text.len() > MAX_URL_LEN {
        return Err(bad(format!("the URL is longer than {MAX_URL_LEN} characters")));
    }
    // Checked first, and the URL not echoed: it may hold a password.
    if let Ok(url) = url::Url::parse(text)
        && (!url.username().is_empty() || url.password().is_some() || url.fragment().is_some())
    {
        return Err(bad("a webhook URL takes no user name, password or fragment (the signature authenticates us)"));
    }
    let url = crate::social::callable_url(text).map_err(bad)?;
    // As parsed: stray whitespace or control characters the parser drops are not kept.
    Ok(url.as_str().to_owned())
}

/// What the audit trail names of a receiver: its origin (`https://hooks.example.com`), without
/// the credentials, path or query that may carry a token. `None` when it does not parse.
pub fn origin(text: &str) -> Option<String> {
    let url = url::Url::parse(text.trim()).ok()?;
    let origin = url.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

/// Event globs: audit actions (`user.invite`), with `*` for any text (`user.*`, `*`).
pub fn valid_events(globs: &[String]) -> Result<Vec<String>, Error> {
    if globs.is_empty() {
        return Err(bad("name the events to send: --events 'user.*' (a glob of audit actions; '*' for all)"));
    }
    if globs.len() > MAX_GLOBS {
        return Err(bad(format!("at most {MAX_GLOBS} event globs")));
    }
    let mut out: Vec<String> = vec![];
    for g in globs {
        let g = g.trim();
        let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '*');
        if g.is_empty() || g.len() > MAX_GLOB_LEN || !g.chars().all(allowed) {
            return Err(bad(format!(
                "{g:?} is not an event glob: lower-case audit actions with * for any text, such as user.* or \
                 role.assign"
            )));
        }
        if !out.iter().any(|o| o == g) {
            out.push(g.to_owned());
        }
    }
    Ok(out)
}

/// A Standard Webhooks secret: `whsec_` and the base64 of 24 to 64 random bytes.
pub fn valid_secret(text: &str) -> Result<String, Error> {
    let text = text.trim();
    let how = "make one with: echo \"whsec_$(head -c 32 /dev/urandom | base64)\"";
    let Some(b64) = text.strip_prefix("whsec_") else {
        return Err(bad(format!("the secret must start with whsec_ (the Standard Webhooks form); {how}")));
    };
    match base64::engine::general_purpose::STANDARD.decode(b64) {
        Ok(key) if (24..=64).contains(&key.len()) => Ok(text.to_owned()),
        Ok(key) => Err(bad(format!("the secret holds {} bytes; it needs 24 to 64: {how}", key.len()))),
        Err(_) => Err(bad(format!("the secret after whsec_ is not base64: {how}"))),
    }
}

/// A new secret: 32 random bytes.
pub fn new_secret() -> Result<String, Error> {
    let key = random_bytes::<32>()?;
    Ok(format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode(key)))
}

/// The sealed secret is bound to its tenant and URL: it opens for no other subscription.
fn aad(tenant: TenantId, url: &str) -> Vec<u8> {
    format!("webhook\0{tenant}\0{url}").into_bytes()
}

pub fn seal_secret(kek: &Kek, tenant: TenantId, url: &str, secret: &str) -> Result<Vec<u8>, Error> {
    Ok(kek.seal(&aad(tenant, url), secret.as_bytes())?)
}

pub fn open_secret(kek: &Kek, tenant: TenantId, url: &str, sealed: &[u8]) -> Result<String, Error> {
    let plain = kek.open(&aad(tenant, url), sealed)?;
    String::from_utf8(plain).map_err(Error::internal)
}

fn shown(w: WebhookRow, pending: i64, secret: Option<String>) -> Webhook {
    Webhook { id: w.id, url: w.url, events: w.events, pending, created: rfc3339(w.created_at), secret }
}

/// `latchkey webhook add`.
pub async fn add(state: &State, slug: String, req: CreateWebhook) -> Result<Webhook, Error> {
    let url = valid_url(&req.url)?;
    let events = valid_events(&req.events)?;
    let (secret, generated) = match &req.secret {
        Some(s) => (valid_secret(s)?, false),
        None => (new_secret()?, true),
    };
    let kek = state.kek.clone();
    // Events recorded before the subscription are written before it exists, so it never gets
    // an event older than itself.
    state.audit.flush().await;
    let now = state.clock.now();
    state
        .db
        .write(move |tx| -> Result<Webhook, Error> {
            let tenant = require(tx, &slug)?;
            if store::webhooks::list(tx, tenant.id)?.len() >= MAX_PER_TENANT {
                return Err(bad(format!(
                    "{slug} has {MAX_PER_TENANT} webhooks, the most a tenant may have; remove one first \
                     (latchkey webhook remove)"
                )));
            }
            let mut row = WebhookRow {
                id: 0,
                secret_sealed: seal_secret(&kek, tenant.id, &url, &secret)?,
                url,
                events,
                created_at: now,
            };
            row.id = store::webhooks::insert(tx, tenant.id, &row)?;
            Ok(shown(row, 0, generated.then_some(secret)))
        })
        .await
}

/// `latchkey webhook list`.
pub async fn list(state: &State, slug: String) -> Result<Vec<Webhook>, Error> {
    state
        .db
        .read(move |tx| -> Result<Vec<Webhook>, Error> {
            let tenant = require(tx, &slug)?;
            let pending = store::webhooks::pending_counts(tx, tenant.id)?;
            Ok(store::webhooks::list(tx, tenant.id)?
                .into_iter()
                .map(|w| {
                    let n = pending.iter().find(|(id, _)| *id == w.id).map_or(0, |(_, n)| *n);
                    shown(w, n, None)
                })
                .collect())
        })
        .await
}

/// `latchkey webhook remove`: the subscription and its deliveries, pending ones included.
pub async fn remove(state: &State, slug: String, id: i64) -> Result<(), Error> {
    state
        .db
        .write(move |tx| -> Result<(), Error> {
            let tenant = require(tx, &slug)?;
            if !store::webhooks::delete(tx, tenant.id, id)? {
                return Err(not_found(&slug, id));
            }
            Ok(())
        })
        .await
}

fn not_found(slug: &str, id: i64) -> Error {
    Error::not_found(
        codes::WEBHOOK_NOT_FOUND,
        format!("{slug} has no webhook {id}; `latchkey webhook list --tenant {slug}` shows its webhooks"),
    )
}

fn delivery(d: DeliveryRow) -> WebhookDelivery {
    let status = match (d.delivered_at, d.failed_at, d.attempts) {
        (Some(_), _, _) => "delivered",
        (_, Some(_), _) => "failed",
        (_, _, 0) => "pending",
        _ => "retrying",
    };
    WebhookDelivery {
        id: d.id,
        webhook: d.webhook_id,
        event: d.event,
        subject: d.subject,
        status: status.to_owned(),
        attempts: d.attempts,
        created: rfc3339(d.created_at),
        answer: d.last_error,
    }
}

/// `latchkey webhook deliveries`: newest first.
pub async fn deliveries(
    state: &State,
    slug: String,
    webhook: Option<i64>,
    failed_only: bool,
    limit: Option<i64>,
) -> Result<Vec<WebhookDelivery>, Error> {
    let limit = limit.unwrap_or(LIST_DEFAULT);
    if !(1..=LIST_MAX).contains(&limit) {
        return Err(Error::invalid(codes::INVALID_INPUT, format!("limit must be 1 to {LIST_MAX}")));
    }
    state
        .db
        .read(move |tx| -> Result<Vec<WebhookDelivery>, Error> {
            let tenant = require(tx, &slug)?;
            if let Some(id) = webhook
                && store::webhooks::get(tx, tenant.id, id)?.is_none()
            {
                return Err(not_found(&slug, id));
            }
            let rows = store::webhooks::deliveries(tx, tenant.id, webhook, failed_only, limit)?;
            Ok(rows.into_iter().map(delivery).collect())
        })
        .await
}

/// `latchkey webhook redeliver`: a delivered or failed delivery is sent again, due now.
pub async fn redeliver(state: &State, slug: String, id: i64) -> Result<WebhookDelivery, Error> {
    let now = state.clock.now();
    state
        .db
        .write(move |tx| -> Result<WebhookDelivery, Error> {
            let tenant = require(tx, &slug)?;
            match store::webhooks::redeliver(tx, tenant.id, id, now)? {
                Redeliver::Queued => {}
                Redeliver::Pending => {
                    return Err(Error::conflict(
                        codes::DELIVERY_PENDING,
                        format!("delivery {id} is still being tried; it is sent again on its own"),
                    ));
                }
                Redeliver::NotFound => {
                    return Err(Error::not_found(
                        codes::DELIVERY_NOT_FOUND,
                        format!(
                            "{slug} has no delivery {id}; `latchkey webhook deliveries --tenant {slug}` lists them"
                        ),
                    ));
                }
            }
            let row = store::webhooks::delivery(tx, tenant.id, id)?;
            row.map(delivery).ok_or_else(|| Error::internal("a redelivered row is gone in its own transaction"))
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_events_and_secrets_are_checked() {
        assert_eq!(valid_url("https://hooks.example.com/in?x=1").unwrap(), "https://hooks.example.com/in?x=1");
        assert_eq!(valid_url(" https://Hooks.example.com\n").unwrap(), "https://hooks.example.com/");
        assert!(valid_url("http://127.0.0.1:9/in").is_ok());
        assert!(valid_url("http://hooks.example.com/in").is_err(), "plain http off loopback");
        assert!(valid_url("https://u:p@hooks.example.com/").is_err());
        let e = valid_url("http://u:hunter2@hooks.example.com/").unwrap_err();
        assert!(!e.to_string().contains("hunter2"), "{e}");
        assert_eq!(
            origin(" https://u:p@Hooks.example.com:8443/services/T1/x?token=y ").as_deref(),
            Some("https://hooks.example.com:8443")
        );
        assert_eq!(origin("http://127.0.0.1:9/in").as_deref(), Some("http://127.0.0.1:9"));
        assert_eq!(origin("not a url"), None);
        assert!(valid_url("https://hooks.example.com/#x").is_err());
        assert!(valid_url("ftp://x/").is_err());
        let e = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(valid_events(&e(&["user.*", " user.* ", "*"])).unwrap(), e(&["user.*", "*"]));
        for wrong in [&[][..], &["User.*"], &["user,role"], &[""], &["a b"]] {
            assert!(valid_events(&e(wrong)).is_err(), "{wrong:?}");
        }
        let s = new_secret().unwrap();
        assert_eq!(valid_secret(&format!(" {s}\n")).unwrap(), s);
        assert!(valid_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").is_ok(), "the specification's, 24 bytes");
        assert!(valid_secret("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").is_err());
        assert!(valid_secret("whsec_c2hvcnQ=").is_err(), "5 bytes");
        assert!(valid_secret("whsec_!!!").is_err());
    }
}
