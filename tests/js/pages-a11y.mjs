// Accessibility of every hosted page and state, in headless Chromium: axe-core (the WCAG 2.0,
// 2.1 and 2.2 A and AA rules) in light and dark themes, at 100% and at 200% zoom (half the CSS
// viewport, as a browser zoomed to 200% lays pages out), with no horizontal scrolling at 200%
// (reflow, WCAG 1.4.10); then every flow again with the keyboard alone (Tab, Shift+Tab, typing,
// Enter): registration from an invitation, sign-in for an app, consent, device approval, sign-out.
// Screenshots of each state in each language and theme at 100% go to SHOT_DIR when given.
// Usage: node pages-a11y.mjs CONFIG_JSON
//   CONFIG_JSON: {"base", "consentApp", "deviceApp", "redirect", "runs": [{"locale", "theme",
//                 "zoom", "invite"}], "keyboardInvite", "offerInvite", "shots", "shotStates"}
// Prints one JSON object: {ok, runs: [{locale, theme, zoom, states: {NAME: {violations, passed,
// undecided}}}],
// reflow: [...], keyboard: {...}}; exits non-zero when something could not be done (violations
// are reported, the Rust test judges them).
import { chromium } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import http from 'node:http';

const cfg = JSON.parse(process.argv[2]);
const base = cfg.base;
// The app's redirect URI: a loopback page.
const app = http.createServer((req, res) => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('app'); });
await new Promise((resolve) => app.listen(Number(new URL(cfg.redirect).port), '127.0.0.1', resolve));
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
});

// Any fixed code challenge: these flows never exchange their codes.
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const authorizeUrl = (extra = {}) => {
  const q = new URLSearchParams({
    response_type: 'code', client_id: cfg.consentApp, redirect_uri: cfg.redirect, scope: 'openid profile email',
    state: 's', nonce: 'n', code_challenge: CHALLENGE, code_challenge_method: 'S256', ...extra,
  });
  return `${base}/authorize?${q}`;
};
const deviceCode = async () => {
  const r = await fetch(`${base}/device_authorization`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: cfg.deviceApp, scope: 'openid profile' }),
  });
  if (r.status !== 200) throw new Error(`device_authorization: ${r.status} ${await r.text()}`);
  return r.json();
};

async function newPage(context) {
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const addPasskey = async () => (await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true,
      isUserVerified: true, automaticPresenceSimulation: true },
  })).authenticatorId;
  return { page, cdp, addPasskey };
}

// A browser without passkey autofill: the login page waits for a button (the virtual
// authenticator would otherwise answer the autofill request at once).
const noAutofill = (context) => context.addInitScript(() => {
  if (window.PublicKeyCredential) window.PublicKeyCredential.isConditionalMediationAvailable = async () => false;
});

const ready = (page) => page.waitForSelector('#app[data-ready="1"]');

// axe over the page as it is: the violations, the rules that passed, those axe could not decide
// (reported, not failed).
async function axe(page) {
  const result = await new AxeBuilder({ page }).withTags(TAGS).analyze();
  return {
    violations: result.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.slice(0, 3).map((n) => `${n.target.join(' ')}: ${n.failureSummary}`),
    })),
    passed: result.passes.map((p) => p.id),
    undecided: result.incomplete.map((p) => p.id),
  };
}

// Whether the page scrolls sideways.
async function overflow(page) {
  const [scroll, width] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  return scroll > width ? `${scroll}px wide in a ${width}px viewport` : null;
}

