// A relying party's back-channel logout endpoint, as OpenID Back-Channel Logout 1.0 §2.6 tells it
// to validate a logout token, written with the `jose` library: the signature against the issuer's
// JWKS (RS256, or the algorithms ALGS lists), `typ` logout+jwt, the issuer and the audience, `iat`, `exp` and `jti` present,
// `sub` or `sid` present, the back-channel logout event, and no `nonce`.
// Usage: node verify-logout.mjs JWKS_URL TOKEN ISSUER AUDIENCE [ALGS]
// Prints {"ok": true, "payload": {...}} or {"ok": false, "code": ..., "message": ...}.
import { createRemoteJWKSet, jwtVerify } from 'jose';

const EVENT = 'http://schemas.openid.net/event/backchannel-logout';
const [jwksUrl, token, issuer, audience, algs] = process.argv.slice(2);
const jwks = createRemoteJWKSet(new URL(jwksUrl), { cacheMaxAge: 0, cooldownDuration: 0 });
try {
  const { payload } = await jwtVerify(token, jwks, {
    issuer,
    audience,
    algorithms: (algs ?? 'RS256').split(','),
    typ: 'logout+jwt',
    requiredClaims: ['iat', 'exp', 'jti'],
  });
  const fail = (message) => {
    throw Object.assign(new Error(message), { code: 'LOGOUT_TOKEN_INVALID' });
  };
  if (!payload.sub && !payload.sid) fail('neither sub nor sid');
  if (typeof payload.events !== 'object' || typeof payload.events[EVENT] !== 'object') fail('no logout event');
  if ('nonce' in payload) fail('a logout token carries no nonce');
  console.log(JSON.stringify({ ok: true, payload }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, code: e.code ?? 'ERR', message: String(e.message) }));
}
