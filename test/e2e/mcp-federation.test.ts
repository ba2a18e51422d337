// The federated /mcp: every server a key may use behind one endpoint, through
// the real gateway to real SDK servers (test/support/mcp-server.ts), the
// sessions in the real Redis. Lists merged under <server>__<name> with a
// cursor that crosses servers, calls routed to their server under their own
// name with progress streamed, refusals as unknown tools; a session begun on
// one replica going on on another after the first is gone; a server that
// ended the gateway's session begun again unseen; and the refusals of the
// transport (no session, another key's, a version of another era).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { bearer, call } from '../support/http';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { startMcpServer, type TestMcpServer } from '../support/mcp-server';
import { sharedRedisUrl, uniquePrefix } from '../support/redis';
import { until } from '../support/wait';

const TOKEN = `fed-upstream-${Math.random().toString(36).slice(2)}`;
const fed = makeKey('fed', { mcp: { servers: ['files', 'json'], tools: ['files/add', 'files/count', 'files/wait', 'json/add'] } });
const other = makeKey('other', { mcp: { servers: ['json'], tools: ['json/*'] } });
const none = makeKey('none');
const guarded = makeKey('guarded', { mcp: { servers: ['files'], tools: ['files/echo', 'files/blocks'] } });
const capped = makeKey('capped', { mcp: { servers: ['files'], tools: ['files/add'], limits: { 'files/add': { requests: 2, windowSeconds: 60 } } } });
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

