// An outside relying party, written with `openid-client` (not our code), driving the behaviour
// the OpenID certification plans check beyond a plain sign-in, with headless Chromium and a
// virtual passkey on latchkey's pages: the consent page of a third-party app and the `claims`
// parameter (oidcc-claims-essential), prompt=none with a session (oidcc-prompt-none-logged-in),
// prompt=consent answered Deny (access_denied, parsed by the library), RP-initiated logout with
// `state` (oidcc-rp-initiated-logout) and the back-channel logout token it causes, validated with
// `jose` (oidcc-backchannel-rp-initiated-logout), after which the session's refresh token is dead.
// Usage: node oidc-conformance-rp.mjs ISSUER CLIENT_ID CLIENT_SECRET PORT INVITE_URL
import http from 'node:http';
import * as client from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { chromium } from 'playwright-core';

const [issuer, clientId, clientSecret, port, inviteUrl] = process.argv.slice(2);
const insecure = { execute: [client.allowInsecureRequests] }; // http://localhost in tests only
const base = `http://127.0.0.1:${port}`;
const EVENT = 'http://schemas.openid.net/event/backchannel-logout';
const out = {};
let browser;
let server;

// Each path the server answers resolves the next promise waiting on it.
const waiting = {};
const next = (path) => new Promise((resolve) => { waiting[path] = resolve; });

try {
  server = http.createServer((req, res) => {
    const url = new URL(req.url, base);
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const resolve = waiting[url.pathname];
      delete waiting[url.pathname];
      if (resolve) resolve({ url, body, method: req.method, type: req.headers['content-type'] });
      res.setHeader('Content-Type', 'text/plain');
      res.setHeader('Cache-Control', 'no-store');
      res.end('ok');
    });
  });
  await new Promise((resolve) => server.listen(Number(port), '127.0.0.1', resolve));

  const config = await client.discovery(new URL(issuer), clientId, clientSecret, undefined, insecure);
  const meta = config.serverMetadata();
  out.discovery = {
    backchannel: meta.backchannel_logout_supported,
    backchannelSession: meta.backchannel_logout_session_supported,
    prompts: meta.prompt_values_supported,
    claimsParameter: meta.claims_parameter_supported,
  };
  const jwks = createRemoteJWKSet(new URL(meta.jwks_uri));
  const redirectUri = `${base}/oidc-callback`;
  const start = async (extra) => {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri, scope: 'openid profile', code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256', state, nonce, ...extra,
    });
    return { url, check: { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true } };
  };

  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const context = await browser.newContext();
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
  await page.goto(inviteUrl);
  await page.waitForSelector('#app[data-ready="1"]');
  await page.click('#create-platform');
  await page.waitForURL('**/account');
  await context.clearCookies();

  // Sign in, asking for the e-mail as an essential ID token claim; the app asks for consent.
  const first = await start({ claims: JSON.stringify({ id_token: { email: { essential: true } } }) });
  let callback = next('/oidc-callback');
  await page.goto(first.url.href);
  await page.waitForSelector('#app[data-ready="1"]');
  await page.click('#signin');
  await page.waitForSelector('#consent-allow');
  out.consent = { heading: await page.textContent('h1'), scopes: await page.$$eval('#consent-scopes li', (l) => l.map((e) => e.dataset.scope)) };
  await page.click('#consent-allow');
  const tokens = await client.authorizationCodeGrant(config, (await callback).url, first.check);
  const claims = tokens.claims();
  out.idToken = { email: claims.email, sid: claims.sid, acr: claims.acr, auth_time: claims.auth_time, sub: claims.sub };

  // prompt=none with the session: a code at once, the consent remembered.
  const quiet = await start({ prompt: 'none' });
  callback = next('/oidc-callback');
  await page.goto(quiet.url.href);
  const again = await client.authorizationCodeGrant(config, (await callback).url, quiet.check);
  out.promptNone = { sameSid: again.claims().sid === claims.sid };

  // prompt=consent asks again; Deny reaches the library as access_denied.
  const ask = await start({ prompt: 'consent' });
  callback = next('/oidc-callback');
  await page.goto(ask.url.href);
  await page.waitForSelector('#consent-deny');
  await page.click('#consent-deny');
  try {
    await client.authorizationCodeGrant(config, (await callback).url, ask.check);
    out.denied = 'a code';
  } catch (e) {
    out.denied = e.error ?? e.code ?? String(e);
  }

  // RP-initiated logout back to the app with its state; the back-channel token arrives.
  const logoutToken = next('/bcl');
  const signedOut = next('/signed-out');
  const endUrl = client.buildEndSessionUrl(config, {
    id_token_hint: tokens.id_token, post_logout_redirect_uri: `${base}/signed-out`, state: 'bye-123',
  });
  await page.goto(endUrl.href);
  out.signedOutState = (await signedOut).url.searchParams.get('state');
  const bcl = await logoutToken;
  out.backchannelType = bcl.type;
  const token = new URLSearchParams(bcl.body).get('logout_token');
  const { payload, protectedHeader } = await jwtVerify(token, jwks, {
    issuer, audience: clientId, algorithms: ['RS256'], typ: 'logout+jwt', requiredClaims: ['iat', 'exp', 'jti'],
  });
  out.logoutToken = {
    typ: protectedHeader.typ, sub: payload.sub, sid: payload.sid, event: typeof payload.events?.[EVENT] === 'object',
    nonce: 'nonce' in payload,
  };

  // The session's grants are over: the refresh token is refused.
  try {
    await client.refreshTokenGrant(config, tokens.refresh_token);
    out.refreshAfterLogout = 'refreshed';
  } catch (e) {
    out.refreshAfterLogout = e.error ?? e.code ?? String(e);
  }
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
