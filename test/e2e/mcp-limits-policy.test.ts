// MCP tool-call limits as a client meets them, on one gateway in this process
// against a real SDK server: the SDK's client gets a call over a limit as that
// call's McpError (-32000, data.retryAfterMs) while its session, lists and
// pings go on uncounted; a refused tool counts nothing; a batch holding a call
// over a limit is answered whole, nothing sent on and nothing counted; a
// tools/call without an id is refused; a runtime key's limits are checked by
// the admin API and bind; with Redis down and failMode closed a call is
// refused as unchecked, never made.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { admin, makeAdminKey } from '../support/admin';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call, type JsonResponse } from '../support/http';
import { connectClient } from '../support/mcp-stack';
import { startMcpServer, type TestMcpServer } from '../support/mcp-server';
import { cleanupRedis, startRedisServer, uniquePrefix, type RedisProcess } from '../support/redis';
import { until } from '../support/wait';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const LISTS = { servers: ['files'], tools: ['files/add', 'files/count'] };
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

/** A session opened on `url` for `key`: the headers its later requests carry. */
async function openSession(url: string, key: string): Promise<Record<string, string>> {
  const init = await call('POST', url, INIT, { ...MCP_HEADERS, ...bearer(key) });
  const headers = { ...MCP_HEADERS, ...bearer(key), 'mcp-session-id': init.headers['mcp-session-id'] as string, 'mcp-protocol-version': '2025-06-18' };
  await call('POST', url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers);
  return headers;
}

const toolCall = (id: number | undefined, name: string, args: Record<string, unknown> = { a: 1, b: 2 }) =>
  ({ jsonrpc: '2.0', ...(id !== undefined && { id }), method: 'tools/call', params: { name, arguments: args } });