async function connect(url: string, key: string, texts: string[] = []): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    fetch: async (u, init) => {
      const res = await fetch(u, init);
      texts.push(JSON.stringify([...res.headers.entries()]));
      if (res.body !== null) void res.clone().text().then((t) => { texts.push(t); }, () => {});
      return res;
    },
  });
  const client = new Client({ name: 'fed-e2e', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

describe('MCP federation at /mcp', () => {
  let files: TestMcpServer;
  let json: TestMcpServer;
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    files = await startMcpServer({ slowMs: 300 });
    json = await startMcpServer({ json: true });
    const config = {
      keys: [fed.entry, other.entry, none.entry, capped.entry, guarded.entry],
      plugins: [
        { name: 'content-filter', terms: ['forbidden plan'], output: { terms: ['project bluebird'], action: 'mask', mask: '[held]' } },
        { name: 'pii', input: 'redact' },
      ],
      redis: { url: sharedRedisUrl(), prefix: uniquePrefix() },
      mcp: { servers: { files: { url: files.url, headers: { Authorization: `Bearer ${TOKEN}` } }, json: { url: json.url } } },
    };
    a = await startGateway(config);
    b = await startGateway(config);
  });
  afterAll(async () => {
    await a?.close().catch(() => {});
    await b?.close();
    await files?.close();
    await json?.close();
  });

  it('merges the servers\' tools under <server>__<tool>, pages across servers, and routes calls to their server by their own name', async () => {
    const texts: string[] = [];
    const { client, transport } = await connect(a.url, fed.key, texts);
    expect(client.getServerVersion()?.name).toBe('sluice');
    const first = await client.listTools();
    expect(first.tools.map((t) => t.name).sort()).toEqual(['files__add', 'files__count', 'files__wait']);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await client.listTools({ cursor: first.nextCursor });
    expect(second.tools.map((t) => t.name)).toEqual(['json__add']);
    expect(second.nextCursor).toBeUndefined();

    expect((await client.callTool({ name: 'files__add', arguments: { a: 2, b: 3 } })).content).toEqual([{ type: 'text', text: '5' }]);
    expect((await client.callTool({ name: 'json__add', arguments: { a: 20, b: 22 } })).content).toEqual([{ type: 'text', text: '42' }]);
    // Progress notifications come through as the server sends them.
    const progress: number[] = [];
    const counted = await client.callTool({ name: 'files__count', arguments: { steps: 3 } }, undefined, { onprogress: (p) => { progress.push(p.progress); } });
    expect(counted.content).toEqual([{ type: 'text', text: 'counted 3' }]);
    expect(progress).toEqual([1, 2, 3]);
    // The server saw its own tool names, the gateway's credential and a session of the gateway's, never the client's.
    const call = files.requests.filter((r) => r.headers['mcp-session-id'] !== undefined);
    expect(call.every((r) => r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(call.some((r) => r.headers['mcp-session-id'] === transport.sessionId)).toBe(false);
    await client.close();
    expect(texts.join('\n')).not.toContain(TOKEN);
  });

  it('merges prompts and resources too: prompts under <server>__<name>, resources under their own URIs, each read from the server that has it', async () => {
    const { client } = await connect(a.url, fed.key);
    const prompts: string[] = [];
    for (let page = await client.listPrompts(), n = 0; ; page = await client.listPrompts({ cursor: page.nextCursor }), n++) {
      prompts.push(...page.prompts.map((p) => p.name));
      if (page.nextCursor === undefined || n > 5) break;
    }
    expect(prompts).toEqual(['files__greet', 'json__greet']);
    const greeting = await client.getPrompt({ name: 'json__greet', arguments: { name: 'Ada' } });
    expect(greeting.messages[0].content).toEqual({ type: 'text', text: 'Hello Ada, from json.' });
    const uris: string[] = [];
    for (let page = await client.listResources(), n = 0; ; page = await client.listResources({ cursor: page.nextCursor }), n++) {
      uris.push(...page.resources.map((r) => r.uri));
      if (page.nextCursor === undefined || n > 5) break;
    }
    expect(uris.sort()).toEqual(['test://events/readme', 'test://json/readme', 'test://shared', 'test://shared']);
    expect((await client.readResource({ uri: 'test://json/readme' })).contents[0]).toMatchObject({ text: 'readme of json' });
    // A URI two servers have is read from the first in the config's order.
    expect((await client.readResource({ uri: 'test://shared' })).contents[0]).toMatchObject({ text: 'shared, from events' });
    const missing = await client.readResource({ uri: 'test://nowhere' }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(McpError);
    const unknownPrompt = await client.getPrompt({ name: 'nosuch__greet', arguments: { name: 'x' } }).catch((e: unknown) => e);
    expect((unknownPrompt as McpError).code).toBe(-32602);
    await client.close();
  });

  it('runs the plugins\' tool hooks on a call through /mcp: PII redacted before the server, a refused term never sent, a result\'s term masked', async () => {
    const { client } = await connect(b.url, guarded.key);
    await client.callTool({ name: 'files__echo', arguments: { args: { to: 'ada@example.com' } } });
    expect(JSON.stringify(files.echoed.at(-1))).not.toContain('ada@example.com');
    const before = files.echoed.length;
    const refused = await client.callTool({ name: 'files__echo', arguments: { args: { q: 'the forbidden plan' } } }).catch((e: unknown) => e);
    expect((refused as McpError).code).toBe(-32602);
    expect(files.echoed.length).toBe(before);
    const masked = await client.callTool({ name: 'files__blocks', arguments: { texts: ['about project blue', 'bird, later'] } });
    expect(JSON.stringify(masked.content)).not.toMatch(/bluebird|blue.*bird/);
    expect(JSON.stringify(masked.content)).toContain('[held]');
    await client.close();
  });

  it('passes a cancelled call\'s notifications/cancelled on to the server it went to, and the session goes on', async () => {
    const { client } = await connect(a.url, fed.key);
    const before = files.cancelled.length;
    const stop = new AbortController();
    const call = client.callTool({ name: 'files__wait', arguments: {} }, undefined, { signal: stop.signal });
    await until(() => files.waiting() === 1, 'the call running at the server');
    stop.abort('stopped by the test');
    await expect(call).rejects.toThrow();
    await until(() => files.cancelled.length > before, 'the cancellation at the server');
    expect(files.cancelled.slice(before)).toEqual([{ requestId: expect.anything(), reason: 'stopped by the test' }]);
    expect((await client.callTool({ name: 'files__add', arguments: { a: 1, b: 1 } })).content).toEqual([{ type: 'text', text: '2' }]);
    await client.close();
  });

  it('answers a tool the key may not call, or one no server has, as an unknown tool, and never sends it on', async () => {
    const { client } = await connect(a.url, fed.key);
    const before = files.requests.length + json.requests.length;
    for (const name of ['files__delete_repo', 'nosuch__add', 'add', 'files__', '__add', 'json__add<script>']) {
      const err = await client.callTool({ name, arguments: { name: 'x' } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(McpError);
      expect((err as McpError).code).toBe(-32602);
    }
    // Nothing reached a server: not even a session was begun for a refused call.
    expect(files.requests.length + json.requests.length).toBe(before);
    // A key that may use only json sees only json's tools, and calls none of files'.
    const { client: narrow } = await connect(a.url, other.key);
    const narrowTools = (await narrow.listTools()).tools.map((t) => t.name);
    expect(narrowTools).toEqual(expect.arrayContaining(['json__add', 'json__count', 'json__delete_repo']));
    expect(narrowTools.every((n) => n.startsWith('json__'))).toBe(true);
    const err = await narrow.callTool({ name: 'files__add', arguments: { a: 1, b: 2 } }).catch((e: unknown) => e);
    expect((err as McpError).code).toBe(-32602);
    await client.close();
    await narrow.close();
  });

  it('holds a tool call on /mcp to the key\'s limits, counted with the replicas\' other calls, and refuses the rest before they reach the server', async () => {
    const { client: onA } = await connect(a.url, capped.key);
    const { client: onB } = await connect(b.url, capped.key);
    const before = files.toolCalls.length;
    expect((await onA.callTool({ name: 'files__add', arguments: { a: 1, b: 1 } })).content).toEqual([{ type: 'text', text: '2' }]);
    expect((await onB.callTool({ name: 'files__add', arguments: { a: 1, b: 2 } })).content).toEqual([{ type: 'text', text: '3' }]);
    const err = await onA.callTool({ name: 'files__add', arguments: { a: 1, b: 3 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32000);
    expect((err as McpError).data).toMatchObject({ reason: 'rate_limited', retryAfterMs: expect.any(Number) });
    expect(files.toolCalls.length - before).toBe(2);
    await onA.close();
    await onB.close();
  });

  it('continues a session begun on replica A on replica B, and after A is gone', async () => {
    const init = await call('POST', `${a.url}/mcp`, JSON.stringify(INIT), { ...HEADERS, ...bearer(fed.key) });
    expect(init.status).toBe(200);
    const session = init.headers['mcp-session-id'] as string;
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const headers = { ...HEADERS, ...bearer(fed.key), 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
    const add = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'json__add', arguments: { a: id, b: 1 } } });
    const onA = await call('POST', `${a.url}/mcp`, add(2), headers);
    expect(onA.body.result.content).toEqual([{ type: 'text', text: '3' }]);
    const onB = await call('POST', `${b.url}/mcp`, add(3), headers);
    expect(onB.body.result.content).toEqual([{ type: 'text', text: '4' }]);
    await a.close();
    const afterA = await call('POST', `${b.url}/mcp`, add(4), headers);
    expect(afterA.body.result.content).toEqual([{ type: 'text', text: '5' }]);
    // The server ends the gateway's session (a restart, an expiry): the gateway begins another, unseen by the client.
    for (const t of [...json.sessions.values()]) await t.close();
    json.sessions.clear();
    const again = await call('POST', `${b.url}/mcp`, add(5), headers);
    expect(again.body.result.content).toEqual([{ type: 'text', text: '6' }]);
    // DELETE ends it here and at the servers.
    const ended = await call('DELETE', `${b.url}/mcp`, undefined, headers);
    expect(ended.status).toBe(200);
    const gone = await call('POST', `${b.url}/mcp`, add(6), headers);
    expect(gone.status).toBe(404);
  });

  it('refuses what the transport refuses: no session, a made-up one, another key\'s, a batch, a GET, a 2026-07-28 request, a bad cursor', async () => {
    const init = await call('POST', `${b.url}/mcp`, JSON.stringify(INIT), { ...HEADERS, ...bearer(fed.key) });
    const session = init.headers['mcp-session-id'] as string;
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const noSession = await call('POST', `${b.url}/mcp`, list, { ...HEADERS, ...bearer(fed.key) });
    expect(noSession.status).toBe(400);
    for (const id of ['x'.repeat(43), '../../etc', session.toUpperCase()]) {
      const unknown = await call('POST', `${b.url}/mcp`, list, { ...HEADERS, ...bearer(fed.key), 'mcp-session-id': id });
      expect(unknown.status).toBe(404);
    }
    // A session id belongs to the key that began it.
    const stolen = await call('POST', `${b.url}/mcp`, list, { ...HEADERS, ...bearer(other.key), 'mcp-session-id': session });
    expect(stolen.status).toBe(404);
    expect(stolen.body.error.code).toBe(-32001);
    const batch = await call('POST', `${b.url}/mcp`, `[${list}]`, { ...HEADERS, ...bearer(fed.key), 'mcp-session-id': session });
    expect(batch.status).toBe(400);
    const get = await call('GET', `${b.url}/mcp`, undefined, { ...bearer(fed.key), 'mcp-session-id': session, accept: 'text/event-stream' });
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST, DELETE');
    const modern = await call('POST', `${b.url}/mcp`, list, { ...HEADERS, ...bearer(fed.key), 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' });
    expect(modern.status).toBe(400);
    expect(modern.body.error.code).toBe(-32022);
    expect(modern.body.error.data.supported).toContain('2025-11-25');
    for (const cursor of ['nope', Buffer.from('{"server":"secret"}').toString('base64url'), 42]) {
      const bad = await call('POST', `${b.url}/mcp`, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: { cursor } }), { ...HEADERS, ...bearer(fed.key), 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' });
      expect(bad.status).toBe(200);
      expect(bad.body.error.code).toBe(-32602);
    }
    // A key with no MCP access: as if there were no endpoint.
    const nothing = await call('POST', `${b.url}/mcp`, JSON.stringify(INIT), { ...HEADERS, ...bearer(none.key) });
    expect(nothing.status).toBe(404);
    const anonymous = await call('POST', `${b.url}/mcp`, JSON.stringify(INIT), HEADERS);
    expect(anonymous.status).toBe(401);
  });

  it('checks a 2026-07-28 request\'s Mcp-Method and Mcp-Name against its body on /mcp/<server>, and passes them on', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'json__add', arguments: {} } });
    const base = { ...HEADERS, ...bearer(other.key), 'mcp-protocol-version': '2026-07-28' };
    const missing = await call('POST', `${b.url}/mcp/json`, body, base);
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe(-32020);
    const wrongName = await call('POST', `${b.url}/mcp/json`, body, { ...base, 'mcp-method': 'tools/call', 'mcp-name': 'add' });
    expect(wrongName.body.error.code).toBe(-32020);
    const wrongMethod = await call('POST', `${b.url}/mcp/json`, body, { ...base, 'mcp-method': 'tools/list', 'mcp-name': 'json__add' });
    expect(wrongMethod.body.error.code).toBe(-32020);
    const encoded = await call('POST', `${b.url}/mcp/json`, body, { ...base, 'mcp-method': 'tools/call', 'mcp-name': `=?base64?${Buffer.from('json__add').toString('base64')}?=` });
    // The headers agree: the request goes on with them (the server, of an earlier era, answers it as it will).
    expect(encoded.body?.error?.code).not.toBe(-32020);
    const last = json.requests.at(-1)!;
    expect(last.headers['mcp-method']).toBe('tools/call');
    expect(last.headers['mcp-name']).toMatch(/^=\?base64\?/);
  });
});
