-- private_key_jwt client authentication (RFC 7523, OpenID Connect Core §9).
--
-- applications.token_auth: how a confidential app authenticates: 'secret' (its client secret)
-- or 'private_key_jwt' (a JWT signed with one of its keys: jwks, a JWK Set's JSON, or jwks_uri,
-- fetched; never both).
-- client_assertion_jtis: the jti of every accepted client assertion, kept until its exp, so that
-- none is accepted twice, on any node.
--
-- A private_key_jwt app keeps the hash of a secret nobody is shown, so that 0.2.0, which serves
-- this schema but knows no private_key_jwt, refuses its requests rather than taking it for a
-- public client: upgrade every node before creating one.
ALTER TABLE applications ADD COLUMN token_auth TEXT NOT NULL DEFAULT 'secret'
    CHECK (token_auth IN ('secret', 'private_key_jwt'));
ALTER TABLE applications ADD COLUMN jwks TEXT;
ALTER TABLE applications ADD COLUMN jwks_uri TEXT;
CREATE TABLE client_assertion_jtis (
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    client_id  TEXT    NOT NULL,
    jti        TEXT    NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, client_id, jti)
) STRICT;
CREATE INDEX client_assertion_jtis_expiry ON client_assertion_jtis (expires_at);
