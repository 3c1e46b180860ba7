-- OpenID Connect: pending authorization requests, authorization codes, refresh tokens and
-- revoked access tokens.

-- Whether the user's e-mail address is known to be theirs (invitation links are sent to it).
ALTER TABLE users ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 0;
UPDATE users SET email_verified = 1 WHERE status = 'active';

-- An /authorize request waiting for the user to sign in on the hosted login page.
CREATE TABLE authorize_requests (
    id         TEXT    PRIMARY KEY,
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    -- The validated request (client, redirect URI, scope, state, nonce, PKCE, prompt, max_age), JSON.
    request    TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT;

CREATE TABLE authorization_codes (
    code_hash      BLOB    PRIMARY KEY,
    tenant_id      INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    client_id      TEXT    NOT NULL,
    user_id        INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    session_id     INTEGER,
    redirect_uri   TEXT    NOT NULL,
    scope          TEXT    NOT NULL,
    nonce          TEXT,
    code_challenge TEXT,
    auth_time      INTEGER NOT NULL,
    amr            TEXT    NOT NULL,
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    -- Kept after use so that a second redemption is recognised and what the first issued revoked.
    used_at        INTEGER,
    access_jti     TEXT
) STRICT;

CREATE TABLE refresh_tokens (
    id         INTEGER PRIMARY KEY,
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    token_hash BLOB    NOT NULL UNIQUE,
    -- Every rotation of one grant shares a family; reuse of a rotated token revokes the family.
    family     TEXT    NOT NULL,
    client_id  TEXT    NOT NULL,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    session_id INTEGER,
    code_hash  BLOB,
    scope      TEXT    NOT NULL,
    auth_time  INTEGER NOT NULL,
    amr        TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER,
    revoked_at INTEGER
) STRICT;
CREATE INDEX refresh_tokens_by_family ON refresh_tokens (tenant_id, family);
CREATE INDEX refresh_tokens_by_session ON refresh_tokens (session_id);

-- Access tokens are self-contained JWTs; a revoked one is remembered here until it expires.
CREATE TABLE revoked_access_tokens (
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    jti        TEXT    NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, jti)
) STRICT;
