-- A tenant's logo beside its name on every page (latchkey tenant brand --logo FILE): a PNG, or an
-- SVG refused when it holds script, an event handler or a reference outside itself. As for
-- applications (0019), the image lives apart from the tenant's row; logo_sha (hex SHA-256, NULL:
-- no logo) names its version in the URL the pages use.
--
-- Additive: 0.2.0 serves this schema unchanged (its pages show no logo).
ALTER TABLE tenants ADD COLUMN logo_sha TEXT;

CREATE TABLE tenant_logos (
    tenant_id    INTEGER NOT NULL PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
    content_type TEXT    NOT NULL,
    bytes        BLOB    NOT NULL
) STRICT;
