// The bounds of the response store, through the gateway: in memory, thousands
// of stored responses never hold more than responses.memoryMaxBytes (the least
// recently used go first, the newest stay readable); in Redis, shared by two
// replicas, a response outlives responses.ttlSeconds on neither. Each owner
// keeps at most responses.ownerMaxResponses and ownerMaxBytes, its oldest out
// first and counted (sluice_responses_evicted_total{bound="owner"}), another
// owner's untouched: in memory, in Redis, and in the primary's store for two
// workers.
import Redis from 'ioredis';
import { MemoryResponseStore } from '../../src/responses-store';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call, post } from '../support/http';
import { parseExposition, scrape, series } from '../support/metrics';
import { startOpenAIBackend, type OpenAIBackend } from '../support/openai-backend';
import { freePort, spawnGateway, type GatewayProcess } from '../support/process';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { until } from '../support/wait';

const key = makeKey('bounded', { org: 'a' });
const other = makeKey('other', { org: 'b' });
const config = (backend: OpenAIBackend, extra: Record<string, unknown>) => ({
  keys: [key.entry, other.entry], orgs: { a: {}, b: {} },
  upstreams: { chat: { url: backend.base, format: 'openai' } },
  routes: [{ model: '*', upstream: 'chat' }],
  ...extra,
});
const create = (gw: { url: string }, input: string, as = key.key) => post(`${gw.url}/v1/responses`, { model: 'qwen-chat', input }, bearer(as), true);
const status = async (gw: { url: string }, id: string, as = key.key) => (await call('GET', `${gw.url}/v1/responses/${id}`, undefined, bearer(as))).status;
const evicted = async (metricsUrl: string): Promise<Record<string, number>> => series(parseExposition((await scrape(metricsUrl)).text), 'sluice_responses_evicted_total');

/** What Redis holds under `prefix`, as MEMORY USAGE counts it. */
async function redisBytes(prefix: string): Promise<number> {
  const redis = new Redis(sharedRedisUrl());
  try {
    let total = 0;
    for (const k of await redis.keys(`${prefix}*`)) total += Number(await redis.memory('USAGE', k) ?? 0);
    return total;
  } finally {
    redis.disconnect();
  }
}

