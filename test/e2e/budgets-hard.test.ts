// Hard budgets on the real Redis, two replicas of two workers each, as a
// fleet runs: 100 concurrent requests that name no max_tokens against a
// dollar budget (then a token budget) that fits the real cost of 10. Each is
// admitted with the largest cap that fits what is left, or refused with 429
// naming the reset; what the backend itself reports it served never exceeds
// the budget, and the spend API says exactly the same. A stream the client
// cancels is charged what it used.
import { startMeteredBackend, type MeteredBackend, type Served } from '../support/metered-backend';
import { freePort, spawnGateway, type GatewayProcess } from '../support/process';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { makeAdminKey } from '../support/admin';
import { makeKey } from '../support/gateway';
import { bearer, post, postSse, type JsonResponse } from '../support/http';
import { exported, spendSums } from '../support/spend';
import { until } from '../support/wait';
import Redis from 'ioredis';
import { PER_REQUEST_TOKENS, PER_TEXT_TOKENS } from '../../src/request/token-bound';

jest.setTimeout(120_000);

// $1 per million input tokens and $2 per million output: 1000 and 2000 nano-dollars a token.
const PRICING = [{ model: '*', input: 1, output: 2 }];
const CONTENT = 'Count to twenty, one word at a time.'; // 36 characters: 9 prompt tokens
// What a hard budget reserves for the prompt: its upper bound, 36 bytes and the template allowances.
const BOUND = 36 + PER_TEXT_TOKENS + PER_REQUEST_TOKENS;
const WORDS = 20;
const REAL_NANOS = 9 * 1000 + WORDS * 2000; // what one whole answer costs: 49 000
const REAL_TOKENS = 9 + WORDS;
// Budgets that fit the real cost of 10 answers and the bound of an 11th with a few tokens: the last one admitted gets a cap below 20.
const DOLLAR_BUDGET = 10 * REAL_NANOS + BOUND * 1000 + 10 * 2000; // $0.000586
const TOKEN_BUDGET = 10 * REAL_TOKENS + BOUND + 4; // 370
const costNanos = (s: Served): number => s.prompt * 1000 + s.completion * 2000;
const chat = (stream: boolean) => ({ model: 'm-1', stream, messages: [{ role: 'user', content: CONTENT }] });

