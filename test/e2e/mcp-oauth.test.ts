// MCP identity: the gateway as the resource server of the MCP authorization
// specification, against a local issuer the suite starts (its key set, its
// metadata and a token endpoint: test/support/oauth-issuer.ts). Tokens list
// and call what their org or scopes allow, through the SDK client; every kind
// of bad token is a 401 with the challenge naming the resource's metadata; a
// scope short of a server is a 403 naming the scopes; the metadata documents
// are what RFC 9728 asks; the token never reaches the server; an issuer whose
// keys cannot be had is a 503 within the timeout, never a 500 or a hang; keys
// work beside tokens; and the SDK's own OAuth client finds the authorization
// server from the 401 and gets in with a token it obtained itself.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { createPublicServer } from '../../src/plumbing/http-server';
import { bearer, call, type JsonResponse } from '../support/http';
import { expectError } from '../support/errors';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { connectClient } from '../support/mcp-stack';
import { sha256, startMcpServer, TEST_TOOLS, type TestMcpServer } from '../support/mcp-server';
import { freePort } from '../support/net';
import { CLIENT, startIssuer, tampered, type TestIssuer } from '../support/oauth-issuer';
import { until } from '../support/wait';

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const UPSTREAM = `Bearer upstream-${Math.random().toString(36).slice(2)}`;
const agent = makeKey('agent', { mcp: { servers: ['files'], tools: ['files/add'] } });
const SCOPES = { 'mcp:json': { servers: ['json'], tools: ['json/*'] }, 'mcp:files': { servers: ['files'], tools: ['files/*'] } };

