// MCP through the gate: the SDK's client, through the real gateway on a real
// socket, to real SDK servers (test/support/mcp-server.ts): a session's whole
// life, tools/list filtered to the key's tools (event stream and JSON), a
// refused tool answered as unknown and never sent on, progress notifications
// streamed, the server's credential injected and never seen by the client or
// the log; and every way the gateway answers for a server it cannot reach.
import { request } from 'node:http';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { bearer, call, postChunked } from '../support/http';
import { expectError } from '../support/errors';
import { agent, connectClient, member, plain, SERVER_TOKEN, startMcpStack, type McpStack, type Received } from '../support/mcp-stack';
import { sha256 } from '../support/mcp-server';
import { parseExposition, scrape, series } from '../support/metrics';
import { until } from '../support/wait';

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('MCP relay', () => {
  let s: McpStack;
  beforeAll(async () => { s = await startMcpStack(); });
  afterAll(async () => { await s.close(); });

  it('runs a session through the gateway: initialize, a filtered list, an allowed call, the same session again, DELETE ending it', async () => {
    const received: Received = { texts: [] };
    const { client, transport } = await connectClient(s.gw.url, 'files', agent.key, received);
    // The client holds the server's session id bound to its key: "<server's id>.<tag>".
    const bound = transport.sessionId!;
    expect(bound).toMatch(/^[\x21-\x7e]+\.[A-Za-z0-9_-]{22}$/);
    const session = bound.slice(0, bound.lastIndexOf('.'));
    expect(s.files.sessions.has(session)).toBe(true);
    expect(client.getServerVersion()?.name).toBe('sluice-test');

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['add', 'count', 'headers', 'slow']);

    const sum = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    expect(sum.content).toEqual([{ type: 'text', text: '5' }]);
    // Every request after initialize carried the session and the protocol version on to the server.
    const later = s.files.requests.filter((r) => r.headers['mcp-session-id'] === session);
    expect(later.length).toBeGreaterThanOrEqual(3);
    expect(later.every((r) => typeof r.headers['mcp-protocol-version'] === 'string')).toBe(true);

    await transport.terminateSession();
    expect(s.files.closedSessions).toContain(session);
    expect(s.files.sessions.has(session)).toBe(false);
    await client.close();
    expect(received.texts.join('\n')).not.toContain(SERVER_TOKEN);
  });

  it('opens the server\'s own event stream on GET, and passes the server\'s 404 for a session it ended', async () => {
    const init = await call('POST', `${s.gw.url}/mcp/files`, INIT, { ...MCP_HEADERS, ...bearer(agent.key) });
    const session = init.headers['mcp-session-id'] as string;
    const sessionHeaders = { ...bearer(agent.key), 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    await call('POST', `${s.gw.url}/mcp/files`, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), { ...MCP_HEADERS, ...sessionHeaders });
    const head = await new Promise<{ status?: number; type?: string }>((resolve, reject) => {
      const req = request(`${s.gw.url}/mcp/files`, { method: 'GET', headers: { ...sessionHeaders, accept: 'text/event-stream' } }, (res) => {
        resolve({ status: res.statusCode, type: res.headers['content-type'] });
        req.destroy();
      });
      req.on('error', reject).end();
    });
    expect(head).toEqual({ status: 200, type: 'text/event-stream' });
    const ended = await call('DELETE', `${s.gw.url}/mcp/files`, undefined, sessionHeaders);
    expect(ended.status).toBe(200);
    const after = await call('POST', `${s.gw.url}/mcp/files`, JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' }), { ...MCP_HEADERS, ...sessionHeaders });
    expect(after.status).toBe(404);
    expect(after.body.error.message).toBe('Session not found');
  });

  it('binds a server\'s session to the key that began it: another key, the server\'s bare id or a changed tag is a session not found', async () => {
    const init = await call('POST', `${s.gw.url}/mcp/files`, INIT, { ...MCP_HEADERS, ...bearer(agent.key) });
    const bound = init.headers['mcp-session-id'] as string;
    const bare = bound.slice(0, bound.lastIndexOf('.'));
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' });
    const as = (key: string, session: string) => ({ ...MCP_HEADERS, ...bearer(key), 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' });
    const before = s.files.requests.length;
    // A tag changed in its middle, or only in the last character's unused bits.
    const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    const tagged = flip(bound, bound.length - 10);
    const padded = flip(bound, bound.length - 1);
    for (const [key, session] of [[member.key, bound], [agent.key, bare], [agent.key, tagged], [agent.key, padded], [agent.key, `${bare}.`], [agent.key, '.']] as const) {
      const refused = await call('POST', `${s.gw.url}/mcp/files`, ping, as(key, session));
      expect(refused.status).toBe(404);
      expect(refused.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32001 } });
    }
    // None of them reached the server; the key that began it goes on.
    expect(s.files.requests.length).toBe(before);
    const ok = await call('POST', `${s.gw.url}/mcp/files`, ping, as(agent.key, bound));
    expect(ok.status).toBe(200);
    expect(s.files.requests.at(-1)!.headers['mcp-session-id']).toBe(bare);
  });

  it('filters tools/list when the server answers with JSON, not an event stream', async () => {
    const { client } = await connectClient(s.gw.url, 'json', agent.key);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['add']);
    expect((await client.callTool({ name: 'add', arguments: { a: 1, b: 1 } })).content).toEqual([{ type: 'text', text: '2' }]);
    await client.close();
  });

  it('answers a tool the key may not call as an unknown tool, and never sends it on', async () => {
    const { client } = await connectClient(s.gw.url, 'files', agent.key);
    const before = s.files.requests.length;
    const refused = await client.callTool({ name: 'delete_repo', arguments: { name: 'prod' } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(-32602);
    expect((refused as McpError).message).toContain('Unknown tool: delete_repo');
    expect(s.files.requests.length).toBe(before);
    // A made-up name is answered the same way: a caller cannot tell a refused tool from a missing one.
    const missing = await client.callTool({ name: 'no_such_tool', arguments: {} }).catch((e: unknown) => e);
    expect((missing as McpError).code).toBe(-32602);
    await client.close();
  });

  it('streams progress notifications to the client as the tool sends them', async () => {
    const { client } = await connectClient(s.gw.url, 'files', agent.key);
    const progress: number[] = [];
    const result = await client.callTool({ name: 'count', arguments: { steps: 3 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
    expect(progress).toEqual([1, 2, 3]);
    expect(result.content).toEqual([{ type: 'text', text: 'counted 3' }]);
    await client.close();
  });

  it('injects the configured credential: the server sees it, never the client\'s key; the client and the log never see it', async () => {
    const received: Received = { texts: [] };
    const { client } = await connectClient(s.gw.url, 'files', agent.key, received);
    const result = await client.callTool({ name: 'headers', arguments: {} });
    const seen = JSON.parse((result.content as Array<{ text: string }>)[0].text);
    expect(seen.authorization).toBe(sha256(`Bearer ${SERVER_TOKEN}`));
    expect(seen.authorization).not.toBe(sha256(`Bearer ${agent.key}`));
    expect(seen.names).not.toContain('cookie');
    await client.close();
    await new Promise((resolve) => setImmediate(resolve));
    const all = [...received.texts, ...s.lines].join('\n');
    expect(all).not.toContain(SERVER_TOKEN);
    expect(s.lines.join('\n')).not.toContain(agent.key);
    const logged = s.lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request' && l.tool === 'headers');
    expect(logged).toEqual([expect.objectContaining({ protocol: 'mcp', server: 'files', method: 'tools/call', status: 200, outcome: 'ok', keyId: 'agent' })]);
  });

  it('uses a key\'s org lists when the key has none', async () => {
    const { client } = await connectClient(s.gw.url, 'files', member.key);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['add']);
    await client.close();
  });

  it('writes one access line per request, naming the method and an allowed tool', async () => {
    const res = await call('POST', `${s.gw.url}/mcp/json`, INIT, { ...MCP_HEADERS, ...bearer(agent.key), 'x-request-id': 'mcp-log-1' });
    expect(res.status).toBe(200);
    const line = await s.accessLine('mcp-log-1');
    expect(line).toMatchObject({ protocol: 'mcp', server: 'json', method: 'initialize', status: 200, outcome: 'ok', keyId: 'agent' });
    const session = res.headers['mcp-session-id'] as string;
    const callBody = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'delete_repo', arguments: { name: 'x' } } });
    const refused = await call('POST', `${s.gw.url}/mcp/json`, callBody, { ...MCP_HEADERS, ...bearer(agent.key), 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18', 'x-request-id': 'mcp-log-2' });
    expect(refused.body).toEqual({ jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'Unknown tool: delete_repo' } });
    const refusedLine = await s.accessLine('mcp-log-2');
    expect(refusedLine).toMatchObject({ method: 'tools/call', outcome: 'refused' });
    expect(refusedLine.tool).toBeUndefined();
  });

  it('refuses a missing or invalid key with the gateway\'s 401', async () => {
    expectError(await call('POST', `${s.gw.url}/mcp/files`, INIT, MCP_HEADERS), 401, 'unauthorized');
    expectError(await call('POST', `${s.gw.url}/mcp/files`, INIT, { ...MCP_HEADERS, ...bearer('sk-test-wrong') }), 401, 'unauthorized');
  });

  it('answers 404 with a JSON-RPC error for a server that does not exist and for one the key may not use', async () => {
    for (const [path, key] of [['nowhere', agent.key], ['files', plain.key], ['Files', agent.key]] as const) {
      const res = await call('POST', `${s.gw.url}/mcp/${path}`, INIT, { ...MCP_HEADERS, ...bearer(key) });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32000, message: expect.any(String) } });
    }
  });

  it('answers 502 for a server that is down and 504 for one that does not answer in time', async () => {
    const down = await call('POST', `${s.gw.url}/mcp/dead`, INIT, { ...MCP_HEADERS, ...bearer(agent.key) });
    expect(down.status).toBe(502);
    expect(down.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    const started = Date.now();
    const silent = await call('POST', `${s.gw.url}/mcp/silent`, INIT, { ...MCP_HEADERS, ...bearer(agent.key) });
    expect(silent.status).toBe(504);
    expect(silent.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('cuts the client\'s connection when the server breaks off mid-stream, after passing what came', async () => {
    const seen = await new Promise<{ status?: number; text: string; complete: boolean }>((resolve, reject) => {
      const req = request(`${s.gw.url}/mcp/broken`, { method: 'POST', headers: { ...MCP_HEADERS, ...bearer(agent.key) } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => { text += c; });
        res.on('close', () => resolve({ status: res.statusCode, text, complete: res.complete }));
      });
      req.on('error', reject).end(INIT);
    });
    expect(seen.status).toBe(200);
    expect(seen.text).toContain('notifications/message');
    expect(seen.complete).toBe(false);
  });

  it('refuses a body over server.bodyLimit with 413, one that is not JSON-RPC with 400, and other methods with 405', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'add', arguments: { pad: 'x'.repeat(70 * 1024) } } });
    const tooBig = await call('POST', `${s.gw.url}/mcp/files`, big, { ...MCP_HEADERS, ...bearer(agent.key) });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    // Sent in chunks with no length: counted as it arrives.
    const chunked = await postChunked(`${s.gw.url}/mcp/files`, [big.slice(0, 30_000), big.slice(30_000)], { ...MCP_HEADERS, ...bearer(agent.key) });
    expect(chunked.status).toBe(413);
    expect(chunked.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    const notJson = await call('POST', `${s.gw.url}/mcp/files`, '{"jsonrpc":', { ...MCP_HEADERS, ...bearer(agent.key) });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe(-32700);
    const notRpc = await call('POST', `${s.gw.url}/mcp/files`, '{"hello":1}', { ...MCP_HEADERS, ...bearer(agent.key) });
    expect(notRpc.status).toBe(400);
    expect(notRpc.body.error.code).toBe(-32600);
    const put = await call('PUT', `${s.gw.url}/mcp/files`, INIT, { ...MCP_HEADERS, ...bearer(agent.key) });
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe('POST, GET, DELETE');
  });

  it('counts requests by server, method and outcome', async () => {
    const read = async () => series(parseExposition((await scrape(s.gw.metrics!.url)).text), 'sluice_mcp_requests_total');
    let counts = await read();
    const count = (server: string, method: string, outcome: string) => counts[`method=${method},outcome=${outcome},server=${server}`] ?? 0;
    // A request is counted once its response has closed and its relay has ended: a cut stream's count may land after its client saw the cut.
    await until(async () => { counts = await read(); return count('broken', 'initialize', 'server_error') > 0; }, 'the cut stream counted');
    expect(count('files', 'tools/call', 'refused')).toBeGreaterThanOrEqual(2);
    expect(count('files', 'tools/list', 'ok')).toBeGreaterThanOrEqual(1);
    expect(count('files', 'session_end', 'ok')).toBe(2);
    // The SDK's client opens the server's GET stream after each initialize too.
    expect(count('files', 'stream', 'client_closed') + count('files', 'stream', 'ok')).toBeGreaterThanOrEqual(1);
    expect(count('files', 'ping', 'rejected')).toBe(1);
    expect(count('dead', 'initialize', 'unreachable')).toBe(1);
    expect(count('silent', 'initialize', 'timeout')).toBe(1);
    expect(count('broken', 'initialize', 'server_error')).toBe(1);
    expect(count('files', 'other', 'too_large')).toBe(2);
    // A request refused before its body is read is counted under "other": the gateway does not read what it will not serve.
    expect(count('unknown', 'other', 'not_found')).toBe(2);
    // One server the key may not use, and the six sessions another key began or none was given (the binding test).
    expect(count('files', 'other', 'not_found')).toBe(7);
  });
});
