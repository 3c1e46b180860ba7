-- A tenant's URL can change (`latchkey tenant update --base-url`, SPEC §8): the issuer changes,
-- and the old URL keeps answering for a while (`--keep-old-url`, 30 days by default): pages and
-- discovery with 308 to the new URL, the old JWKS with the same keys, so that tokens issued
-- before the change still verify.
CREATE TABLE tenant_old_urls (
    -- As `tenants.base_url`: scheme://host[:port][/path], no trailing slash. One tenant's or
    -- another's current URL is never here (the update checks both).
    base_url  TEXT    PRIMARY KEY,
    tenant_id INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    -- Until when the old URL answers (Unix seconds); the sweeper removes it after.
    until     INTEGER NOT NULL
) STRICT;
CREATE INDEX tenant_old_urls_by_tenant ON tenant_old_urls (tenant_id);
CREATE INDEX tenant_old_urls_by_until ON tenant_old_urls (until);
