-- Device authorization grant (RFC 8628): which native apps may use it, and the pending device
-- codes of each tenant. Both codes are stored as SHA-256 hashes only.

-- Whether a `native` application may use the device authorization grant (`--device-flow`).
ALTER TABLE applications ADD COLUMN device_flow INTEGER NOT NULL DEFAULT 0;

CREATE TABLE device_codes (
    id             INTEGER PRIMARY KEY,
    tenant_id      INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    -- SHA-256 of the device code the client polls with.
    device_hash    BLOB    NOT NULL,
    -- SHA-256 of the user code in its canonical form (8 letters, upper case, no dash).
    user_code_hash BLOB    NOT NULL,
    client_id      TEXT    NOT NULL,
    scope          TEXT    NOT NULL,
    -- Seconds the client waits between polls; grows by 5 with every `slow_down`.
    poll_interval  INTEGER NOT NULL,
    last_poll_at   INTEGER,
    -- `redeemed` once the tokens were issued: the row stays until it expires, so that a second
    -- redemption is told apart from an unknown code.
    status         TEXT    NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'redeemed')),
    -- The approving user and their sign-in (set on approval).
    user_id        INTEGER REFERENCES users (id) ON DELETE CASCADE,
    session_id     INTEGER,
    auth_time      INTEGER,
    amr            TEXT,
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    UNIQUE (tenant_id, device_hash),
    UNIQUE (tenant_id, user_code_hash)
) STRICT;
CREATE INDEX device_codes_by_user ON device_codes (user_id);
