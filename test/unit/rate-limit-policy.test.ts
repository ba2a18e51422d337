import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { rateLimited, refusalMessage } from '../../plugins/rate-limit/headers';
import { formatReset, retryAfterSeconds } from '../../src/admission/refusals';
import { hashTag, hashTagOf, storeKey } from '../../plugins/rate-limit/keys';
import { admitted, compilePolicies, decide, type Policy } from '../../plugins/rate-limit/policy';
import { validateConfig } from '../../src/config/load';
import { gatewayConfigCheck } from '../../src/gateway';
import { principalOf } from '../../src/auth/keys';
import { reservationOf, settlement, usedTokens } from '../../plugins/rate-limit/reservation';
import type { RequestContext } from '../../src/pipeline/contract';

describe('rate-limit: reset and Retry-After formatting', () => {
  it.each([
    [0, '0s'], [1, '1s'], [999, '1s'], [1000, '1s'], [1001, '2s'], [59_000, '59s'], [60_000, '1m0s'],
    [360_000, '6m0s'], [361_500, '6m2s'], [3_600_000, '1h0m0s'], [3_723_000, '1h2m3s'], [-5, '0s'],
  ])('%d ms → %s', (ms, text) => expect(formatReset(ms)).toBe(text));

  it('Retry-After is whole seconds, rounded up, at least 1', () => {
    expect(retryAfterSeconds(0)).toBe(1);
    expect(retryAfterSeconds(1)).toBe(1);
    expect(retryAfterSeconds(1000)).toBe(1);
    expect(retryAfterSeconds(1001)).toBe(2);
    expect(retryAfterSeconds(59_500)).toBe(60);
  });
});

describe('rate-limit: refusal wording', () => {
  it('names the budget, its owner, the budget size and when it refills', () => {
    expect(refusalMessage('key', 'requests', 50, 60, 12_000)).toBe("Rate limit reached: this API key's request budget (50 requests per 60 seconds) is used up. It refills in 12s.");
    expect(refusalMessage('org', 'tokens', 2_000_000, 3600, 360_000)).toBe("Rate limit reached: your organization's token budget (2000000 tokens per 3600 seconds) is used up. It refills in 6m0s.");
    expect(refusalMessage('key', 'tokens', 10, 1, 0)).toContain('(10 tokens per second) is used up. It refills in 1s.');
  });

  it('builds the 429 with Retry-After and the details the metrics read', () => {
    const budget = { scope: 'org', kind: 'tokens', points: 100, windowSeconds: 60, key: 'k', limiter: undefined as never, limitText: '100' } as const;
    const err = rateLimited({ budget, remaining: 0, msBeforeNext: 2500 });
    expect(err).toMatchObject({ reason: 'rate_limited', status: 429, param: null, headers: { 'retry-after': '3' }, details: { scope: 'org', budget: 'tokens' } });
  });
});

describe('rate-limit: store keys', () => {
  it('hash-tags every key of one subject with the same tag, after the prefix', () => {
    expect(hashTag('key', 'ci-bot')).toBe('{key:ci-bot}');
    expect(storeKey('sluice:', 'key', 'ci-bot', 'requests')).toBe('sluice:{key:ci-bot}:requests');
    expect(storeKey('sluice:', 'org', 'acme', 'tokens')).toBe('sluice:{org:acme}:tokens');
    expect(hashTagOf(storeKey('p:', 'key', 'a', 'requests'))).toBe(hashTagOf(storeKey('p:', 'key', 'a', 'tokens')));
    expect(hashTagOf(storeKey('p:', 'key', 'a', 'requests'))).not.toBe(hashTagOf(storeKey('p:', 'org', 'a', 'requests')));
  });

  it('computes the slot-deciding part like Redis Cluster does', () => {
    expect(hashTagOf('plain')).toBe('plain');
    expect(hashTagOf('a{b}c')).toBe('b');
    expect(hashTagOf('a{}c{d}')).toBe('a{}c{d}');
    expect(hashTagOf('a{b')).toBe('a{b');
  });
});

