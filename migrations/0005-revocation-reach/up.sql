-- Revocation reach: each refresh token remembers the access token issued with it, so revoking a
-- grant (refresh reuse, code reuse, /revoke, logout, recovery, a disabled user) also revokes the
-- access tokens of that grant at this service's own endpoints.
ALTER TABLE refresh_tokens ADD COLUMN access_jti TEXT;
ALTER TABLE refresh_tokens ADD COLUMN access_expires_at INTEGER;
CREATE INDEX refresh_tokens_by_user ON refresh_tokens (tenant_id, user_id);
