// The rate-limit plugin's hooks on a small context, counting in memory.
import { Writable } from 'node:stream';
import pino from 'pino';
import Redis from 'ioredis';
import { Counter, Registry } from 'prom-client';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { plugin } from '../../plugins/rate-limit';
import { decidedInProcess, InsuranceLimiter, LimiterPools } from '../../plugins/rate-limit/limiters';
import { FALLBACK_TOTAL, StoreHealth } from '../../src/redis/store-health';
import { REDIS_UP, watchRedisUp } from '../../src/redis/metrics';
import { ConfigError, validateConfig } from '../../src/config/load';
import { GatewayError } from '../../src/errors';
import type { Outcome, PluginHooks, RequestContext, Services, Usage } from '../../src/pipeline/contract';
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
    { id: 'k', sha256: 'a'.repeat(64), org: 'acme', limits: { requests: 3, tokens: 30, windowSeconds: 60 } },
    { id: 'd', sha256: 'b'.repeat(64) },
    { id: 'free', sha256: 'c'.repeat(64), org: 'open' },
  ],
  orgs: { acme: { limits: { requests: 100, windowSeconds: 60 } }, open: {} },
  plugins: [{ name: 'rate-limit' }],
}, 'inline.yaml', {}, gatewayConfigCheck());

interface TestCtx extends RequestContext { headers: Record<string, string> }

function ctx(keyId: string, extra: Partial<RequestContext> = {}): TestCtx {
  const headers: Record<string, string> = {};
  return {
    id: `req-${Math.random()}`, startedAt: 0, version: 'v1', endpoint: 'chat', protocol: 'chat', stream: false, texts: ['x'.repeat(40)], timings: {},
    principal: principalOf(keyId, config.keys.find((k) => k.id === keyId) ?? {}),
    chat: { model: 'm', messages: [{ role: 'user', content: 'x'.repeat(40) }], stream: false, model_params: {}, texts: ['x'.repeat(40)] } as never,
    setHeader: (n: string, v: string) => { headers[n] = v; },
    signal: new AbortController().signal,
    headers,
    ...extra,
  };
}

const ok: Outcome = { status: 200, reason: null, aborted: false, durationMs: 1 };
const usage = (total: number, estimated = false): Usage => ({ prompt_tokens: 1, completion_tokens: total - 1, total_tokens: total, estimated });
const flush = () => new Promise((r) => setImmediate(r));

/** The plugin as a gateway creates it; `kept` is what the process keeps across reloads. */
async function make(services: Services = {}, defaults?: object, kept?: LimiterPools) {
  const { logger, lines } = capture();
  const env = pluginEnv(plugin, config, services, logger);
  const hooks = await plugin.create(plugin.schema.parse(defaults ? { defaults } : {}), { ...env, kept: kept ?? env.kept }) as PluginHooks<any>;
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
    expect(err).toMatchObject({ reason: 'rate_limited', status: 429, param: null, details: { scope: 'key', budget: 'requests' } });
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

describe('rate-limit limiters', () => {
  it('shares one limiter between equal budgets', () => {
    const limiterFor = new LimiterPools(undefined).source(undefined, 'open');
    expect(limiterFor(5, 60)).toBe(limiterFor(5, 60));
    expect(limiterFor(5, 60)).not.toBe(limiterFor(5, 30));
  });

  it('marks what the insurance limiter decided, admitted, refused or unread', async () => {
    const insurance = new InsuranceLimiter({ points: 1, duration: 60, keyPrefix: '' });
    expect(decidedInProcess(await insurance.get('a'))).toBe(true);
    expect(decidedInProcess(await insurance.consume('a'))).toBe(true);
    const refused = await insurance.consume('a').catch((r: unknown) => r);
    expect(refused).toBeInstanceOf(RateLimiterRes);
    expect(decidedInProcess(refused)).toBe(true);
    expect(decidedInProcess(new RateLimiterRes())).toBe(false);
    expect(decidedInProcess(null)).toBe(false);
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

describe('rate-limit config check', () => {
  it('refuses budgets when the rate-limit plugin is not in the chain (its fields, declared on limits)', () => {
    const check = gatewayConfigCheck();
    const raw = { keys: [{ id: 'k', sha256: 'a'.repeat(64), limits: { requests: 1 } }] };
    expect(() => validateConfig(raw, 'inline.yaml', {}, check)).toThrow(ConfigError);
    expect(() => validateConfig(raw, 'inline.yaml', {}, check)).toThrow(/keys\[0\]\.limits\.requests: requests needs the rate-limit plugin/);
    expect(() => validateConfig({ orgs: { acme: { limits: { tokens: 5 } } } }, 'inline.yaml', {}, check)).toThrow(/orgs\.acme\.limits\.tokens/);
    expect(() => validateConfig({ ...raw, plugins: [{ name: 'rate-limit' }] }, 'inline.yaml', {}, check)).not.toThrow();
  });

  it('checks its fields with their paths, and names a field nobody declared', () => {
    const check = gatewayConfigCheck();
    const bad = { keys: [{ id: 'k', sha256: 'a'.repeat(64), limits: { requests: 0, tokenz: 5 } }], plugins: [{ name: 'rate-limit' }] };
    const problems = (() => { try { validateConfig(bad, 'inline.yaml', {}, check); return []; } catch (err) { return (err as ConfigError).problems; } })();
    expect(problems).toEqual(expect.arrayContaining([expect.stringMatching(/^keys\[0\]\.limits\.requests: /), 'keys[0].limits.tokenz: unknown field']));
  });

  it('keeps in-flight limits in the core: no plugin needed, and the old settings say where they went', () => {
    const check = gatewayConfigCheck();
    const upstreams = { b: { url: 'http://127.0.0.1:1/v1', maxInFlight: 4 } };
    expect(() => validateConfig({ upstreams, keys: [{ id: 'k', sha256: 'a'.repeat(64), limits: { concurrency: 2 } }] }, 'inline.yaml', {}, check)).not.toThrow();
    expect(() => validateConfig({ plugins: [{ name: 'rate-limit', queueTimeoutMs: 5 }] }, 'inline.yaml', {}, check)).toThrow(/plugins\[0\]\.queueTimeoutMs: moved: set admission\.queueTimeoutMs instead/);
  });
});
