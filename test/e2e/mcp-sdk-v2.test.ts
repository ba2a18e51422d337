// The SDK's version 2 client through the gateway, to the real SDK test
// server: on /mcp/<server> and on the federated /mcp it begins a session
// (2025-11-25), lists and calls tools, gets a running tool's progress, and
// cancels a call, whose notifications/cancelled reaches the server.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { startMcpServer, type TestMcpServer } from '../support/mcp-server';
import { until } from '../support/wait';

const key = makeKey('v2', { mcp: { servers: ['files'], tools: ['files/add', 'files/count', 'files/wait'] } });

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: 'sdk-v2', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${key.key}` } } }));
  return client;
}

describe('MCP through the gateway with the SDK\'s version 2 client', () => {
  let files: TestMcpServer;
  let gw: TestGateway;
  beforeAll(async () => {
    files = await startMcpServer();
    gw = await startGateway({ keys: [key.entry], mcp: { servers: { files: { url: files.url } } } });
  });
  afterAll(async () => {
    await gw?.close();
    await files?.close();
  });

  it.each([['/mcp/files', ''], ['/mcp', 'files__']])('lists, calls with progress and cancels on %s', async (path, prefix) => {
    const client = await connect(`${gw.url}${path}`);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([`${prefix}add`, `${prefix}count`, `${prefix}wait`]);
    expect((await client.callTool({ name: `${prefix}add`, arguments: { a: 2, b: 5 } })).content).toEqual([{ type: 'text', text: '7' }]);
    const progress: number[] = [];
    const counted = await client.callTool({ name: `${prefix}count`, arguments: { steps: 2 } }, { onprogress: (p) => { progress.push(p.progress); } });
    expect(counted.content).toEqual([{ type: 'text', text: 'counted 2' }]);
    expect(progress).toEqual([1, 2]);
    const before = files.cancelled.length;
    const stop = new AbortController();
    const waiting = client.callTool({ name: `${prefix}wait`, arguments: {} }, { signal: stop.signal }).catch((e: unknown) => e);
    await until(() => files.waiting() === 1, 'the call running at the server');
    stop.abort('stopped by the v2 test');
    expect(await waiting).toBeInstanceOf(Error);
    await until(() => files.cancelled.length > before, 'the cancellation at the server');
    await client.close();
  });
});
