-- When a user without a passkey was first offered to add one, after signing in with a social
-- login (a one-time step they may skip). NULL: not offered yet.
--
-- Additive: 0.2.0 serves this schema unchanged (it offers no such step).
ALTER TABLE users ADD COLUMN passkey_prompted_at BIGINT;
