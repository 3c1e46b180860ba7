// A person links a second provider on the account page, in headless Chromium with a CDP virtual
// authenticator: the invitation's GitHub button signs them in (a social session), they add a
// passkey, Link on another provider asks for that passkey first, the passkey step-up goes on to
// the (stand-in) provider, the confirmation page names the account, Confirm links it.
// Usage: node social-link.mjs INVITE_URL PROVIDER
// Prints one JSON object describing what it saw ({"error": …} on a failure).
import { chromium } from 'playwright-core';

const [inviteUrl, provider] = process.argv.slice(2);
let browser;
let page;
const seen = {};
try {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const context = await browser.newContext();
  page = await context.newPage();
  page.setDefaultTimeout(20000);
  const consoleErrors = [];
  // The 403 that asks for the passkey is expected; script errors are not.
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true,
      isUserVerified: true, automaticPresenceSimulation: true },
  });

  // 1. The invitation's GitHub button: signed in by GitHub, offered a passkey once ("Not now"),
  // on the account page.
  await page.goto(inviteUrl);
  await page.waitForSelector('#app[data-ready="1"]');
  await page.click('a[data-provider="github"]');
  await page.waitForSelector('#offer-passkey');
  await page.click('#skip-passkey');
  await page.waitForURL('**/account');
  await page.waitForFunction(() => document.getElementById('app').dataset.count === '0');
  await page.waitForSelector(`#social li[data-provider="${provider}"] [data-action=link]`);

  // 2. A passkey added in that session (no new session: still a social sign-in).
  await page.click('#add-platform');
  await page.waitForFunction(() => document.getElementById('app').dataset.count === '1');

  // 3. Link: the page asks for the passkey first.
  await page.click(`#social li[data-provider="${provider}"] [data-action=link]`);
  await page.waitForSelector('#step-up:not([hidden])');
  seen.asked = await page.textContent('#status');

  // 4. The passkey, then on to the provider and back to the confirmation page.
  await page.click('#step-up');
  await page.waitForURL((url) => url.pathname.endsWith(`/login/${provider}/callback`));
  await page.waitForSelector('#confirm-link');
  seen.confirmHeading = await page.textContent('h1');
  seen.confirmAccount = await page.textContent('#upstream-account');

  // 5. Confirm: back on the account page, linked.
  await page.click('#confirm-link');
  await page.waitForURL('**/account');
  await page.waitForSelector(`#social li[data-provider="${provider}"] [data-action=unlink]`);
  seen.linked = await page.$$eval('#social li', (lis) => lis.map((li) => [li.dataset.provider, !!li.querySelector('[data-action=unlink]')]));
  seen.consoleErrors = consoleErrors;
  console.log(JSON.stringify(seen));
} catch (e) {
  seen.at = page ? page.url() : null;
  seen.text = page ? (await page.textContent('body').catch(() => '')).trim().slice(0, 300) : null;
  console.log(JSON.stringify({ error: String(e.message), seen }));
} finally {
  if (browser) await browser.close();
}
