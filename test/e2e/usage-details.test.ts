// One backend usage (a prompt of 1,200 tokens with 400 read from the prompt
// cache, 345 completion tokens with 120 of reasoning) costs the same whichever
// API the client speaks and whichever way the gateway reaches the backend:
// chat in OpenAI's format and the service interface's own, JSON and streamed,
// the Responses and Messages APIs relayed to a backend that serves them and
// translated through chat. Two replicas of two workers on the real Redis, as
// a fleet runs; every record, the usage export (JSON Lines and CSV), the
// spend API and both replicas' metrics carry the cached and reasoning tokens.
import { freePort, spawnGateway, type GatewayProcess } from '../support/process';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { admin, makeAdminKey } from '../support/admin';
import { makeKey } from '../support/gateway';
import { bearer, post, postSse } from '../support/http';
import { exported } from '../support/spend';
import { parseExposition, scrape, series } from '../support/metrics';
import { startUsageBackend, USAGE } from '../support/usage-backend';
import type { RecordingServer } from '../support/json-server';
import { until } from '../support/wait';

jest.setTimeout(60_000);

// Dollars per million tokens: 800 × 2.5 + 400 × 1.25 + 345 × 10 = $0.00595 (all 1,200 at the input price: $0.00645).
const PRICING = [{ model: '*', input: 2.5, cachedInput: 1.25, output: 10 }];
const COST = 0.00595;

type Call = { label: string; path: string; body: Record<string, unknown>; stream: boolean };

const chat = (model: string, stream: boolean): Call => ({ label: `chat ${model}${stream ? ' stream' : ''}`, path: '/v1/chat/completions', stream, body: { model, stream, messages: [{ role: 'user', content: 'hi' }] } });
const responses = (model: string, stream: boolean): Call => ({ label: `responses ${model}${stream ? ' stream' : ''}`, path: '/v1/responses', stream, body: { model, stream, input: 'hi' } });
const messages = (model: string, stream: boolean): Call => ({ label: `messages ${model}${stream ? ' stream' : ''}`, path: '/v1/messages', stream, body: { model, stream, max_tokens: 400, messages: [{ role: 'user', content: 'hi' }] } });

const CALLS: Call[] = [false, true].flatMap((stream) => [
  chat('chat-openai', stream), chat('chat-native', stream),
  responses('responses-native', stream), responses('chat-openai', stream),
  messages('messages-native', stream), messages('chat-openai', stream),
]);

const EXPECTED = { status: 200, prompt_tokens: USAGE.prompt, cached_tokens: USAGE.cached, completion_tokens: USAGE.completion, reasoning_tokens: USAGE.reasoning, estimated: false, cost: COST };
const pick = (r: Record<string, unknown>) => Object.fromEntries(Object.keys(EXPECTED).map((k) => [k, k === 'estimated' ? String(r[k]) === 'true' : r[k]]));

