-- Attestation policy (latchkey tenant update --attestation-policy verified, --allowed-aaguid) and
-- the FIDO Metadata Service entries it trusts (latchkey mds import FILE).
--
-- attestation_policy: 'any' accepts every authenticator (the default); 'verified' only those whose
-- attestation chains to a root that metadata lists for their AAGUID, with no revoked or compromised
-- status. allowed_aaguids: lower-case AAGUIDs separated by commas, '' for any the metadata lists.
--
-- The metadata is the operator's, not a tenant's: one verified BLOB for the whole daemon. Each entry
-- keeps what the registration check needs: the status in force and the attestation roots (base64
-- DER, separated by commas).
--
-- Additive: 0.2.0 serves this schema, but ignores a policy: set `verified` once every node runs a
-- release that enforces it (docs/upgrading.md).
ALTER TABLE tenants ADD COLUMN attestation_policy TEXT NOT NULL DEFAULT 'any';
ALTER TABLE tenants ADD COLUMN allowed_aaguids TEXT NOT NULL DEFAULT '';

CREATE TABLE mds_blob (
    id           BIGINT  NOT NULL PRIMARY KEY CHECK (id = 1),
    serial       BIGINT  NOT NULL,
    next_update  TEXT    NOT NULL,
    sha256       TEXT    NOT NULL,
    imported_at  BIGINT  NOT NULL
);

CREATE TABLE mds_entries (
    aaguid       TEXT    NOT NULL PRIMARY KEY,
    description  TEXT    NOT NULL,
    status       TEXT    NOT NULL,
    roots        TEXT    NOT NULL
);
