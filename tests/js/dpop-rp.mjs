// An outside DPoP client (RFC 9449), written with `openid-client` (not our code):
//   node dpop-rp.mjs url ISSUER CLIENT_ID REDIRECT_URI
//     → {"url", "verifier", "state", "nonce"}: a public client's authorization URL (PKCE).
//   node dpop-rp.mjs exchange ISSUER CLIENT_ID CALLBACK_URL VERIFIER STATE NONCE ALG
//     → the code exchanged with a DPoP proof of a new ALG key, userinfo fetched with the bound
//       token, the refresh token rotated with the same key, and the same two calls tried with
//       another key (which must fail): {"ok": true, "token_type", "cnf", "jkt", "userinfo",
//       "refreshed": {"token_type", "cnf"}, "userinfo_after_refresh", "other_key": {...}}.
//   node dpop-rp.mjs cc ISSUER CLIENT_ID CLIENT_SECRET ALG
//     → {"ok": true, "token_type", "cnf", "jkt"}: a client-credentials grant with a proof.
// openid-client answers a `use_dpop_nonce` refusal by retrying once with the nonce it was given.
// Errors print {"ok": false, "code", "message"}.
import * as client from 'openid-client';
import { calculateJwkThumbprint } from 'jose';

const [step, issuer, clientId, ...rest] = process.argv.slice(2);
const insecure = { execute: [client.allowInsecureRequests] }; // http://localhost in tests only
const claimsOf = (jwt) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());
const failure = (e) => ({ ok: false, code: e.code ?? e.error ?? 'ERR', error: e.error, status: e.status, message: String(e.message) });

async function handle(config, alg) {
  const keyPair = await client.randomDPoPKeyPair(alg);
  const jwk = await crypto.subtle.exportKey('jwk', keyPair.publicKey);
  return { DPoP: client.getDPoPHandle(config, keyPair), jkt: await calculateJwkThumbprint(jwk) };
}

try {
  if (step === 'url') {
    const [redirectUri] = rest;
    const config = await client.discovery(new URL(issuer), clientId, undefined, client.None(), insecure);
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri, scope: 'openid email', code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256', state, nonce,
    });
    console.log(JSON.stringify({ url: url.href, verifier, state, nonce }));
  } else if (step === 'exchange') {
    const [callback, verifier, state, nonce, alg] = rest;
    const config = await client.discovery(new URL(issuer), clientId, undefined, client.None(), insecure);
    const mine = await handle(config, alg);
    const other = await handle(config, alg);
    const tokens = await client.authorizationCodeGrant(config, new URL(callback), {
      pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce,
    }, undefined, { DPoP: mine.DPoP });
    const sub = tokens.claims().sub;
    const userinfo = await client.fetchUserInfo(config, tokens.access_token, sub, { DPoP: mine.DPoP });
    const otherKey = {};
    otherKey.userinfo = await client.fetchUserInfo(config, tokens.access_token, sub, { DPoP: other.DPoP }).then(() => ({ ok: true }), failure);
    otherKey.refresh = await client.refreshTokenGrant(config, tokens.refresh_token, undefined, { DPoP: other.DPoP }).then(() => ({ ok: true }), failure);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token, undefined, { DPoP: mine.DPoP });
    const after = await client.fetchUserInfo(config, refreshed.access_token, sub, { DPoP: mine.DPoP });
    console.log(JSON.stringify({
      ok: true, token_type: tokens.token_type, cnf: claimsOf(tokens.access_token).cnf, jkt: mine.jkt, userinfo,
      refreshed: { token_type: refreshed.token_type, cnf: claimsOf(refreshed.access_token).cnf },
      userinfo_after_refresh: after, other_key: otherKey, access_token: refreshed.access_token,
    }));
  } else {
    const [secret, alg] = rest;
    const config = await client.discovery(new URL(issuer), clientId, secret, undefined, insecure);
    const mine = await handle(config, alg);
    const tokens = await client.clientCredentialsGrant(config, {}, { DPoP: mine.DPoP });
    console.log(JSON.stringify({ ok: true, token_type: tokens.token_type, cnf: claimsOf(tokens.access_token).cnf, jkt: mine.jkt }));
  }
} catch (e) {
  console.log(JSON.stringify(failure(e)));
}
