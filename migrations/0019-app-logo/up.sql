-- An application's logo (latchkey app create|update --logo FILE.png), shown on its consent page.
-- The image is kept apart from the application's row, which every token request reads;
-- logo_sha (hex SHA-256 of the image, NULL: no logo) says whether there is one and names its
-- version in the URL the pages use, so browsers may cache it for good.
--
-- Additive: 0.2.0 serves this schema unchanged (it shows no consent page).
ALTER TABLE applications ADD COLUMN logo_sha TEXT;

CREATE TABLE app_logos (
    tenant_id    INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    client_id    TEXT    NOT NULL,
    content_type TEXT    NOT NULL,
    bytes        BLOB    NOT NULL,
    PRIMARY KEY (tenant_id, client_id)
) STRICT;
