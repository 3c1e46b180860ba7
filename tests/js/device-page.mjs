// The device authorization page (RFC 8628) in headless Chromium with a CDP virtual authenticator:
// register a passkey from an invitation, sign out, open verification_uri_complete, check the
// prefilled code, sign in with the passkey on /device, see the app's name and scopes, approve.
// Usage: node device-page.mjs BASE_URL INVITE_URL VERIFICATION_URI_COMPLETE
// Prints one JSON object describing what it saw; exits non-zero on any failure.
import { chromium } from 'playwright-core';

const [base, inviteUrl, completeUrl] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
});
const seen = {};
try {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true,
      isUserVerified: true, automaticPresenceSimulation: true },
  });

  // A user with a passkey, signed out again.
  await page.goto(inviteUrl);
  await page.waitForSelector('#app[data-ready="1"]');
  await page.click('#create-platform');
  await page.waitForURL('**/account');
  await context.clearCookies();

  // The link the device showed: the code is filled in.
  const response = await page.goto(completeUrl);
  seen.csp = response.headers()['content-security-policy'];
  await page.waitForSelector('#app[data-ready="1"]');
  seen.heading = await page.textContent('h1');
  seen.prefilled = await page.inputValue('#user-code');
  await page.click('#device-form button[type=submit]');
  await page.waitForSelector('#device-signin', { state: 'visible' });
  await page.click('#signin');
  await page.waitForSelector('#device-confirm', { state: 'visible' });
  seen.appName = await page.textContent('#device-confirm [data-field=app]');
  seen.user = await page.textContent('#device-user');
  seen.codeShown = await page.textContent('#device-code-shown');
  seen.codeCheck = await page.textContent('#device-confirm .code-check');
  seen.scopes = await page.$$eval('#device-scopes li', (lis) => lis.map((li) => li.dataset.scope));
  await page.click('#approve');
  await page.waitForSelector('#device-done', { state: 'visible' });
  seen.status = await page.getAttribute('#app', 'data-status');
  seen.result = await page.textContent('#device-result');
  seen.consoleErrors = consoleErrors.filter((e) => !e.includes('Failed to load resource'));
  console.log(JSON.stringify({ ok: true, base, ...seen }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e && e.stack || e), ...seen }));
  process.exitCode = 1;
} finally {
  await browser.close();
}
