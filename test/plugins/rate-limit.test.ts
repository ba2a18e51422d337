// The rate-limit plugin's hooks on a small context, counting in memory.
import { Writable } from 'node:stream';
import pino from 'pino';
import Redis from 'ioredis';
import { Counter, Registry } from 'prom-client';
import { plugin } from '../../plugins/rate-limit';
import { LimiterPools } from '../../src/limiters/pools';
import { FALLBACK_TOTAL, StoreHealth } from '../../src/redis/store-health';
import { REDIS_UP, watchRedisUp } from '../../src/redis/metrics';
import { validateConfig } from '../../src/config/load';
import { GatewayError } from '../../src/contract/errors';
import type { Outcome, PluginHooks, RequestContext, Services, Usage } from '../../src/contract/plugin';
import { pluginEnv, withState } from './helpers';
import { gatewayConfigCheck } from '../../src/gateway';
import { principalOf } from '../../src/auth/keys';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(chunk.toString())); done(); } });
  return { logger: pino({ level: 'info' }, stream), lines };
}

const config = validateConfig({
  keys: [
    // Soft: a request without max_tokens reserves defaultMaxTokens (0 here) and is never given a cap.
    { id: 'k', sha256: 'a'.repeat(64), org: 'acme', limits: { requests: 3, tokens: 30, windowSeconds: 60, enforce: 'soft' } },
    // Hard: the 40-character prompt reserves its bound, 80 tokens (40 bytes, 8 for the text, 32 for the request).
    { id: 'h', sha256: 'e'.repeat(64), limits: { tokens: 170, windowSeconds: 60 } },
    { id: 'usd', sha256: 'f'.repeat(64), limits: { dollars: 0.00024, dollarWindow: 'day' } },
    { id: 'd', sha256: 'b'.repeat(64) },
    { id: 'free', sha256: 'c'.repeat(64), org: 'open' },
  ],
  orgs: { acme: { limits: { requests: 100, windowSeconds: 60 } }, open: {} },
  // $1 per million input tokens, $2 per million output: 1000 and 2000 nano-dollars a token; m-dear is the fallback's, dearer.
  pricing: [{ model: 'm', input: 1, output: 2 }, { model: 'm-dear', input: 1, output: 4 }],
  plugins: [{ name: 'rate-limit' }],
}, 'inline.yaml', {}, gatewayConfigCheck());

interface TestCtx extends RequestContext { headers: Record<string, string>; capped?: number }

function ctx(keyId: string, extra: Partial<RequestContext> = {}): TestCtx {
  const headers: Record<string, string> = {};
  const c: TestCtx = {
    id: `req-${Math.random()}`, startedAt: 0, version: 'v1', endpoint: 'chat', protocol: 'chat', stream: false, texts: ['x'.repeat(40)], timings: {},
    principal: principalOf(keyId, config.keys.find((k) => k.id === keyId) ?? {}),
    chat: { model: 'm', messages: [{ role: 'user', content: 'x'.repeat(40) }], stream: false, model_params: {}, texts: ['x'.repeat(40)] } as never,
    setHeader: (n: string, v: string) => { headers[n] = v; },
    signal: new AbortController().signal,
    capOutput: (tokens: number) => { c.capped = tokens; c.chat = { ...c.chat!, model_params: { ...c.chat!.model_params, max_tokens: tokens } }; },
    headers,
    ...extra,
  };
  return c;
}

const ok: Outcome = { status: 200, reason: null, aborted: false, durationMs: 1 };
const usage = (total: number, estimated = false): Usage => ({ prompt_tokens: 1, completion_tokens: total - 1, total_tokens: total, estimated });
const flush = () => new Promise((r) => setImmediate(r));

/** The plugin as a gateway creates it; `kept` is what the process keeps across reloads. */
async function make(services: Services = {}, defaults?: object, kept?: LimiterPools, settings: object = { defaultMaxTokens: 0 }) {
  const { logger, lines } = capture();
  const env = pluginEnv(plugin, config, services, logger);
  const hooks = await plugin.create(plugin.schema.parse({ ...settings, ...(defaults && { defaults }) }), { ...env, kept: kept ?? env.kept }) as PluginHooks<any>;
  return { hooks: withState(hooks), lines };
}

