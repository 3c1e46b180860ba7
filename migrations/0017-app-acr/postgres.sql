-- An application that always requires a level of authentication (latchkey app create
-- --require-acr): "phr" (a passkey, not a social sign-in) or "phrh" (a device-bound passkey or
-- security key), OpenID EAP ACR Values. NULL: no requirement beyond the request's own acr_values.
--
-- Additive: 0.2.0 serves this schema unchanged, but does not enforce the requirement; upgrade
-- every node before setting it (docs/upgrading.md).
ALTER TABLE applications ADD COLUMN require_acr TEXT;
