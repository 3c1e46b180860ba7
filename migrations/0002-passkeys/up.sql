-- Users, passkey credentials, ceremony challenges, invitations and sessions.

CREATE TABLE users (
    id          INTEGER PRIMARY KEY,
    tenant_id   INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    -- Stable opaque identifier: the `sub` of tokens and `user.id` of API answers.
    public_id   TEXT    NOT NULL,
    -- WebAuthn user handle (user.id in the ceremony): 16 random bytes, never the e-mail.
    user_handle BLOB    NOT NULL,
    email       TEXT    NOT NULL,
    -- Lowercased e-mail: uniqueness and look-up are case-insensitive.
    email_norm  TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    picture     TEXT,
    status      TEXT    NOT NULL CHECK (status IN ('invited', 'active', 'disabled')),
    created_at  INTEGER NOT NULL,
    UNIQUE (tenant_id, email_norm),
    UNIQUE (tenant_id, public_id),
    UNIQUE (tenant_id, user_handle)
) STRICT;

CREATE TABLE credentials (
    id              INTEGER PRIMARY KEY,
    tenant_id       INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    user_id         INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- Raw credential id; its base64url form is the id of the credentials API.
    credential_id   BLOB    NOT NULL,
    -- The verified public key, counter and flags, as webauthn-rs serialises them.
    passkey         TEXT    NOT NULL,
    kind            TEXT    NOT NULL CHECK (kind IN ('platform', 'roaming')),
    aaguid          BLOB,
    device          TEXT    NOT NULL,
    name            TEXT    NOT NULL,
    backup_eligible INTEGER NOT NULL,
    backed_up       INTEGER NOT NULL,
    sign_count      INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    last_used_at    INTEGER,
    UNIQUE (tenant_id, credential_id)
) STRICT;
CREATE INDEX credentials_by_user ON credentials (user_id);

-- Outstanding WebAuthn challenges: single use, short-lived, kept here so a restart between
-- start and finish loses nothing.
CREATE TABLE challenges (
    challenge  TEXT    PRIMARY KEY,
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    kind       TEXT    NOT NULL CHECK (kind IN ('register', 'authenticate', 'discoverable')),
    user_id    INTEGER REFERENCES users (id) ON DELETE CASCADE,
    -- Serialised webauthn-rs ceremony state.
    state      TEXT    NOT NULL,
    -- What the start call established (who registers, with which invite, ...), as JSON.
    context    TEXT    NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX challenges_by_expiry ON challenges (expires_at);

-- Invitations and recovery links: a random token, stored hashed; used once.
CREATE TABLE invites (
    id         INTEGER PRIMARY KEY,
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash BLOB    NOT NULL UNIQUE,
    purpose    TEXT    NOT NULL CHECK (purpose IN ('invite', 'recovery')),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
) STRICT;
CREATE INDEX invites_by_user ON invites (user_id);

CREATE TABLE sessions (
    id         INTEGER PRIMARY KEY,
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash BLOB    NOT NULL UNIQUE,
    -- When the user proved presence with a passkey (OIDC auth_time), and how (amr, JSON).
    auth_time  INTEGER NOT NULL,
    amr        TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX sessions_by_user ON sessions (user_id);
