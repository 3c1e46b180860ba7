-- Roles, role assignments and the audit log.

CREATE TABLE roles (
    id          INTEGER PRIMARY KEY,
    tenant_id   INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name        TEXT    NOT NULL,
    description TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    UNIQUE (tenant_id, name)
) STRICT;

CREATE TABLE user_roles (
    user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role_id INTEGER NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, role_id)
) STRICT;
CREATE INDEX user_roles_by_role ON user_roles (role_id);

-- Who did what, when, from where, with what outcome. Keyed by tenant slug rather than id, so a
-- deleted tenant's trail stays until retention removes it.
CREATE TABLE audit (
    id      INTEGER PRIMARY KEY,
    at      INTEGER NOT NULL,
    tenant  TEXT,
    actor   TEXT    NOT NULL,
    action  TEXT    NOT NULL,
    outcome TEXT    NOT NULL,
    ip      TEXT,
    subject TEXT,
    detail  TEXT
) STRICT;
CREATE INDEX audit_by_tenant_time ON audit (tenant, at);
