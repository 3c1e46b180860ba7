// End-to-end passkey journey in headless Chromium with CDP virtual authenticators:
// invite link → platform passkey → signed in on /account → add a USB security key → rename →
// revoke → sign out → username-less sign-in.
// Usage: node browser-passkeys.mjs BASE_URL INVITE_URL [SCREENSHOT_DIR]
// Prints one JSON object describing what it saw; exits non-zero on any failure.
import { chromium } from 'playwright-core';

const [base, inviteUrl, shots] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
});
const seen = {};
const shot = async (page, name) => { if (shots) await page.screenshot({ path: `${shots}/${name}.png`, fullPage: true }); };
try {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const authenticator = (transport) => cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport, hasResidentKey: true, hasUserVerification: true, isUserVerified: true,
      automaticPresenceSimulation: true },
  });
  const { authenticatorId: platform } = await authenticator('internal');

  // 1. The invite link: register a platform passkey and land signed in on /account.
  const response = await page.goto(inviteUrl);
  seen.csp = response.headers()['content-security-policy'];
  await page.waitForSelector('#app[data-ready="1"]');
  seen.invitePage = await page.textContent('h1');
  await shot(page, '1-invite');
  await page.click('#create-platform');
  await page.waitForURL('**/account');
  await page.waitForFunction(() => document.getElementById('app').dataset.count === '1');
  seen.adviceShownWithOne = await page.isVisible('#advice');
  seen.afterRegister = await page.$$eval('#credentials li', (lis) => lis.map((li) => li.dataset.type));
  await shot(page, '2-account-one');

  // 2. Add a backup security key (a USB authenticator).
  const { authenticatorId: usb } = await authenticator('usb');
  await page.click('#add-roaming');
  await page.waitForFunction(() => document.getElementById('app').dataset.count === '2');
  seen.afterAdd = await page.$$eval('#credentials li', (lis) => lis.map((li) => li.dataset.type));
  seen.adviceShownWithTwo = await page.isVisible('#advice');
  seen.devices = await page.$$eval('#credentials .meta', (els) => els.map((e) => e.textContent));

  // 3. Rename the security key.
  const key = '#credentials li[data-type="roaming"]';
  await page.click(`${key} [data-action=rename]`);
  await page.fill(`${key} [data-field=new-name]`, 'Blue YubiKey');
  await page.click(`${key} [data-action=save]`);
  await page.waitForFunction(() => [...document.querySelectorAll('#credentials [data-field=name]')]
    .some((e) => e.textContent === 'Blue YubiKey'));
  seen.names = await page.$$eval('#credentials [data-field=name]', (els) => els.map((e) => e.textContent));
  await shot(page, '3-account-two');

  // 4. Revoke it (and unplug it).
  await page.click(`${key} [data-action=remove]`);
  await page.waitForFunction(() => document.getElementById('app').dataset.count === '1');
  seen.lastRemoveDisabled = await page.isDisabled('#credentials li [data-action=remove]');
  await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: usb });

  // 5. Sign out (drop the cookie) and sign in again without typing a username.
  await context.clearCookies();
  await page.goto(`${base}/account`);
  await page.waitForSelector('#app[data-ready="1"]');
  seen.signedOutHeading = await page.textContent('h1');
  await shot(page, '4-signin');
  await page.click('#signin');
  await page.waitForFunction(() => document.getElementById('app').dataset.count === '1');
  seen.signedInAgain = await page.textContent('h1');

  // 6. A cancelled prompt shows a clear message: no authenticator can answer.
  await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: platform });
  await context.clearCookies();
  await page.goto(`${base}/account`);
  await page.waitForSelector('#app[data-ready="1"]');
  await page.evaluate(() => {
    // Make the browser give up at once instead of waiting out the 60 s timeout.
    const get = navigator.credentials.get.bind(navigator.credentials);
    navigator.credentials.get = (o) => get(Object.assign({}, o, { publicKey: Object.assign({}, o.publicKey, { timeout: 500 }) }));
  });
  await page.click('#signin');
  await page.waitForSelector('#status.error');
  seen.cancelMessage = await page.textContent('#status');
  seen.consoleErrors = consoleErrors.filter((e) => !e.includes('401') && !e.includes('Failed to load resource'));
  console.log(JSON.stringify({ ok: true, ...seen }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e && e.stack || e), ...seen }));
  process.exitCode = 1;
} finally {
  await browser.close();
}
