// An outside relying party, written with `openid-client` (not our code), against a running
// latchkeyd: discovery; an authorization URL with PKCE, state and nonce; headless Chromium signs
// the user in on latchkey's hosted login page with a virtual passkey; the code arrives at a local
// /oidc-callback; the library exchanges it, validates the ID token, calls userinfo and refreshes.
// A relying backend then verifies the access token with `jose` against the JWKS, and an m2m
// client uses the client credentials grant.
// Usage: node oidc-rp.mjs ISSUER CLIENT_ID CLIENT_SECRET CALLBACK_PORT INVITE_URL M2M_ID M2M_SECRET
import http from 'node:http';
import * as client from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { chromium } from 'playwright-core';

const [issuer, clientId, clientSecret, port, inviteUrl, m2mId, m2mSecret] = process.argv.slice(2);
const insecure = { execute: [client.allowInsecureRequests] }; // http://localhost in tests only
const out = {};
let browser;
let server;
try {
  const config = await client.discovery(new URL(issuer), clientId, clientSecret, undefined, insecure);
  out.issuer = config.serverMetadata().issuer;

  let gotCallback;
  const callback = new Promise((resolve) => { gotCallback = resolve; });
  server = http.createServer((req, res) => {
    if (req.url.startsWith('/oidc-callback')) {
      gotCallback(new URL(req.url, `http://127.0.0.1:${port}`));
      res.setHeader('Content-Type', 'text/plain');
      res.end('signed in');
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise((resolve) => server.listen(Number(port), '127.0.0.1', resolve));

  const redirectUri = `http://127.0.0.1:${port}/oidc-callback`;
  const verifier = client.randomPKCECodeVerifier();
  const challenge = await client.calculatePKCECodeChallenge(verifier);
  const nonce = client.randomNonce();
  const state = client.randomState();
  const authUrl = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri, scope: 'openid profile email', code_challenge: challenge,
    code_challenge_method: 'S256', nonce, state,
  });

  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const context = await browser.newContext();
  // The virtual authenticator answers conditional (autofill) requests by itself, racing the click
  // below; turn autofill off so the username-less button is what signs in.
  await context.addInitScript(() => {
    if (window.PublicKeyCredential) window.PublicKeyCredential.isConditionalMediationAvailable = async () => false;
  });
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true,
      isUserVerified: true, automaticPresenceSimulation: true },
  });
  // The invited user registers a passkey first, then signs out.
  await page.goto(inviteUrl);
  await page.waitForSelector('#app[data-ready="1"]');
  await page.click('#create-platform');
  await page.waitForURL('**/account');
  await context.clearCookies();

  // The relying party sends the browser to latchkey; the hosted login page signs in.
  const response = await page.goto(authUrl.href);
  out.loginCsp = response.headers()['content-security-policy'];
  await page.waitForSelector('#app[data-ready="1"]');
  out.loginHeading = await page.textContent('h1');
  out.loginApp = await page.textContent('main strong');
  await page.click('#signin');
  const currentUrl = await callback;
  out.callbackPath = currentUrl.pathname;

  const tokens = await client.authorizationCodeGrant(config, currentUrl, {
    pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state, idTokenExpected: true,
  });
  const claims = tokens.claims();
  out.idToken = { iss: claims.iss, aud: claims.aud, nonce: claims.nonce, sub: claims.sub, name: claims.name,
    email: claims.email, email_verified: claims.email_verified, picture: claims.picture, amr: claims.amr };
  // openid-client trusts an ID token from the token endpoint without checking its signature;
  // check it as well, with jose against the JWKS.
  const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri));
  const idCheck = await jwtVerify(tokens.id_token, jwks, { issuer, audience: clientId, algorithms: ['RS256'] });
  out.idTokenSignature = idCheck.protectedHeader.alg;

  const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
  out.userinfo = { sub: info.sub, email: info.email, name: info.name };

  const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token);
  out.refreshed = { hasAccessToken: !!refreshed.access_token, rotated: refreshed.refresh_token !== tokens.refresh_token };

  // A relying backend (seed, Authentication §6): RS256 against the JWKS, issuer and audience.
  const api = await jwtVerify(tokens.access_token, jwks, { issuer, audience: clientId, algorithms: ['RS256'], typ: 'at+jwt' });
  out.accessToken = { sub: api.payload.sub, scope: api.payload.scope };

  const m2m = await client.discovery(new URL(issuer), m2mId, m2mSecret, undefined, insecure);
  const cc = await client.clientCredentialsGrant(m2m, { scope: 'users:invite' });
  const ccCheck = await jwtVerify(cc.access_token, jwks, { issuer, audience: m2mId, algorithms: ['RS256'] });
  out.clientCredentials = { sub: ccCheck.payload.sub, scope: ccCheck.payload.scope };
  out.ok = true;
} catch (e) {
  out.ok = false;
  out.error = String((e && e.stack) || e);
  process.exitCode = 1;
} finally {
  if (browser) await browser.close();
  if (server) server.close();
  console.log(JSON.stringify(out));
}
