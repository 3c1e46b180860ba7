-- The claims request parameter (OpenID Connect Core §5.5): which claims an authorization request
-- asked for in the ID token and at userinfo beyond its scopes, as JSON
-- ({"id_token":["email"],"userinfo":["name"]}), kept with the code and with every refresh token
-- of the grant so that refreshed tokens carry them too. NULL: none asked for.
--
-- Additive: 0.2.0, which names its columns in every statement, serves this schema unchanged.
ALTER TABLE authorization_codes ADD COLUMN claims TEXT;
ALTER TABLE refresh_tokens ADD COLUMN claims TEXT;
