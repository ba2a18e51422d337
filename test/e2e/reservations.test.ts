// Token reservations on the real Redis: a request reserves its prompt's
// upper bound (a hard budget) plus max_tokens on admission, so concurrent requests cannot
// together overspend a token budget; the real usage is charged at the end and
// the rest given back.
import Redis from 'ioredis';
import { startGatedBackend, type GatedBackend } from '../support/gated-backend';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, type JsonResponse } from '../support/http';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { until } from '../support/admission';

jest.setTimeout(30_000);

describe('token reservations across two replicas', () => {
  let backend: GatedBackend;
  let redis: Redis;
  const prefix = uniquePrefix();
  const gateways: TestGateway[] = [];
  // "hi" is bounded at 42 tokens (2 bytes and the template allowances): each request reserves 42 + 58 = 100.
  // The backend reports 11 + 58 = 69.
  const chat = (model: string, max_tokens = 58) => ({ model, max_tokens, messages: [{ role: 'user', content: 'hi' }] });

  beforeAll(async () => {
    backend = await startGatedBackend();
    redis = new Redis(sharedRedisUrl());
  });
  afterAll(async () => {
    backend?.release();
    await Promise.all(gateways.map((g) => g.close()));
    await backend?.close();
    await deletePrefix(sharedRedisUrl(), prefix);
    redis?.disconnect();
  });

  async function replicas(keys: Array<Record<string, unknown>>, settings: Record<string, unknown> = {}, upstream: Record<string, unknown> = {}): Promise<[TestGateway, TestGateway]> {
    const config = {
      redis: { url: sharedRedisUrl(), prefix },
      keys,
      upstreams: { b: { url: backend.base, format: 'openai', ...upstream } },
      routes: [{ model: '*', upstream: 'b' }],
      plugins: [{ name: 'rate-limit', ...settings }],
    };
    const pair: [TestGateway, TestGateway] = [await startGateway(config), await startGateway(config)];
    gateways.push(...pair);
    return pair;
  }
  const counter = async (key: string) => Number(await redis.get(key) ?? 0);

  it('50 concurrent requests with max_tokens against a budget that fits 10: 10 admitted, the budget never overspent', async () => {
    const key = makeKey('fifty', { limits: { tokens: 1000, windowSeconds: 60 } });
    const [a, b] = await replicas([key.entry]);
    const tokens = `${prefix}{key:fifty}:tokens`;
    const pending: Array<Promise<JsonResponse>> = Array.from({ length: 50 }, (_, i) => post(`${(i % 2 ? a : b).url}/v1/chat/completions`, chat('hold-a'), { ...bearer(key.key), 'x-request-id': `fifty:${i}` }));
    // The admitted ones are all held at the backend at once, their reservations all standing.
    const refusals = pending.map((p) => p.then((r) => r.status === 429));
    let refused = 0;
    for (const r of refusals) void r.then((yes) => { if (yes) refused++; });
    await until(() => refused + backend.holding === 50, 'every request admitted or refused');
    expect(backend.holding).toBe(10);
    expect(await counter(tokens)).toBe(1000);
    backend.release();
    const all = await Promise.all(pending);
    expect(all.filter((r) => r.status === 200)).toHaveLength(10);
    for (const r of all.filter((x) => x.status !== 200)) {
      expect(r.body.error).toMatchObject({ reason: 'rate_limited', status: 429 });
      expect(r.headers['retry-after']).toBeDefined();
    }
    // Settled: each admitted request is charged its real 69, less than the bound it reserved.
    await until(async () => (await counter(tokens)) === 690, 'the real usage charged');
    expect(backend.max.get('fifty')).toBe(10);
  });

  it('refuses up front a reservation that does not fit, naming what is left', async () => {
    const key = makeKey('big', { limits: { tokens: 500, windowSeconds: 60 } });
    const [a] = await replicas([key.entry]);
    const res = await post(`${a.url}/v1/chat/completions`, chat('stream-a', 600), bearer(key.key));
    expect(res.status).toBe(429);
    expect(res.body.error.message).toMatch(/token budget \(500 tokens per 60 seconds\) has 500 left, fewer than the 642 this request may use/);
    expect(res.headers['x-ratelimit-remaining-tokens']).toBe('500');
    expect(await counter(`${prefix}{key:big}:tokens`)).toBe(0);
    expect(backend.seen.filter((id) => id.startsWith('big'))).toEqual([]);
  });

  it('gives the whole reservation back when the backend fails, and the unused part when it uses less', async () => {
    const key = makeKey('back', { limits: { tokens: 10_000, windowSeconds: 60 } });
    const [a] = await replicas([key.entry], { defaultMaxTokens: 500 }, { timeoutMs: 300 });
    const tokens = `${prefix}{key:back}:tokens`;
    const failed = await post(`${a.url}/v1/chat/completions`, { model: 'hang-a', stream: false, messages: [{ role: 'user', content: 'hi' }] }, bearer(key.key));
    expect(failed.headers['x-ratelimit-reserved-tokens']).toBe('542'); // no max_tokens: the bound 42 and defaultMaxTokens
    expect(failed.body.error.reason).toBe('upstream_timeout');
    await until(async () => (await counter(tokens)) === 0, 'the reservation given back');
    const ok = await post(`${a.url}/v1/chat/completions`, chat('stream-a', 200), bearer(key.key));
    expect(ok.headers['x-ratelimit-reserved-tokens']).toBe('242');
    await until(async () => (await counter(tokens)) === 211, 'the real usage charged');
  });
});
