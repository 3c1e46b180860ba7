// A person signs in to an application through a social provider, in headless Chromium: the
// application's authorization URL → latchkey's hosted login page → the provider's button → the
// (stand-in) provider → back to latchkey → back to the application with a code. The browser keeps
// its own cookies, so the browser-binding cookie of the flow is exercised for real.
// Usage: node social-login.mjs START_URL PROVIDER REDIRECT_PREFIX [add|skip]
// START_URL is the authorization URL (or an invitation page); PROVIDER the button's key; the
// application's redirect URI starts with REDIRECT_PREFIX and is not fetched, only recorded. A user
// without a passkey is offered one once: `add` adds one (a virtual platform authenticator),
// `skip` (the default) goes on with "Not now".
// Prints {"landed": URL, "offered": bool} (the first URL under REDIRECT_PREFIX, or
// the last page's URL and text).
import { chromium } from 'playwright-core';

const [startUrl, provider, redirectPrefix, offer = 'skip'] = process.argv.slice(2);
let browser;
try {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  let landed = null;
  await context.route((url) => url.href.startsWith(redirectPrefix), async (route) => {
    landed = route.request().url();
    await route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the application' });
  });
  if (offer === 'add') {
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true,
        isUserVerified: true, automaticPresenceSimulation: true },
    });
  }
  await page.goto(startUrl);
  await page.click(`a[data-provider="${provider}"]`);
  const arrived = (url) => landed !== null || /\/(account|login\/[^/]+\/callback)/.test(url.pathname);
  await page.waitForURL(arrived);
  let offered = false;
  if (!landed) {
    await page.waitForLoadState('load');
    if (await page.$('#offer-passkey')) {
      offered = true;
      await page.waitForSelector('#app[data-ready="1"]');
      await page.click(offer === 'add' ? '#add-passkey' : '#skip-passkey');
      await page.waitForURL((url) => landed !== null || !/\/login\/[^/]+\/callback/.test(url.pathname));
    }
  }
  if (landed) {
    console.log(JSON.stringify({ landed, offered }));
  } else {
    await page.waitForLoadState('load');
    const text = (await page.textContent('body')).trim().slice(0, 300);
    console.log(JSON.stringify({ landed: page.url(), offered, text }));
  }
} catch (e) {
  console.log(JSON.stringify({ error: String(e.message) }));
} finally {
  if (browser) await browser.close();
}
