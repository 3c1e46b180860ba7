-- Pushed authorization requests (RFC 9126, POST {base_url}/par).
--
-- pushed_requests: a request an application pushed, validated, until /authorize takes it (once)
-- or it expires (60 s). id is the hex SHA-256 of the request_uri's random part: the request_uri
-- itself is never stored. params: the request's parameters, a JSON array of [name, value].
-- applications.require_par: the app's plain authorization requests are refused (--require-par).
--
-- Additive: 0.2.0 serves this schema (it has no /par and does not enforce --require-par).
CREATE TABLE pushed_requests (
    id         TEXT    PRIMARY KEY,
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    client_id  TEXT    NOT NULL,
    params     TEXT    NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX pushed_requests_expiry ON pushed_requests (expires_at);
ALTER TABLE applications ADD COLUMN require_par INTEGER NOT NULL DEFAULT 0;
