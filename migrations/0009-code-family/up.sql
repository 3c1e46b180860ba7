-- A used authorization code remembers the refresh-token family it started, so that replaying
-- the code revokes that family through its index instead of searching every refresh token of
-- the tenant for the code (NULL: redeemed before this migration, or not yet redeemed).
ALTER TABLE authorization_codes ADD COLUMN family TEXT;