describe('cached and reasoning tokens, the same on every protocol, across two replicas of two workers', () => {
  const adminKey = makeAdminKey();
  const user = makeKey('carol', { org: 'acme' });
  const prefix = uniquePrefix();
  let backend: RecordingServer;
  let replicas: GatewayProcess[];
  let adminUrl: string;
  const metricsPorts: number[] = [];
  /** Each call's label → its request id. */
  const ids = new Map<string, string>();
  /** Each JSON call's label → its x-sluice-cost header. */
  const costs = new Map<string, unknown>();

  beforeAll(async () => {
    backend = await startUsageBackend();
    const adminPort = await freePort();
    const config = async (withAdmin: boolean) => {
      const metricsPort = await freePort();
      metricsPorts.push(metricsPort);
      return JSON.stringify({
        server: { host: '127.0.0.1', port: 0, workers: 2, drainSeconds: 1, metrics: { port: metricsPort } },
        redis: { url: sharedRedisUrl(), prefix, commandTimeoutMs: 2000 },
        ...(withAdmin && { admin: { port: adminPort, keys: [adminKey.digest] } }),
        keys: [user.entry],
        orgs: { acme: {} },
        upstreams: {
          openai: { url: backend.base, format: 'openai' },
          native: { url: backend.base, format: 'native' },
          responses: { url: backend.base, format: 'openai', apis: ['chat', 'responses'] },
          messages: { url: backend.base, format: 'openai', apis: ['chat', 'messages'] },
        },
        routes: [
          { model: 'chat-openai', upstream: 'openai' },
          { model: 'chat-native', upstream: 'native' },
          { model: 'responses-native', upstream: 'responses' },
          { model: 'messages-native', upstream: 'messages' },
        ],
        pricing: PRICING,
        plugins: [{ name: 'metrics' }],
      });
    };
    replicas = [await spawnGateway(await config(true)), await spawnGateway(await config(false))];
    adminUrl = `http://127.0.0.1:${adminPort}`;

    // Alternating replicas, each on a connection of its own, so every worker serves some.
    for (const [i, c] of [...CALLS, ...CALLS].entries()) {
      const url = `${replicas[i % 2].url}${c.path}`;
      const res = c.stream ? await postSse(url, c.body, bearer(user.key), undefined, true) : await post(url, c.body, bearer(user.key), true);
      if (res.status !== 200) throw new Error(`${c.label} answered ${res.status}: ${'raw' in res ? res.raw : res.text}`);
      const label = `${c.label} #${i < CALLS.length ? 1 : 2}`;
      ids.set(label, String(res.headers['x-request-id']));
      if (!c.stream) costs.set(label, res.headers['x-sluice-cost']);
    }
    await until(async () => (await exported(adminUrl, adminKey.key, 'jsonl')).length === ids.size, 'every request in the usage export');
  });
  afterAll(async () => {
    for (const gw of replicas ?? []) gw.kill();
    await backend?.close();
    await deletePrefix(sharedRedisUrl(), prefix);
  });

  it('serves the calls on all four workers', () => {
    const pids = replicas.map((gw) => new Set(gw.logs.filter((l) => l.msg === 'request').map((l) => l.pid)).size);
    expect(pids).toEqual([2, 2]);
  });

  it('tells each JSON answer the same cost (x-sluice-cost)', () => {
    expect(Object.fromEntries(costs)).toEqual(Object.fromEntries([...costs.keys()].map((label) => [label, String(COST)])));
  });

  it.each(['jsonl', 'csv'] as const)('records every request with the cached and reasoning tokens and the same cost (%s export)', async (format) => {
    const records = new Map((await exported(adminUrl, adminKey.key, format)).map((r) => [String(r.request_id), r]));
    const got = Object.fromEntries([...ids].map(([label, id]) => [label, records.has(id) ? pick(records.get(id)!) : 'no record']));
    expect(got).toEqual(Object.fromEntries([...ids.keys()].map((label) => [label, EXPECTED])));
  });

  it('sums the cached and reasoning tokens in the spend API', async () => {
    const res = await admin(adminUrl, 'GET', '/admin/spend?org=acme', adminKey.key);
    const n = ids.size;
    expect(res.body.org.total).toEqual({
      requests: n, prompt_tokens: n * USAGE.prompt, cached_tokens: n * USAGE.cached,
      completion_tokens: n * USAGE.completion, reasoning_tokens: n * USAGE.reasoning, tool_calls: 0, cost: Math.round(n * COST * 1e9) / 1e9,
    });
  });

  it('counts the cached and reasoning tokens in the metrics, by type', async () => {
    const totals: Record<string, number> = {};
    for (const port of metricsPorts) {
      const tokens = series(parseExposition((await scrape(`http://127.0.0.1:${port}`)).text), 'sluice_tokens_total');
      for (const [labels, v] of Object.entries(tokens)) {
        const type = /type=(\w+)/.exec(labels)![1];
        totals[type] = (totals[type] ?? 0) + v;
      }
    }
    const n = ids.size;
    expect(totals).toEqual({ prompt: n * USAGE.prompt, cached: n * USAGE.cached, completion: n * USAGE.completion, reasoning: n * USAGE.reasoning });
  });
});
