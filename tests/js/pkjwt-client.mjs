// A confidential client that authenticates with private_key_jwt (RFC 7523), written with
// `openid-client` (not our code): discovery, then the client credentials grant with a client
// assertion the library signs with the given private key.
// Usage: node pkjwt-client.mjs ISSUER CLIENT_ID ALG PKCS8_PEM_FILE KID
// Prints {"ok": true, "access_token": ...} or {"ok": false, "code": ..., "message": ...}.
import { readFileSync } from 'node:fs';
import * as client from 'openid-client';
import { importPKCS8 } from 'jose';

const [issuer, clientId, alg, keyFile, kid] = process.argv.slice(2);
const insecure = { execute: [client.allowInsecureRequests] }; // http://localhost in tests only
try {
  const key = await importPKCS8(readFileSync(keyFile, 'utf8'), alg);
  const auth = client.PrivateKeyJwt({ key, kid });
  const config = await client.discovery(new URL(issuer), clientId, undefined, auth, insecure);
  const tokens = await client.clientCredentialsGrant(config);
  console.log(JSON.stringify({ ok: true, access_token: tokens.access_token }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, code: e.code ?? e.error ?? 'ERR', message: String(e.message), cause: e.cause }));
}
