// A relying backend as the seed's Authentication §6 describes it, written with the `jose` library:
// verify a JWT against {base_url}/.well-known/jwks.json, the issuer and the audience, with the
// algorithms it accepts (RS256 unless ALGS, a comma-separated list, says otherwise).
// Usage: node verify-jwt.mjs JWKS_URL TOKEN ISSUER AUDIENCE [ALGS]
// Prints {"ok": true, "kid": ..., "payload": {...}} or {"ok": false, "code": ..., "message": ...}.
import { createRemoteJWKSet, jwtVerify } from 'jose';

const [jwksUrl, token, issuer, audience, algs] = process.argv.slice(2);
const jwks = createRemoteJWKSet(new URL(jwksUrl), { cacheMaxAge: 0, cooldownDuration: 0 });
try {
  const { payload, protectedHeader } = await jwtVerify(token, jwks, {
    issuer,
    audience,
    algorithms: (algs ?? 'RS256').split(','),
  });
  console.log(JSON.stringify({ ok: true, kid: protectedHeader.kid, payload }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, code: e.code ?? 'ERR', message: String(e.message) }));
}
