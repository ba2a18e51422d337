// A key made at runtime through the admin API carries its own MCP lists,
// checked as a config key's, and a change to them binds on its next request.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type TestGateway } from '../support/gateway';
import { admin, makeAdminKey } from '../support/admin';
import { bearer, call } from '../support/http';
import { connectClient } from '../support/mcp-stack';
import { startMcpServer, type TestMcpServer } from '../support/mcp-server';

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

describe('MCP lists on runtime keys', () => {
  const adminKey = makeAdminKey();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-mcp-keys-'));
  let files: TestMcpServer;
  let gw: TestGateway;
  const ask = (method: string, path: string, body?: unknown) => admin(gw.admin!.url, method, path, adminKey.key, body);

  beforeAll(async () => {
    files = await startMcpServer();
    gw = await startGateway({ admin: { keys: [adminKey.digest] }, mcp: { servers: { files: { url: files.url } } } }, { file: join(dir, 'gateway.yaml'), admin: true });
  });
  afterAll(async () => {
    await gw.close();
    await files.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists and calls what the key\'s lists allow, refuses a bad list, and drops access when the lists are cleared', async () => {
    const bad = await ask('POST', '/admin/keys', { id: 'bad', mcp: { tools: ['add'] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('mcp.tools[0]');

    const made = await ask('POST', '/admin/keys', { id: 'runtime-agent', mcp: { servers: ['files'], tools: ['files/add'] } });
    expect(made.status).toBe(201);
    const { client } = await connectClient(gw.url, 'files', made.body.key);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['add']);
    await client.close();

    expect((await ask('PATCH', '/admin/keys/runtime-agent', { mcp: null })).status).toBe(200);
    const after = await call('POST', `${gw.url}/mcp/files`, INIT, { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...bearer(made.body.key) });
    expect(after.status).toBe(404);
  });
});
