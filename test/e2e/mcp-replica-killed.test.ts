// A session of the federated /mcp outlives the replica that began it: two
// gateways as processes of their own on the real Redis, a session begun and
// used on A, A killed (SIGKILL: nothing of it can tidy up), and the client's
// next call, on B with the same session id, succeeds; and so do the /mcp/<server>
// sessions, whose binding to their key travels in their id.
import { makeKey } from '../support/gateway';
import { bearer, call } from '../support/http';
import { startMcpServer, type TestMcpServer } from '../support/mcp-server';
import { freePort, spawnGateway, type GatewayProcess } from '../support/process';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';

jest.setTimeout(60_000);

const key = makeKey('survivor', { mcp: { servers: ['files'], tools: ['files/add'] } });
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
const add = (id: number, name: string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { a: id, b: 1 } } });

describe('MCP sessions when a replica dies', () => {
  const prefix = uniquePrefix();
  let files: TestMcpServer;
  let a: GatewayProcess;
  let b: GatewayProcess;

  beforeAll(async () => {
    files = await startMcpServer({ json: true });
    const config = async () => JSON.stringify({
      server: { host: '127.0.0.1', port: 0, metrics: { port: await freePort() } },
      redis: { url: sharedRedisUrl(), prefix },
      keys: [key.entry],
      mcp: { servers: { files: { url: files.url } } },
    });
    a = await spawnGateway(await config());
    b = await spawnGateway(await config());
  });
  afterAll(async () => {
    a?.kill();
    b?.kill();
    await files?.close();
    await deletePrefix(sharedRedisUrl(), prefix);
  });

  it('carries on, on replica B, a session begun on replica A after A was killed', async () => {
    const fed = await call('POST', `${a.url}/mcp`, INIT, { ...HEADERS, ...bearer(key.key) });
    const relayed = await call('POST', `${a.url}/mcp/files`, INIT, { ...HEADERS, ...bearer(key.key) });
    const fedHeaders = { ...HEADERS, ...bearer(key.key), 'mcp-session-id': fed.headers['mcp-session-id'] as string, 'mcp-protocol-version': '2025-11-25' };
    const relayHeaders = { ...HEADERS, ...bearer(key.key), 'mcp-session-id': relayed.headers['mcp-session-id'] as string, 'mcp-protocol-version': '2025-11-25' };
    expect((await call('POST', `${a.url}/mcp`, add(2, 'files__add'), fedHeaders)).body.result.content).toEqual([{ type: 'text', text: '3' }]);
    expect((await call('POST', `${a.url}/mcp/files`, add(3, 'add'), relayHeaders)).body.result.content).toEqual([{ type: 'text', text: '4' }]);
    a.kill();
    await a.exited;
    expect((await call('POST', `${b.url}/mcp`, add(4, 'files__add'), fedHeaders)).body.result.content).toEqual([{ type: 'text', text: '5' }]);
    expect((await call('POST', `${b.url}/mcp/files`, add(5, 'add'), relayHeaders)).body.result.content).toEqual([{ type: 'text', text: '6' }]);
  });
});
