// An `execute_tool` span per MCP tool call, end to end: the gateway as its
// own process (as in production: the exporter's dynamic import needs it),
// real SDK MCP servers, a real OTLP receiver. A call carrying a traceparent
// (the request's header, or the call's params._meta as the MCP conventions
// carry it) is a child of the caller's span in the caller's trace; the span
// speaks the GenAI and MCP conventions; a refused call is an error span that
// names no tool; a failed one says why. No span, no log line of the process
// holds the server's credential, the arguments or the result.
import { makeKey } from '../support/gateway';
import { bearer, call } from '../support/http';
import { startMcpServer, type TestMcpServer } from '../support/mcp-server';
import { freePort } from '../support/net';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import type { GatewayProcess } from '../support/process';
import { SERVER, spawnWith } from '../support/traced-gateway';

const TOKEN = `mcp-upstream-${Math.random().toString(36).slice(2)}`;
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
/** Arguments and a result no span may hold. */
const A = 987_654_321;
const SUM = String(A + A);

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const META_TRACE = '0af7651916cd43dd8448eb211c80319c';
const META_SPAN = 'b7ad6b7169203331';

describe('MCP tool call spans', () => {
  const agent = makeKey('agent', { org: 'acme', mcp: { servers: ['files', 'dead'], tools: ['files/add', 'files/headers', 'dead/*'] } });
  let files: TestMcpServer;
  let receiver: OtlpReceiver;
  let gw: GatewayProcess;
  let headers: Record<string, string>;

  beforeAll(async () => {
    files = await startMcpServer({ json: true });
    receiver = await startOtlpReceiver();
    gw = await spawnWith({
      keys: [agent.entry],
      orgs: { acme: {} },
      mcp: { servers: {
        files: { url: files.url, headers: { Authorization: `Bearer ${TOKEN}` } },
        dead: { url: `http://127.0.0.1:${await freePort()}/mcp` },
      } },
      telemetry: { traces: { endpoint: receiver.url, scheduledDelayMs: 20 } },
    });
    const init = await call('POST', `${gw.url}/mcp/files`, INIT, { ...MCP_HEADERS, ...bearer(agent.key) });
    expect(init.status).toBe(200);
    headers = { ...MCP_HEADERS, ...bearer(agent.key), 'mcp-session-id': init.headers['mcp-session-id'] as string, 'mcp-protocol-version': '2025-06-18' };
  });
  afterAll(async () => {
    gw?.kill();
    await receiver?.close();
    await files?.close();
  });

  const spanOf = (requestId: string): Promise<ReceivedSpan> =>
    receiver.waitFor((s) => s.attributes['sluice.request_id'] === requestId && s.attributes['mcp.method.name'] === 'tools/call', `the span of ${requestId}`);
  const toolCall = (id: number, name: string, params: Record<string, unknown> = {}) =>
    JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { a: A, b: A }, ...params } });

  it('makes an execute_tool span, a child of the traceparent the request carried, in the GenAI and MCP conventions', async () => {
    const res = await call('POST', `${gw.url}/mcp/files`, toolCall(41, 'add'), { ...headers, 'x-request-id': 'span-1', traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` });
    expect(res.body.result.content).toEqual([{ type: 'text', text: SUM }]);
    const span = await spanOf('span-1');
    expect(span).toMatchObject({ name: 'execute_tool add', kind: SERVER, traceId: CALLER_TRACE, parentSpanId: CALLER_SPAN, status: { code: 0 } });
    expect(span.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'add', 'gen_ai.tool.type': 'extension',
      'mcp.method.name': 'tools/call', 'mcp.protocol.version': '2025-06-18', 'jsonrpc.request.id': '41',
      'network.transport': 'tcp', 'network.protocol.name': 'http', 'http.response.status_code': 200,
      'sluice.request_id': 'span-1', 'sluice.protocol': 'mcp', 'sluice.mcp.server': 'files', 'sluice.mcp.outcome': 'ok',
      'sluice.key_id': 'agent', 'sluice.org': 'acme',
    });
  });

  it('takes the caller\'s span from the call\'s params._meta before the request\'s header', async () => {
    const meta = { _meta: { traceparent: `00-${META_TRACE}-${META_SPAN}-01` } };
    await call('POST', `${gw.url}/mcp/files`, toolCall(42, 'add', meta), { ...headers, 'x-request-id': 'span-2', traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` });
    expect(await spanOf('span-2')).toMatchObject({ traceId: META_TRACE, parentSpanId: META_SPAN });
    // No traceparent anywhere: a trace of its own.
    await call('POST', `${gw.url}/mcp/files`, toolCall(43, 'add'), { ...headers, 'x-request-id': 'span-3' });
    const root = await spanOf('span-3');
    expect(root.parentSpanId).toBe('');
    expect(root.traceId).not.toBe(CALLER_TRACE);
  });

  it('marks a refused call as an error that names no tool, and a server that cannot be reached as one that says why', async () => {
    await call('POST', `${gw.url}/mcp/files`, toolCall(44, 'delete_repo'), { ...headers, 'x-request-id': 'span-refused' });
    const refused = await spanOf('span-refused');
    expect(refused.name).toBe('execute_tool');
    expect(refused.attributes).toMatchObject({ 'error.type': '-32602', 'rpc.response.status_code': '-32602', 'sluice.mcp.outcome': 'refused' });
    expect(refused.attributes['gen_ai.tool.name']).toBeUndefined();
    expect(refused.status.code).toBe(2);
    const down = await call('POST', `${gw.url}/mcp/dead`, toolCall(45, 'anything'), { ...MCP_HEADERS, ...bearer(agent.key), 'x-request-id': 'span-down' });
    expect(down.status).toBe(502);
    expect(await spanOf('span-down')).toMatchObject({ name: 'execute_tool anything', status: { code: 2 }, attributes: expect.objectContaining({ 'error.type': 'unreachable', 'http.response.status_code': 502 }) });
    // A name the key's glob lets through but no tool could have (spaces, a quote) names no span.
    await call('POST', `${gw.url}/mcp/dead`, toolCall(47, 'rm -rf "/"'), { ...MCP_HEADERS, ...bearer(agent.key), 'x-request-id': 'span-odd' });
    const odd = await spanOf('span-odd');
    expect(odd.name).toBe('execute_tool');
    expect(odd.attributes['gen_ai.tool.name']).toBeUndefined();
  });

  it('never puts the server\'s credential, the key, the session id, the arguments or the result in a span or a log line', async () => {
    const res = await call('POST', `${gw.url}/mcp/files`, toolCall(46, 'headers'), { ...headers, 'x-request-id': 'span-headers' });
    expect(res.status).toBe(200);
    await spanOf('span-headers');
    await gw.waitForLog('mcp tool call');
    const spans = JSON.stringify(receiver.spans);
    const logs = JSON.stringify(gw.logs) + gw.stderr + gw.garbled.join('\n');
    for (const text of [spans, logs]) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(agent.key);
      expect(text).not.toContain(String(A));
      expect(text).not.toContain(SUM);
      expect(text).not.toContain(headers['mcp-session-id']);
    }
    expect(gw.logs.filter((l) => l.msg === 'mcp tool call' && l.requestId === 'span-headers')).toEqual([expect.objectContaining({ audit: true, keyId: 'agent', org: 'acme', server: 'files', tool: 'headers', outcome: 'ok' })]);
  });
});
