// A local OAuth authorization server for the MCP identity suite, on a real
// node:http server (port 0): its key set (an RSA and an EC key, made here with
// jose), its RFC 8414 metadata, and a token endpoint for the client
// credentials grant that signs a token for the resource the client names (RFC
// 8707). `sign` makes any token a test needs, hostile ones included.
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';

export interface SignOptions {
  /** The key: one the key set publishes (rs, es), or one it does not (stranger). */
  key?: 'rs' | 'es' | 'stranger';
  /** The header's kid; default the key's own. */
  kid?: string;
  /** Claims left out of the defaults (exp, sub). */
  omit?: Array<'exp' | 'sub'>;
}

export interface TestIssuer {
  /** The issuer identifier, also its base URL. */
  url: string;
  jwksUrl: string;
  /** Requests for the key set so far. */
  jwksFetches: number;
  /** What the token endpoint received: each grant's resource and scope. */
  grants: Array<{ resource: string | null; scope: string | null }>;
  /** A token: iss, sub, exp (in 5 minutes) and iat by default, then `claims` over them. */
  sign(claims: JWTPayload, opts?: SignOptions): Promise<string>;
  /** An unsigned token (alg none), and one signed with HS256 using the RSA public key as the secret. */
  unsigned(claims: JWTPayload): string;
  hmacWithPublicKey(claims: JWTPayload): string;
  close(): Promise<void>;
}

export const CLIENT = { id: 'ci-robot', secret: 'robot-secret-for-tests' };

const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

export async function startIssuer(opts: { tokenClaims?: JWTPayload } = {}): Promise<TestIssuer> {
  const rs = await generateKeyPair('RS256', { extractable: true });
  const es = await generateKeyPair('ES256', { extractable: true });
  const stranger = await generateKeyPair('RS256');
  const keys = { keys: [{ ...(await exportJWK(rs.publicKey)), kid: 'rs-1', alg: 'RS256', use: 'sig' }, { ...(await exportJWK(es.publicKey)), kid: 'es-1', alg: 'ES256', use: 'sig' }] };
  const rsPem = await exportSPKI(rs.publicKey);
  const grants: TestIssuer['grants'] = [];
  let url = '';
  const issuer: TestIssuer = {
    url: '', jwksUrl: '', jwksFetches: 0, grants,
    async sign(claims, { key = 'rs', kid, omit = [] } = {}) {
      const now = Math.floor(Date.now() / 1000);
      const defaults: JWTPayload = { iss: url, sub: 'user-1', iat: now, exp: now + 300 };
      for (const name of omit) delete defaults[name];
      const [signer, alg, ownKid]: [CryptoKey, string, string] = key === 'es' ? [es.privateKey, 'ES256', 'es-1'] : key === 'stranger' ? [stranger.privateKey, 'RS256', 'rs-2'] : [rs.privateKey, 'RS256', 'rs-1'];
      return new SignJWT({ ...defaults, ...claims }).setProtectedHeader({ alg, kid: kid ?? ownKid, typ: 'at+jwt' }).sign(signer);
    },
    unsigned: (claims) => `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.`,
    hmacWithPublicKey(claims) {
      const input = `${b64url({ alg: 'HS256', kid: 'rs-1' })}.${b64url(claims)}`;
      return `${input}.${createHmac('sha256', rsPem).update(input).digest('base64url')}`;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method === 'GET' && req.url === '/jwks') {
      issuer.jwksFetches++;
      return json(200, keys);
    }
    if (req.method === 'GET' && req.url === '/.well-known/oauth-authorization-server') {
      return json(200, {
        issuer: url, authorization_endpoint: `${url}/authorize`, token_endpoint: `${url}/token`, jwks_uri: `${url}/jwks`, response_types_supported: ['code'],
        grant_types_supported: ['client_credentials'], token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      });
    }
    if (req.method === 'POST' && req.url === '/token') {
      let body = '';
      req.on('data', (c: Buffer) => { body += c.toString('utf8'); });
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const basic = req.headers.authorization?.startsWith('Basic ') ? Buffer.from(req.headers.authorization.slice(6), 'base64').toString('utf8') : undefined;
        const [id, secret] = basic !== undefined ? basic.split(':').map(decodeURIComponent) : [form.get('client_id'), form.get('client_secret')];
        if (form.get('grant_type') !== 'client_credentials' || id !== CLIENT.id || secret !== CLIENT.secret) return json(401, { error: 'invalid_client' });
        grants.push({ resource: form.get('resource'), scope: form.get('scope') });
        const scope = form.get('scope') ?? undefined;
        void issuer.sign({ sub: id, ...opts.tokenClaims, ...(form.get('resource') !== null && { aud: form.get('resource')! }), ...(scope !== undefined && { scope }) })
          .then((token) => json(200, { access_token: token, token_type: 'Bearer', expires_in: 300, ...(scope !== undefined && { scope }) }));
      });
      return;
    }
    json(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  issuer.url = url;
  issuer.jwksUrl = `${url}/jwks`;
  return issuer;
}

/** A token changed after signing: its payload's `sub` replaced, its signature kept. */
export function tampered(token: string, sub: string): string {
  const [head, payload, signature] = token.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  return `${head}.${b64url({ ...claims, sub })}.${signature}`;
}
