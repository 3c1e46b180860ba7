// A security key (Chromium's virtual CTAP2 authenticator on USB) registers through an invitation
// page of a tenant with a verified attestation policy. Prints what happened and what the key
// sent: {outcome: "account"|"refused", message, role, fmt, aaguid, x5c: [base64 DER…]}.
// Usage: node attested-passkey.mjs INVITE_URL
import { chromium } from 'playwright-core';

const [inviteUrl] = process.argv.slice(2);

// Just enough CBOR (RFC 8949) to read an attestation object: maps, arrays, strings, integers.
function cbor(bytes) {
  let i = 0;
  const length = (info) => {
    if (info < 24) return info;
    const n = { 24: 1, 25: 2, 26: 4, 27: 8 }[info];
    let v = 0;
    for (let k = 0; k < n; k++) v = v * 256 + bytes[i++];
    return v;
  };
  const item = () => {
    const first = bytes[i++];
    const major = first >> 5;
    const n = length(first & 31);
    switch (major) {
      case 0: return n;
      case 1: return -1 - n;
      case 2: { const b = bytes.slice(i, i + n); i += n; return b; }
      case 3: { const s = new TextDecoder().decode(bytes.slice(i, i + n)); i += n; return s; }
      case 4: return Array.from({ length: n }, item);
      case 5: { const m = {}; for (let k = 0; k < n; k++) { const key = item(); m[key] = item(); } return m; }
      default: throw new Error(`CBOR major type ${major} not expected here`);
    }
  };
  return item();
}

const b64url = (s) => Buffer.from(s, 'base64url');
const hex = (b) => Buffer.from(b).toString('hex');

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
});
const seen = {};
try {
  const context = await browser.newContext({ locale: 'en-US' });
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'usb', hasResidentKey: true, hasUserVerification: true,
      isUserVerified: true, automaticPresenceSimulation: true },
  });
  page.on('request', (r) => {
    if (!r.url().endsWith('/register/finish')) return;
    const body = JSON.parse(r.postData());
    seen.attestationAsked = true;
    const object = cbor(b64url(body.credential.response.attestationObject));
    seen.fmt = object.fmt;
    seen.x5c = (object.attStmt.x5c || []).map((c) => Buffer.from(c).toString('base64'));
    const aaguid = hex(object.authData.slice(37, 53));
    seen.aaguid = [aaguid.slice(0, 8), aaguid.slice(8, 12), aaguid.slice(12, 16), aaguid.slice(16, 20), aaguid.slice(20)].join('-');
  });
  // The options' body is read as it arrives (a page that moves on takes it away).
  page.on('response', (r) => {
    if (r.url().endsWith('/register/start')) {
      seen.started = r.json().then((o) => { seen.conveyance = o.attestation; }, (e) => { seen.conveyance = String(e); });
    }
  });

  await page.goto(inviteUrl);
  await page.waitForSelector('#app[data-ready="1"]');
  await page.click('#create-roaming');
  const outcome = await Promise.race([
    page.waitForURL('**/account').then(() => 'account'),
    page.waitForSelector('#status.error').then(() => 'refused'),
  ]);
  seen.outcome = outcome;
  await seen.started;
  delete seen.started;
  if (outcome === 'refused') {
    seen.message = await page.textContent('#status');
    seen.role = await page.getAttribute('#status', 'role');
  }
  console.log(JSON.stringify(seen));
} finally {
  await browser.close();
}