describe('hard budgets across two replicas of two workers', () => {
  const adminKey = makeAdminKey();
  const usd = makeKey('usd', { limits: { dollars: DOLLAR_BUDGET / 1e9, dollarWindow: 'day' } });
  const tok = makeKey('tok', { limits: { tokens: TOKEN_BUDGET, windowSeconds: 3600 } });
  const cut = makeKey('cut', { limits: { dollars: 1, dollarWindow: 'month' } });
  const prefix = uniquePrefix();
  let backend: MeteredBackend;
  let replicas: GatewayProcess[];
  let adminUrl: string;
  let redis: Redis;

  beforeAll(async () => {
    backend = await startMeteredBackend({ words: WORDS, gapMs: 5 });
    redis = new Redis(sharedRedisUrl());
    const adminPort = await freePort();
    const config = async (admin: boolean) => JSON.stringify({
      server: { host: '127.0.0.1', port: 0, workers: 2, drainSeconds: 1, metrics: { port: await freePort() } },
      redis: { url: sharedRedisUrl(), prefix, commandTimeoutMs: 2000 },
      ...(admin && { admin: { port: adminPort, keys: [adminKey.digest] } }),
      keys: [usd.entry, tok.entry, cut.entry],
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'b' }],
      pricing: PRICING,
      plugins: [{ name: 'rate-limit', defaultMaxTokens: 64 }],
    });
    replicas = [await spawnGateway(await config(true)), await spawnGateway(await config(false))];
    adminUrl = `http://127.0.0.1:${adminPort}`;
  });
  afterAll(async () => {
    for (const gw of replicas ?? []) gw.kill();
    await backend?.close();
    await deletePrefix(sharedRedisUrl(), prefix);
    redis?.disconnect();
  });

  /** 100 at once, half streamed, alternating replicas, each on a connection of its own (so all four workers serve). */
  async function burst(key: string): Promise<JsonResponse[]> {
    return Promise.all(Array.from({ length: 100 }, (_, i) => {
      const url = `${replicas[i % 2].url}/v1/chat/completions`;
      if (i % 4 < 2) return post(url, chat(false), bearer(key), true);
      return postSse(url, chat(true), bearer(key), undefined, true).then((r): JsonResponse => ({ status: r.status, headers: r.headers, text: r.raw, body: r.status === 200 ? {} : JSON.parse(r.raw) }));
    }));
  }

  /**
   * One request at a time until one is refused: the rest of the budget is used, down to the last cap
   * that fits. Each is sent once the one before has settled (its unused reservation given back, which
   * happens after its answer), so the refusal that ends it is one the budget really makes.
   */
  async function drain(key: string, counter: string, spent: () => number): Promise<JsonResponse> {
    for (let i = 0; i < 50; i++) {
      await until(async () => Number(await redis.get(counter)) === spent(), 'the last request settled');
      const res = await post(`${replicas[i % 2].url}/v1/chat/completions`, chat(false), bearer(key), true);
      if (res.status !== 200) return res;
    }
    throw new Error('50 requests were all admitted against a budget of 10');
  }

  function expectRefusal(res: JsonResponse, budget: RegExp): void {
    expect(res.status).toBe(429);
    expect(res.body.error).toMatchObject({ reason: 'rate_limited', status: 429 });
    expect(res.body.error.message).toMatch(budget);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  }

  it('a dollar budget: never overspent by 100 concurrent requests without max_tokens, then used to its last cap; refusals name the reset', async () => {
    const before = backend.served.length;
    const results = await burst(usd.key);
    const statuses = new Set(results.map((r) => r.status));
    expect([...statuses].every((s) => s === 200 || s === 429)).toBe(true);
    const admitted = results.filter((r) => r.status === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(1);
    expect(admitted).toBeLessThan(100);
    for (const r of results.filter((x) => x.status === 429)) expectRefusal(r, /dollar budget \(\$0\.000586 per day\).*\(at \d{4}-\d\d-\d\dT00:00:00Z\)\.$/);
    const counter = `${prefix}{key:usd}:dollars:${new Date().toISOString().slice(0, 10)}`;
    const spentNow = () => backend.served.slice(before).reduce((n, s) => n + costNanos(s), 0);
    const last = await drain(usd.key, counter, spentNow);
    expectRefusal(last, /dollar budget \(\$0\.000586 per day\)/);

    const served = backend.served.slice(before);
    const spent = spentNow();
    // The promise: what the backend says it served never exceeds the budget, and the budget was used
    // up to less than the cheapest answer that could still be admitted (the prompt's bound and one token).
    expect(spent).toBeLessThanOrEqual(DOLLAR_BUDGET);
    expect(spent).toBeGreaterThan(DOLLAR_BUDGET - (BOUND * 1000 + 2000));
    expect(served.every((s) => s.maxTokens !== undefined && s.maxTokens <= 64)).toBe(true);
    expect(served.some((s) => s.finish === 'length')).toBe(true);
    // The spend API charged exactly what the backend served, and the budget's own count agrees.
    await until(async () => (await spendSums(adminUrl, adminKey.key, '?key=usd')).requests === 100 + served.length - admitted + 1, 'every request in the spend sums');
    const sums = await spendSums(adminUrl, adminKey.key, '?key=usd');
    expect(sums.cost_nanodollars).toBe(spent);
    await until(async () => Number(await redis.get(counter)) === spent, 'the budget settled to what was spent');
  });

  it('a token budget: the same promise in tokens', async () => {
    const before = backend.served.length;
    const results = await burst(tok.key);
    expect(results.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    expect(results.some((r) => r.status === 200)).toBe(true);
    for (const r of results.filter((x) => x.status === 429)) expectRefusal(r, /token budget \(370 tokens per 3600 seconds\)/);
    const counter = `${prefix}{key:tok}:tokens`;
    const spentNow = () => backend.served.slice(before).reduce((n, s) => n + s.prompt + s.completion, 0);
    expectRefusal(await drain(tok.key, counter, spentNow), /token budget \(370 tokens per 3600 seconds\)/);
    const served = backend.served.slice(before);
    const spent = spentNow();
    expect(spent).toBeLessThanOrEqual(TOKEN_BUDGET);
    expect(spent).toBeGreaterThan(TOKEN_BUDGET - (BOUND + 1));
    expect(served.some((s) => s.finish === 'length')).toBe(true);
    expect(served.every((s) => s.maxTokens !== undefined && s.maxTokens <= 64)).toBe(true);
    await until(async () => Number(await redis.get(counter)) === spent, 'the budget settled to what was spent');
  });

  it('a stream the client cancels is charged what it used, in the budget and the spend records alike', async () => {
    const res = await postSse(`${replicas[0].url}/v1/chat/completions`, chat(true), { ...bearer(cut.key), 'x-request-id': 'cut-short-1' }, 4);
    expect(res.status).toBe(200);
    await until(async () => (await exported(adminUrl, adminKey.key, 'jsonl')).some((r) => r.request_id === 'cut-short-1'), 'the cancelled stream recorded');
    const record = (await exported(adminUrl, adminKey.key, 'jsonl')).find((r) => r.request_id === 'cut-short-1')!;
    expect(record).toMatchObject({ key: 'cut', status: 499, reason: 'client_closed', estimated: true, prompt_tokens: 9 });
    expect(record.completion_tokens as number).toBeGreaterThan(0);
    const nanos = 9 * 1000 + (record.completion_tokens as number) * 2000;
    expect(Math.round((record.cost as number) * 1e9)).toBe(nanos);
    const month = new Date().toISOString().slice(0, 7);
    await until(async () => Number(await redis.get(`${prefix}{key:cut}:dollars:${month}`)) === nanos, 'the budget charged what the stream used');
  });
});
