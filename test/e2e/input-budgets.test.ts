// Token and dollar budgets on the input endpoints hold across two replicas
// sharing the real Redis: 50 concurrent requests per endpoint, alternating
// replicas, each reserving its prompt's bound (UTF-8 bytes and the template
// allowances, as chat does) and settling the backend's usage (moderations:
// the estimate, since the answer reports none). What the backend says it
// served never exceeds the budget, and the budget's count ends equal to it.
import { startInputsBackend, tokensOf, type InputsBackend } from '../support/inputs-backend';
import { makeKey } from '../support/gateway';
import { startSharedReplicas, type SharedReplicas } from '../support/replicas';
import { bearer, post } from '../support/http';
import { until } from '../support/wait';
import { estimateTokens } from '../../src/request/usage';
import { PER_REQUEST_TOKENS, PER_TEXT_TOKENS } from '../../src/request/token-bound';

jest.setTimeout(120_000);

const BUDGET = 150;
const CASES = [
  { endpoint: 'embeddings', body: { model: 'm', input: ['alpha beta gamma delta', 'epsilon zeta'] }, texts: ['alpha beta gamma delta', 'epsilon zeta'] },
  { endpoint: 'rerank', body: { model: 'm', query: 'which one', documents: ['the first one', 'the second'] }, texts: ['which one', 'the first one', 'the second'] },
  { endpoint: 'score', body: { model: 'm', text_1: 'which one', text_2: ['the first one', 'the second'] }, texts: ['which one', 'the first one', 'the second'] },
  { endpoint: 'moderations', body: { model: 'm', input: ['is this fine', 'and this one'] }, texts: ['is this fine', 'and this one'] },
] as const;
const keys = Object.fromEntries(CASES.map((c) => [c.endpoint, makeKey(`tok-${c.endpoint}`, { limits: { tokens: BUDGET, windowSeconds: 3600 } })]));
// $1 per million input tokens: 1000 nano-dollars a token, so the dollar budget is the token budget's 150 tokens.
const usd = makeKey('usd', { limits: { dollars: BUDGET * 1000 / 1e9, dollarWindow: 'day' } });

describe('token budgets on the input endpoints across two replicas', () => {
  let backend: InputsBackend;
  let stack: SharedReplicas;

  beforeAll(async () => {
    backend = await startInputsBackend();
    stack = await startSharedReplicas({
      keys: [...Object.values(keys).map((k) => k.entry), usd.entry],
      pricing: [{ model: 'm', input: 1 }],
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: 'm', upstream: 'b', endpoints: ['embeddings', 'rerank', 'score', 'moderations'] }],
      plugins: [{ name: 'rate-limit' }],
    });
  });
  afterAll(async () => {
    await stack?.close();
    await backend?.close();
  });

  it.each(CASES)('$endpoint: 50 concurrent requests never spend past the budget', async ({ endpoint, body, texts }) => {
    const path = `/v1/${endpoint}`;
    const before = backend.served.length;
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => post(`${stack.replicas[i % 2].url}${path}`, body, bearer(keys[endpoint].key), true)));
    expect(results.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    const admitted = results.filter((r) => r.status === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(1);
    expect(admitted).toBeLessThan(50);
    for (const r of results.filter((x) => x.status === 429)) expect(r.body.error.message).toMatch(/token budget \(150 tokens per 3600 seconds\)/);
    const bound = PER_REQUEST_TOKENS + texts.reduce((n, t) => n + Buffer.byteLength(t) + PER_TEXT_TOKENS, 0);
    for (const r of results.filter((x) => x.status === 200)) expect(Number(r.headers['x-ratelimit-reserved-tokens'])).toBe(bound);
    const served = backend.served.slice(before).filter((s) => s.path === path);
    expect(served).toHaveLength(admitted);
    // What each request was charged: the backend's count, or (moderations) the estimate from the texts.
    const each = endpoint === 'moderations' ? estimateTokens(texts.join('').length) : served[0].tokens;
    if (endpoint !== 'moderations') expect(each).toBe(endpoint === 'embeddings' ? 6 : 2 * tokensOf('which one') + tokensOf('the first one') + tokensOf('the second'));
    const spent = admitted * each;
    expect(spent).toBeLessThanOrEqual(BUDGET);
    await until(async () => Number(await stack.redis.get(`${stack.prefix}{key:tok-${endpoint}}:tokens`)) === spent, 'the budget settled to what was spent', 20_000);
  });

  it('a dollar budget on embeddings: the same promise in nano-dollars', async () => {
    const { body } = CASES[0];
    const before = backend.served.length;
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => post(`${stack.replicas[i % 2].url}/v1/embeddings`, body, bearer(usd.key), true)));
    expect(results.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    const admitted = results.filter((r) => r.status === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(1);
    expect(admitted).toBeLessThan(50);
    const spent = backend.served.slice(before).reduce((n, s) => n + s.tokens * 1000, 0);
    expect(spent).toBeLessThanOrEqual(BUDGET * 1000);
    const counter = `${stack.prefix}{key:usd}:dollars:${new Date().toISOString().slice(0, 10)}`;
    await until(async () => Number(await stack.redis.get(counter)) === spent, 'the dollar budget settled to what was spent', 20_000);
  });
});
