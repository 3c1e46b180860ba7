-- As SQLite's 0011 (same statements). Which provider a link's subject belongs to: the provider's
-- issuer (Google, any OpenID Connect provider) or GitHub API URL at the time of linking. A subject means something only at its
-- provider: when a provider's issuer or URL changes (github.com to GitHub Enterprise Server,
-- gitlab.com to a self-hosted GitLab), user 42 there is not user 42 here, so the links made at
-- the old one are removed (see store::social::upsert_provider) instead of signing in whoever
-- the new provider calls 42.
ALTER TABLE social_links ADD COLUMN authority TEXT;
-- Links of enabled providers take their provider's current authority (the one they were made
-- at: until this release a change of URL kept them). Links of a provider disabled now get it
-- when it is enabled again.
UPDATE social_links SET authority = (
    SELECT CASE p.kind
        WHEN 'github' THEN COALESCE(p.github_api_url, 'https://api.github.com')
        WHEN 'google' THEN COALESCE(p.issuer, 'https://accounts.google.com')
        ELSE p.issuer
    END
    FROM social_providers p WHERE p.tenant_id = social_links.tenant_id AND p.slug = social_links.provider
);
