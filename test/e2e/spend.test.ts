// Spend you can read, end to end in one process: a mixed run of JSON,
// streamed, cut-short and refused requests through the real gateway, on the
// real Redis and on the memory store; the usage export's cost and token sums
// (JSON Lines and CSV) equal the spend API's and the metrics' exactly.
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { admin, makeAdminKey } from '../support/admin';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { exported, metricSums, mixedRun, spendConfig, spendSums, sumsOf } from '../support/spend';
import { get, type ServerResponse } from 'node:http';
import Redis from 'ioredis';
import { RedisSpendStore, type UsageRecord } from '../../src/spend';
import { until } from '../support/wait';

const STORES = ['redis', 'memory'] as const;

/** A record as the gateway writes one: request `r<i>` of `key`, 1 prompt and 2 completion tokens, a nano-dollar. */
const usageRecord = (i: number, key: string): UsageRecord => ({
  time: new Date().toISOString(), request_id: `r${i}`, key, team: null, org: null, user: null, model: 'm-1', protocol: 'chat', endpoint: 'chat',
  status: 200, reason: null, prompt_tokens: 1, cached_tokens: 0, completion_tokens: 2, reasoning_tokens: 0, estimated: false, cost: 0.000000001,
});

describe.each(STORES)('spend records on the %s store', (store) => {
  const adminKey = makeAdminKey();
  const alice = makeKey('alice', { org: 'acme' });
  const bob = makeKey('bob', { org: 'beta' });
  const prefix = uniquePrefix();
  let backend: Backend;
  let gw: TestGateway;
  let adminUrl: string;
  let metricsUrl: string;
  let requests: number;

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai', events: 6, gapMs: 5 });
    gw = await startGateway(spendConfig(backend.base, store, { url: sharedRedisUrl(), prefix }, adminKey.digest, [alice.entry, bob.entry]), { admin: true, metrics: {} });
    adminUrl = gw.admin!.url;
    metricsUrl = gw.metrics!.url;
    requests = await mixedRun(gw.url, [alice.key, bob.key, alice.key]);
    await until(async () => (await spendSums(adminUrl, adminKey.key)).requests === requests, 'every request in the spend sums');
  });
  afterAll(async () => {
    await gw?.close();
    await backend?.close();
    if (store === 'redis') await deletePrefix(sharedRedisUrl(), prefix);
  });

  it('the export (JSON Lines and CSV), the spend API and the metrics agree exactly on tokens and cost', async () => {
    const spend = await spendSums(adminUrl, adminKey.key);
    const jsonl = sumsOf(await exported(adminUrl, adminKey.key, 'jsonl'));
    const csv = sumsOf(await exported(adminUrl, adminKey.key, 'csv'));
    expect(spend.requests).toBe(requests);
    expect(spend.cost_nanodollars).toBeGreaterThan(0);
    expect(spend.completion_tokens).toBeGreaterThan(0);
    expect(jsonl).toEqual(spend);
    expect(csv).toEqual(spend);
    const { requests: _n, ...sums } = spend;
    expect(await metricSums(metricsUrl)).toEqual(sums);
  });

  it('sums per key and per org add up to the whole, and each record names its key, org, status and request', async () => {
    const [a, b, acme, beta, all] = await Promise.all(['?key=alice', '?key=bob', '?org=acme', '?org=beta', ''].map((q) => spendSums(adminUrl, adminKey.key, q)));
    expect(a).toEqual(acme);
    expect(b).toEqual(beta);
    expect(a.requests + b.requests + 1).toBe(all.requests); // the 401 has no key
    expect(a.cost_nanodollars + b.cost_nanodollars).toBe(all.cost_nanodollars);
    const records = await exported(adminUrl, adminKey.key, 'jsonl');
    expect(records.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 400, 400, 400, 401, 499, 499, 499]);
    expect(records.filter((r) => r.status === 499).every((r) => r.reason === 'client_closed' && (r.cost as number) > 0)).toBe(true);
    const refused = records.filter((r) => r.status === 400);
    expect(refused.every((r) => r.cost === 0 && r.reason === 'content_filter' && r.key !== null)).toBe(true);
    expect(records.find((r) => r.status === 401)).toMatchObject({ key: null, org: null, cost: null, reason: 'unauthorized' });
    expect(new Set(records.map((r) => r.request_id)).size).toBe(records.length);
    expect(records.filter((r) => r.key === 'bob').every((r) => r.org === 'beta' && r.model === 'm-1' && r.protocol === 'chat')).toBe(true);
  });

  if (store === 'redis') it('keeps the day sums as expiring hashes and the records in one bounded stream, under the prefix', async () => {
    const client = new Redis(sharedRedisUrl());
    try {
      const day = new Date().toISOString().slice(0, 10);
      const ttl = await client.ttl(`${prefix}spend:${day}:key:alice`);
      expect(ttl).toBeGreaterThan(400 * 86_400);
      expect(ttl).toBeLessThanOrEqual(401 * 86_400);
      expect(await client.hget(`${prefix}spend:${day}:org:beta`, 'requests')).toBe('4');
      expect(await client.xlen(`${prefix}usage`)).toBe(requests);
    } finally {
      client.disconnect();
    }
  });

  it('refuses a bad query with the error object naming the parameter', async () => {
    for (const [query, param] of [['?from=2026-13-01', 'from'], ['?to=yesterday', 'to'], ['?from=2026-03-02&to=2026-03-01', 'from'], ['?from=2020-01-01&to=2026-01-01', 'from'], ['?key=', 'key']] as const) {
      const res = await admin(adminUrl, 'GET', `/admin/spend${query}`, adminKey.key);
      expect([res.status, res.body.error.reason, res.body.error.param]).toEqual([400, 'invalid_request', param]);
    }
    for (const [query, param] of [['', 'since'], ['?since=soon', 'since'], ['?since=2026-03-02&until=2026-03-01', 'until'], ['?since=2026-03-01&format=xml', 'format']] as const) {
      const res = await admin(adminUrl, 'GET', `/admin/usage${query}`, adminKey.key);
      expect([res.status, res.body.error.reason, res.body.error.param]).toEqual([400, 'invalid_request', param]);
    }
    expect((await admin(adminUrl, 'GET', '/admin/spend', undefined)).status).toBe(401);
    expect((await admin(adminUrl, 'GET', '/admin/usage?since=2026-01-01', alice.key)).status).toBe(401);
  });

  it('a day range with nothing recorded answers zeros, and an export after the run finds nothing', async () => {
    const res = await admin(adminUrl, 'GET', '/admin/spend?key=alice&from=2001-01-01&to=2001-01-31', adminKey.key);
    expect(res.status).toBe(200);
    expect(res.body.key).toEqual({ id: 'alice', days: [], total: { requests: 0, prompt_tokens: 0, cached_tokens: 0, completion_tokens: 0, reasoning_tokens: 0, tool_calls: 0, cost: 0 } });
    expect(await exported(adminUrl, adminKey.key, 'jsonl', `${Date.now() + 60_000}&until=${Date.now() + 120_000}`)).toEqual([]);
  });
});

