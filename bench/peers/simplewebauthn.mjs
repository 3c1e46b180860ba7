// SimpleWebAuthn (npm @simplewebauthn/server) as a peer for bench/run: a minimal HTTP wrapper
// that speaks the same four JSON calls as a Latchkey tenant, so the Rust ceremony bench drives
// both with the same software authenticator:
//   POST /bench/register/start  {username, display_name}  -> creation options
//   POST /bench/register/finish {credential, challenge}   -> 201
//   POST /bench/auth/start      {username}                -> request options
//   POST /bench/auth/finish     {assertion, challenge}    -> 200
// Challenges are single use and expire after 60 s, as in Latchkey. Everything is kept in memory:
// nothing is written to disk, so the peer does no durable write (Latchkey commits each step).
// Usage: node simplewebauthn.mjs PORT
import { createServer } from 'node:http';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';

const port = Number(process.argv[2] || 3998);
const rpID = '127.0.0.1';
const origin = `http://127.0.0.1:${port}`;
const users = new Map(); // username -> { id, credentials: [{ id, publicKey, counter }] }
const credentials = new Map(); // credential id -> { username, credential }
const challenges = new Map(); // challenge -> { username, kind, expires }

function take(challenge, kind) {
  const c = challenges.get(challenge);
  challenges.delete(challenge);
  return c && c.kind === kind && c.expires > Date.now() ? c : null;
}

const routes = {
  async '/bench/register/start'({ username, display_name }) {
    const options = await generateRegistrationOptions({
      rpName: 'bench', rpID, userName: username, userDisplayName: display_name,
      attestationType: 'none', timeout: 60000,
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      supportedAlgorithmIDs: [-7],
    });
    challenges.set(options.challenge, { username, kind: 'register', expires: Date.now() + 60000, userID: options.user.id });
    return [200, options];
  },
  async '/bench/register/finish'({ credential, challenge }) {
    const c = take(challenge, 'register');
    if (!c) return [400, { error: 'challenge_invalid' }];
    const v = await verifyRegistrationResponse({
      response: credential, expectedChallenge: challenge, expectedOrigin: origin, expectedRPID: rpID,
    });
    if (!v.verified) return [400, { error: 'invalid_credential' }];
    const { id, publicKey, counter } = v.registrationInfo.credential;
    const user = users.get(c.username) ?? { id: c.userID, credentials: [] };
    user.credentials.push({ id, publicKey, counter });
    users.set(c.username, user);
    credentials.set(id, { username: c.username, credential: user.credentials.at(-1) });
    return [201, { ok: true }];
  },
  async '/bench/auth/start'({ username }) {
    const user = users.get(username);
    const options = await generateAuthenticationOptions({
      rpID, timeout: 60000, userVerification: 'required',
      allowCredentials: user ? user.credentials.map((c) => ({ id: c.id })) : [],
    });
    challenges.set(options.challenge, { username, kind: 'auth', expires: Date.now() + 60000 });
    return [200, options];
  },
  async '/bench/auth/finish'({ assertion, challenge }) {
    const c = take(challenge, 'auth');
    const found = credentials.get(assertion?.id);
    if (!c || !found) return [400, { error: 'challenge_invalid' }];
    const v = await verifyAuthenticationResponse({
      response: assertion, expectedChallenge: challenge, expectedOrigin: origin, expectedRPID: rpID,
      credential: found.credential, requireUserVerification: true,
    });
    if (!v.verified) return [400, { error: 'invalid_assertion' }];
    found.credential.counter = v.authenticationInfo.newCounter;
    return [200, { user: found.username }];
  },
};

createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    let status = 404;
    let body = { error: 'not_found' };
    try {
      const route = req.method === 'POST' && routes[req.url];
      if (route) [status, body] = await route(JSON.parse(Buffer.concat(chunks).toString() || '{}'));
    } catch (e) {
      [status, body] = [400, { error: 'bad_request', error_description: String(e.message ?? e) }];
    }
    const bytes = Buffer.from(JSON.stringify(body));
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes.length });
    res.end(bytes);
  });
}).listen(port, '127.0.0.1', () => console.log(`ready ${port}`));
