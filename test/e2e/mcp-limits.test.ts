// MCP tool-call limits on the real Redis, two replicas of two workers each:
// a limit of 10 calls holds exactly under 40 concurrent calls spread over the
// four workers (counted at the MCP server), the 30 others answered with the
// JSON-RPC error that says when to try again and nothing of the limit; the
// key's other tools and other keys are untouched; an org's limit is one count
// for all its keys; a window ends and the calls come back. Without Redis, the
// primary keeps the count exact across one machine's workers. Every call is
// a connection of its own (node:cluster hands connections, not requests, to
// its workers); each key's in a session of its own at a real SDK server.
import Redis from 'ioredis';
import { makeKey } from '../support/gateway';
import { bearer, call, type JsonResponse } from '../support/http';
import { startMcpServer, type TestMcpServer } from '../support/mcp-server';
import { parseExposition, scrape } from '../support/metrics';
import { freePort, spawnGateway, type GatewayProcess } from '../support/process';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { until } from '../support/wait';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const LISTS = { servers: ['files'], tools: ['files/*'] };
const FRESH = true;
/** The refusal's words: when to try again, never the limit's size or whose limit it is. */
const LIMITED_MESSAGE = /^Too many calls to this tool: a rate limit is reached\. Try again in (\d+m)?\d+s\.$/;

describe('MCP tool-call limits across two replicas of two workers', () => {
  const agent = makeKey('agent', { mcp: { ...LISTS, limits: { 'files/add': { requests: 10, windowSeconds: 60 } } } });
  const other = makeKey('other', { mcp: { ...LISTS, limits: { 'files/add': { requests: 10, windowSeconds: 60 } } } });
  const crewA = makeKey('crew-a', { org: 'crew' });
  const crewB = makeKey('crew-b', { org: 'crew' });
  const brief = makeKey('brief', { mcp: { ...LISTS, limits: { 'files/add': { requests: 3, windowSeconds: 2 } } } });
  const prefix = uniquePrefix();
  let files: TestMcpServer;
  let replicas: GatewayProcess[];
  let metricsPorts: number[];
  let redis: Redis;
  // A session a key began is that key's alone: one for each key, begun on one replica and used on both.
  const sessions = new Map<string, string>();
  let nextId = 100;

  beforeAll(async () => {
    files = await startMcpServer({ json: true });
    redis = new Redis(sharedRedisUrl());
    metricsPorts = [await freePort(), await freePort()];
    const config = (metricsPort: number) => JSON.stringify({
      server: { host: '127.0.0.1', port: 0, workers: 2, drainSeconds: 1, metrics: { port: metricsPort } },
      redis: { url: sharedRedisUrl(), prefix, commandTimeoutMs: 2000 },
      keys: [agent.entry, other.entry, crewA.entry, crewB.entry, brief.entry],
      orgs: { crew: { mcp: { ...LISTS, limits: { 'files/*': { requests: 6, windowSeconds: 60 } } } } },
      mcp: { servers: { files: { url: files.url } } },
    });
    replicas = [await spawnGateway(config(metricsPorts[0])), await spawnGateway(config(metricsPorts[1]))];
    for (const { key } of [agent, other, crewA, crewB, brief]) {
      const init = await call('POST', `${replicas[0].url}/mcp/files`, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }), { ...MCP_HEADERS, ...bearer(key) });
      sessions.set(key, init.headers['mcp-session-id'] as string);
      await call('POST', `${replicas[1].url}/mcp/files`, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), { ...MCP_HEADERS, ...sessionHeaders(key) });
    }
  });
  afterAll(async () => {
    for (const gw of replicas ?? []) gw.kill();
    await files?.close();
    await deletePrefix(sharedRedisUrl(), prefix);
    redis?.disconnect();
  });

  function sessionHeaders(key: string): Record<string, string> {
    return { ...bearer(key), 'mcp-session-id': sessions.get(key)!, 'mcp-protocol-version': '2025-06-18' };
  }

  /** One tools/call on a connection of its own, through replica `i % 2`. */
  function callTool(i: number, key: string, tool: string, args: Record<string, unknown>): Promise<JsonResponse> {
    const body = JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: tool, arguments: args } });
    return call('POST', `${replicas[i % 2].url}/mcp/files`, body, { ...MCP_HEADERS, ...sessionHeaders(key) }, FRESH);
  }

  const add = (i: number, key: string) => callTool(i, key, 'add', { a: i, b: 1 });
  const ran = (r: JsonResponse) => r.status === 200 && r.body?.result !== undefined;
  const limited = (r: JsonResponse) => r.status === 200 && r.body?.error?.data?.reason === 'rate_limited';
  const calls = (tool: string) => files.toolCalls.filter((t) => t === tool).length;

  /** `n` calls of add at once, spread over the replicas: the answers, those that ran, those limited, and how many reached the server. */
  async function burst(n: number, key: string) {
    const before = calls('add');
    const answers = await Promise.all(Array.from({ length: n }, (_, i) => add(i, key)));
    return { answers, ran: answers.filter(ran), refused: answers.filter(limited), reached: calls('add') - before };
  }

  /** The pids on the access lines of these answers, from both replicas, once every line is written. */
  async function servedBy(answers: JsonResponse[]): Promise<Set<number>> {
    const ids = new Set(answers.map((r) => r.headers['x-request-id']));
    const lines = () => replicas.flatMap((gw) => gw.logs.filter((l) => l.msg === 'request' && ids.has(l.requestId as string)));
    await until(() => lines().length === answers.length, 'the access lines of every call');
    return new Set(lines().map((l) => l.pid as number));
  }

  async function mcpCount(outcome: string): Promise<number> {
    let total = 0;
    for (const port of metricsPorts) {
      const samples = parseExposition((await scrape(`http://127.0.0.1:${port}`)).text);
      for (const s of samples) {
        if (s.name === 'sluice_mcp_requests_total' && s.labels.server === 'files' && s.labels.method === 'tools/call' && s.labels.outcome === outcome) total += s.value;
      }
    }
    return total;
  }

  it('lets exactly 10 of 40 concurrent calls reach the server, and answers the other 30 with a JSON-RPC error that says when to try again', async () => {
    const { answers, ran: admitted, refused, reached } = await burst(40, agent.key);
    expect(admitted).toHaveLength(10);
    expect(refused).toHaveLength(30);
    expect(reached).toBe(10);
    for (const r of refused) {
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      expect(r.body.error.code).toBe(-32000);
      expect(typeof r.body.id).toBe('number');
      expect(r.body.error.message).toMatch(LIMITED_MESSAGE);
      expect(r.body.error.data.retryAfterMs).toBeGreaterThan(0);
      expect(r.body.error.data.retryAfterMs).toBeLessThanOrEqual(60_000);
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(r.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect(r.text).not.toMatch(/\b10\b|agent|files\/add/);
    }
    // Each answer is the answer to its own request.
    expect(new Set(answers.map((r) => r.body.id)).size).toBe(40);
    expect((await servedBy(answers)).size).toBe(4);
    expect(await mcpCount('limited')).toBe(30);
    // The count lives where the model budgets' would: under the key's hash tag, in the shared Redis.
    expect(Number(await redis.get(`${prefix}{key:agent}:mcp:files/add`))).toBeGreaterThanOrEqual(10);

    // The key's other tools, and another key's calls of the same tool, are untouched.
    const count = await callTool(0, agent.key, 'count', { steps: 1 });
    expect(count.body.result.content).toEqual([{ type: 'text', text: 'counted 1' }]);
    expect((await burst(4, other.key)).ran).toHaveLength(4);
  });

  it('counts an org\'s limit once for all its keys and every tool it names, whichever replica and worker they reach', async () => {
    const before = calls('add') + calls('count');
    const sent = Array.from({ length: 20 }, (_, i) => ({ key: i % 2 === 0 ? crewA.key : crewB.key, tool: i % 4 < 2 ? 'add' : 'count' }));
    const answers = await Promise.all(sent.map(({ key, tool }, i) => callTool(i, key, tool, tool === 'add' ? { a: 1, b: 2 } : { steps: 1 })));
    expect(answers.filter(ran)).toHaveLength(6);
    expect(answers.filter(limited)).toHaveLength(14);
    expect(calls('add') + calls('count') - before).toBe(6);
    // Both keys were refused once the org's count was spent: one count, not one per key.
    expect(new Set(sent.filter((_, i) => limited(answers[i])).map((s) => s.key))).toEqual(new Set([crewA.key, crewB.key]));
  });

  it('admits calls again once the window has ended', async () => {
    const first = await burst(5, brief.key);
    expect([first.ran.length, first.refused.length, first.reached]).toEqual([3, 2, 3]);
    expect(first.refused[0].body.error.data.retryAfterMs).toBeLessThanOrEqual(2000);
    // The window ends when its count expires in Redis.
    await until(async () => (await redis.exists(`${prefix}{key:brief}:mcp:files/add`)) === 0, 'the 2 s window to end', 5000);
    const second = await burst(5, brief.key);
    expect([second.ran.length, second.refused.length, second.reached]).toEqual([3, 2, 3]);
  });
});

