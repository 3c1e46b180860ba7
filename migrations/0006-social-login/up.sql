-- Social login: upstream identity providers per tenant, the links from their subjects to users,
-- and the state of flows in progress.

CREATE TABLE social_providers (
    id             INTEGER PRIMARY KEY,
    tenant_id      INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    -- In URLs: /login/{slug}. `google`, `github`, or the slug of an OIDC provider's label.
    slug           TEXT    NOT NULL,
    kind           TEXT    NOT NULL CHECK (kind IN ('google', 'github', 'oidc')),
    -- The button's label.
    label          TEXT    NOT NULL,
    client_id      TEXT    NOT NULL,
    -- The client secret sealed with the key-encryption key (AES-256-GCM).
    secret_sealed  BLOB    NOT NULL,
    -- google/oidc: the issuer, found by discovery. github: the web and API base URLs.
    issuer         TEXT,
    github_url     TEXT,
    github_api_url TEXT,
    -- JSON arrays of strings.
    allowed_domains TEXT   NOT NULL DEFAULT '[]',
    allowed_orgs    TEXT   NOT NULL DEFAULT '[]',
    create_users   INTEGER NOT NULL DEFAULT 0,
    created_at     INTEGER NOT NULL,
    UNIQUE (tenant_id, slug)
) STRICT;

-- An upstream identity, keyed by its subject at the provider (never by e-mail).
CREATE TABLE social_links (
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    provider   TEXT    NOT NULL,
    subject    TEXT    NOT NULL,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- The verified e-mail the provider gave when the link was made (for display).
    email      TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, provider, subject),
    -- One subject per provider and user: a recycled address cannot take an account over.
    UNIQUE (tenant_id, provider, user_id)
) STRICT;
CREATE INDEX social_links_by_user ON social_links (user_id);

-- A flow sent to a provider and not back yet: single use, ten minutes.
CREATE TABLE social_states (
    state_hash   BLOB    PRIMARY KEY,
    tenant_id    INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    provider     TEXT    NOT NULL,
    -- What the flow is for: a pending authorization request, an invitation, or linking from
    -- the account page (then user_id is the signed-in user).
    purpose      TEXT    NOT NULL CHECK (purpose IN ('login', 'invite', 'link')),
    request_id   TEXT,
    invite_hash  BLOB,
    user_id      INTEGER REFERENCES users (id) ON DELETE CASCADE,
    verifier     TEXT    NOT NULL,
    nonce        TEXT    NOT NULL,
    -- SHA-256 of the browser-binding cookie set when the flow started.
    browser_hash BLOB    NOT NULL,
    expires_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX social_states_by_expiry ON social_states (expires_at);
