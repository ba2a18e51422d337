// Rate limits through the real gateway against the machine's Redis
// (REDIS_URL, else 127.0.0.1:6379), each test under its own random prefix.
// Token budgets here are soft, with defaultMaxTokens 0: a request reserves its prompt and is never
// given a cap, so the counts are exact; hard budgets have their own suite (budgets-hard.test.ts).
import { Writable } from 'node:stream';
import pino from 'pino';
import Redis from 'ioredis';
import { startBackend, type Backend } from '../support/backends';
import { until } from '../support/wait';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, postSse, type JsonResponse } from '../support/http';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';

const chat = (model = 'ok-a', stream = false) => ({ model, stream, messages: [{ role: 'user', content: 'hi' }] });
const RATE_HEADERS = ['limit', 'remaining', 'reset'].flatMap((h) => [`x-ratelimit-${h}-requests`, `x-ratelimit-${h}-tokens`]);

function capture() {
  const lines: Array<Record<string, any>> = [];
  const stream = new Writable({ write(chunk, _enc, done) { for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l)); done(); } });
  return { logger: pino({ level: 'info' }, stream), lines };
}

function expectRateLimited(res: JsonResponse): void {
  expect(res.status).toBe(429);
  expect(res.body.error).toEqual({ message: expect.any(String), param: expect.stringMatching(/^(key|org)$/), reason: 'rate_limited', status: 429, code: 'rate_limited', type: 'rate_limit_error' });
  expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/);
}