describe('rate-limit: policies and decisions', () => {
  const config = validateConfig({
    keys: [
      { id: 'own', sha256: 'a'.repeat(64), org: 'acme', limits: { requests: 5, windowSeconds: 10 } },
      { id: 'dflt', sha256: 'b'.repeat(64) },
      { id: 'orgonly', sha256: 'c'.repeat(64), org: 'acme', limits: { tokens: 7 } },
      { id: 'free', sha256: 'd'.repeat(64), org: 'open' },
    ],
    orgs: { acme: { limits: { requests: 50, tokens: 1000, windowSeconds: 60 } }, open: {} },
    plugins: [{ name: 'rate-limit' }],
  }, 'inline.yaml', {}, gatewayConfigCheck());
  const limiterFor = (points: number, duration: number) => new RateLimiterMemory({ points, duration });
  const principals = new Map(config.keys.map((k) => [k.id, principalOf(k.id, k)]));
  const policyOf = compilePolicies(config, { requests: 3, tokens: undefined, windowSeconds: 60 }, 'p:', limiterFor);
  const policies = { get: (id: string) => policyOf(principals.get(id)!) };

  it('gives a key its own budgets (or the defaults) plus its org\'s; keys with none have none', () => {
    const own = policies.get('own')!;
    expect(own.requests.map((b) => [b.scope, b.points, b.windowSeconds, b.key])).toEqual([['key', 5, 10, 'p:{key:own}:requests'], ['org', 50, 60, 'p:{org:acme}:requests']]);
    expect(own.tokens.map((b) => [b.scope, b.points])).toEqual([['org', 1000]]);
    expect(policies.get('dflt')!.requests.map((b) => [b.scope, b.points])).toEqual([['key', 3]]);
    expect(policies.get('orgonly')!.tokens.map((b) => [b.scope, b.points])).toEqual([['key', 7], ['org', 1000]]);
    expect(policies.get('free')!.requests.map((b) => [b.scope, b.points])).toEqual([['key', 3]]);
    const noDefaults = compilePolicies(config, undefined, 'p:', limiterFor);
    expect(noDefaults(principals.get('free')!)).toBeUndefined();
    expect(noDefaults(principals.get('dflt')!)).toBeUndefined();
    expect(noDefaults(principals.get('orgonly')!)!.requests.map((b) => [b.scope, b.points])).toEqual([['org', 50]]);
    // The org's budgets are compiled once and shared by its keys.
    expect(policies.get('own')!.tokens[0]).toBe(policies.get('orgonly')!.tokens[1]);
  });

  it('compiles a key once per principal: the same principal gets the same policy, a changed key (a new principal) its own', () => {
    const own = principals.get('own')!;
    expect(policyOf(own)).toBe(policyOf(own));
    const changed = principalOf('own', { ...own.entry, limits: { requests: 9 } });
    expect(policyOf(changed)!.requests.map((b) => [b.scope, b.points, b.key])).toEqual([['key', 9, 'p:{key:own}:requests'], ['org', 50, 'p:{org:acme}:requests']]);
    expect(policyOf(own)!.requests[0].points).toBe(5);
  });

  const policy = policies.get('own')!; // requests: key 5, org 50; tokens: org 1000
  const res = (consumed: number, ms: number) => new RateLimiterRes(0, ms, consumed);

  it('admits and reports the tightest budget of each kind', () => {
    const d = decide(policy, [res(4, 9000), res(10, 50_000), res(200, 30_000)]);
    expect(d.refused).toBeUndefined();
    expect(d.unavailable).toBe(false);
    expect(d.requests).toMatchObject({ remaining: 1, msBeforeNext: 9000, budget: { scope: 'key' } });
    expect(d.tokens).toMatchObject({ remaining: 800, msBeforeNext: 30_000 });
  });

  it('treats an unread token budget as full', () => {
    const d = decide(policy, [res(1, 10_000), res(1, 60_000), null]);
    expect(d.tokens).toMatchObject({ remaining: 1000, msBeforeNext: 0 });
  });

  it('refuses a request past a request budget, and a reservation that does not fit a token budget', () => {
    expect(decide(policy, [res(6, 4000), res(7, 50_000), null]).refused).toMatchObject({ budget: { scope: 'key', kind: 'requests' }, msBeforeNext: 4000 });
    expect(decide(policy, [res(5, 4000), res(7, 50_000), null]).refused).toBeUndefined();
    // The answers count the reservation (here 100 tokens): 1001 does not fit, 1000 just does.
    const refused = decide(policy, [res(1, 4000), res(7, 50_000), res(1001, 20_000)], 100);
    expect(refused.refused).toMatchObject({ budget: { scope: 'org', kind: 'tokens' } });
    expect(refused.left).toBe(99);
    expect(refused.tokens).toMatchObject({ remaining: 99 });
    const fits = decide(policy, [res(1, 4000), res(7, 50_000), res(1000, 20_000)], 100);
    expect(fits.refused).toBeUndefined();
    expect(fits.tokens).toMatchObject({ remaining: 0 });
  });

  it('reports the spent budget that refills last', () => {
    const d = decide(policy, [res(6, 4000), res(51, 50_000), res(1000, 20_000)]);
    expect(d.refused).toMatchObject({ budget: { scope: 'org', kind: 'requests' }, msBeforeNext: 50_000 });
  });

  it('on a tie in remaining, the later reset is the tighter', () => {
    const d = decide(policy, [res(5, 4000), res(50, 50_000), null]);
    expect(d.requests).toMatchObject({ remaining: 0, msBeforeNext: 50_000, budget: { scope: 'org' } });
  });

  it('marks a store error as unavailable', () => {
    const d = decide(policy, [new Error('down'), res(1, 1000), null]);
    expect(d.unavailable).toBe(true);
    expect(d.refused).toBeUndefined();
  });

  it('tells which request budgets admitted (to give the count back on a refusal)', () => {
    const [key] = policy.requests;
    expect(admitted(res(5, 1), key)).toBe(true);
    expect(admitted(res(6, 1), key)).toBe(false);
    expect(admitted(new Error('x'), key)).toBe(false);
  });
});

