-- PostgreSQL translation of up.sql: DPoP (RFC 9449). applications.require_dpop is BOOLEAN.
ALTER TABLE applications ADD COLUMN require_dpop BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE refresh_tokens ADD COLUMN dpop_jkt TEXT;
CREATE TABLE dpop_proofs (
    tenant_id  BIGINT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    proof_hash BYTEA  NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, proof_hash)
);
CREATE INDEX dpop_proofs_expiry ON dpop_proofs (expires_at);
