// Hard budgets hold whatever the language, on the real Redis, two replicas of
// two workers each: 4,000 Chinese characters, which the gateway's typical
// estimate takes for 1,000 prompt tokens and the backend counts as 4,000 (one
// a character, as tokenizers count Chinese). 60 at once, then 60 more once
// the first have settled, against a dollar budget and against a token
// budget: what the backend itself reports it served never exceeds either,
// and each budget's count settles to exactly that.
import { startMeteredBackend, type MeteredBackend, type Served } from '../support/metered-backend';
import { startSharedReplicas, type SharedReplicas } from '../support/replicas';
import { makeKey } from '../support/gateway';
import { bearer, post, postSse, type JsonResponse } from '../support/http';
import { until } from '../support/wait';

jest.setTimeout(120_000);

// $1 per million input tokens and $2 per million output: 1000 and 2000 nano-dollars a token.
const PRICING = [{ model: '*', input: 1, output: 2 }];
const PROMPT = '请用中文写一首关于春天的诗。'.repeat(300).slice(0, 4000); // 4,000 characters
const MAX_TOKENS = 10;
const DOLLAR_BUDGET = 100_000_000; // $0.10 in nano-dollars: the real cost of 24 answers
const TOKEN_BUDGET = 50_000; // the real tokens of 12 answers
const costNanos = (s: Served): number => s.prompt * 1000 + s.completion * 2000;
const chat = (stream: boolean) => ({ model: 'm-1', stream, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: PROMPT }] });

describe('hard budgets whatever the language, across two replicas of two workers', () => {
  const usd = makeKey('usd', { limits: { dollars: DOLLAR_BUDGET / 1e9, dollarWindow: 'day' } });
  const tok = makeKey('tok', { limits: { tokens: TOKEN_BUDGET, windowSeconds: 3600 } });
  let backend: MeteredBackend;
  let stack: SharedReplicas;

  beforeAll(async () => {
    backend = await startMeteredBackend({ words: MAX_TOKENS, gapMs: 5, promptTokens: 'chars' });
    stack = await startSharedReplicas({
      keys: [usd.entry, tok.entry],
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'b' }],
      pricing: PRICING,
      plugins: [{ name: 'rate-limit' }],
    });
  });
  afterAll(async () => {
    await stack?.close();
    await backend?.close();
  });

  /** 60 at once, half streamed, alternating replicas, each on a connection of its own (so all four workers serve). */
  function burst(key: string): Promise<JsonResponse[]> {
    return Promise.all(Array.from({ length: 60 }, (_, i) => {
      const url = `${stack.replicas[i % 2].url}/v1/chat/completions`;
      if (i % 4 < 2) return post(url, chat(false), bearer(key), true);
      return postSse(url, chat(true), bearer(key), undefined, true).then((r): JsonResponse => ({ status: r.status, headers: r.headers, text: r.raw, body: r.status === 200 ? {} : JSON.parse(r.raw) }));
    }));
  }

  async function twoBursts(key: string, counter: string, spent: (served: Served[]) => number): Promise<Served[]> {
    const before = backend.served.length;
    const first = await burst(key);
    expect(first.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    expect(first.some((r) => r.status === 200)).toBe(true);
    expect(first.some((r) => r.status === 429)).toBe(true);
    await until(async () => Number(await stack.redis.get(counter)) === spent(backend.served.slice(before)), 'the first burst settled');
    const second = await burst(key);
    expect(second.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    const served = backend.served.slice(before);
    expect(served.length).toBe([...first, ...second].filter((r) => r.status === 200).length);
    // The backend counted 4,000 prompt tokens a request, four times the typical estimate.
    expect(served.every((s) => s.prompt === 4000 && s.maxTokens === MAX_TOKENS)).toBe(true);
    await until(async () => Number(await stack.redis.get(counter)) === spent(served), 'the budget settled to what was spent');
    return served;
  }

  it('a dollar budget: never overspent by 60 concurrent requests whose prompts the estimate takes for a quarter of their tokens', async () => {
    const counter = `${stack.prefix}{key:usd}:dollars:${new Date().toISOString().slice(0, 10)}`;
    const spent = (served: Served[]) => served.reduce((n, s) => n + costNanos(s), 0);
    expect(spent(await twoBursts(usd.key, counter, spent))).toBeLessThanOrEqual(DOLLAR_BUDGET);
  });

  it('a token budget: never overspent by the same', async () => {
    const counter = `${stack.prefix}{key:tok}:tokens`;
    const spent = (served: Served[]) => served.reduce((n, s) => n + s.prompt + s.completion, 0);
    expect(spent(await twoBursts(tok.key, counter, spent))).toBeLessThanOrEqual(TOKEN_BUDGET);
  });
});
