// Rate limits without Redis: counted in the gateway's memory (one replica).
// Token budgets here are soft, with defaultMaxTokens 0: a request reserves its prompt and is never
// given a cap, so the counts are exact; hard budgets have their own suite (budgets-hard.test.ts).
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post } from '../support/http';

const chat = { model: 'ok-a', messages: [{ role: 'user', content: 'hi' }] };

describe('rate limits in memory (no redis in the config)', () => {
  let backend: Backend;
  let gw: TestGateway;
  const key = makeKey('mem', { org: 'acme', limits: { requests: 3, windowSeconds: 60 } });
  const other = makeKey('other', { org: 'acme' });

  beforeAll(async () => {
    backend = await startBackend({ format: 'native', events: 2, gapMs: 0 });
    gw = await startGateway({
      keys: [key.entry, other.entry],
      orgs: { acme: { limits: { tokens: 1000, windowSeconds: 60, enforce: 'soft' } } },
      upstreams: { b: { url: backend.base, format: 'native' } },
      routes: [{ model: '*', upstream: 'b' }],
      plugins: [{ name: 'rate-limit', defaultMaxTokens: 0, defaults: { requests: 1, windowSeconds: 30 } }],
    });
  });
  afterAll(async () => { await gw.close(); await backend.close(); });

  it('counts requests and refuses past the budget without a Redis connection', async () => {
    expect(gw.gateway.services.redis).toBeUndefined();
    const all = await Promise.all([1, 2, 3, 4, 5].map(() => post(`${gw.url}/v1/chat/completions`, chat, bearer(key.key))));
    expect(all.map((r) => r.status).sort()).toEqual([200, 200, 200, 429, 429]);
    const refused = all.find((r) => r.status === 429)!;
    expect(refused.body.error).toMatchObject({ reason: 'rate_limited', param: 'key', status: 429 });
    expect(refused.headers['retry-after']).toBe('60');
  });

  it('applies the defaults to a key that names none, and the org token budget to both', async () => {
    const first = await post(`${gw.url}/v2/chat/completions`, chat, bearer(other.key));
    expect(first.headers).toMatchObject({ 'x-ratelimit-limit-requests': '1', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '30s', 'x-ratelimit-limit-tokens': '1000' });
    expect((await post(`${gw.url}/v2/chat/completions`, chat, bearer(other.key))).status).toBe(429);
  });

  it('counts image requests against the request budget', async () => {
    const img = makeKey('img', { limits: { requests: 1, windowSeconds: 60 } });
    const g = await startGateway({
      keys: [img.entry],
      upstreams: { b: { url: backend.base, format: 'native' } },
      routes: [{ model: '*', upstream: 'b' }],
      plugins: [{ name: 'rate-limit', defaultMaxTokens: 0 }],
    });
    try {
      const body = { model: 'ok-i', prompt: 'a cat' };
      expect((await post(`${g.url}/v1/images/generations`, body, bearer(img.key))).status).toBe(200);
      expect((await post(`${g.url}/v1/images/generations`, body, bearer(img.key))).status).toBe(429);
    } finally {
      await g.close();
    }
  });
});
