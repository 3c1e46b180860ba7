-- Webhook subscriptions (latchkey webhook add), each delivered from the outbox.
--
-- events: the audit actions it takes, as globs separated by commas (`user.*,role.assign`).
-- secret_sealed: its Standard Webhooks secret (`whsec_…`), sealed with the key-encryption key
-- (the signature is made at each attempt, so the secret must be readable).
-- outbox.webhook_id/event/payload: a delivery's subscription, its event type and JSON body.
-- outbox.delivered_at: a delivered webhook row is kept a week for `latchkey webhook deliveries`
-- (a delivered back-channel logout row is deleted, as before).
--
-- Additive: 0.2.0 serves this schema unchanged (it has no outbox and delivers no webhooks).
CREATE TABLE webhooks (
    id            INTEGER PRIMARY KEY,
    tenant_id     INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    url           TEXT    NOT NULL,
    events        TEXT    NOT NULL,
    secret_sealed BLOB    NOT NULL,
    created_at    INTEGER NOT NULL
) STRICT;
CREATE INDEX webhooks_by_tenant ON webhooks (tenant_id);

ALTER TABLE outbox ADD COLUMN webhook_id INTEGER REFERENCES webhooks (id) ON DELETE CASCADE;
ALTER TABLE outbox ADD COLUMN event TEXT;
ALTER TABLE outbox ADD COLUMN payload TEXT;
ALTER TABLE outbox ADD COLUMN delivered_at INTEGER;
-- A subscription's queue, in order: its head is the first row neither delivered nor failed.
CREATE INDEX outbox_webhook_pending ON outbox (webhook_id, id)
    WHERE webhook_id IS NOT NULL AND failed_at IS NULL AND delivered_at IS NULL;
-- Back-channel logout rows only: a subscription's queue is led by its head, not by next_at.
DROP INDEX outbox_due;
CREATE INDEX outbox_due ON outbox (next_at) WHERE failed_at IS NULL AND webhook_id IS NULL;
-- What the metrics count every few seconds and the sweeper removes every minute, without reading
-- a week of delivered rows.
CREATE INDEX outbox_failed ON outbox (failed_at) WHERE failed_at IS NOT NULL;
CREATE INDEX outbox_delivered ON outbox (delivered_at) WHERE delivered_at IS NOT NULL;