describe('rate-limit plugin, memory store', () => {
  it('admits within the budgets and sets the six headers and the reservation (the 40-character prompt: 10 tokens)', async () => {
    const { hooks } = await make();
    const c = ctx('k');
    await hooks.onRequest!(c);
    expect(c.headers).toEqual({
      'x-ratelimit-limit-requests': '3', 'x-ratelimit-remaining-requests': '2', 'x-ratelimit-reset-requests': '1m0s',
      'x-ratelimit-limit-tokens': '30', 'x-ratelimit-remaining-tokens': '20', 'x-ratelimit-reset-tokens': '1m0s',
      'x-ratelimit-reserved-tokens': '10',
    });
  });

  it('refuses past the request budget with rate_limited, Retry-After and the metrics details', async () => {
    const { hooks } = await make();
    // Short prompts: four of them reserve 4 of the 30 tokens, so only the request budget is spent
    // (with both spent, the one refilling last names the refusal: a millisecond apart, either).
    const short = () => ctx('k', { texts: ['x'] });
    await hooks.onRequest!(short());
    await hooks.onRequest!(short());
    await hooks.onRequest!(short());
    const c = short();
    const err = await Promise.resolve(hooks.onRequest!(c)).catch((e: unknown) => e) as GatewayError;
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ reason: 'rate_limited', status: 429, param: 'key', details: { scope: 'key', budget: 'requests' } });
    // The window started with the first request: a second may have passed since, on a busy machine.
    expect(['59', '60']).toContain(err.headers!['retry-after']);
    expect(err.message).toMatch(/this API key's request budget \(3 requests per 60 seconds\) is used up\. It refills in (59s|1m0s)\./);
    expect(c.headers['x-ratelimit-remaining-requests']).toBe('0');
  });

  it('charges the reported tokens after the response and refuses once they are spent', async () => {
    const { hooks, lines } = await make();
    const first = ctx('k');
    await hooks.onRequest!(first);
    first.usage = usage(15);
    hooks.onFinish!(first, ok);
    await flush();
    const second = ctx('k');
    await hooks.onRequest!(second);
    expect(second.headers['x-ratelimit-remaining-tokens']).toBe('5');
    second.usage = usage(10);
    hooks.onFinish!(second, ok);
    await flush();
    expect(lines.some((l) => l.estimated)).toBe(false);
    const err = await Promise.resolve(hooks.onRequest!(ctx('k'))).catch((e: unknown) => e) as GatewayError;
    expect(err).toMatchObject({ reason: 'rate_limited', details: { scope: 'key', budget: 'tokens' } });
  });

  it('gives back the request counted by a budget that had room when another refuses', async () => {
    const { hooks } = await make();
    const first = ctx('k');
    await hooks.onRequest!(first);
    first.usage = usage(30); // spends the key's tokens
    hooks.onFinish!(first, ok);
    await flush();
    await expect(Promise.resolve(hooks.onRequest!(ctx('k')))).rejects.toMatchObject({ details: { budget: 'tokens' } });
    await flush();
    // The refused request did not use the key's second request.
    const again = ctx('k');
    await expect(Promise.resolve(hooks.onRequest!(again))).rejects.toMatchObject({ details: { budget: 'tokens' } });
    expect(again.headers['x-ratelimit-remaining-requests']).toBe('2');
    expect(again.headers['x-ratelimit-remaining-tokens']).toBe('0');
  });

  it('logs an estimated charge, and charges nothing for a request it did not admit', async () => {
    const { hooks, lines } = await make();
    const c = ctx('k');
    await hooks.onRequest!(c);
    c.usage = usage(9, true);
    hooks.onFinish!(c, ok);
    expect(lines).toEqual([expect.objectContaining({ requestId: c.id, key: 'k', tokens: 9, estimated: true })]);
    const never = ctx('k', { usage: usage(1000) });
    hooks.onFinish!(never, ok); // never passed onRequest
    await flush();
    const next = ctx('k');
    await hooks.onRequest!(next);
    expect(next.headers['x-ratelimit-remaining-tokens']).toBe('11'); // 30 - 9 charged - 10 reserved
  });

  it('applies the defaults to keys that name no limits, and leaves keys with none unlimited', async () => {
    const { hooks } = await make({}, { requests: 1, windowSeconds: 5 });
    const d = ctx('d');
    await hooks.onRequest!(d);
    expect(d.headers['x-ratelimit-limit-requests']).toBe('1');
    expect(d.headers['x-ratelimit-limit-tokens']).toBeUndefined();
    await expect(Promise.resolve(hooks.onRequest!(ctx('d')))).rejects.toMatchObject({ reason: 'rate_limited' });
  });

  it('leaves a key with no budget of its own, no defaults and no org budget unlimited', async () => {
    const { hooks } = await make();
    const free = ctx('free');
    expect(hooks.onRequest!(free)).toBeUndefined(); // nothing to wait for
    expect(free.headers).toEqual({});
  });

  it('keeps in-memory counts across a reload (create() again with what the process kept)', async () => {
    const kept = new LimiterPools(undefined);
    const { hooks } = await make({}, undefined, kept);
    await hooks.onRequest!(ctx('k'));
    const { hooks: reloaded } = await make({}, undefined, kept);
    const c = ctx('k');
    await reloaded.onRequest!(c);
    expect(c.headers['x-ratelimit-remaining-requests']).toBe('1');
  });
});