describe('rate-limit: token reservations', () => {
  const chatCtx = (text: string, model_params: Record<string, unknown> = {}) => ({ texts: [text], chat: { model_params } }) as unknown as RequestContext;

  it('reserves the prompt estimate plus max_completion_tokens or max_tokens (times n), else the default', () => {
    expect(reservationOf(chatCtx('x'.repeat(40)), 0)).toBe(10);
    expect(reservationOf(chatCtx('x'.repeat(40)), 256)).toBe(266);
    expect(reservationOf(chatCtx('x'.repeat(40), { max_tokens: 100 }), 256)).toBe(110);
    expect(reservationOf(chatCtx('x'.repeat(40), { max_tokens: 100, max_completion_tokens: 50 }), 0)).toBe(60);
    expect(reservationOf(chatCtx('x'.repeat(40), { max_tokens: 100, n: 3 }), 0)).toBe(310);
    expect(reservationOf(chatCtx(''), 0)).toBe(1);
    expect(reservationOf({ texts: ['a cat'] } as unknown as RequestContext, 500)).toBe(2); // an image: its prompt only
  });

  it('settles with the real usage: more charged, the rest given back; after the window ended, only an overrun', () => {
    expect(settlement(100, 110, false)).toBe(10);
    expect(settlement(100, 30, false)).toBe(-70);
    expect(settlement(100, 0, false)).toBe(-100);
    expect(settlement(100, 30, true)).toBe(0);
    expect(settlement(100, 130, true)).toBe(30);
    expect(usedTokens(undefined)).toBe(0);
    expect(usedTokens({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3.2, estimated: true })).toBe(4);
  });
});
