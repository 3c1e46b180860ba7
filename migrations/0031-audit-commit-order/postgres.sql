-- The audit trail in commit order, for `latchkey audit --follow`.
--
-- Ids are handed out when a transaction inserts, not when it commits: an event of a transaction
-- that commits later can carry a smaller id than one a follow has already shown, and a follow by
-- id would step over it. audit.txid records the transaction that wrote each row; a follow reads
-- only rows of transactions older than any still running (pg_snapshot_xmin), in (txid, id)
-- order, so nothing can commit behind where it stands.
--
-- Rows written before this migration get 0: they are all committed, in id order. The first
-- statement adds the column with a constant default (no table rewrite); the second makes new rows
-- take their transaction's id, including rows of 0.2.0 nodes, which name only the old columns.
-- The index build holds off writes to audit while it runs (about a second per million rows).
ALTER TABLE audit ADD COLUMN txid xid8 NOT NULL DEFAULT '0';
ALTER TABLE audit ALTER COLUMN txid SET DEFAULT pg_current_xact_id();
CREATE INDEX audit_commit_order ON audit (txid, id);