describe('rate-limit plugin, hard budgets', () => {
  const rejection = (p: unknown) => Promise.resolve(p).catch((e: unknown) => e) as Promise<GatewayError>;
  const withCap = (keyId: string, max_tokens: number) => {
    const c = ctx(keyId);
    c.chat = { ...c.chat!, model_params: { max_tokens } };
    return c;
  };

  it('gives a request without max_tokens the cap that fits: defaultMaxTokens, or less when less is left', async () => {
    const { hooks } = await make({}, undefined, undefined, { defaultMaxTokens: 8 });
    const first = ctx('h'); // prompt bound 80 + 8
    await hooks.onRequest!(first);
    expect(first.capped).toBe(8);
    expect(first.chat!.model_params.max_tokens).toBe(8);
    expect(first.headers['x-ratelimit-reserved-tokens']).toBe('88');
    expect(first.headers['x-ratelimit-remaining-tokens']).toBe('82');
    const second = ctx('h'); // 82 left: prompt bound 80 + 2
    await hooks.onRequest!(second);
    expect(second.capped).toBe(2);
    expect(second.headers['x-ratelimit-reserved-tokens']).toBe('82');
    expect(second.headers['x-ratelimit-remaining-tokens']).toBe('0');
    const third = ctx('h');
    const err = await rejection(hooks.onRequest!(third));
    expect(err).toMatchObject({ reason: 'rate_limited', status: 429, details: { scope: 'key', budget: 'tokens' } });
    expect(third.capped).toBeUndefined();
    // The first finishes having used 12 tokens: 76 of its 88 come back, too few for the prompt's bound and one token.
    first.usage = usage(12);
    hooks.onFinish!(first, ok);
    await flush();
    const fourth = ctx('h');
    await expect(rejection(hooks.onRequest!(fourth))).resolves.toMatchObject({ reason: 'rate_limited' });
    // Once the second has used 74 of its 82, 84 are left: the prompt's bound 80 and a cap of 4.
    second.usage = usage(74);
    hooks.onFinish!(second, ok);
    await flush();
    const fifth = ctx('h');
    await hooks.onRequest!(fifth);
    expect(fifth.capped).toBe(4);
  });

  it('keeps a cap the request names, and refuses it when it does not fit, saying how much is left', async () => {
    const { hooks } = await make({}, undefined, undefined, { defaultMaxTokens: 8 });
    const named = withCap('h', 5);
    await hooks.onRequest!(named);
    expect(named.capped).toBeUndefined();
    expect(named.headers['x-ratelimit-reserved-tokens']).toBe('85');
    const err = await rejection(hooks.onRequest!(withCap('h', 6)));
    expect(err.message).toContain('has 85 left, fewer than the 86 this request may use');
  });

  it('with defaultMaxTokens 0, a request without a cap may take all that is left', async () => {
    const { hooks } = await make();
    const c = ctx('h');
    await hooks.onRequest!(c);
    expect(c.capped).toBe(90);
  });

  it('reserves dollars at the dearest price the request may reach, and settles with its cost', async () => {
    const { hooks } = await make({}, undefined, undefined, { defaultMaxTokens: 10 });
    // Budget $0.00024 = 240 000 nano-dollars. The prompt's bound 80 at 1000, output at m-dear's 4000 a token: 80 000 + 10 × 4000.
    const route = { index: 0, upstream: 'b', dialect: 'interface', fallbacks: ['m-dear'], failoverOn: [], continueOnFailure: false, hostedTools: 'drop' } as const;
    const first = ctx('usd', { model: 'm', route });
    await hooks.onRequest!(first);
    expect(first.capped).toBe(10);
    expect(first.headers['x-ratelimit-reserved-dollars']).toBe('0.00012');
    expect(first.headers['x-ratelimit-limit-dollars']).toBe('0.00024');
    expect(first.headers['x-ratelimit-remaining-dollars']).toBe('0.00012');
    expect(first.headers['x-ratelimit-reset-dollars']).toMatch(/^\d+h\d+m\d+s$|^\d+m\d+s$|^\d+s$/);
    // 120 000 left: 80 000 + 10 output tokens at 4000 = 120 000 fits exactly; a third does not.
    const second = ctx('usd', { model: 'm', route });
    await hooks.onRequest!(second);
    expect(second.capped).toBe(10);
    const err = await rejection(hooks.onRequest!(ctx('usd', { model: 'm', route })));
    expect(err).toMatchObject({ reason: 'rate_limited', details: { scope: 'key', budget: 'dollars' } });
    expect(err.message).toMatch(/dollar budget \(\$0\.00024 per day\) is used up\. It refills in .+ \(at \d{4}-\d\d-\d\dT00:00:00Z\)\./);
    // The first cost $0.00002: 100 000 of its 120 000 come back; the bound's 80 000 and 5 tokens at 4000 fit.
    first.cost = 0.00002;
    hooks.onFinish!(first, ok);
    await flush();
    const fourth = ctx('usd', { model: 'm', route });
    await hooks.onRequest!(fourth);
    expect(fourth.capped).toBe(5);
  });

  it('reserves no dollars for a model no price names', async () => {
    const { hooks } = await make({}, undefined, undefined, { defaultMaxTokens: 10 });
    for (let i = 0; i < 5; i++) {
      const c = ctx('usd', { model: 'unpriced' });
      await hooks.onRequest!(c);
      expect(c.headers['x-ratelimit-reserved-dollars']).toBeUndefined();
      expect(c.capped).toBeUndefined();
    }
  });
});

describe('shared-store metrics', () => {
  it('registers each metric once per registry, however often a gateway is built on it', async () => {
    const registry = new Registry();
    const redis = new Redis({ lazyConnect: true });
    try {
      const services: Services = { metrics: registry, redis };
      watchRedisUp(registry, services);
      watchRedisUp(registry, services);
      new StoreHealth(pino({ level: 'silent' }), 'redis', registry).decided(true, false);
      new StoreHealth(pino({ level: 'silent' }), 'redis', registry);
      expect(registry.getSingleMetric(FALLBACK_TOTAL)).toBeInstanceOf(Counter);
      const text = await registry.metrics();
      expect(text).toContain(`${REDIS_UP} 0`);
      expect(text).toContain(`${FALLBACK_TOTAL} 1`);
      await make(services);
      await make(services);
    } finally {
      redis.disconnect();
    }
  });

  it('registers no Redis gauge without Redis', () => {
    const registry = new Registry();
    watchRedisUp(registry, {});
    expect(registry.getSingleMetric(REDIS_UP)).toBeUndefined();
  });
});
