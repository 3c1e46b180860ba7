-- DPoP, sender-constrained tokens (RFC 9449).
--
-- applications.require_dpop: the app's token requests must carry a DPoP proof (--require-dpop).
-- refresh_tokens.dpop_jkt: the RFC 7638 thumbprint of the key a public client's refresh token is
-- bound to; its rotation needs a proof signed with that key.
-- dpop_proofs: each accepted proof, by the SHA-256 of its key's thumbprint and its jti, kept until
-- its iat is too old to be accepted anyway, so that no proof is accepted twice, on any node.
--
-- 0.2.0 serves this schema but knows no DPoP: it would accept a bound refresh token without a
-- proof. Upgrade every node before a client uses DPoP.
ALTER TABLE applications ADD COLUMN require_dpop INTEGER NOT NULL DEFAULT 0;
ALTER TABLE refresh_tokens ADD COLUMN dpop_jkt TEXT;
CREATE TABLE dpop_proofs (
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    proof_hash BLOB    NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, proof_hash)
) STRICT;
CREATE INDEX dpop_proofs_expiry ON dpop_proofs (expires_at);
