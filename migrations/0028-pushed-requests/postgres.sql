-- PostgreSQL translation of up.sql: pushed authorization requests (RFC 9126);
-- applications.require_par is BOOLEAN.
CREATE TABLE pushed_requests (
    id         TEXT    PRIMARY KEY,
    tenant_id  BIGINT  NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    client_id  TEXT    NOT NULL,
    params     TEXT    NOT NULL,
    expires_at BIGINT  NOT NULL
);
CREATE INDEX pushed_requests_expiry ON pushed_requests (expires_at);
ALTER TABLE applications ADD COLUMN require_par BOOLEAN NOT NULL DEFAULT FALSE;
