// Every MCP tool call counted, end to end: the SDK's client through the real
// gateway to real SDK servers (test/support/mcp-server.ts), on the memory
// store and the real Redis. A call leaves a usage record in the usage export
// (JSON Lines and CSV) with its key, org, server, tool, outcome, duration and
// bytes; the spend API and `sluice spend` count it under the key and the
// org; a refused, failed or abandoned call is recorded with its outcome; the
// tool metrics count it under a bounded label, whatever name a client sends;
// an audit line names the key and the tool; and the server's credential is in
// none of it, nor in anything the client received.
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { admin, makeAdminKey } from '../support/admin';
import { makeKey } from '../support/gateway';
import { bearer, call, postSse } from '../support/http';
import { agent, connectClient, member, plain, SERVER_TOKEN, startMcpStack, type McpStack, type Received } from '../support/mcp-stack';
import { parseExposition, scrape, series } from '../support/metrics';
import { sluice } from '../support/process';
import { exported } from '../support/spend';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { until } from '../support/wait';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

describe.each(['memory', 'redis'] as const)('MCP tool calls counted, on the %s store', (store) => {
  const adminKey = makeAdminKey();
  /** Any tool of the servers that fail: every name it sends is one it may call. */
  const prober = makeKey('prober', { mcp: { servers: ['dead', 'silent'], tools: ['dead/*', 'silent/*'] } });
  const prefix = uniquePrefix();
  let s: McpStack;
  let adminUrl: string;

  beforeAll(async () => {
    s = await startMcpStack({ admin: true, config: { keys: [agent.entry, plain.entry, member.entry, prober.entry], admin: { keys: [adminKey.digest] }, ...(store === 'redis' && { redis: { url: sharedRedisUrl(), prefix } }) } });
    adminUrl = s.gw.admin!.url;
  });
  afterAll(async () => {
    await s?.close();
    if (store === 'redis') await deletePrefix(sharedRedisUrl(), prefix);
  });

  const records = async (): Promise<Array<Record<string, any>>> => exported(adminUrl, adminKey.key, 'jsonl');
  const recordsOf = async (requestId: string, count: number): Promise<Array<Record<string, any>>> => {
    await until(async () => (await records()).filter((r) => r.request_id === requestId).length >= count, `${count} records of ${requestId}`, 5000);
    return (await records()).filter((r) => r.request_id === requestId);
  };
  /** A session (on the JSON server unless told), opened by hand, for requests whose bytes the test counts. */
  const session = async (key: string, server = 'json'): Promise<Record<string, string>> => {
    const init = await call('POST', `${s.gw.url}/mcp/${server}`, INIT, { ...MCP_HEADERS, ...bearer(key) });
    expect(init.status).toBe(200);
    return { ...MCP_HEADERS, ...bearer(key), 'mcp-session-id': init.headers['mcp-session-id'] as string, 'mcp-protocol-version': '2025-06-18' };
  };

  it('records an allowed call with its key, org, server, tool, outcome, duration and exact bytes; only tools/call leaves a record', async () => {
    const headers = await session(agent.key);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'add', arguments: { a: 20, b: 22 } } });
    const res = await call('POST', `${s.gw.url}/mcp/json`, body, { ...headers, 'x-request-id': 'usage-ok-1' });
    expect(res.body.result.content).toEqual([{ type: 'text', text: '42' }]);
    const list = await call('POST', `${s.gw.url}/mcp/json`, JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/list' }), { ...headers, 'x-request-id': 'usage-list-1' });
    expect(list.status).toBe(200);
    const [record] = await recordsOf('usage-ok-1', 1);
    expect(record).toEqual({
      time: expect.any(String), request_id: 'usage-ok-1', key: 'agent', team: null, org: null, user: null, model: null, protocol: 'mcp', endpoint: 'tools/call',
      status: 200, reason: null, prompt_tokens: 0, cached_tokens: 0, completion_tokens: 0, reasoning_tokens: 0, estimated: false, cost: 0,
      server: 'json', tool: 'add', outcome: 'ok', duration_ms: expect.any(Number), bytes_in: Buffer.byteLength(body), bytes_out: Buffer.byteLength(res.text),
    });
    expect(record.duration_ms).toBeGreaterThan(0);
    // The list, the initialize: access lines and request counts, no usage record.
    await s.accessLine('usage-list-1');
    expect((await records()).filter((r) => r.request_id === 'usage-list-1')).toEqual([]);
    // The CSV export carries the same record, the MCP fields in their columns.
    const csv = (await exported(adminUrl, adminKey.key, 'csv')).find((r) => r.request_id === 'usage-ok-1');
    expect(csv).toMatchObject({ protocol: 'mcp', server: 'json', tool: 'add', outcome: 'ok', bytes_in: Buffer.byteLength(body), bytes_out: Buffer.byteLength(res.text) });
  });

  it('counts an event stream\'s bytes as the client got them', async () => {
    const headers = await session(agent.key, 'files');
    await call('POST', `${s.gw.url}/mcp/files`, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'count', arguments: { steps: 3 }, _meta: { progressToken: 'p' } } });
    const res = await call('POST', `${s.gw.url}/mcp/files`, body, { ...headers, 'x-request-id': 'usage-stream-1' });
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    // Three progress events and the result, every byte of them.
    expect(res.text.match(/notifications\/progress/g)).toHaveLength(3);
    expect(res.text).toContain('counted 3');
    const [record] = await recordsOf('usage-stream-1', 1);
    expect(record).toMatchObject({ key: 'agent', server: 'files', tool: 'count', outcome: 'ok', status: 200, bytes_in: Buffer.byteLength(body), bytes_out: Buffer.byteLength(res.text) });
  });

  it('records a refused call as refused, with the name it tried, and counts it under the tool label "other"', async () => {
    const headers = await session(agent.key);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'delete_repo', arguments: { name: 'prod' } } });
    const res = await call('POST', `${s.gw.url}/mcp/json`, body, { ...headers, 'x-request-id': 'usage-refused-1' });
    expect(res.body.error.code).toBe(-32602);
    const [record] = await recordsOf('usage-refused-1', 1);
    expect(record).toMatchObject({ key: 'agent', server: 'json', tool: 'delete_repo', outcome: 'refused', reason: 'refused', status: 200, bytes_in: Buffer.byteLength(body), bytes_out: Buffer.byteLength(res.text), cost: 0 });
    const samples = parseExposition((await scrape(s.gw.metrics!.url)).text);
    const calls = series(samples, 'sluice_mcp_tool_calls_total');
    expect(calls['outcome=refused,server=json,tool=other']).toBeGreaterThanOrEqual(1);
    expect(Object.keys(calls).some((k) => k.includes('delete_repo'))).toBe(false);
    const audit = s.lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'mcp tool call' && l.requestId === 'usage-refused-1');
    expect(audit).toMatchObject({ audit: true, keyId: 'agent', server: 'json', tool: 'delete_repo', outcome: 'refused', status: 200 });
  });

  it('records each call of a refused batch, their bytes summing to the request\'s', async () => {
    const headers = await session(agent.key);
    const body = JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2 } } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'delete_repo', arguments: { name: 'x' } } },
    ]);
    const res = await call('POST', `${s.gw.url}/mcp/json`, body, { ...headers, 'x-request-id': 'usage-batch-1' });
    expect(res.status).toBe(200);
    const found = await recordsOf('usage-batch-1', 2);
    expect(found.map((r) => [r.tool, r.outcome]).sort()).toEqual([['add', 'refused'], ['delete_repo', 'refused']]);
    expect(found.reduce((n, r) => n + r.bytes_in, 0)).toBe(Buffer.byteLength(body));
    expect(found.reduce((n, r) => n + r.bytes_out, 0)).toBe(Buffer.byteLength(res.text));
  });

  it('counts tool calls under the key and the org in the spend API, apart from model requests', async () => {
    const { client } = await connectClient(s.gw.url, 'files', member.key);
    for (let i = 0; i < 3; i++) await client.callTool({ name: 'add', arguments: { a: i, b: 1 } });
    await expect(client.callTool({ name: 'count', arguments: { steps: 1 } })).rejects.toBeInstanceOf(McpError);
    await client.close();
    const spendOf = async (query: string) => (await admin(adminUrl, 'GET', `/admin/spend?${query}`, adminKey.key)).body;
    await until(async () => (await spendOf('key=member')).key.total.tool_calls === 4, 'four tool calls of member', 5000);
    const byKey = await spendOf('key=member');
    expect(byKey.key.total).toEqual({ requests: 0, prompt_tokens: 0, cached_tokens: 0, completion_tokens: 0, reasoning_tokens: 0, tool_calls: 4, cost: 0 });
    expect(byKey.key.days).toHaveLength(1);
    expect((await spendOf('org=tools-team')).org.total.tool_calls).toBe(4);
    const all = await spendOf('');
    expect(all.all.total.tool_calls).toBe((await records()).length);
    // The command line prints the same sums.
    const cli = await sluice(['spend', '--org', 'tools-team'], { SLUICE_ADMIN_URL: adminUrl, SLUICE_ADMIN_KEY: adminKey.key });
    expect(cli.status).toBe(0);
    expect(JSON.parse(cli.stdout).org.total).toEqual(byKey.key.total);
  });

  it('counts every call and its duration by server and tool', async () => {
    const { client } = await connectClient(s.gw.url, 'files', agent.key);
    const samples = async () => parseExposition((await scrape(s.gw.metrics!.url)).text);
    const before = series(await samples(), 'sluice_mcp_tool_calls_total')['outcome=ok,server=files,tool=add'] ?? 0;
    for (let i = 0; i < 5; i++) await client.callTool({ name: 'add', arguments: { a: i, b: i } });
    await client.close();
    await until(async () => series(await samples(), 'sluice_mcp_tool_calls_total')['outcome=ok,server=files,tool=add'] === before + 5, 'five more calls of files/add', 5000);
    const after = await samples();
    expect(series(after, 'sluice_mcp_tool_call_duration_seconds_count')['server=files,tool=add']).toBeGreaterThanOrEqual(before + 5);
    expect(series(after, 'sluice_mcp_tool_call_duration_seconds_sum')['server=files,tool=add']).toBeGreaterThan(0);
  });

  it('records a call the server never answered, or that could not reach it, with the gateway\'s status and its answer\'s bytes', async () => {
    const headers = { ...MCP_HEADERS, ...bearer(prober.key) };
    const silent = await call('POST', `${s.gw.url}/mcp/silent`, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'wait' } }), { ...headers, 'x-request-id': 'usage-timeout-1' });
    const dead = await call('POST', `${s.gw.url}/mcp/dead`, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'gone' } }), { ...headers, 'x-request-id': 'usage-dead-1' });
    expect([silent.status, dead.status]).toEqual([504, 502]);
    expect((await recordsOf('usage-timeout-1', 1))[0]).toMatchObject({ key: 'prober', server: 'silent', tool: 'wait', outcome: 'timeout', reason: 'timeout', status: 504, bytes_out: Buffer.byteLength(silent.text) });
    expect((await recordsOf('usage-dead-1', 1))[0]).toMatchObject({ server: 'dead', tool: 'gone', outcome: 'unreachable', status: 502, bytes_out: Buffer.byteLength(dead.text) });
  });

  it('records a call whose client left mid-answer as client_closed, with the bytes it had been sent', async () => {
    const headers = await session(agent.key, 'files');
    await call('POST', `${s.gw.url}/mcp/files`, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers);
    const body = { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'slow', arguments: {}, _meta: { progressToken: 'p' } } };
    // The slow tool sends one progress event, then its result 800 ms later: the client leaves after the event.
    const res = await postSse(`${s.gw.url}/mcp/files`, body, { ...headers, 'x-request-id': 'usage-left-1' }, 1);
    expect(res.events).toHaveLength(1);
    const [record] = await recordsOf('usage-left-1', 1);
    expect(record).toMatchObject({ tool: 'slow', outcome: 'client_closed', status: 499, bytes_out: Buffer.byteLength(res.raw) });
    expect(record.bytes_out).toBeGreaterThan(0);
  });

  it('never makes a label of a client\'s odd tool name, and labels at most 100 names a server', async () => {
    const headers = { ...MCP_HEADERS, ...bearer(prober.key) };
    const names = ['x"} 1\nsluice_fake 1', 'é', 'a b', '', ...Array.from({ length: 105 }, (_, i) => `tool_${i}`)];
    for (const name of names) {
      const res = await call('POST', `${s.gw.url}/mcp/dead`, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name } }), headers);
      // Relayed to a server that is down (502), or refused (200: a name across lines, which no glob matches).
      expect([name, res.status]).toEqual([name, name.includes('\n') ? 200 : 502]);
    }
    const exposition = (await scrape(s.gw.metrics!.url)).text;
    const labels = Object.keys(series(parseExposition(exposition), 'sluice_mcp_tool_calls_total')).filter((k) => k.includes('server=dead'));
    const tools = labels.map((k) => /tool=([^,]*)/.exec(k)![1]);
    expect(tools).toContain('other');
    expect(tools.filter((t) => t !== 'other')).toHaveLength(100);
    // The names of the calls before (the unreachable server's `gone`) and these, first come first labelled.
    expect(tools.filter((t) => t !== 'other' && t !== 'gone' && !/^tool_\d+$/.test(t))).toEqual([]);
    expect(exposition).not.toContain('sluice_fake');
    // The records keep each name tried, as the export's text.
    expect((await records()).filter((r) => r.server === 'dead' && r.tool === 'tool_104')).toHaveLength(1);
  });

  it('never lets the server\'s credential reach the client, a log line, a metric or a usage record', async () => {
    const received: Received = { texts: [] };
    const { client } = await connectClient(s.gw.url, 'files', agent.key, received);
    await client.callTool({ name: 'headers', arguments: {} });
    await client.callTool({ name: 'add', arguments: { a: 1, b: 1 } });
    await client.close();
    await until(async () => (await records()).some((r) => r.tool === 'headers'), 'the headers call\'s record', 5000);
    const everything = [
      ...received.texts, ...s.lines, (await scrape(s.gw.metrics!.url)).text,
      JSON.stringify(await records()), JSON.stringify(await exported(adminUrl, adminKey.key, 'csv')),
      JSON.stringify((await admin(adminUrl, 'GET', '/admin/spend?key=agent', adminKey.key)).body),
    ].join('\n');
    expect(everything).toContain('headers');
    expect(everything).not.toContain(SERVER_TOKEN);
    expect(everything).not.toContain(agent.key);
  });
});
