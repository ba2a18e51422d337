// stdio MCP servers the gateway starts: the SDK's client, through the real
// gateway on a real socket, to real processes of
// test/support/mcp-stdio-server.mjs. A session's whole life (initialize
// starts a process, DELETE ends it), tools/list filtered, progress and the
// server's own requests relayed while a call is open, a session kept to the
// key that opened it, a request timed out with the session still alive, a
// child that crashes or floods its stdout ending only its own session, and
// the child's environment and stderr kept from everyone.
import { CreateMessageRequestSchema, ElicitRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { request } from 'node:http';
import { bearer, call, openSse } from '../support/http';
import { connectClient } from '../support/mcp-stack';
import { alice, alive, bob, GATEWAY_SECRET_VAR, startStdioStack, stdioChildren, type StdioStack } from '../support/mcp-stdio-stack';
import { until } from '../support/wait';

const initialize = (capabilities: Record<string, unknown> = {}) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities, clientInfo: { name: 'raw', version: '1' } } });
const INIT = initialize();
const JSON_ONLY = { 'content-type': 'application/json', accept: 'application/json' };
const BOTH = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const rpc = (id: number, method: string, params: Record<string, unknown> = {}) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
const textOf = (result: unknown): string => (result as { content: Array<{ text: string }> }).content[0].text;

