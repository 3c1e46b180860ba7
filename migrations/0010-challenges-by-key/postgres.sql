-- SQLite's migration 0010 stores challenges in one b-tree (WITHOUT ROWID, no index on expiry).
-- A PostgreSQL table is a heap beside its indexes whatever its definition, and its sweep is a
-- DELETE that several nodes may run: it keeps its index on expires_at. Nothing changes here
-- but the schema version, which both engines count alike.
COMMENT ON TABLE challenges IS 'Outstanding WebAuthn challenges: single use, short-lived.';