describe('stored responses within their bounds', () => {
  let backend: OpenAIBackend;
  const gateways: TestGateway[] = [];
  const prefix = uniquePrefix();

  beforeAll(async () => { backend = await startOpenAIBackend(); });
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    await backend?.close();
    await deletePrefix(sharedRedisUrl(), prefix);
  });

  it('keeps thousands of responses in memory within memoryMaxBytes, the least recently used out first', async () => {
    const cap = 64 * 1024;
    const gw = await startGateway(config(backend, { responses: { memoryMaxBytes: cap, maxResponseBytes: 16 * 1024 } }));
    gateways.push(gw);
    const store = gw.gateway.services.responses.store;
    expect(store).toBeInstanceOf(MemoryResponseStore);
    const memory = store as MemoryResponseStore;
    const ids: string[] = [];
    let most = 0;
    for (let batch = 0; batch < 100; batch++) {
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => create(gw, `question ${batch}-${i} ${'x'.repeat(i * 10)}`)));
      for (const a of answers) ids.push(a.body.id);
      most = Math.max(most, memory.bytes);
    }
    expect(ids).toHaveLength(2000);
    expect(new Set(ids).size).toBe(2000);
    expect(most).toBeLessThanOrEqual(cap);
    expect(memory.bytes).toBeGreaterThan(cap / 2);
    // Each record is over a kilobyte: a few dozen fit, the oldest are gone and the newest are there.
    expect(memory.size).toBeLessThan(64);
    expect(await status(gw, ids[0])).toBe(404);
    expect(await status(gw, ids.at(-1)!)).toBe(200);
  });

  it('lets a response expire after ttlSeconds on both replicas sharing Redis', async () => {
    const shared = config(backend, { redis: { url: sharedRedisUrl(), prefix }, responses: { ttlSeconds: 1 } });
    const one = await startGateway(shared);
    const two = await startGateway(shared);
    gateways.push(one, two);
    const created = await create(one, 'Hi');
    expect(created.status).toBe(200);
    const { id } = created.body;
    await until(async () => await status(one, id) === 200 && await status(two, id) === 200, 'the response stored on both replicas', 900);
    await until(async () => await status(one, id) === 404 && await status(two, id) === 404, 'the response to expire on both replicas', 3_000);
    const continued = await post(`${two.url}/v1/responses`, { model: 'qwen-chat', previous_response_id: id, input: 'And then?' }, bearer(key.key));
    expect(continued.body.error).toMatchObject({ reason: 'not_found', param: 'previous_response_id' });
  });

  it('keeps one org within ownerMaxBytes in Redis: 30 requests of 840 KB, its oldest out and counted, another org untouched', async () => {
    const ownPrefix = uniquePrefix();
    const cap = 8 * 1024 * 1024;
    const gw = await startGateway(config(backend, {
      redis: { url: sharedRedisUrl(), prefix: ownPrefix, commandTimeoutMs: 2000 },
      server: { port: 0, bodyLimit: '2mb' },
      responses: { maxResponseBytes: '2mb', ownerMaxBytes: cap },
    }), { metrics: {} });
    gateways.push(gw);
    try {
      const theirs = (await create(gw, 'another org', other.key)).body.id;
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) {
        const answer = await create(gw, `${i} ${'x'.repeat(840 * 1024)}`);
        expect(answer.status).toBe(200);
        ids.push(answer.body.id);
      }
      // Each record holds the input twice (its input items and its history): about 1.7 MB, so four fit.
      await until(async () => (await evicted(gw.metrics!.url))['bound=owner'] === 26, 'the 26 oldest counted as evicted', 5_000);
      expect(await redisBytes(ownPrefix)).toBeLessThan(cap + 1024 * 1024);
      expect(await status(gw, ids[0])).toBe(404);
      expect(await status(gw, ids[25])).toBe(404);
      for (const id of ids.slice(26)) expect(await status(gw, id)).toBe(200);
      expect(await status(gw, theirs, other.key)).toBe(200);
      expect((await evicted(gw.metrics!.url))['bound=total']).toBe(0);
    } finally {
      await deletePrefix(sharedRedisUrl(), ownPrefix);
    }
  });

  it('keeps one org within ownerMaxResponses in memory, its oldest out and counted, another org untouched', async () => {
    const gw = await startGateway(config(backend, { responses: { ownerMaxResponses: 5 } }), { metrics: {} });
    gateways.push(gw);
    const theirs = (await create(gw, 'another org', other.key)).body.id;
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await create(gw, `question ${i}`)).body.id);
    await until(async () => (await evicted(gw.metrics!.url))['bound=owner'] === 7, 'the 7 oldest counted as evicted');
    for (const id of ids.slice(0, 7)) expect(await status(gw, id)).toBe(404);
    for (const id of ids.slice(7)) expect(await status(gw, id)).toBe(200);
    expect(await status(gw, theirs, other.key)).toBe(200);
  });
});

describe('stored responses within an owner\'s bounds, with two workers (the primary keeps them)', () => {
  let backend: OpenAIBackend;
  let gw: GatewayProcess | undefined;

  beforeAll(async () => { backend = await startOpenAIBackend(); });
  afterAll(async () => {
    gw?.kill();
    await backend?.close();
  });

  it('keeps one org within ownerMaxResponses whichever worker stores, its oldest out and counted in the machine\'s metrics', async () => {
    const metricsPort = await freePort();
    gw = await spawnGateway(JSON.stringify({
      ...config(backend, { responses: { ownerMaxResponses: 3 } }),
      server: { host: '127.0.0.1', port: 0, workers: 2, drainSeconds: 1, metrics: { port: metricsPort } },
    }));
    const theirs = (await create(gw, 'another org', other.key)).body.id;
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await create(gw, `question ${i}`)).body.id);
    const pids = new Set(gw.logs.filter((l) => l.msg === 'request').map((l) => l.pid));
    expect(pids.size).toBe(2);
    await until(async () => (await evicted(`http://127.0.0.1:${metricsPort}`))['bound=owner'] === 7, 'the 7 oldest counted as evicted');
    for (const id of ids.slice(0, 7)) expect(await status(gw, id)).toBe(404);
    for (const id of ids.slice(7)) expect(await status(gw, id)).toBe(200);
    expect(await status(gw, theirs, other.key)).toBe(200);
  });
});
