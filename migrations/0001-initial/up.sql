-- Tenants, client applications and signing keys.
-- Times are Unix seconds (UTC). Every tenant-owned row carries tenant_id, and every uniqueness
-- constraint on such a row starts with tenant_id: nothing is shared between tenants.

CREATE TABLE tenants (
    id           INTEGER PRIMARY KEY,
    slug         TEXT    NOT NULL UNIQUE,
    name         TEXT    NOT NULL,
    base_url     TEXT    NOT NULL UNIQUE,
    rp_id        TEXT    NOT NULL,
    registration TEXT    NOT NULL CHECK (registration IN ('invite', 'open')),
    created_at   INTEGER NOT NULL
) STRICT;

CREATE TABLE applications (
    id                        INTEGER PRIMARY KEY,
    tenant_id                 INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    client_id                 TEXT    NOT NULL,
    name                      TEXT    NOT NULL,
    app_type                  TEXT    NOT NULL CHECK (app_type IN ('web', 'spa', 'native', 'm2m')),
    -- SHA-256 of the client secret; NULL for public clients.
    secret_hash               BLOB,
    -- JSON arrays of strings.
    redirect_uris             TEXT    NOT NULL,
    post_logout_redirect_uris TEXT    NOT NULL,
    cors_origins              TEXT    NOT NULL,
    scopes                    TEXT    NOT NULL,
    created_at                INTEGER NOT NULL,
    UNIQUE (tenant_id, client_id)
) STRICT;

CREATE TABLE signing_keys (
    id          INTEGER PRIMARY KEY,
    tenant_id   INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    kid         TEXT    NOT NULL,
    state       TEXT    NOT NULL CHECK (state IN ('current', 'retired')),
    bits        INTEGER NOT NULL,
    -- PKCS#8 DER of the RSA private key, sealed with AES-256-GCM under the key-encryption key:
    -- nonce (12 bytes) || ciphertext || tag. Never stored in the clear.
    private_key BLOB    NOT NULL,
    created_at  INTEGER NOT NULL,
    retired_at  INTEGER,
    UNIQUE (tenant_id, kid)
) STRICT;

-- Exactly one key signs for a tenant.
CREATE UNIQUE INDEX signing_keys_one_current ON signing_keys (tenant_id) WHERE state = 'current';