describe('MCP tool-call limits, as a client meets them', () => {
  const adminKey = makeAdminKey();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-mcp-limits-'));
  const sdk = makeKey('sdk', { mcp: { ...LISTS, limits: { 'files/add': { requests: 2 } } } });
  const batcher = makeKey('batcher', { mcp: { ...LISTS, limits: { 'files/add': { requests: 2 } } } });
  /** Limits of its own and no lists: it keeps its org's lists. */
  const limitsOnly = makeKey('limits-only', { org: 'crew', mcp: { limits: { 'files/add': { requests: 1 } } } });
  let files: TestMcpServer;
  let gw: TestGateway;
  let url: string;
  const adds = () => files.toolCalls.filter((t) => t === 'add').length;

  beforeAll(async () => {
    files = await startMcpServer({ json: true });
    gw = await startGateway({ admin: { keys: [adminKey.digest] }, keys: [sdk.entry, batcher.entry, limitsOnly.entry], orgs: { crew: { mcp: { servers: ['files'], tools: ['files/add'] } } }, mcp: { servers: { files: { url: files.url } } } }, { file: join(dir, 'gateway.yaml'), admin: true });
    url = `${gw.url}/mcp/files`;
  });
  afterAll(async () => {
    await gw.close();
    await files.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives the SDK\'s client a call over its limit as that call\'s McpError, while lists, pings and other tools go on', async () => {
    const before = adds();
    const { client } = await connectClient(gw.url, 'files', sdk.key);
    for (let i = 0; i < 3; i++) expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['add', 'count']);
    await client.ping();
    expect((await client.callTool({ name: 'add', arguments: { a: 1, b: 1 } })).content).toEqual([{ type: 'text', text: '2' }]);
    // A refused tool is refused as unknown before any limit is asked: it counts nothing.
    await expect(client.callTool({ name: 'delete_repo', arguments: { name: 'x' } })).rejects.toMatchObject({ code: -32602 });
    expect((await client.callTool({ name: 'add', arguments: { a: 2, b: 2 } })).content).toEqual([{ type: 'text', text: '4' }]);
    const over = await client.callTool({ name: 'add', arguments: { a: 3, b: 3 } }).catch((e: unknown) => e) as McpError;
    expect(over).toBeInstanceOf(McpError);
    expect(over).toMatchObject({ code: -32000, data: { reason: 'rate_limited' } });
    expect((over.data as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(0);
    expect(over.message).toMatch(/Try again in (\d+m)?\d+s\./);
    expect(adds() - before).toBe(2);
    // The session is unharmed: another tool, a list, a ping.
    expect((await client.callTool({ name: 'count', arguments: { steps: 1 } })).content).toEqual([{ type: 'text', text: 'counted 1' }]);
    await client.ping();
    await client.close();
  });

  it('answers a batch holding a call over the limit whole: nothing sent on, nothing counted', async () => {
    const headers = await openSession(url, batcher.key);
    const before = adds();
    const batch = [toolCall(1, 'add'), toolCall(2, 'add'), toolCall(3, 'add'), { jsonrpc: '2.0', id: 4, method: 'ping' }];
    const res = await call('POST', url, JSON.stringify(batch), headers);
    expect(res.status).toBe(200);
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const answers = res.body as Array<{ id: number; error: { code: number; message: string; data?: { reason: string } } }>;
    expect(answers.map((a) => a.id)).toEqual([1, 2, 3, 4]);
    expect(answers.every((a) => a.error.code === -32000)).toBe(true);
    const limited = answers.filter((a) => a.error.data?.reason === 'rate_limited');
    expect(limited).toHaveLength(1);
    expect(answers.filter((a) => a.error.message === 'Not processed: send this request again on its own.')).toHaveLength(3);
    expect(adds()).toBe(before);
    // Nothing of the batch was counted: the key's two calls are all still there.
    const one = async (id: number): Promise<JsonResponse> => call('POST', url, JSON.stringify(toolCall(id, 'add')), headers);
    expect((await one(5)).body.result.content).toEqual([{ type: 'text', text: '3' }]);
    expect((await one(6)).body.result.content).toEqual([{ type: 'text', text: '3' }]);
    expect((await one(7)).body.error.data.reason).toBe('rate_limited');
    expect(adds() - before).toBe(2);
  });

  it('refuses a tools/call without an id as an invalid message, sending nothing on', async () => {
    const headers = await openSession(url, batcher.key);
    const before = files.toolCalls.length;
    for (const body of [toolCall(undefined, 'add'), { ...toolCall(1, 'add'), id: null }, [toolCall(undefined, 'count', { steps: 1 })]]) {
      const res = await call('POST', url, JSON.stringify(body), headers);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'The body must be a JSON-RPC 2.0 message.' } });
    }
    expect(files.toolCalls.length).toBe(before);
  });

  it('keeps the org\'s lists for a key whose mcp sets only limits, and holds its limits', async () => {
    const headers = await openSession(url, limitsOnly.key);
    expect((await call('POST', url, JSON.stringify(toolCall(1, 'add')), headers)).body.result.content).toEqual([{ type: 'text', text: '3' }]);
    expect((await call('POST', url, JSON.stringify(toolCall(2, 'add')), headers)).body.error.data.reason).toBe('rate_limited');
    expect((await call('POST', url, JSON.stringify(toolCall(3, 'count', { steps: 1 })), headers)).body.error.code).toBe(-32602);
  });

  it('takes limits on a runtime key, checked as a config key\'s, and holds them', async () => {
    const ask = (method: string, path: string, body?: unknown) => admin(gw.admin!.url, method, path, adminKey.key, body);
    const bad = await ask('POST', '/admin/keys', { id: 'rt-bad', mcp: { ...LISTS, limits: { 'files/add': { requests: 0 } } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('mcp.limits.files/add.requests');
    const badGlob = await ask('POST', '/admin/keys', { id: 'rt-bad', mcp: { ...LISTS, limits: { add: { requests: 1 } } } });
    expect(badGlob.status).toBe(400);
    expect(badGlob.body.error.param).toBe('mcp.limits.add');
    expect(badGlob.body.error.message).toMatch(/must be "<server>\/<tool>"/);

    const made = await ask('POST', '/admin/keys', { id: 'rt-agent', mcp: { ...LISTS, limits: { 'files/*': { requests: '1', windowSeconds: 60 } } } });
    expect(made.status).toBe(201);
    const headers = await openSession(url, made.body.key);
    const first = await call('POST', url, JSON.stringify(toolCall(1, 'count', { steps: 1 })), headers);
    expect(first.body.result.content).toEqual([{ type: 'text', text: 'counted 1' }]);
    const second = await call('POST', url, JSON.stringify(toolCall(2, 'add')), headers);
    expect(second.body.error).toMatchObject({ code: -32000, data: { reason: 'rate_limited' } });
  });
});

describe('MCP tool-call limits with Redis down and failMode closed', () => {
  const key = makeKey('closed', { mcp: { ...LISTS, limits: { 'files/add': { requests: 5 } } } });
  const free = makeKey('free', { mcp: LISTS });
  let files: TestMcpServer;
  let gw: TestGateway;
  let redis: RedisProcess;

  beforeAll(async () => {
    files = await startMcpServer({ json: true });
    redis = await startRedisServer();
    gw = await startGateway({ redis: { url: redis.url, prefix: uniquePrefix(), failMode: 'closed' }, keys: [key.entry, free.entry], mcp: { servers: { files: { url: files.url } } } });
  });
  afterAll(async () => {
    // Back up before the gateway closes, as after an outage: its connection ends cleanly, with no reconnect timer left behind.
    await redis?.start();
    await until(() => gw?.gateway.services.redis?.status === 'ready', 'the gateway back on Redis');
    await gw.close();
    await files.close();
    await cleanupRedis();
  });

  it('refuses a limited call as unchecked, never made, and lets a call no limit names go on', async () => {
    const url = `${gw.url}/mcp/files`;
    const headers = await openSession(url, key.key);
    expect((await call('POST', url, JSON.stringify(toolCall(1, 'add')), headers)).body.result.content).toEqual([{ type: 'text', text: '3' }]);
    await redis.stop();
    const before = files.toolCalls.length;
    const res = await call('POST', url, JSON.stringify(toolCall(2, 'add')), headers);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ jsonrpc: '2.0', id: 2, error: { code: -32000, message: expect.stringMatching(/^The gateway cannot check its rate limits now/), data: { reason: 'limiter_unavailable', retryAfterMs: 1000 } } });
    expect(res.headers['retry-after']).toBe('1');
    expect(files.toolCalls.length).toBe(before);
    // Another key (in a session of its own: a session is its key's) whose call no limit names.
    const unlimited = await call('POST', url, JSON.stringify(toolCall(3, 'count', { steps: 1 })), await openSession(url, free.key));
    expect(unlimited.body.result.content).toEqual([{ type: 'text', text: 'counted 1' }]);
  });
});
