// A relying backend as the seed's Authentication §6 describes it, written with the `jose` library:
// verify a JWT with RS256 against {base_url}/.well-known/jwks.json, the issuer and the audience.
// Usage: node verify-jwt.mjs JWKS_URL TOKEN ISSUER AUDIENCE
// Prints {"ok": true, "kid": ..., "payload": {...}} or {"ok": false, "code": ..., "message": ...}.
import { createRemoteJWKSet, jwtVerify } from 'jose';

const [jwksUrl, token, issuer, audience] = process.argv.slice(2);
const jwks = createRemoteJWKSet(new URL(jwksUrl), { cacheMaxAge: 0, cooldownDuration: 0 });
try {
  const { payload, protectedHeader } = await jwtVerify(token, jwks, {
    issuer,
    audience,
    algorithms: ['RS256'],
  });
  console.log(JSON.stringify({ ok: true, kid: protectedHeader.kid, payload }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, code: e.code ?? 'ERR', message: String(e.message) }));
}