describe('the Redis spend store', () => {
  it('reads an export longer than one page, in order, and trims the stream to about streamMaxLen', async () => {
    const prefix = uniquePrefix();
    const client = new Redis(sharedRedisUrl());
    try {
      const store = new RedisSpendStore(client, prefix, { retentionDays: 30, streamMaxLen: 100_000 });
      for (let i = 0; i < 2500; i += 500) await store.add(Array.from({ length: 500 }, (_, j) => usageRecord(i + j, 'k')));
      const ids: string[] = [];
      for await (const r of store.records(0, Date.now() + 1000)) ids.push(r.request_id);
      expect(ids).toEqual(Array.from({ length: 2500 }, (_, i) => `r${i}`));
      const [day] = await store.days('key:k', [new Date().toISOString().slice(0, 10)]);
      expect([day.requests, day.completion_tokens, day.cost_nanodollars]).toEqual([2500, 5000, 2500]);

      const trimmed = new RedisSpendStore(client, prefix, { retentionDays: 30, streamMaxLen: 1000 });
      await trimmed.add([usageRecord(2500, 'k')]);
      const left = await client.xlen(`${prefix}usage`);
      expect(left).toBeGreaterThanOrEqual(1000);
      expect(left).toBeLessThan(2501);
    } finally {
      client.disconnect();
      await deletePrefix(sharedRedisUrl(), prefix);
    }
  });
});

/**
 * Reads a GET slowly: nothing for 200 ms (the socket's buffers fill), then a pause of 3 ms after
 * every 64 KB, so the server meets backpressure again and again. Counts the lines and the pauses,
 * and calls `onPause` at each.
 */
function slowRead(url: string, key: string, onPause: () => void): Promise<{ status: number; lines: number; pauses: number }> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { authorization: `Bearer ${key}` } }, (res) => {
      let lines = 0;
      let pauses = 0;
      let unpaused = 0;
      const rest = (ms: number): void => { pauses++; onPause(); res.pause(); setTimeout(() => res.resume(), ms); };
      rest(200);
      res.on('data', (chunk: Buffer) => {
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
        unpaused += chunk.length;
        if (unpaused >= 65_536) { unpaused = 0; rest(3); }
      });
      res.on('end', () => resolve({ status: res.statusCode!, lines, pauses }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

describe('a usage export read slowly', () => {
  it('arrives whole, the gateway waiting on the reader each time without piling up listeners', async () => {
    const adminKey = makeAdminKey();
    const prefix = uniquePrefix();
    const backend = await startBackend({ format: 'openai', events: 1, gapMs: 0 });
    const gw = await startGateway(spendConfig(backend.base, 'redis', { url: sharedRedisUrl(), prefix }, adminKey.digest, [makeKey('alice').entry]), { admin: true });
    const client = new Redis(sharedRedisUrl());
    // The export's own response on the admin listener, whose close listeners are counted at every pause.
    let served: ServerResponse | undefined;
    gw.admin!.server.on('request', (_req, res: ServerResponse) => { served = res; });
    let mostCloseListeners = 0;
    const count = (): void => { mostCloseListeners = Math.max(mostCloseListeners, served?.listenerCount('close') ?? 0); };
    try {
      const store = new RedisSpendStore(client, prefix, { retentionDays: 30, streamMaxLen: 100_000 });
      const total = 20_000;
      for (let i = 0; i < total; i += 1000) await store.add(Array.from({ length: 1000 }, (_, j) => usageRecord(i + j, 'alice')));
      const read = await slowRead(`${gw.admin!.url}/admin/usage?since=2000-01-01&format=jsonl`, adminKey.key, count);
      expect(read.status).toBe(200);
      expect(read.lines).toBe(total);
      expect(read.pauses).toBeGreaterThan(20);
      expect(mostCloseListeners).toBeGreaterThan(0);
      expect(mostCloseListeners).toBeLessThan(10);
    } finally {
      client.disconnect();
      await gw.close();
      await backend.close();
      await deletePrefix(sharedRedisUrl(), prefix);
    }
  });
});