describe('rate limits on a shared Redis', () => {
  const url = sharedRedisUrl();
  let backend: Backend;
  let redis: Redis;
  const gateways: TestGateway[] = [];
  const prefixes: string[] = [];

  const gateway = async (config: Record<string, unknown>, prefix: string, logger?: pino.Logger) => {
    const gw = await startGateway({
      // Exactness across replicas, not the fallback: a command slower than the 100 ms default on a loaded
      // machine would hand a request to the in-memory insurance, whose counts are its own (the outage tests cover that).
      redis: { url, prefix, commandTimeoutMs: 2000 },
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'b' }],
      ...config,
      plugins: [{ name: 'rate-limit', defaultMaxTokens: 0 }, ...((config.plugins as unknown[]) ?? [])],
    }, { logger });
    gateways.push(gw);
    return gw;
  };
  const newPrefix = () => { const p = uniquePrefix(); prefixes.push(p); return p; };
  const counter = async (key: string) => Number(await redis.get(key) ?? 0);

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai', events: 5, gapMs: 0 });
    redis = new Redis(url, { maxRetriesPerRequest: 1 });
    await redis.ping();
  });
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    await Promise.all(prefixes.map((p) => deletePrefix(url, p)));
    redis.disconnect();
    await backend.close();
  });

  it('holds exactly across two replicas: 200 concurrent requests, 50 admitted, 150 refused', async () => {
    const prefix = newPrefix();
    const key = makeKey('busy', { limits: { requests: 50, windowSeconds: 60 } });
    const a = await gateway({ keys: [key.entry] }, prefix);
    const b = await gateway({ keys: [key.entry] }, prefix);
    const before = backend.requests.length;
    const all = await Promise.all(Array.from({ length: 200 }, (_, i) => post(`${(i % 2 ? a : b).url}/v1/chat/completions`, chat(), bearer(key.key))));
    const ok = all.filter((r) => r.status === 200);
    const refused = all.filter((r) => r.status !== 200);
    expect(ok.length).toBe(50);
    expect(refused.length).toBe(150);
    refused.forEach(expectRateLimited);
    expect(refused[0].body.error.message).toMatch(/this API key's request budget \(50 requests per 60 seconds\) is used up\. It refills in (1m0s|\d+s)\./);
    // Each admitted request saw a different count: the 50 remaining values are 49..0.
    expect(ok.map((r) => Number(r.headers['x-ratelimit-remaining-requests'])).sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(ok.every((r) => r.headers['x-ratelimit-limit-requests'] === '50')).toBe(true);
    // Both replicas admitted some, and nothing refused reached the backend.
    expect(all.filter((r, i) => r.status === 200 && i % 2 === 1).length).toBeGreaterThan(0);
    expect(all.filter((r, i) => r.status === 200 && i % 2 === 0).length).toBeGreaterThan(0);
    expect(backend.requests.length - before).toBe(50);
    expect(await redis.pttl(`${prefix}{key:busy}:requests`)).toBeGreaterThan(50_000);
  });

  it('puts the six x-ratelimit headers on JSON and streamed responses, and on the 429', async () => {
    const prefix = newPrefix();
    const key = makeKey('hdr', { limits: { requests: 2, tokens: 1000, windowSeconds: 60, enforce: 'soft' } });
    const gw = await gateway({ keys: [key.entry] }, prefix);
    const json = await post(`${gw.url}/v1/chat/completions`, chat(), bearer(key.key));
    const sse = await postSse(`${gw.url}/v2/chat/completions`, chat('ok-b', true), bearer(key.key));
    const refused = await post(`${gw.url}/v1/chat/completions`, chat(), bearer(key.key));
    for (const res of [json, sse, refused]) for (const h of RATE_HEADERS) expect(res.headers[h]).toBeDefined();
    expect(json.headers).toMatchObject({ 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '1', 'x-ratelimit-reset-requests': expect.stringMatching(/^(1m0s|59s)$/), 'x-ratelimit-limit-tokens': '1000', 'x-ratelimit-remaining-tokens': '999', 'x-ratelimit-reset-tokens': expect.stringMatching(/^(1m0s|59s)$/), 'x-ratelimit-reserved-tokens': '1' });
    expect(sse.status).toBe(200);
    expect(sse.headers['x-ratelimit-remaining-requests']).toBe('0');
    expectRateLimited(refused);
    expect(refused.headers['x-ratelimit-remaining-requests']).toBe('0');
  });

  it('charges the backend\'s reported tokens, JSON and streamed, and refuses once the budget is spent', async () => {
    const prefix = newPrefix();
    const key = makeKey('tok', { limits: { tokens: 40, windowSeconds: 60, enforce: 'soft' } });
    const gw = await gateway({ keys: [key.entry] }, prefix);
    const tokens = `${prefix}{key:tok}:tokens`;
    const before = backend.requests.length;

    // "hi" reserves 1 token (its prompt estimate; no max_tokens), settled to the real 16 at the end.
    const first = await post(`${gw.url}/v1/chat/completions`, chat(), bearer(key.key));
    expect(first.body.usage.total_tokens).toBe(16);
    expect(first.headers['x-ratelimit-reserved-tokens']).toBe('1');
    expect(first.headers['x-ratelimit-remaining-tokens']).toBe('39');
    await until(async () => (await counter(tokens)) === 16, 'the JSON answer\'s 16 tokens');

    const second = await postSse(`${gw.url}/v1/chat/completions`, chat('ok-b', true), bearer(key.key));
    expect(JSON.parse(second.events.at(-2)!.data).usage.total_tokens).toBe(16);
    expect(second.headers['x-ratelimit-remaining-tokens']).toBe('23');
    await until(async () => (await counter(tokens)) === 32, 'the stream\'s 16 tokens');

    // 8 left: its 1-token reservation fits, and its 16 overdraw the budget.
    const third = await post(`${gw.url}/v1/chat/completions`, chat(), bearer(key.key));
    expect(third.status).toBe(200);
    expect(third.headers['x-ratelimit-remaining-tokens']).toBe('7');
    await until(async () => (await counter(tokens)) === 48, 'the third answer\'s tokens');

    const refused = await post(`${gw.url}/v1/chat/completions`, chat(), bearer(key.key));
    expectRateLimited(refused);
    expect(refused.body.error.message).toMatch(/this API key's token budget \(40 tokens per 60 seconds\) is used up/);
    expect(refused.headers['x-ratelimit-remaining-tokens']).toBe('0');
    expect(backend.requests.length - before).toBe(3);
  });

  it('charges an estimate, and logs it as one, when the backend reports no usage', async () => {
    const prefix = newPrefix();
    const key = makeKey('est', { limits: { tokens: 100_000, windowSeconds: 60, enforce: 'soft' } });
    const { logger, lines } = capture();
    const gw = await gateway({ keys: [key.entry] }, prefix, logger);
    const tokens = `${prefix}{key:est}:tokens`;

    const json = await post(`${gw.url}/v1/chat/completions`, chat('nousage-a'), bearer(key.key));
    const estimate = json.body.usage.total_tokens;
    expect(estimate).not.toBe(16);
    expect(estimate).toBeGreaterThan(0);
    await until(async () => (await counter(tokens)) === estimate, 'the JSON estimate');

    const sse = await postSse(`${gw.url}/v1/chat/completions`, chat('nousage-b', true), bearer(key.key));
    const streamed = JSON.parse(sse.events.at(-2)!.data).usage.total_tokens;
    await until(async () => (await counter(tokens)) === estimate + streamed, 'the stream estimate');

    const charged = lines.filter((l) => l.msg?.includes('charged estimated tokens'));
    expect(charged.map((l) => [l.key, l.tokens, l.estimated])).toEqual([['est', estimate, true], ['est', streamed, true]]);
    expect(JSON.stringify(charged)).not.toContain(key.key);
  });

  it('charges a stream the client cut short (an estimate), so aborting does not dodge the budget', async () => {
    const slow = await startBackend({ format: 'openai', events: 50, gapMs: 20 });
    try {
      const prefix = newPrefix();
      const key = makeKey('cut', { limits: { tokens: 100_000, windowSeconds: 60, enforce: 'soft' } });
      const { logger, lines } = capture();
      const gw = await gateway({ keys: [key.entry], upstreams: { b: { url: slow.base, format: 'openai' } } }, prefix, logger);
      const res = await postSse(`${gw.url}/v1/chat/completions`, chat('ok-c', true), bearer(key.key), 3);
      expect(res.events.length).toBeGreaterThanOrEqual(3);
      await until(async () => lines.some((l) => l.msg?.includes('charged estimated tokens')), 'a charge for the cut stream');
      const charged = lines.find((l) => l.msg?.includes('charged estimated tokens'));
      expect(charged).toMatchObject({ key: 'cut', estimated: true });
      await until(async () => (await counter(`${prefix}{key:cut}:tokens`)) === charged!.tokens, 'the estimate, in place of the reservation');
    } finally {
      await slow.close();
    }
  });

  it('shares an org budget between two keys of the org, and tells key from org in the message', async () => {
    const prefix = newPrefix();
    const k1 = makeKey('k1', { org: 'acme', limits: { requests: 3, windowSeconds: 60 } });
    const k2 = makeKey('k2', { org: 'acme' });
    const gw = await gateway({ keys: [k1.entry, k2.entry], orgs: { acme: { limits: { requests: 5, windowSeconds: 60 } } } }, prefix);

    const one = [];
    for (let i = 0; i < 4; i++) one.push(await post(`${gw.url}/v1/chat/completions`, chat(), bearer(k1.key)));
    expect(one.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(one[3].body.error.message).toMatch(/this API key's request budget/);
    // The key's refusal gave back the org's count: k2 still has 5 - 3 = 2.
    const two = [];
    for (let i = 0; i < 3; i++) two.push(await post(`${gw.url}/v1/chat/completions`, chat(), bearer(k2.key)));
    expect(two.map((r) => r.status)).toEqual([200, 200, 429]);
    expectRateLimited(two[2]);
    expect(two[2].body.error.message).toMatch(/your organization's request budget \(5 requests per 60 seconds\) is used up/);
    expect(two[0].headers).toMatchObject({ 'x-ratelimit-limit-requests': '5', 'x-ratelimit-remaining-requests': '1' });
    expect(await counter(`${prefix}{org:acme}:requests`)).toBe(6); // 5 admitted + the refused one past the budget
  });

  it('shares an org budget between keys under concurrency: exactly the budget is admitted', async () => {
    const prefix = newPrefix();
    const k1 = makeKey('c1', { org: 'beta' });
    const k2 = makeKey('c2', { org: 'beta' });
    const gw = await gateway({ keys: [k1.entry, k2.entry], orgs: { beta: { limits: { requests: 7, windowSeconds: 60 } } } }, prefix);
    const all = await Promise.all(Array.from({ length: 30 }, (_, i) => post(`${gw.url}/v1/chat/completions`, chat(), bearer((i % 2 ? k1 : k2).key))));
    expect(all.filter((r) => r.status === 200).length).toBe(7);
    all.filter((r) => r.status !== 200).forEach(expectRateLimited);
  });

  it('refills after the window: requests and tokens', async () => {
    const prefix = newPrefix();
    const key = makeKey('win', { limits: { requests: 2, windowSeconds: 1 } });
    const tok = makeKey('wint', { limits: { tokens: 10, windowSeconds: 2, enforce: 'soft' } });
    const gw = await gateway({ keys: [key.entry, tok.entry] }, prefix);

    const first = await Promise.all([1, 2, 3].map(() => post(`${gw.url}/v1/chat/completions`, chat(), bearer(key.key))));
    expect(first.map((r) => r.status).sort()).toEqual([200, 200, 429]);
    const refused = first.find((r) => r.status === 429)!;
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['x-ratelimit-reset-requests']).toBe('1s');
    // The window ends when its count expires in Redis.
    await until(async () => (await counter(`${prefix}{key:win}:requests`)) === 0, 'the request window to end', 3000);
    const later = await Promise.all([1, 2].map(() => post(`${gw.url}/v1/chat/completions`, chat(), bearer(key.key))));
    expect(later.map((r) => r.status)).toEqual([200, 200]);

    expect((await post(`${gw.url}/v1/chat/completions`, chat(), bearer(tok.key))).status).toBe(200); // charges 16 of 10
    await until(async () => (await counter(`${prefix}{key:wint}:tokens`)) === 16, 'the token charge');
    const spent = await post(`${gw.url}/v1/chat/completions`, chat(), bearer(tok.key));
    expectRateLimited(spent);
    expect(Number(spent.headers['retry-after'])).toBeLessThanOrEqual(2);
    await until(async () => (await counter(`${prefix}{key:wint}:tokens`)) === 0, 'the token window to end', 3000);
    expect((await post(`${gw.url}/v1/chat/completions`, chat(), bearer(tok.key))).status).toBe(200);
  });

  it('keeps the shared count across a config reload', async () => {
    const prefix = newPrefix();
    const key = makeKey('rl', { limits: { requests: 3, windowSeconds: 60 } });
    const config = { keys: [key.entry] };
    const gw = await gateway(config, prefix);
    expect((await post(`${gw.url}/v1/chat/completions`, chat(), bearer(key.key))).status).toBe(200);
    const client = gw.gateway.services.redis;
    const { validateConfig } = await import('../../src/config/load');
    const { gatewayConfigCheck } = await import('../../src/gateway');
    await gw.gateway.swap({ file: 'inline.yaml', config: validateConfig({ server: { port: 0 }, redis: { url, prefix }, upstreams: { b: { url: backend.base, format: 'openai' } }, routes: [{ model: '*', upstream: 'b' }], ...config, plugins: [{ name: 'rate-limit', defaultMaxTokens: 0 }] }, 'inline.yaml', {}, gatewayConfigCheck()) });
    expect(gw.gateway.services.redis).toBe(client); // one connection for the process
    const after = await post(`${gw.url}/v1/chat/completions`, chat(), bearer(key.key));
    expect(after.headers['x-ratelimit-remaining-requests']).toBe('1');
  });
});