describe('MCP identity: access tokens from the organisation\'s issuer', () => {
  let issuer: TestIssuer;
  let files: TestMcpServer;
  let json: TestMcpServer;
  let gw: TestGateway;
  /** The gateway at the origin its resource names (the SDK checks the metadata's resource against the URL it uses). */
  let listener: Server;
  let base: string;
  let resource: string;
  const lines: string[] = [];
  const post = (path: string, headers: Record<string, string> = {}, body = INIT) => call('POST', `${base}${path}`, body, { ...MCP_HEADERS, ...headers });
  const token = (claims: Record<string, unknown> = {}, opts?: Parameters<TestIssuer['sign']>[1]) => issuer.sign({ aud: resource, org: 'tools-team', ...claims }, opts);

  beforeAll(async () => {
    issuer = await startIssuer({ tokenClaims: { org: 'tools-team' } });
    files = await startMcpServer();
    json = await startMcpServer({ json: true });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    resource = `${base}/mcp`;
    const headers = { Authorization: UPSTREAM };
    gw = await startGateway({
      keys: [agent.entry],
      orgs: { 'tools-team': { mcp: { servers: ['files'], tools: ['files/add', 'files/headers'] } } },
      mcp: {
        servers: { files: { url: files.url, headers }, json: { url: json.url, headers } },
        // No clock slack: the suite and the gateway share one clock, and a token's expiry then shows at once.
        oauth: { issuer: issuer.url, jwksUrl: issuer.jwksUrl, resource, scopes: SCOPES, clockToleranceSeconds: 0 },
      },
    }, { logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }) });
    listener = createPublicServer(gw.gateway.app, gw.gateway.state.runtime.config.server);
    await new Promise<void>((resolve) => listener.listen(port, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    listener.closeAllConnections();
    await new Promise<void>((resolve) => listener.close(() => resolve()));
    await gw.close();
    await Promise.all([files.close(), json.close(), issuer.close()]);
  });

  it('lets a token list and call what its org allows, through the SDK client, with the gateway\'s or the server\'s own resource as audience', async () => {
    for (const [aud, key] of [[resource, 'rs'], [`${resource}/files`, 'es']] as const) {
      const { client } = await connectClient(base, 'files', await token({ aud }, { key }));
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['add', 'headers']);
      expect((await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })).content).toEqual([{ type: 'text', text: '5' }]);
      const refused = await client.callTool({ name: 'delete_repo', arguments: { name: 'prod' } }).catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool') });
      await client.close();
    }
  });

  it('takes a token on the federated /mcp, whose audience is the gateway\'s resource, and challenges a request without one there too', async () => {
    const init = await post('/mcp', bearer(await token()));
    expect(init.status).toBe(200);
    const session = init.headers['mcp-session-id'] as string;
    const list = await post('/mcp', { ...bearer(await token()), 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
    expect(list.body.result.tools.map((t: { name: string }) => t.name)).toContain('files__add');
    // A token for one server's own resource is not one for every server.
    const narrow = await post('/mcp', bearer(await token({ aud: `${resource}/files` })));
    expect(narrow.status).toBe(401);
    const bare = await post('/mcp');
    expect(bare.status).toBe(401);
    expect(bare.headers['www-authenticate']).toContain('resource_metadata=');
  });

  it('gives a token the union of its mapped scopes instead of its org\'s lists, and answers a scope short of a server with 403 insufficient_scope naming the scopes', async () => {
    const scoped = await token({ scope: 'mcp:json openid unmapped' });
    const { client } = await connectClient(base, 'json', scoped);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([...TEST_TOOLS].sort());
    await client.close();

    const short = await post('/mcp/files', bearer(scoped));
    expectError(short, 403, 'insufficient_scope');
    expect(short.headers['www-authenticate']).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp/files", scope="mcp:json mcp:files", error="insufficient_scope", error_description="${short.body.error.message}"`);
    // The org's lists reach files, not json: json is a scope away.
    const orgOnly = await post('/mcp/json', bearer(await token()));
    expectError(orgOnly, 403, 'insufficient_scope');
    expect(orgOnly.headers['www-authenticate']).toContain('scope="mcp:json"');
    // No scope opens a server that is not configured: the usual 404, as for a key.
    const missing = await post('/mcp/nowhere', bearer(await token({ scope: 'mcp:json mcp:files' })));
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe(-32000);
    // An org the config does not hold grants nothing; a scope still does.
    const stranger = await token({ org: 'someone-else', scope: 'mcp:files' });
    const { client: viaScope } = await connectClient(base, 'files', stranger);
    expect((await viaScope.listTools()).tools).toHaveLength(TEST_TOOLS.length);
    await viaScope.close();
  });

  it('relays with the server\'s own credential: the token never reaches the server, nor the log', async () => {
    const secret = await token({ sub: 'alice@example.com' });
    const before = files.requests.length;
    const { client } = await connectClient(base, 'files', secret);
    const seen = JSON.parse(((await client.callTool({ name: 'headers', arguments: {} })).content as Array<{ text: string }>)[0].text);
    expect(seen.authorization).toBe(sha256(UPSTREAM));
    await client.close();
    const received = files.requests.slice(before);
    expect(received.length).toBeGreaterThanOrEqual(3);
    expect(received.every((r) => r.headers.authorization === UPSTREAM)).toBe(true);
    expect(JSON.stringify(received)).not.toContain(secret.split('.')[2]);
    await until(() => lines.some((l) => l.includes('"tool":"headers"')), 'the access line of the call');
    const line = lines.map((l) => JSON.parse(l)).find((l) => l.tool === 'headers');
    expect(line).toMatchObject({ keyId: 'oauth:alice@example.com', org: 'tools-team', server: 'files', status: 200 });
    expect(lines.join('\n')).not.toContain(secret.split('.')[1]);
  });

  it('answers a request with no credential 401, its challenge naming the metadata and the scopes to ask for, on every method and path', async () => {
    for (const method of ['POST', 'GET', 'DELETE']) {
      const res = await call(method, `${base}/mcp/files`, method === 'POST' ? INIT : undefined, MCP_HEADERS);
      expectError(res, 401, 'unauthorized');
      expect(res.headers['www-authenticate']).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp/files", scope="mcp:json mcp:files"`);
    }
    // A path segment that is not a server name is never echoed: the challenge names /mcp's metadata.
    const hostile = await post('/mcp/%22%2C%20error%3D%22x');
    expect(hostile.status).toBe(401);
    expect(hostile.headers['www-authenticate']).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="mcp:json mcp:files"`);
  });

  describe('refuses every token that fails a check with 401 invalid_token, sent nowhere', () => {
    const now = () => Math.floor(Date.now() / 1000);
    const cases: Array<[string, () => Promise<string>]> = [
      ['expired', () => token({ exp: now() - 120 })],
      ['not valid yet', () => token({ nbf: now() + 600 })],
      ['for another audience', () => token({ aud: 'https://elsewhere.example.com/mcp' })],
      ['for another server of this gateway', () => token({ aud: `${resource}/json` })],
      ['for the gateway\'s origin, not its MCP resource', () => token({ aud: base })],
      ['from another issuer', () => token({ iss: 'https://login.elsewhere.example.com' })],
      ['unsigned (alg none)', async () => issuer.unsigned({ iss: issuer.url, aud: resource, sub: 'mallory', org: 'tools-team', exp: now() + 300 })],
      ['HS256 with the public key as its secret', async () => issuer.hmacWithPublicKey({ iss: issuer.url, aud: resource, sub: 'mallory', org: 'tools-team', exp: now() + 300 })],
      ['signed by a key the issuer does not publish', () => token({}, { key: 'stranger' })],
      ['signed by a stranger under a published kid', () => token({}, { key: 'stranger', kid: 'rs-1' })],
      ['tampered after signing', async () => tampered(await token(), 'admin')],
      ['without exp', () => token({}, { omit: ['exp'] })],
      ['without sub', () => token({}, { omit: ['sub'] })],
      ['with a sub holding a line break', () => token({ sub: 'a\nb' })],
      ['shaped as a JWT but not one', async () => 'eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.c2ln'],
      ['neither a key nor a JWT', async () => 'sk-sluice-not-a-key'],
    ];
    it.each(cases)('%s', async (_what, make) => {
      const before = files.requests.length;
      const res = await post('/mcp/files', bearer(await make()));
      expectError(res, 401, 'unauthorized');
      expect(res.headers['www-authenticate']).toMatch(new RegExp(`^Bearer resource_metadata="${base}/\\.well-known/oauth-protected-resource/mcp/files", scope="mcp:json mcp:files", error="invalid_token", error_description="[^"\\\\]{10,}"$`));
      expect(files.requests.length).toBe(before);
    });
  });

  it('verifies every token but fetches the issuer\'s keys rarely: once for many requests, at most once more for unknown key ids within the cooldown', async () => {
    await post('/mcp/files', bearer(await token()));
    const fetched = issuer.jwksFetches;
    expect(fetched).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 20; i++) expect((await post('/mcp/files', bearer(await token({ sub: `user-${i}` })))).status).toBe(200);
    expect(issuer.jwksFetches).toBe(fetched);
    for (let i = 0; i < 5; i++) expect((await post('/mcp/files', bearer(await token({}, { key: 'stranger', kid: `new-${i}` })))).status).toBe(401);
    expect(issuer.jwksFetches - fetched).toBeLessThanOrEqual(1);
  });

  it('checks a token once per endpoint while it lasts: the same token is refused the moment it expires, and on a server its audience does not name', async () => {
    const fetched = issuer.jwksFetches;
    const brief = await token({ aud: `${resource}/files`, exp: Math.floor(Date.now() / 1000) + 2 });
    for (let i = 0; i < 3; i++) expect((await post('/mcp/files', bearer(brief))).status).toBe(200);
    const elsewhere = await post('/mcp/json', bearer(brief));
    expectError(elsewhere, 401, 'unauthorized');
    expect(elsewhere.headers['www-authenticate']).toContain('error="invalid_token"');
    await until(async () => (await post('/mcp/files', bearer(brief))).status === 401, 'the token to expire', 5000);
    expect(issuer.jwksFetches).toBe(fetched);
  });

  it('keeps gateway keys working beside tokens, and names the metadata when a key is refused', async () => {
    const { client } = await connectClient(base, 'files', agent.key);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['add']);
    await client.close();
    // A scope would grant json, but a key has no scopes: the 404 of a server it may not use, as always.
    const notForKeys = await post('/mcp/json', bearer(agent.key));
    expect(notForKeys.status).toBe(404);
    expect(notForKeys.body.error.code).toBe(-32000);
    const wrong = await post('/mcp/files', bearer('sk-test-wrong'));
    expectError(wrong, 401, 'unauthorized');
    expect(wrong.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('serves the protected resource metadata (RFC 9728) at the well-known path, inserted before each endpoint\'s path', async () => {
    const common = { authorization_servers: [issuer.url], scopes_supported: ['mcp:json', 'mcp:files'], bearer_methods_supported: ['header'], resource_name: 'Sluice MCP gateway' };
    const doc = async (path: string): Promise<JsonResponse> => call('GET', `${base}/.well-known/oauth-protected-resource${path}`, undefined);
    for (const [path, named] of [['', resource], ['/mcp', resource], ['/mcp/files', `${resource}/files`], ['/mcp/not-configured', `${resource}/not-configured`]]) {
      const res = await doc(path);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.body).toEqual({ resource: named, ...common });
    }
    for (const path of ['/other', '/mcp/files/deeper', '/mcp/Upper', '/mcpx', '/mcp/%2e%2e']) {
      expectError(await doc(path), 404, 'not_found');
    }
  });

  it('lets the SDK read the challenge and the metadata, then get a token itself and call through (client credentials)', async () => {
    const challenged = await fetch(`${base}/mcp/files`, { method: 'POST', headers: MCP_HEADERS, body: INIT });
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(challenged);
    expect(resourceMetadataUrl?.href).toBe(`${base}/.well-known/oauth-protected-resource/mcp/files`);
    expect(scope).toBe('mcp:json mcp:files');
    const found = await discoverOAuthProtectedResourceMetadata(`${base}/mcp/files`, { resourceMetadataUrl });
    expect(found).toMatchObject({ resource: `${resource}/files`, authorization_servers: [issuer.url] });
    // Without the header's URL the SDK builds the path-inserted one itself.
    expect((await discoverOAuthProtectedResourceMetadata(`${base}/mcp/files`)).resource).toBe(`${resource}/files`);

    // The SDK's client credentials flow asks for the scope it was given (an interactive client takes the challenge's).
    const grants = issuer.grants.length;
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp/files`), { authProvider: new ClientCredentialsProvider({ clientId: CLIENT.id, clientSecret: CLIENT.secret, scope: 'mcp:files', expectedIssuer: issuer.url }) });
    const client = new Client({ name: 'oauth-robot', version: '1.0.0' });
    await client.connect(transport);
    expect(issuer.grants.slice(grants)).toEqual([{ resource: `${resource}/files`, scope: 'mcp:files' }]);
    expect((await client.listTools()).tools).toHaveLength(TEST_TOOLS.length);
    expect((await client.callTool({ name: 'add', arguments: { a: 1, b: 1 } })).content).toEqual([{ type: 'text', text: '2' }]);
    await client.close();
  });
});

describe('MCP identity when the issuer\'s keys cannot be had, and without mcp.oauth', () => {
  let files: TestMcpServer;
  let issuer: TestIssuer;
  let silent: Server;
  const gateways: TestGateway[] = [];
  const agentKey = makeKey('agent', { mcp: { servers: ['files'], tools: ['files/add'] } });

  beforeAll(async () => {
    files = await startMcpServer();
    issuer = await startIssuer();
    silent = createServer(() => { /* accepts, never answers */ });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const gw of gateways) await gw.close();
    silent.closeAllConnections();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
    await Promise.all([files.close(), issuer.close()]);
  });

  const gatewayWith = async (jwksUrl: string | undefined): Promise<TestGateway> => {
    const gw = await startGateway({
      keys: [agentKey.entry],
      mcp: { servers: { files: { url: files.url } }, ...(jwksUrl !== undefined && { oauth: { issuer: issuer.url, jwksUrl, resource: 'https://gw.example.com/mcp', jwksTimeoutMs: 300 } }) },
    });
    gateways.push(gw);
    return gw;
  };
  const validToken = () => issuer.sign({ aud: 'https://gw.example.com/mcp' });

  it.each([
    ['refuses connections', async () => `http://127.0.0.1:${await freePort()}/jwks`],
    ['never answers', async () => `http://127.0.0.1:${(silent.address() as AddressInfo).port}/jwks`],
    ['answers something that is not a key set', async () => `${issuer.url}/.well-known/oauth-authorization-server`],
  ])('answers 503 identity_unavailable, with Retry-After and within the timeout, when the key set %s; keys still work', async (_what, jwksUrl) => {
    const gw = await gatewayWith(await jwksUrl());
    const started = Date.now();
    const res = await call('POST', `${gw.url}/mcp/files`, INIT, { ...MCP_HEADERS, ...bearer(await validToken()) });
    expectError(res, 503, 'identity_unavailable');
    expect(res.headers['retry-after']).toBe('5');
    expect(Date.now() - started).toBeLessThan(3000);
    const { client } = await connectClient(gw.url, 'files', agentKey.key);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['add']);
    await client.close();
  });

  it('without mcp.oauth serves no metadata, challenges with a bare Bearer, and takes a JWT for an unknown key', async () => {
    const gw = await gatewayWith(undefined);
    expectError(await call('GET', `${gw.url}/.well-known/oauth-protected-resource/mcp/files`, undefined), 404, 'not_found');
    const res = await call('POST', `${gw.url}/mcp/files`, INIT, { ...MCP_HEADERS, ...bearer(await validToken()) });
    expectError(res, 401, 'unauthorized');
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(issuer.jwksFetches).toBe(0);
  });
});
