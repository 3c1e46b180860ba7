-- WIP (issue 50): webhook subscriptions (latchkey webhook add), each delivered from the outbox.
--
-- events: the audit actions it takes, as globs separated by commas (`user.*,role.assign`).
-- secret_sealed: its Standard Webhooks secret (`whsec_…`), sealed with the key-encryption key
-- (the signature is made at each attempt, so the secret must be readable).
-- outbox.webhook_id/payload: a delivery's subscription and its JSON body.
--
-- Additive: 0.2.0 serves this schema unchanged (it delivers no webhooks).
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
ALTER TABLE outbox ADD COLUMN payload TEXT;