// One run: every state in one language, theme and zoom.
async function run({ locale, theme, zoom, invite }) {
  const viewport = zoom === 2 ? { width: 640, height: 450 } : { width: 1280, height: 900 };
  const context = await browser.newContext({
    locale, colorScheme: theme, viewport, deviceScaleFactor: zoom,
  });
  const { page, addPasskey } = await newPage(context);
  const states = {};
  const reflow = [];
  const check = async (name) => {
    await page.waitForLoadState('load');
    states[name] = await axe(page);
    const wide = zoom === 2 && await overflow(page);
    if (wide) reflow.push(`${name}: ${wide}`);
    if (cfg.shots && zoom === 1 && cfg.shotStates.includes(name) && ['en', 'de'].includes(locale)) {
      await page.screenshot({ path: `${cfg.shots}/${name}-${locale}-${theme}.png`, fullPage: true });
    }
  };

  // Signed out: an invitation that does not exist, the account's sign-in, an app's login page,
  // and the same after a passkey prompt that no authenticator answers (the error shown).
  await page.goto(`${base}/invite/not-a-real-invitation`);
  await check('invite-invalid');
  await page.goto(`${base}/account`);
  await ready(page);
  await check('account-signed-out');
  await page.goto(authorizeUrl());
  await ready(page);
  await check('login');
  await page.evaluate(() => {
    // No authenticator yet: make the browser give up at once instead of waiting out 60 s.
    const get = navigator.credentials.get.bind(navigator.credentials);
    navigator.credentials.get = (o) => get({ ...o, publicKey: { ...o.publicKey, timeout: 500 } });
  });
  await page.click('#signin');
  await page.waitForSelector('#status.error[role="alert"]');
  await check('login-error');
  await page.goto(authorizeUrl({ redirect_uri: 'https://elsewhere.example/cb' }));
  await check('invalid-redirect');

  // The invitation: register a passkey, land on the account page.
  await addPasskey();
  await page.goto(invite);
  await ready(page);
  await check('invite');
  await page.click('#create-platform');
  await page.waitForURL('**/account');
  await page.waitForFunction(() => document.getElementById('app').dataset.count === '1');
  await check('account');

  // An app asks for consent; another sign-in is offered.
  await page.goto(authorizeUrl());
  await page.waitForSelector('#consent-allow');
  await check('consent');
  await page.goto(authorizeUrl({ prompt: 'select_account' }));
  await page.waitForSelector('#continue-as');
  await check('select-account');

  // Device approval: the code, the confirmation, the result.
  const dev = await deviceCode();
  await page.goto(`${base}/device`);
  await ready(page);
  await check('device-code');
  await page.fill('#user-code', dev.user_code);
  await page.click('#device-form button[type=submit]');
  await page.waitForSelector('#device-confirm', { state: 'visible' });
  await check('device-confirm');
  await page.click('#approve');
  await page.waitForSelector('#device-done', { state: 'visible' });
  await check('device-done');

  // Sign-out: the question, then the answer.
  await page.goto(`${base}/logout`);
  await page.waitForSelector('form[action$="/logout"] button');
  await check('sign-out');
  await page.click('form[action$="/logout"] button[type=submit]');
  await page.waitForSelector('form[action$="/logout"]', { state: 'detached' });
  await check('signed-out');
  await context.close();
  return { locale, theme, zoom, states, reflow };
}

// The one-time offer of a passkey after a social sign-in (an invitation accepted with the
// stand-in GitHub): one page, checked in both themes at both zooms.
async function offer() {
  const context = await browser.newContext({ locale: 'en', viewport: { width: 1280, height: 900 } });
  const { page } = await newPage(context);
  await page.goto(cfg.offerInvite);
  await ready(page);
  await page.click('a[data-provider="github"]');
  await page.waitForSelector('#offer-passkey');
  await ready(page);
  const states = {};
  const reflow = [];
  for (const [theme, zoom] of [['light', 1], ['dark', 1], ['light', 2], ['dark', 2]]) {
    await page.emulateMedia({ colorScheme: theme });
    await page.setViewportSize(zoom === 2 ? { width: 640, height: 450 } : { width: 1280, height: 900 });
    const name = `offer-passkey-${theme}-${zoom}x`;
    states[name] = await axe(page);
    const wide = zoom === 2 && await overflow(page);
    if (wide) reflow.push(`${name}: ${wide}`);
    if (cfg.shots && zoom === 1) await page.screenshot({ path: `${cfg.shots}/offer-passkey-en-${theme}.png`, fullPage: true });
  }
  await context.close();
  return { locale: 'en', theme: 'both', zoom: 'both', states, reflow };
}

