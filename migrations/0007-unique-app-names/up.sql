-- Application names are unique per tenant: `latchkey apply` matches apps by name, so two apps of
-- one name made a file ambiguous. Earlier releases allowed duplicates. Rather than refuse to start
-- (an operator could then not even reach the CLI to rename them), every app after the first of its
-- name (oldest first) is renamed "NAME (CLIENT_ID)": the Client ID, which relying parties use,
-- stays, and it makes the new name unique and tells the operator which app it is. The name is cut
-- to 73 characters first so that the result still fits the 100-character limit.
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
