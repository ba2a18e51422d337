// Guardrails on MCP tool calls, through the real gateway on a real socket to
// real servers (the SDK's, in events and in JSON, and one that writes its
// answers byte by byte): the PII plugin redacts arguments before the server
// sees them, the content filter refuses arguments holding a term and cuts or
// masks a result holding one (split across escapes, content blocks and
// writes), a third-party plugin's tool hooks see and change the call, and a
// result past mcp.maxResultBytes is answered with the protocol's error while
// the gateway's memory stays bounded.
import { request } from 'node:http';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { PluginDefinition, ToolResult } from '../../src';
import { bearer, call } from '../support/http';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { connectClient } from '../support/mcp-stack';
import { startMcpServer, type TestMcpServer } from '../support/mcp-server';
import { startRawMcpServer, writeLarge, type RawMcpServer } from '../support/mcp-raw-server';
import { scrape, series, parseExposition } from '../support/metrics';
import { until } from '../support/wait';

const agent = makeKey('agent', { mcp: { servers: ['*'], tools: ['*/*'] } });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...bearer(agent.key) };
const WITHHELD = 'The rest of this tool result was withheld by the gateway\'s content policy.';
const MB = 1024 * 1024;

/** What the third-party plugin saw of each call; `holding`: a call of "hold" waits in its hook until the client leaves. */
const seen: Array<{ key: string; server: string; tool: string; args: unknown }> = [];
const holding = { entered: false, released: false };
const toolAudit: PluginDefinition<{ note: string }> = {
  name: 'tool-audit',
  stage: 'observe',
  schema: z.strictObject({ note: z.string() }),
  create: ({ note }) => ({
    async onToolCall(c) {
      seen.push({ key: c.principal.id, server: c.server, tool: c.tool, args: c.arguments });
      if (c.tool !== 'hold') return;
      holding.entered = true;
      await new Promise<void>((resolve) => c.signal.addEventListener('abort', () => resolve(), { once: true }));
      holding.released = true;
    },
    onToolResult(c, result): ToolResult | undefined {
      return c.tool === 'add' ? { ...result, content: [...result.content, { type: 'text', text: note }] } : undefined;
    },
  }),
};

/** A JSON-RPC call of `tool` through the gateway, as raw bytes: `body` given as text, so escapes stay as written. */
const rawCall = (url: string, id: number, tool: string, args = '{}') =>
  call('POST', url, `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${tool}","arguments":${args}}}`, MCP_HEADERS);

/** The JSON-RPC message of an answer, JSON or one event's data. */
function messageOf(text: string): any {
  const data = text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim());
  return JSON.parse(data.length > 0 ? data[data.length - 1] : text);
}

