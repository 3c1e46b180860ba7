// An outside RFC 8628 client written with `openid-client` (not our code): discovery, device
// authorization, then polling until the user approves; the library validates the ID token.
// Usage: node device-client.mjs ISSUER CLIENT_ID
// Prints one JSON line with the user code to show, then one with the outcome:
// {"ok": true, "id_token": ..., "claims": {...}, "refresh_token": true} or {"ok": false, ...}.
import * as client from 'openid-client';

const [issuer, clientId] = process.argv.slice(2);
const insecure = { execute: [client.allowInsecureRequests] }; // http://localhost in tests only
try {
  // A public native client: no secret (token endpoint auth method "none").
  const config = await client.discovery(new URL(issuer), clientId, undefined, client.None(), insecure);
  const started = await client.initiateDeviceAuthorization(config, { scope: 'openid email offline_access' });
  console.log(JSON.stringify({
    user_code: started.user_code,
    verification_uri: started.verification_uri,
    verification_uri_complete: started.verification_uri_complete,
    interval: started.interval,
  }));
  const tokens = await client.pollDeviceAuthorizationGrant(config, started);
  console.log(JSON.stringify({
    ok: true,
    id_token: tokens.id_token,
    claims: tokens.claims(),
    refresh_token: typeof tokens.refresh_token === 'string',
    scope: tokens.scope,
  }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e && e.stack || e), code: e && e.code, cause: e && e.cause && String(JSON.stringify(e.cause)) }));
  process.exitCode = 1;
}
