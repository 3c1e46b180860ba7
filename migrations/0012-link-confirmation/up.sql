-- Linking an upstream account from the account page is confirmed by the user before it is
-- saved (SPEC §6): the flow remembers the session that started it, and the link waits here
-- between the provider's callback and the user's Confirm.

-- The session that started a `link` flow: the callback goes on only while it is live and is the
-- one the browser presents. No foreign key: an ended session must read as "ended" at the
-- callback, not make the flow vanish.
ALTER TABLE social_states ADD COLUMN session_id INTEGER;

-- An upstream account shown to the user for confirmation: single use, a few minutes, bound to
-- the session that started the link (ending the session removes it).
CREATE TABLE social_pending_links (
    -- SHA-256 of the random token in the confirmation page's form.
    token_hash BLOB    PRIMARY KEY,
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    provider   TEXT    NOT NULL,
    subject    TEXT    NOT NULL,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    -- The verified e-mail to keep with the link ('' when none), and the account as the page
    -- named it (an e-mail or a GitHub login).
    email      TEXT    NOT NULL,
    account    TEXT    NOT NULL,
    -- The provider's issuer or API URL when the account was read (see 0011): a provider moved
    -- meanwhile links nothing.
    authority  TEXT    NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT;
-- For the cascade from sessions (ended by sign-out, recovery, expiry) and from users.
CREATE INDEX social_pending_links_by_session ON social_pending_links (session_id);
CREATE INDEX social_pending_links_by_user ON social_pending_links (user_id);
CREATE INDEX social_pending_links_by_expiry ON social_pending_links (expires_at);
