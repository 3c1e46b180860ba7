// node-oidc-provider as a peer for bench/run, with an in-memory store and RS256 JWT access tokens
// (one signature per token, like Latchkey):
//   - client `bench`: the client credentials grant;
//   - client `bench-web`: authorization codes with PKCE, exchanged for an ID token, a JWT access
//     token and a refresh token (two signatures, like Latchkey). The bench does not drive the
//     provider's login pages: `GET /bench/mint-codes?n=N&challenge=C` issues N codes for account
//     `ada` straight from the provider's own models, as its /authorize would after a sign-in.
// Usage: node oidc-provider.mjs PORT
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const port = Number(process.argv[2] || 3999);
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'bench', use: 'sig', alg: 'RS256' };

// The provider's built-in development adapter is an LRU of 1,000 entries: a bench's thousands of
// grants and codes would evict each other. This one is a plain map, still in memory.
const stores = new Map();
class MapAdapter {
  constructor(name) {
    if (!stores.has(name)) stores.set(name, new Map());
    this.store = stores.get(name);
  }

  async upsert(id, payload) { this.store.set(id, payload); }

  async find(id) { return this.store.get(id); }

  async findByUid(uid) { return [...this.store.values()].find((p) => p.uid === uid); }

  async findByUserCode(code) { return [...this.store.values()].find((p) => p.userCode === code); }

  async consume(id) { const p = this.store.get(id); if (p) p.consumed = Math.floor(Date.now() / 1000); }

  async destroy(id) { this.store.delete(id); }

  async revokeByGrantId(grantId) {
    for (const [id, p] of this.store) if (p.grantId === grantId) this.store.delete(id);
  }
}

const provider = new Provider(`http://127.0.0.1:${port}`, {
  adapter: MapAdapter,
  clients: [{
    client_id: 'bench',
    client_secret: 'bench-secret-bench-secret-bench-secret',
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
  }, {
    client_id: 'bench-web',
    client_secret: 'bench-web-secret-bench-web-secret',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: ['https://app.example.com/oidc-callback'],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  findAccount: (ctx, sub) => ({ accountId: sub, claims: () => ({ sub, email: `${sub}@bench.test` }) }),
  claims: { openid: ['sub'], email: ['email'] },
  jwks: { keys: [jwk] },
  features: {
    clientCredentials: { enabled: true },
    devInteractions: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => 'urn:bench:api',
      getResourceServerInfo: () => ({ scope: 'api', accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }),
      useGrantedResource: () => true,
    },
  },
  scopes: ['openid', 'offline_access', 'email', 'api'],
  ttl: { AccessToken: 3600, AuthorizationCode: 60, ClientCredentials: 3600, Grant: 86400, IdToken: 3600, RefreshToken: 86400 },
});

async function mintCodes(n, challenge) {
  const client = await provider.Client.find('bench-web');
  const codes = [];
  for (let i = 0; i < n; i += 1) {
    const grant = new provider.Grant({ accountId: 'ada', clientId: 'bench-web' });
    grant.addOIDCScope('openid offline_access email');
    grant.addResourceScope('urn:bench:api', 'api');
    const grantId = await grant.save();
    const code = new provider.AuthorizationCode({
      accountId: 'ada',
      authTime: Math.floor(Date.now() / 1000),
      client,
      codeChallenge: challenge,
      codeChallengeMethod: 'S256',
      grantId,
      redirectUri: 'https://app.example.com/oidc-callback',
      resource: 'urn:bench:api',
      scope: 'openid offline_access email api',
    });
    codes.push(await code.save());
  }
  return codes;
}

const callback = provider.callback();
createServer((req, res) => {
  const url = new URL(req.url, `http://127.0.0.1:${port}`);
  if (url.pathname !== '/bench/mint-codes') return callback(req, res);
  mintCodes(Number(url.searchParams.get('n') || 1), url.searchParams.get('challenge')).then(
    (codes) => res.end(JSON.stringify(codes)),
    (e) => { res.statusCode = 500; res.end(String(e)); },
  );
}).listen(port, '127.0.0.1', () => console.log(`ready ${port}`));
