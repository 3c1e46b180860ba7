-- PostgreSQL translation of up.sql: private_key_jwt client authentication (RFC 7523).
ALTER TABLE applications ADD COLUMN token_auth TEXT NOT NULL DEFAULT 'secret'
    CHECK (token_auth IN ('secret', 'private_key_jwt'));
ALTER TABLE applications ADD COLUMN jwks TEXT;
ALTER TABLE applications ADD COLUMN jwks_uri TEXT;
CREATE TABLE client_assertion_jtis (
    tenant_id  BIGINT  NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    client_id  TEXT    NOT NULL,
    jti        TEXT    NOT NULL,
    expires_at BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, client_id, jti)
);
CREATE INDEX client_assertion_jtis_expiry ON client_assertion_jtis (expires_at);