// Tab (or Shift+Tab) until `selector` has the focus; fails when it never gets it.
async function tabTo(page, selector, back = false) {
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
  }
  throw new Error(`${selector} never receives the keyboard's focus`);
}

// Every flow with the keyboard alone: no click, no fill.
async function keyboard() {
  const context = await browser.newContext({ locale: 'en', viewport: { width: 1280, height: 900 } });
  await noAutofill(context);
  const { page, cdp, addPasskey } = await newPage(context);
  const seen = {};
  const authenticatorId = await addPasskey();
  // Registration from the invitation.
  await page.goto(cfg.keyboardInvite);
  await ready(page);
  await tabTo(page, '#create-platform');
  await page.keyboard.press('Enter');
  await page.waitForURL('**/account');
  await page.waitForFunction(() => document.getElementById('app').dataset.count === '1');
  seen.registered = true;
  // Consent for the app, with Enter on Allow.
  await page.goto(authorizeUrl());
  await page.waitForSelector('#consent-allow');
  await tabTo(page, '#consent-allow');
  await page.keyboard.press('Enter');
  await page.waitForURL(`${cfg.redirect}**`);
  seen.consented = new URL(page.url()).searchParams.has('code');
  // Device approval: the code typed, Enter, Tab to Approve, Enter.
  const dev = await deviceCode();
  await page.goto(`${base}/device`);
  await ready(page);
  await tabTo(page, '#user-code');
  await page.keyboard.type(dev.user_code);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#device-confirm', { state: 'visible' });
  await tabTo(page, '#approve');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#device-done', { state: 'visible' });
  seen.deviceApproved = await page.getAttribute('#app', 'data-status');
  // Sign-out with the keyboard.
  await page.goto(`${base}/logout`);
  await page.waitForSelector('form[action$="/logout"] button');
  await tabTo(page, 'form[action$="/logout"] button[type=submit]');
  await page.keyboard.press('Enter');
  await page.waitForSelector('form[action$="/logout"]', { state: 'detached' });
  seen.signedOut = true;
  // Sign-in for the app without an e-mail (the passkey picks the account), by keyboard, and the
  // remembered consent sends the code at once. Shift+Tab back from the end reaches it too.
  await page.goto(authorizeUrl());
  await ready(page);
  await tabTo(page, '#signin');
  await tabTo(page, '#username', true);
  await tabTo(page, '#signin');
  await page.keyboard.press('Enter');
  await page.waitForURL(`${cfg.redirect}**`);
  seen.signedInAgain = new URL(page.url()).searchParams.has('code');
  // The language menu: Tab to Deutsch, Enter: the page speaks German.
  await page.goto(`${base}/account`);
  await ready(page);
  await tabTo(page, 'nav.languages a[lang="de"]');
  await page.keyboard.press('Enter');
  await page.waitForSelector('html[lang="de"]');
  seen.languageChosen = await page.getAttribute('html', 'lang');

  // Autofill (conditional mediation): the same passkey in another browser that offers it
  // (synced there); the login page signs in as soon as the authenticator answers, no button.
  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
  const other = await browser.newContext({ locale: 'en' });
  const second = await newPage(other);
  const synced = await second.addPasskey();
  await second.cdp.send('WebAuthn.addCredential', { authenticatorId: synced, credential: credentials[0] });
  await second.page.goto(authorizeUrl());
  await second.page.waitForURL(`${cfg.redirect}**`);
  seen.autofillSignedIn = new URL(second.page.url()).searchParams.has('code');
  await other.close();
  await context.close();
  return seen;
}

const out = { ok: false, runs: [] };
try {
  for (const r of cfg.runs) out.runs.push(await run(r));
  out.runs.push(await offer());
  out.keyboard = await keyboard();
  out.ok = true;
  console.log(JSON.stringify(out));
} catch (e) {
  console.log(JSON.stringify({ ...out, error: String(e && e.stack || e) }));
  process.exitCode = 1;
} finally {
  await browser.close();
  app.close();
}