describe('stdio MCP servers', () => {
  let s: StdioStack;
  beforeAll(async () => { s = await startStdioStack(); });
  afterAll(async () => { await s.close(); });

  /** Opens a session by hand (JSON answers); resolves with its id and the headers that continue it. */
  async function rawSession(server: string, key: string, capabilities: Record<string, unknown> = {}): Promise<{ session: string; headers: Record<string, string> }> {
    const init = await call('POST', `${s.gw.url}/mcp/${server}`, initialize(capabilities), { ...JSON_ONLY, ...bearer(key) });
    expect(init.status).toBe(200);
    const session = init.headers['mcp-session-id'] as string;
    const headers = { ...JSON_ONLY, ...bearer(key), 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    expect((await call('POST', `${s.gw.url}/mcp/${server}`, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers)).status).toBe(202);
    return { session, headers };
  }

  it('runs a session: initialize starts a process, the list is filtered, calls answer, DELETE stops the process', async () => {
    const before = stdioChildren().length;
    const { client, transport } = await connectClient(s.gw.url, 'tools', alice.key);
    expect(transport.sessionId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(client.getServerVersion()?.name).toBe('sluice-stdio-test');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['add', 'ask', 'crash', 'env', 'flood', 'progress', 'stubborn']);
    expect(textOf(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } }))).toBe('5');
    const refused = await client.callTool({ name: 'drop_table', arguments: { table: 'users' } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(-32602);

    const { pid, names } = JSON.parse(textOf(await client.callTool({ name: 'env', arguments: {} })));
    expect(stdioChildren()).toContain(pid);
    expect(stdioChildren().length).toBe(before + 1);
    // Its environment is PATH and what the config gave it: nothing of the gateway's own.
    expect(names).toEqual(['GIVEN', 'PATH']);
    expect(process.env[GATEWAY_SECRET_VAR]).toBe('gateway-only');

    await transport.terminateSession();
    await until(() => !alive(pid), 'the process to end after DELETE', 5000);
    await client.close();
    expect(s.lines.join('\n')).not.toContain('STDERR-ONLY');
  });

  it('streams progress notifications before the call ends, each on the POST of its call', async () => {
    const { client, transport } = await connectClient(s.gw.url, 'tools', alice.key);
    const progress: number[] = [];
    let endedAt = 0;
    const call2 = client.callTool({ name: 'progress', arguments: { steps: 2, ms: 300 } }, undefined, { onprogress: () => { progress.push(Date.now()); } })
      .then((r) => { endedAt = Date.now(); return r; });
    await until(() => progress.length > 0, 'the first progress notification', 5000);
    expect(endedAt).toBe(0);
    expect(textOf(await call2)).toBe('2 steps');
    expect(progress[0]).toBeLessThan(endedAt);

    const counted: number[] = [];
    await client.callTool({ name: 'progress', arguments: { steps: 4, ms: 0 } }, undefined, { onprogress: (p) => { counted.push(p.progress); } });
    expect(counted).toEqual([1, 2, 3, 4]);
    await transport.terminateSession(); // the server holds 3 sessions at most: each test ends its own
    await client.close();
  });

  it('relays an elicitation the server asks for during a call, and the client\'s answer back', async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const transport = new StreamableHTTPClientTransport(new URL(`${s.gw.url}/mcp/tools`), { requestInit: { headers: bearer(alice.key) } });
    const client = new Client({ name: 'asker', version: '1' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'ada' } }));
    await client.connect(transport);
    expect(textOf(await client.callTool({ name: 'ask', arguments: {} }))).toBe('hello ada');
    await transport.terminateSession();
    await client.close();
  });

  it('serves the reference server in its stdio mode: echo, a long operation\'s progress, a sampling request answered by the client', async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const transport = new StreamableHTTPClientTransport(new URL(`${s.gw.url}/mcp/everything`), { requestInit: { headers: bearer(alice.key) } });
    const client = new Client({ name: 'sampler', version: '1' }, { capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', model: 'scripted', content: { type: 'text', text: 'sampled through the gate' } }));
    await client.connect(transport);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['echo', 'trigger-long-running-operation', 'trigger-sampling-request']));
    expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'hi' } }))).toBe('Echo: hi');
    const steps: number[] = [];
    await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, undefined, { onprogress: (p) => { steps.push(p.progress); } });
    expect(steps).toEqual([1, 2, 3]);
    expect(textOf(await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hello', maxTokens: 10 } }))).toContain('sampled through the gate');
    await transport.terminateSession();
    await client.close();
  });

  it('keeps a session to the key that opened it: another key\'s request with its id is a 404, as for an id never issued', async () => {
    const { session, headers } = await rawSession('tools', alice.key);
    const asBob = { ...headers, ...bearer(bob.key) };
    for (const method of ['POST', 'GET', 'DELETE']) {
      const res = await call(method, `${s.gw.url}/mcp/tools`, method === 'POST' ? rpc(2, 'tools/list') : undefined, asBob);
      expect([method, res.status, res.body?.error?.code]).toEqual([method, 404, -32001]);
    }
    const made = await call('POST', `${s.gw.url}/mcp/tools`, rpc(2, 'tools/list'), { ...headers, 'mcp-session-id': 'made-up' });
    expect(made.status).toBe(404);
    // Alice's session is untouched by Bob's DELETE.
    const list = await call('POST', `${s.gw.url}/mcp/tools`, rpc(3, 'tools/list'), headers);
    expect(list.status).toBe(200);
    expect(list.headers['mcp-session-id']).toBe(session);
    expect(list.body.result.tools.map((t: { name: string }) => t.name)).not.toContain('drop_table');
    expect((await call('DELETE', `${s.gw.url}/mcp/tools`, undefined, headers)).status).toBe(204);
    expect((await call('POST', `${s.gw.url}/mcp/tools`, rpc(4, 'ping'), headers)).status).toBe(404);
  });

  it('holds the server\'s own request for the GET stream when the POST takes only JSON, and takes the client\'s answer back (202)', async () => {
    const { headers } = await rawSession('tools', alice.key, { elicitation: {} });
    // The call's answer waits on the elicitation, which waits (queued) for a GET stream.
    const asked = call('POST', `${s.gw.url}/mcp/tools`, rpc(3, 'tools/call', { name: 'ask', arguments: {} }), headers);
    const events: Array<Record<string, any>> = [];
    const get = request(`${s.gw.url}/mcp/tools`, { method: 'GET', headers: { ...headers, accept: 'text/event-stream' } }, (res) => {
      expect([res.statusCode, res.headers['content-type']]).toEqual([200, 'text/event-stream']);
      let buffer = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        buffer += chunk;
        for (let i = buffer.indexOf('\n\n'); i !== -1; i = buffer.indexOf('\n\n')) {
          const data = buffer.slice(0, i).split('\n').find((l) => l.startsWith('data: '));
          buffer = buffer.slice(i + 2);
          if (data !== undefined) events.push(JSON.parse(data.slice(6)));
        }
      });
    });
    get.on('error', () => {}).end();
    await until(() => events.some((e) => e.method === 'elicitation/create'), 'the elicitation on the GET stream', 5000);
    const ask = events.find((e) => e.method === 'elicitation/create')!;
    const answered = await call('POST', `${s.gw.url}/mcp/tools`, JSON.stringify({ jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { name: 'grace' } } }), headers);
    expect([answered.status, answered.text]).toEqual([202, '']);
    expect((await asked).body.result.content[0].text).toBe('hello grace');
    get.destroy();
    expect((await call('DELETE', `${s.gw.url}/mcp/tools`, undefined, headers)).status).toBe(204);
  });

  it('answers a second request with the id of one still open itself, never sending it on; the first gets its own answer', async () => {
    const { headers } = await rawSession('tools', alice.key);
    const first = openSse(`${s.gw.url}/mcp/tools`, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'progress', arguments: { steps: 1, ms: 400 }, _meta: { progressToken: 'p5' } } }, { ...headers, accept: 'application/json, text/event-stream' });
    await first.next('message'); // its progress: the request is open at the server
    const second = await call('POST', `${s.gw.url}/mcp/tools`, rpc(5, 'tools/call', { name: 'add', arguments: { a: 1, b: 1 } }), headers);
    expect(second.body).toEqual({ jsonrpc: '2.0', id: 5, error: { code: -32000, message: expect.stringMatching(/still open/) } });
    const events = (await first.done).events.map((e) => JSON.parse(e.data));
    expect(events.map((e) => e.method ?? e.result.content[0].text)).toEqual(['notifications/progress', '1 steps']);
    const hostile = await call('POST', `${s.gw.url}/mcp/tools`, rpc(6, 'ping'), { ...headers, 'mcp-session-id': 'x'.repeat(4000) });
    expect(hostile.status).toBe(404);
    await call('DELETE', `${s.gw.url}/mcp/tools`, undefined, headers);
  });

  it('ends the POST of a call the client cancels at once, not at timeoutMs; the session goes on', async () => {
    const { client, transport } = await connectClient(s.gw.url, 'tools', alice.key);
    const abort = new AbortController();
    const cancelled = client.callTool({ name: 'progress', arguments: { steps: 1, ms: 30_000 } }, undefined, { signal: abort.signal, onprogress: () => abort.abort() }).catch((e: unknown) => e);
    expect(await cancelled).toBeInstanceOf(Error);
    const ended = () => s.lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.server === 'tools' && l.tool === 'progress' && l.outcome === 'client_closed');
    await until(() => ended() !== undefined, 'the cancelled call\'s POST to end', 5000);
    expect(ended()).toMatchObject({ status: 499, method: 'tools/call' });
    expect(textOf(await client.callTool({ name: 'add', arguments: { a: 4, b: 4 } }))).toBe('8');
    await transport.terminateSession(); // the server holds 3 sessions at most: each test ends its own
    await client.close();
  });

  it('forgets a session at its DELETE, while a process that ignores SIGTERM takes the grace to go (SIGKILL)', async () => {
    const { client, transport } = await connectClient(s.gw.url, 'tools', alice.key);
    const { pid } = JSON.parse(textOf(await client.callTool({ name: 'env', arguments: {} })));
    await client.callTool({ name: 'stubborn', arguments: {} });
    const headers = { ...BOTH, ...bearer(alice.key), 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': '2025-06-18' };
    expect((await call('DELETE', `${s.gw.url}/mcp/tools`, undefined, headers)).status).toBe(204);
    expect(alive(pid)).toBe(true);
    expect((await call('POST', `${s.gw.url}/mcp/tools`, rpc(8, 'ping'), headers)).status).toBe(404);
    await until(() => !alive(pid), 'the stubborn process to be killed', 5000);
    const line = s.lines.map((l) => JSON.parse(l)).find((l) => l.pid === pid && l.msg === 'mcp server process stopped');
    expect(line).toMatchObject({ reason: 'deleted', signal: 'SIGKILL' });
    await client.close();
  });

  it('answers a request other than initialize, or a GET, without a session with 400', async () => {
    const res = await call('POST', `${s.gw.url}/mcp/tools`, rpc(1, 'tools/list'), { ...BOTH, ...bearer(alice.key) });
    expect([res.status, res.body.error.code]).toEqual([400, -32000]);
    expect(res.body.error.message).toMatch(/initialize/);
    expect((await call('GET', `${s.gw.url}/mcp/tools`, undefined, { accept: 'text/event-stream', ...bearer(alice.key) })).status).toBe(400);
  });

  it('answers a request the server does not answer within timeoutMs with -32000, and the session lives on', async () => {
    const { headers } = await rawSession('quick', alice.key);
    const late = await call('POST', `${s.gw.url}/mcp/quick`, rpc(5, 'tools/call', { name: 'progress', arguments: { steps: 1, ms: 2000 } }), headers);
    expect(late.status).toBe(200);
    expect(late.body).toEqual({ jsonrpc: '2.0', id: 5, error: { code: -32000, message: expect.stringMatching(/in time/) } });
    const next = await call('POST', `${s.gw.url}/mcp/quick`, rpc(6, 'tools/call', { name: 'add', arguments: { a: 1, b: 1 } }), headers);
    expect(next.body.result.content[0].text).toBe('2');
    await call('DELETE', `${s.gw.url}/mcp/quick`, undefined, headers);
  });

  it('answers the open call of a child that crashes with a JSON-RPC error; the session is gone, a new one works', async () => {
    const { client, transport } = await connectClient(s.gw.url, 'tools', alice.key);
    const { pid } = JSON.parse(textOf(await client.callTool({ name: 'env', arguments: {} })));
    const crashed = await client.callTool({ name: 'crash', arguments: {} }).catch((e: unknown) => e);
    expect(crashed).toBeInstanceOf(McpError);
    expect((crashed as McpError).message).toMatch(/process ended/);
    await until(() => !alive(pid), 'the crashed process to be gone', 5000);
    const again = await call('POST', `${s.gw.url}/mcp/tools`, rpc(9, 'ping'), { ...BOTH, ...bearer(alice.key), 'mcp-session-id': transport.sessionId! });
    expect(again.status).toBe(404);
    await client.close();
    const fresh = await connectClient(s.gw.url, 'tools', alice.key);
    expect(textOf(await fresh.client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }))).toBe('3');
    await fresh.transport.terminateSession();
    await fresh.client.close();
    const line = s.lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'mcp server process exited on its own' && l.pid === pid);
    expect(line).toMatchObject({ server: 'tools', code: 3, level: 40 });
    expect(line.stderrBytes).toBeGreaterThan(100);
  });

  it('stops a child that writes a line past the limit (a 20 MB line): its call gets an error instead of the answer, and the process is stopped', async () => {
    const { client } = await connectClient(s.gw.url, 'tools', alice.key);
    const { pid } = JSON.parse(textOf(await client.callTool({ name: 'env', arguments: {} })));
    const flooded = await client.callTool({ name: 'flood', arguments: { mb: 20 } }).catch((e: unknown) => e);
    expect(flooded).toBeInstanceOf(McpError);
    await until(() => !alive(pid), 'the flooding process to be stopped', 5000);
    expect(s.lines.map((l) => JSON.parse(l)).find((l) => l.pid === pid && l.msg.startsWith('mcp server process stopped: a line'))).toBeDefined();
    await client.close();
  });

  it('answers 502 when the command cannot be started, and logs it', async () => {
    const res = await call('POST', `${s.gw.url}/mcp/nowhere`, INIT, { ...BOTH, ...bearer(alice.key) });
    expect([res.status, res.body.error.code]).toEqual([502, -32000]);
    expect(s.lines.some((l) => l.includes('mcp server process failed to start'))).toBe(true);
  });
});
