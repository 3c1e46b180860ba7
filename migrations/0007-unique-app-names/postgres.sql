-- PostgreSQL translation of up.sql: application names are unique per tenant. No PostgreSQL
-- database predates this release, so the renaming below finds nothing to do; it is kept so that
-- both engines run the same steps.
UPDATE applications
SET name = substr(name, 1, 73) || ' (' || client_id || ')'
WHERE EXISTS (
    SELECT 1 FROM applications AS earlier
    WHERE earlier.tenant_id = applications.tenant_id
      AND earlier.name = applications.name
      AND (earlier.created_at < applications.created_at
           OR (earlier.created_at = applications.created_at AND earlier.id < applications.id))
);

CREATE UNIQUE INDEX applications_unique_name ON applications (tenant_id, name);
