-- Outstanding challenges, stored in one b-tree ordered by the challenge itself (WITHOUT ROWID)
-- instead of three (the rowid table, the primary key's index, the index on expires_at). Every
-- sign-in inserts a challenge at its start and deletes it at its finish, and every finish looks
-- it up: each of those now touches one b-tree, so a batch of ceremonies writes fewer WAL pages.
-- Expired challenges are swept by scanning the table once a minute; it holds only ceremonies
-- started in the last minute or so, which is cheaper to scan than an index is to keep.
CREATE TABLE challenges_by_key (
    challenge  TEXT    PRIMARY KEY,
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    kind       TEXT    NOT NULL CHECK (kind IN ('register', 'authenticate', 'discoverable')),
    user_id    INTEGER REFERENCES users (id) ON DELETE CASCADE,
    -- Serialised webauthn-rs ceremony state.
    state      TEXT    NOT NULL,
    -- What the start call established (who registers, with which invite, ...), as JSON.
    context    TEXT    NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
-- Ceremonies started before the upgrade can still finish after it.
INSERT INTO challenges_by_key (challenge, tenant_id, kind, user_id, state, context, expires_at)
    SELECT challenge, tenant_id, kind, user_id, state, context, expires_at FROM challenges;
DROP TABLE challenges;
ALTER TABLE challenges_by_key RENAME TO challenges;
