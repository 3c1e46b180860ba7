// node-oidc-provider as a peer for bench/run: one confidential client allowed the client
// credentials grant, RS256 JWT access tokens (one signature per grant, like Latchkey), an
// in-memory store. Usage: node oidc-provider.mjs PORT
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';

const port = Number(process.argv[2] || 3999);
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'bench', use: 'sig', alg: 'RS256' };

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [{
    client_id: 'bench',
    client_secret: 'bench-secret-bench-secret-bench-secret',
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
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
  scopes: ['api'],
});
provider.listen(port, '127.0.0.1', () => console.log(`ready ${port}`));
