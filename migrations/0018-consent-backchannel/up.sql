-- Consent and back-channel logout (OpenID Connect Core §3.1.2.4, Back-Channel Logout 1.0).
--
-- An application is "implicit" (first-party: no consent page, the default) or "explicit" (the
-- user is asked, once per set of scopes). It may name a back-channel logout URI, to which a
-- logout token is posted whenever a session in which it received an ID token ends.
--
-- Additive: 0.2.0 serves this schema unchanged, but shows no consent page and sends no logout
-- token; upgrade every node before setting either (docs/upgrading.md).
ALTER TABLE applications ADD COLUMN consent TEXT NOT NULL DEFAULT 'implicit';
ALTER TABLE applications ADD COLUMN backchannel_logout_uri TEXT;
ALTER TABLE applications ADD COLUMN backchannel_logout_session_required INTEGER NOT NULL DEFAULT 0;

-- What a user allowed an "explicit" application: the scopes (space-separated, sorted), so that a
-- request for no more than these asks nothing. Listed and revocable on /account.
CREATE TABLE consents (
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id  TEXT    NOT NULL,
    scopes     TEXT    NOT NULL,
    granted_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, user_id, client_id)
) STRICT;

-- The applications with a back-channel logout URI that received an ID token in a session: the
-- ones told when it ends. Rows go with their session.
CREATE TABLE session_apps (
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    client_id  TEXT    NOT NULL,
    PRIMARY KEY (session_id, client_id)
) STRICT;

-- Deliveries to other servers, made after the request that caused them: a logout token to an
-- application's back-channel logout URI. A row is due at next_at; a node delivering it moves
-- next_at past its attempt (a lease) and then deletes it (delivered), reschedules it with
-- backoff, or marks it failed (failed_at) after 24 hours of retries.
CREATE TABLE outbox (
    id         INTEGER PRIMARY KEY,
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    kind       TEXT    NOT NULL,
    client_id  TEXT    NOT NULL,
    target     TEXT    NOT NULL,
    -- A logout token's sub (the user's public id) and session (its sid is derived when signed).
    subject    TEXT    NOT NULL,
    session_id INTEGER,
    created_at INTEGER NOT NULL,
    next_at    INTEGER NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    failed_at  INTEGER
) STRICT;
CREATE INDEX outbox_due ON outbox (next_at) WHERE failed_at IS NULL;
