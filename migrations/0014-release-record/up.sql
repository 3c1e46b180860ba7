-- Which releases can serve this database (docs/upgrading.md, SPEC §8). The release that migrates
-- the database writes one row: the schema version it left, and the oldest release that can still
-- serve that schema. Migrations within a minor release are additive, so an older node of the same
-- minor release keeps serving during a rolling upgrade; a node refuses only a schema whose row
-- names a release newer than itself (or a schema with no row for its version).
CREATE TABLE latchkey_release (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    schema_version INTEGER NOT NULL,
    -- A release number, "MAJOR.MINOR.PATCH".
    serves_from    TEXT    NOT NULL
) STRICT;
