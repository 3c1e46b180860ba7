-- PostgreSQL translation of up.sql: each refresh token remembers the access token issued with it.
ALTER TABLE refresh_tokens ADD COLUMN access_jti TEXT;
ALTER TABLE refresh_tokens ADD COLUMN access_expires_at BIGINT;
CREATE INDEX refresh_tokens_by_user ON refresh_tokens (tenant_id, user_id);
