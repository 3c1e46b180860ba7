-- offline_access (OpenID Connect Core §11): a refresh token family granted offline_access (asked
-- for, and the application configured with --scope offline_access) outlives the browser session
-- it began in: the end of that session (logout, a new sign-in, expiry) does not revoke it, and it
-- lives tokens.offline_ttl. Others end with their session. Earlier grants are session-bound.
--
-- Additive: 0.2.0, which names its columns in every statement, serves this schema unchanged (its
-- inserts take the default, session-bound).
ALTER TABLE refresh_tokens ADD COLUMN offline INTEGER NOT NULL DEFAULT 0;