/** What the raw server answers each tool with. */
function rawAnswer(message: { id: number | string; method: string; params: any }, res: import('node:http').ServerResponse): void {
  const id = JSON.stringify(message.id);
  if (message.method === 'GET') { // a resumed stream: a notification, then an earlier call's result replayed
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    return void res.end('id: r-1\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\n'
      + 'id: r-2\ndata: {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"project bluebird"}]}}\n\n');
  }
  switch (message.params.name) {
    case 'escaped': // the term written with escapes no serializer would choose
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(`{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"plans for project \\u0062lue\\u0062ird are on"}]}}`);
    case 'escaped_sse': { // a progress event, then the result's event split mid-escape over three writes
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n');
      const event = `event: message\nid: e-2\ndata: {"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"see project \\u0062luebird"},{"type":"text","text":"tail"}]}}\n\n`;
      const cuts = [event.indexOf('\\u0062') + 3, event.length - 1];
      res.write(event.slice(0, cuts[0]));
      setTimeout(() => { res.write(event.slice(cuts[0], cuts[1])); setTimeout(() => res.end(event.slice(cuts[1])), 10); }, 10);
      return;
    }
    case 'contact':
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(`{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"write to carol\\u0040example.net"}]}}`);
    case 'odd_type': // a 203 with a type no client should read, holding the term
      res.writeHead(203, { 'content-type': 'text/plain' });
      return void res.end(`{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"project bluebird"}]}}`);
    case 'string_id': // answered under the id's text: a client may still take it for its call
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(`{"jsonrpc":"2.0","id":"${message.id}","result":{"content":[{"type":"text","text":"project bluebird"}]}}`);
    case 'content_as_text': // not the specification's shape: content a string
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(`{"jsonrpc":"2.0","id":${id},"result":{"content":"project bluebird"}}`);
    case 'huge':
      res.writeHead(200, { 'content-type': 'application/json' });
      return void writeLarge(res, `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"`, 50 * MB, '"}]}}');
    case 'huge_sse':
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n');
      return void writeLarge(res, `event: message\ndata: {"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"`, 50 * MB, '"}]}}\n\n');
    default:
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"ok"}]}}`);
  }
}

/** The largest growth of this process's resident memory while `work` runs, sampled every 5 ms. */
async function peakRssGrowth<T>(work: () => Promise<T>): Promise<{ value: T; growth: number }> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 5);
  try {
    const value = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { value, growth: peak - before };
  } finally {
    clearInterval(sampler);
  }
}

describe('MCP tool calls under the plugins\' tool hooks', () => {
  let events: TestMcpServer;
  let json: TestMcpServer;
  let raw: RawMcpServer;
  let gw: TestGateway;
  let masking: TestGateway;
  let bare: TestGateway;

  beforeAll(async () => {
    events = await startMcpServer();
    json = await startMcpServer({ json: true });
    raw = await startRawMcpServer(rawAnswer);
    const servers = { events: { url: events.url }, json: { url: json.url }, raw: { url: raw.url } };
    gw = await startGateway({
      keys: [agent.entry],
      mcp: { servers },
      plugins: [
        { name: 'tool-audit', note: 'audited' },
        { name: 'content-filter', terms: ['forbidden plan'], output: { terms: ['project bluebird'], action: 'block' } },
        { name: 'pii', input: 'redact', output: 'mask' },
        { name: 'metrics' },
      ],
    }, { plugins: [toolAudit], metrics: {} });
    masking = await startGateway({
      keys: [agent.entry], mcp: { servers },
      plugins: [{ name: 'content-filter', output: { terms: ['project bluebird'], action: 'mask', mask: '[held]' } }],
    });
    // No plugin reads tool calls here: results pass as bytes, and are still bounded.
    bare = await startGateway({ keys: [agent.entry], mcp: { servers, maxResultBytes: '4mb' }, plugins: [] });
  });
  afterAll(async () => {
    for (const g of [gw, masking, bare]) await g?.close();
    await events?.close();
    await json?.close();
    await raw?.close();
  });

  it('redacts personal data in the arguments, keys and nested values too, before the server sees it', async () => {
    const { client } = await connectClient(gw.url, 'events', agent.key);
    const args = { args: { to: 'bob@example.com', cc: ['call +1 415 555 2671'], 'alice@example.org': { note: 'bob\u0040example.com again' }, n: 7 } };
    await client.callTool({ name: 'echo', arguments: args });
    const received = events.echoed.at(-1)!;
    expect(received).toEqual({ args: { to: '[EMAIL_1]', cc: ['call [PHONE_1]'], '[EMAIL_2]': { note: '[EMAIL_1] again' }, n: 7 } });
    expect(JSON.stringify(received)).not.toMatch(/example\.(com|org)|555/);
    // The plugins after the PII plugin read the arguments as the server gets them.
    expect(seen.at(-1)).toEqual({ key: 'agent', server: 'events', tool: 'echo', args: received });
    await client.close();
  });

  it('refuses arguments holding a blocked term with -32602 and a message naming no term; the server never sees the call', async () => {
    const { client } = await connectClient(gw.url, 'events', agent.key);
    const before = events.toolCalls.length;
    const refused = await client.callTool({ name: 'echo', arguments: { args: { q: 'the Forbidden   Plan' } } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(-32602);
    expect((refused as McpError).data).toEqual({ reason: 'content_filter' });
    expect((refused as McpError).message.toLowerCase()).not.toContain('forbidden');
    // Escaped in the raw body, or as a key: the same.
    for (const args of ['{"args":{"q":"forbidden \\u0070lan"}}', '{"args":{"forbidden plan":1}}']) {
      const res = await rawCall(`${gw.url}/mcp/events`, 5, 'echo', args);
      expect(messageOf(res.text).error).toMatchObject({ code: -32602, data: { reason: 'content_filter' } });
    }
    expect(events.toolCalls.length).toBe(before);
    await client.close();
  });

  it('answers arguments that are not an object, or nest past 64 levels, with -32602, never sending them', async () => {
    const before = raw.calls.length;
    for (const args of ['"forbidden plan"', '[1,2]', `${'{"a":'.repeat(70)}1${'}'.repeat(70)}`]) {
      const res = await rawCall(`${gw.url}/mcp/raw`, 6, 'plain', args);
      expect(res.status).toBe(200);
      expect(messageOf(res.text)).toMatchObject({ id: 6, error: { code: -32602 } });
    }
    // A tools/call sent as a notification cannot be answered if refused: the POST is invalid.
    const note = await call('POST', `${gw.url}/mcp/raw`, '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"plain","arguments":{}}}', MCP_HEADERS);
    expect(note.status).toBe(400);
    expect(note.body.error.code).toBe(-32600);
    expect(raw.calls.length).toBe(before);
  });

  it('answers a batch holding a refused call whole, sending none of it; a batch with one id twice is invalid', async () => {
    const before = raw.calls.length;
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'plain', arguments: { q: 'forbidden plan' } } },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
    ];
    const res = await call('POST', `${gw.url}/mcp/raw`, JSON.stringify(batch), MCP_HEADERS);
    expect(res.body).toEqual([
      { jsonrpc: '2.0', id: 1, error: expect.objectContaining({ code: -32602, data: { reason: 'content_filter' } }) },
      { jsonrpc: '2.0', id: 2, error: expect.objectContaining({ code: -32000 }) },
    ]);
    const twice = await call('POST', `${gw.url}/mcp/raw`, JSON.stringify([batch[1], { ...batch[0], id: 2, params: { name: 'plain', arguments: {} } }]), MCP_HEADERS);
    expect(twice.status).toBe(400);
    expect(raw.calls.length).toBe(before);
  });

  it.each(['events', 'json'])('cuts a %s result at a blocked term split across content blocks, or across a word boundary between them', async (server) => {
    const { client } = await connectClient(gw.url, server, agent.key);
    const cutResult = await client.callTool({ name: 'blocks', arguments: { texts: ['first block', 'notes on project blue', 'bird and more', 'later'] } });
    expect(cutResult.isError).toBe(true);
    expect(cutResult.content).toEqual([{ type: 'text', text: 'first block' }, { type: 'text', text: 'notes on ' }, { type: 'text', text: WITHHELD }]);
    const apart = await client.callTool({ name: 'blocks', arguments: { texts: ['the project', 'bluebird', 'after'] } });
    expect(apart.content).toEqual([{ type: 'text', text: 'the ' }, { type: 'text', text: WITHHELD }]);
    const clean = await client.callTool({ name: 'blocks', arguments: { texts: ['a project', 'blue bird'], structured: { ok: true } } });
    expect(clean).toEqual({ content: [{ type: 'text', text: 'a project' }, { type: 'text', text: 'blue bird' }], structuredContent: { ok: true } });
    await client.close();
  });

  it('masks personal data in a result (escaped too), which the tool made, not the caller', async () => {
    const res = await rawCall(`${gw.url}/mcp/raw`, 12, 'contact');
    expect(messageOf(res.text).result).toEqual({ content: [{ type: 'text', text: 'write to [EMAIL]' }] });
  });

  it('cuts a term written with JSON escapes, in a JSON answer and in an event split across writes mid-escape', async () => {
    const plain = await rawCall(`${gw.url}/mcp/raw`, 7, 'escaped');
    expect(messageOf(plain.text)).toEqual({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'plans for ' }, { type: 'text', text: WITHHELD }], isError: true } });
    const streamed = await rawCall(`${gw.url}/mcp/raw`, 8, 'escaped_sse');
    expect(streamed.headers['content-type']).toMatch(/text\/event-stream/);
    const [progress, result] = streamed.text.split('\n\n').filter((e) => e !== '');
    expect(progress).toContain('notifications/progress');
    expect(result.split('\n').slice(0, 2)).toEqual(['event: message', 'id: e-2']);
    expect(messageOf(result).result).toEqual({ content: [{ type: 'text', text: 'see ' }, { type: 'text', text: WITHHELD }], isError: true });
  });

  it.each([['a resumed stream', { 'last-event-id': 'e-1' }], ['the server\'s own stream', {}]])('answers a tool result on %s with an error when plugins read results, and passes it when none does', async (_what, extra) => {
    const resume = (g: TestGateway) => call('GET', `${g.url}/mcp/raw`, undefined, { ...bearer(agent.key), accept: 'text/event-stream', ...extra });
    const guarded = (await resume(gw)).text.split('\n\n').filter((e) => e !== '');
    expect(guarded[0]).toContain('notifications/message');
    expect(guarded[1].split('\n')[0]).toBe('id: r-2');
    expect(messageOf(guarded[1])).toEqual({ jsonrpc: '2.0', id: 3, error: { code: -32000, message: expect.stringContaining('call the tool again') } });
    expect((await resume(bare)).text).toContain('project bluebird');
  });

  it('reads content that is not a list of blocks as none, and an answer of another type or 2xx, rather than passing them unread', async () => {
    const res = await rawCall(`${gw.url}/mcp/raw`, 9, 'content_as_text');
    expect(messageOf(res.text).result.content).toEqual([]);
    const stringId = await rawCall(`${gw.url}/mcp/raw`, 15, 'string_id');
    expect(messageOf(stringId.text).result.content).toEqual([{ type: 'text', text: WITHHELD }]);
    const odd = await rawCall(`${gw.url}/mcp/raw`, 14, 'odd_type');
    expect(odd.status).toBe(203);
    expect(messageOf(odd.text).result).toEqual({ content: [{ type: 'text', text: WITHHELD }], isError: true });
  });

  it('masks a term split across blocks, escaped, and in structured content, with mask settings', async () => {
    const { client } = await connectClient(masking.url, 'events', agent.key);
    const result = await client.callTool({ name: 'blocks', arguments: { texts: ['about project blue', 'bird: go'], structured: { status: 'Project Bluebird ok', 'project bluebird': 1 } } });
    // The replacement stands where the match began; what it took of the next block is gone from there.
    expect(result.content).toEqual([{ type: 'text', text: 'about [held]' }, { type: 'text', text: ': go' }]);
    expect(result.structuredContent).toEqual({ status: '[held] ok', '[held]': 1 });
    await client.close();
    const escaped = await rawCall(`${masking.url}/mcp/raw`, 10, 'escaped');
    expect(messageOf(escaped.text).result.content).toEqual([{ type: 'text', text: 'plans for [held] are on' }]);
  });

  it('runs a third-party plugin\'s tool hooks: it sees the call and may replace the result', async () => {
    const { client } = await connectClient(gw.url, 'json', agent.key);
    const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    expect(result.content).toEqual([{ type: 'text', text: '5' }, { type: 'text', text: 'audited' }]);
    expect(seen.at(-1)).toEqual({ key: 'agent', server: 'json', tool: 'add', args: { a: 2, b: 3 } });
    await client.close();
  });

  it('never sends a call whose hooks the client left during', async () => {
    const before = raw.calls.length;
    const count = async () => series(parseExposition((await scrape(gw.metrics!.url)).text), 'sluice_mcp_requests_total')['method=tools/call,outcome=client_closed,server=raw'] ?? 0;
    const closedBefore = await count();
    const req = request(`${gw.url}/mcp/raw`, { method: 'POST', headers: MCP_HEADERS });
    req.on('error', () => { /* the test cuts it */ });
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 13, method: 'tools/call', params: { name: 'hold', arguments: {} } }));
    await until(() => holding.entered, 'the hook to hold the call');
    req.destroy();
    await until(() => holding.released, 'the hook to see the client leave');
    await until(async () => (await count()) === closedBefore + 1, 'the call counted as client_closed');
    expect(raw.calls.length).toBe(before);
  });

  it('passes progress notifications as they come while the result is held', async () => {
    const { client } = await connectClient(gw.url, 'events', agent.key);
    const progress: number[] = [];
    let done = false;
    const pending = client.callTool({ name: 'slow', arguments: {} }, undefined, { onprogress: (p) => progress.push(p.progress) }).then((r) => { done = true; return r; });
    await until(() => progress.length > 0, 'the slow tool\'s progress notification');
    expect(done).toBe(false);
    expect((await pending).content).toEqual([{ type: 'text', text: 'done' }]);
    await client.close();
  });

  it.each([
    ['a JSON answer, plugins reading results', 'huge', () => gw, 16],
    ['an event, no plugin', 'huge_sse', () => bare, 4],
  ])('answers a 50 MB result (%s) with the protocol\'s error, holding no more than the limit', async (_what, tool, gateway, limitMiB) => {
    const { value: res, growth } = await peakRssGrowth(() => rawCall(`${gateway().url}/mcp/raw`, 11, tool as string));
    expect(res.status).toBe(200);
    const message = messageOf(res.text);
    expect(message).toEqual({ jsonrpc: '2.0', id: 11, error: { code: -32000, message: expect.stringContaining(`(${limitMiB} MiB)`) } });
    // Holding the whole 50 MB (its chunks, joined, as text) would take well over 100 MB.
    expect(growth).toBeLessThan(limitMiB * MB * 3 + 24 * MB);
    if (tool === 'huge_sse') expect(res.text).toContain('notifications/progress');
  });

  it('counts what the rules did to results', async () => {
    const samples = parseExposition((await scrape(gw.metrics!.url)).text);
    expect(series(samples, 'sluice_output_filtered_total')['action=block,kind=term,plugin=content-filter']).toBe(8);
    expect(series(samples, 'sluice_output_filtered_total')['action=mask,kind=email,plugin=pii']).toBe(1);
    expect(series(samples, 'sluice_mcp_requests_total')['method=tools/call,outcome=too_large,server=raw']).toBe(1);
    expect(series(samples, 'sluice_mcp_requests_total')['method=tools/call,outcome=refused,server=events']).toBeGreaterThanOrEqual(3);
  });
});