describe('MCP tool-call limits across two workers without Redis', () => {
  it('counts in the primary: exactly 5 of 20 concurrent calls reach the server', async () => {
    const files = await startMcpServer({ json: true });
    const key = makeKey('solo', { mcp: { ...LISTS, limits: { 'files/*': { requests: 5 } } } });
    const gw = await spawnGateway(JSON.stringify({
      server: { host: '127.0.0.1', port: 0, workers: 2, drainSeconds: 1, metrics: { port: 0 } },
      keys: [key.entry],
      mcp: { servers: { files: { url: files.url } } },
    }));
    try {
      const url = `${gw.url}/mcp/files`;
      const init = await call('POST', url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }), { ...MCP_HEADERS, ...bearer(key.key) });
      const headers = { ...MCP_HEADERS, ...bearer(key.key), 'mcp-session-id': init.headers['mcp-session-id'] as string, 'mcp-protocol-version': '2025-06-18' };
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) =>
        call('POST', url, JSON.stringify({ jsonrpc: '2.0', id: i + 10, method: 'tools/call', params: { name: 'add', arguments: { a: i, b: 0 } } }), headers, FRESH)));
      expect(answers.filter((r) => r.body?.result !== undefined)).toHaveLength(5);
      expect(answers.filter((r) => r.body?.error?.data?.reason === 'rate_limited')).toHaveLength(15);
      expect(files.toolCalls).toHaveLength(5);
      const ids = new Set(answers.map((r) => r.headers['x-request-id']));
      await until(() => gw.logs.filter((l) => l.msg === 'request' && ids.has(l.requestId as string)).length === 20, 'the access lines of every call');
      expect(new Set(gw.logs.filter((l) => l.msg === 'request' && ids.has(l.requestId as string)).map((l) => l.pid)).size).toBe(2);
    } finally {
      gw.kill();
      await files.close();
    }
  });
});
