-- Signing algorithms beyond RS256 (latchkey key rotate --alg, app --signing-alg).
--
-- signing_keys.alg: the key's JOSE algorithm; private_key is now the PKCS#8 DER of an RSA,
-- P-256 (ES256) or Ed25519 (EdDSA) key. One key signs per tenant and algorithm.
-- applications.signing_alg: the algorithm of the app's ID, access and logout tokens.
--
-- Additive: 0.2.0 serves this schema, but not a tenant that holds an ES256 or EdDSA key (it reads
-- every key as RSA): upgrade every node before `latchkey key rotate --alg`.
ALTER TABLE signing_keys ADD COLUMN alg TEXT NOT NULL DEFAULT 'RS256' CHECK (alg IN ('RS256', 'ES256', 'EdDSA'));
DROP INDEX signing_keys_one_current;
CREATE UNIQUE INDEX signing_keys_one_current ON signing_keys (tenant_id, alg) WHERE state = 'current';
ALTER TABLE applications ADD COLUMN signing_alg TEXT NOT NULL DEFAULT 'RS256'
    CHECK (signing_alg IN ('RS256', 'ES256', 'EdDSA'));
