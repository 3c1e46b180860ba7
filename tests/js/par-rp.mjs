// An outside relying party that pushes its authorization requests (RFC 9126), written with
// `openid-client` (not our code), in two steps around the browser's sign-in, which the test drives:
//   node par-rp.mjs push ISSUER CLIENT_ID CLIENT_SECRET REDIRECT_URI [ALG]
//     → {"url", "verifier", "state", "nonce"}: the authorization URL that openid-client built
//       from the request_uri it got from the pushed authorization request endpoint.
//   node par-rp.mjs exchange ISSUER CLIENT_ID CLIENT_SECRET CALLBACK_URL VERIFIER STATE NONCE [ALG]
//     → {"ok": true, "claims", "alg"}: the code exchanged and the ID token validated by the
//       library, which insists on ALG (id_token_signed_response_alg, RS256 by default).
// Errors print {"ok": false, "code", "message"}.
import * as client from 'openid-client';

const [step, issuer, clientId, clientSecret, ...rest] = process.argv.slice(2);
const insecure = { execute: [client.allowInsecureRequests] }; // http://localhost in tests only
try {
  const alg = (step === 'push' ? rest[1] : rest[4]) ?? 'RS256';
  const metadata = { client_secret: clientSecret, id_token_signed_response_alg: alg };
  const config = await client.discovery(new URL(issuer), clientId, metadata, undefined, insecure);
  if (step === 'push') {
    const [redirectUri] = rest;
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = await client.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: redirectUri, scope: 'openid email', code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256', state, nonce,
    });
    console.log(JSON.stringify({ url: url.href, verifier, state, nonce }));
  } else {
    const [callback, verifier, state, nonce] = rest;
    const tokens = await client.authorizationCodeGrant(config, new URL(callback), {
      pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce,
    });
    const header = JSON.parse(Buffer.from(tokens.id_token.split('.')[0], 'base64url').toString());
    console.log(JSON.stringify({ ok: true, claims: tokens.claims(), alg: header.alg }));
  }
} catch (e) {
  console.log(JSON.stringify({ ok: false, code: e.code ?? e.error ?? 'ERR', message: String(e.message) }));
}
