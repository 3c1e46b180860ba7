-- SCIM 2.0 provisioning (latchkey scim enable): a tenant's bearer token, stored hashed (NULL: SCIM
-- is off), and what a SCIM client says of each user and group beyond Latchkey's own columns.
--
-- scim_users: the userName the client chose (often the e-mail, any unique string), its externalId,
-- and the other attributes it sent (core and enterprise User schema, JSON), returned as they were
-- given; a version for ETags and meta.lastModified. A user without a row (invited by the CLI) is
-- userName = e-mail, version 0. scim_groups: the same for groups, which are roles.
--
-- Additive: 0.2.0 serves this schema unchanged (it has no SCIM endpoint).
ALTER TABLE tenants ADD COLUMN scim_token_hash BLOB;

CREATE TABLE scim_users (
    user_id        INTEGER NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    tenant_id      INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    user_name      TEXT    NOT NULL,
    user_name_norm TEXT    NOT NULL,
    external_id    TEXT,
    attributes     TEXT    NOT NULL,
    version        INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL,
    UNIQUE (tenant_id, user_name_norm)
) STRICT;
CREATE INDEX scim_users_by_external_id ON scim_users (tenant_id, external_id);

CREATE TABLE scim_groups (
    role_id        INTEGER NOT NULL PRIMARY KEY REFERENCES roles (id) ON DELETE CASCADE,
    tenant_id      INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    display_name   TEXT    NOT NULL,
    external_id    TEXT,
    version        INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
) STRICT;
