import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { rateLimited, refusalMessage } from '../../../../plugins/rate-limit/headers';
import { formatReset, retryAfterSeconds } from '../../../../src/admission/refusals';
import { hashTag, hashTagOf, storeKey } from '../../../../plugins/rate-limit/keys';
import { admitted, compilePolicies, keyAt, type CompiledBudget } from '../../../../plugins/rate-limit/policy';
import { decide } from '../../../../plugins/rate-limit/decide';
import { periodOf } from '../../../../plugins/rate-limit/windows';
import { validateConfig } from '../../../../src/config/load';
import { gatewayConfigCheck } from '../../../../src/gateway';
import { principalOf } from '../../../../src/auth/keys';
import { askOf, dearest, largestCap, need, settlement, used, type Ask } from '../../../../plugins/rate-limit/reservation';
import type { RequestContext } from '../../../../src/contract/plugin';
import { PER_REQUEST_TOKENS, PER_TEXT_TOKENS } from '../../../../src/request/token-bound';

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
    expect(refusalMessage('key', 'requests', 50, 'per 60 seconds', 12_000)).toBe("Rate limit reached: this API key's request budget (50 requests per 60 seconds) is used up. It refills in 12s.");
    expect(refusalMessage('org', 'tokens', 2_000_000, 'per 3600 seconds', 360_000)).toBe("Rate limit reached: your organization's token budget (2000000 tokens per 3600 seconds) is used up. It refills in 6m0s.");
    expect(refusalMessage('key', 'tokens', 10, 'per second', 0)).toContain('(10 tokens per second) is used up. It refills in 1s.');
    expect(refusalMessage('org', 'dollars', 25_500_000_000, 'per month', 3_600_000, true)).toMatch(/^Rate limit reached: your organization's dollar budget \(\$25\.5 per month\) is used up\. It refills in 1h0m0s \(at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)\.$/);
  });

  it('builds the 429 with Retry-After and the details the metrics read', () => {
    const budget = { scope: 'org', kind: 'tokens', points: 100, windowSeconds: 60, window: 'per 60 seconds', hard: true, key: 'k', limiter: undefined as never, limitText: '100' } as const;
    const err = rateLimited({ budget, remaining: 0, msBeforeNext: 2500 });
    expect(err).toMatchObject({ reason: 'rate_limited', status: 429, param: 'org', headers: { 'retry-after': '3' }, details: { scope: 'org', budget: 'tokens' } });
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
  const policyOf = compilePolicies(config, { requests: 3, tokens: undefined, windowSeconds: 60, dollars: undefined, dollarWindow: 'month', hard: true }, 'p:', limiterFor);
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

  it('adds the team\'s budgets between the key\'s and the org\'s, compiled once per team object; a changed or moved-to team counts from the next request', () => {
    const teamConfig = validateConfig({
      keys: [{ id: 'member', sha256: 'e'.repeat(64), org: 'acme', team: 'search', limits: { tokens: 100 } }],
      orgs: { acme: { limits: { tokens: 1000 } } },
      teams: { search: { org: 'acme', limits: { tokens: 300, requests: 20 } }, other: { org: 'acme', limits: { tokens: 50 } } },
      plugins: [{ name: 'rate-limit' }],
    }, 'inline.yaml', {}, gatewayConfigCheck());
    const teams = new Map(Object.entries(teamConfig.teams).map(([name, t]) => [name, { name, ...t }]));
    const lookup = { get: (name: string) => teams.get(name) };
    const of = compilePolicies(teamConfig, undefined, 'p:', limiterFor, lookup);
    const member = principalOf('member', teamConfig.keys[0]);
    const first = of(member)!;
    expect(first.tokens.map((b) => [b.scope, b.points, b.key])).toEqual([['key', 100, 'p:{key:member}:tokens'], ['team', 300, 'p:{team:search}:tokens'], ['org', 1000, 'p:{org:acme}:tokens']]);
    expect(first.requests.map((b) => [b.scope, b.points])).toEqual([['team', 20]]);
    expect(of(member)).toBe(first);
    // The team changed (another object): its new budget from the next request.
    teams.set('search', { name: 'search', org: 'acme', limits: { tokens: 400 } });
    expect(of(member)!.tokens.map((b) => [b.scope, b.points])).toEqual([['key', 100], ['team', 400], ['org', 1000]]);
    // The key moved to another team (a new principal): charged there.
    const moved = principalOf('member', { ...member.entry, team: 'other' });
    expect(of(moved)!.tokens.map((b) => [b.scope, b.points, b.key])).toEqual([['key', 100, 'p:{key:member}:tokens'], ['team', 50, 'p:{team:other}:tokens'], ['org', 1000, 'p:{org:acme}:tokens']]);
    // A team this process does not know adds nothing here (its key may use no model: src/teams/teams.ts).
    const lost = principalOf('member', { ...member.entry, team: 'gone' });
    expect(of(lost)!.tokens.map((b) => b.scope)).toEqual(['key', 'org']);
  });

  it('under a hard budget gives the largest cap that fits the tightest level, and names that level when none fits', () => {
    const levels = ['key', 'team', 'org'] as const;
    const reserves = levels.map((scope, i): CompiledBudget => ({ scope, kind: 'tokens', points: [1000, 120, 500][i], windowSeconds: 60, window: 'per 60 seconds', key: scope, limiter: undefined as never, hard: true, limitText: '' }));
    const ask: Ask = { prompt: 10, bound: 20, n: 1 };
    // Each level answered the reservation of want = 64 (prompt bound 20 + 64) on top of what it held: key 0, team 50, org 100.
    const held = [0, 50, 100];
    const results = held.map((h) => new RateLimiterRes(0, 1000, h + 84, false));
    const d = decide([], reserves, results, [84, 84, 84], Date.now(), { ask, want: 64 });
    // The team has 70 left: the bound 20 and a cap of 50.
    expect(d.cap).toBe(50);
    expect(d.kept).toEqual([70, 70, 70]);
    const full = held.map((h, i) => new RateLimiterRes(0, 1000, h + (i === 1 ? 60 : 0) + 84, false));
    const refused = decide([], reserves, full, [84, 84, 84], Date.now(), { ask, want: 64 });
    expect(refused.refused?.budget.scope).toBe('team');
    expect(rateLimited(refused.refused!, refused.left, refused.asked)).toMatchObject({ param: 'team', details: { scope: 'team', budget: 'tokens' } });
    expect(refused.kept).toEqual([0, 0, 0]);
  });

  const policy = policies.get('own')!; // requests: key 5, org 50; tokens: org 1000
  const res = (consumed: number, ms: number) => new RateLimiterRes(0, ms, consumed);
  const decideFor = (p: typeof policy, results: unknown[], reserve = 1) => decide(p.requests, p.reserves, results, p.reserves.map(() => reserve), Date.now());

  it('admits and reports the tightest budget of each kind', () => {
    const d = decideFor(policy, [res(4, 9000), res(10, 50_000), res(200, 30_000)]);
    expect(d.refused).toBeUndefined();
    expect(d.unavailable).toBe(false);
    expect(d.requests).toMatchObject({ remaining: 1, msBeforeNext: 9000, budget: { scope: 'key' } });
    expect(d.tokens).toMatchObject({ remaining: 800, msBeforeNext: 30_000 });
  });

  it('treats an unread token budget as full', () => {
    const d = decideFor(policy, [res(1, 10_000), res(1, 60_000), null]);
    expect(d.tokens).toMatchObject({ remaining: 1000, msBeforeNext: 0 });
  });

  it('refuses a request past a request budget, and a reservation that does not fit a token budget', () => {
    expect(decideFor(policy, [res(6, 4000), res(7, 50_000), null]).refused).toMatchObject({ budget: { scope: 'key', kind: 'requests' }, msBeforeNext: 4000 });
    expect(decideFor(policy, [res(5, 4000), res(7, 50_000), null]).refused).toBeUndefined();
    // The answers count the reservation (here 100 tokens): 1001 does not fit, 1000 just does.
    const refused = decideFor(policy, [res(1, 4000), res(7, 50_000), res(1001, 20_000)], 100);
    expect(refused.refused).toMatchObject({ budget: { scope: 'org', kind: 'tokens' } });
    expect(refused.left).toBe(99);
    expect(refused.tokens).toMatchObject({ remaining: 99 });
    const fits = decideFor(policy, [res(1, 4000), res(7, 50_000), res(1000, 20_000)], 100);
    expect(fits.refused).toBeUndefined();
    expect(fits.tokens).toMatchObject({ remaining: 0 });
  });

  it('reports the spent budget that refills last', () => {
    const d = decideFor(policy, [res(6, 4000), res(51, 50_000), res(1000, 20_000)]);
    expect(d.refused).toMatchObject({ budget: { scope: 'org', kind: 'requests' }, msBeforeNext: 50_000 });
  });

  it('on a tie in remaining, the later reset is the tighter', () => {
    const d = decideFor(policy, [res(5, 4000), res(50, 50_000), null]);
    expect(d.requests).toMatchObject({ remaining: 0, msBeforeNext: 50_000, budget: { scope: 'org' } });
  });

  it('marks a store error as unavailable', () => {
    const d = decideFor(policy, [new Error('down'), res(1, 1000), null]);
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

describe('rate-limit: reservations', () => {
  const chatCtx = (text: string, model_params: Record<string, unknown> = {}) => ({ texts: [text], chat: { model_params } }) as unknown as RequestContext;
  const budget = (kind: 'tokens' | 'dollars', points: number): CompiledBudget =>
    ({ scope: 'key', kind, points, windowSeconds: 60, window: 'per 60 seconds', hard: true, key: `k:${kind}`, limiter: undefined as never, limitText: String(points) });
  const tokens = budget('tokens', 1000);
  const dollars = budget('dollars', 1_000_000); // $0.001
  // $1 per million input tokens and $2 per million output: 1000 and 2000 nano-dollars a token.
  const priced = (ask: Ask): Ask => ({ ...ask, price: { input: 1000, output: 2000 } });

  it('asks for the prompt estimate and the cap the request names (the smallest of its cap fields), times n', () => {
    expect(askOf(chatCtx('x'.repeat(40)), false)).toEqual({ prompt: 10, bound: 10, n: 1, cap: undefined });
    expect(askOf(chatCtx('x'.repeat(40), { max_tokens: 100, max_completion_tokens: 50 }), false)).toEqual({ prompt: 10, bound: 10, n: 1, cap: 50 });
    expect(askOf(chatCtx('x'.repeat(40), { max_tokens: 10, max_completion_tokens: 50 }), false)).toMatchObject({ cap: 10 });
    expect(askOf(chatCtx('x'.repeat(40), { max_tokens: 100, n: 3 }), false)).toEqual({ prompt: 10, bound: 10, n: 3, cap: 100 });
    expect(askOf(chatCtx(''), false)).toMatchObject({ prompt: 1 });
    expect(askOf({ texts: ['a cat'] } as unknown as RequestContext, false)).toEqual({ prompt: 2, bound: 2, n: 1, cap: 0 }); // an image: its prompt only
  });

  it('under a hard budget, bounds the prompt by its UTF-8 bytes and the template allowances, whatever the language', () => {
    expect(askOf(chatCtx('x'.repeat(40)), true)).toMatchObject({ prompt: 10, bound: 40 + PER_TEXT_TOKENS + PER_REQUEST_TOKENS });
    // 4000 CJK characters: estimated at 1000 tokens, a tokenizer may count 4000 or more; the bound is their 12 000 bytes.
    expect(askOf(chatCtx('中'.repeat(4000)), true)).toMatchObject({ prompt: 1000, bound: 12_000 + PER_TEXT_TOKENS + PER_REQUEST_TOKENS });
    const ask = { prompt: 10, bound: 80, n: 1 };
    expect(need(tokens, ask, 5)).toBe(85);
    expect(need({ ...tokens, hard: false }, ask, 5)).toBe(15);
  });

  it('reserves prompt plus cap times n in tokens, and the same priced in whole nano-dollars', () => {
    const ask = priced({ prompt: 10, bound: 10, n: 3, cap: 100 });
    expect(need(tokens, ask, 100)).toBe(310);
    expect(need(dollars, ask, 100)).toBe(10 * 1000 + 300 * 2000);
    expect(need(dollars, { ...ask, price: { input: 0.4, output: 0.7 } }, 1)).toBe(Math.ceil(10 * 0.4 + 3 * 0.7));
    expect(need(dollars, { ...ask, fixedNanos: 40_000_000 }, 100)).toBe(40_000_000); // an image: its price
  });

  it('finds the largest cap that fits the room left (-1: not even the prompt; Infinity: output is free)', () => {
    const ask = priced({ prompt: 10, bound: 10, n: 2 });
    expect(largestCap(tokens, ask, 110)).toBe(50);
    expect(largestCap(tokens, ask, 11)).toBe(0);
    expect(largestCap(tokens, ask, 9)).toBe(-1);
    expect(largestCap(dollars, ask, 10_000 + 4000 * 7 + 3999)).toBe(7);
    expect(largestCap(dollars, { ...ask, price: { input: 1000, output: 0 } }, 10_000)).toBe(Infinity);
    for (let room = 0; room < 3000; room += 7) {
      const c = largestCap(dollars, { ...ask, price: { input: 0.3, output: 1.7 } }, room);
      if (c >= 0) expect(need(dollars, { ...ask, price: { input: 0.3, output: 1.7 } }, c)).toBeLessThanOrEqual(room);
      if (c >= 0) expect(need(dollars, { ...ask, price: { input: 0.3, output: 1.7 } }, c + 1)).toBeGreaterThan(room);
    }
  });

  it('prices at the dearest of the models a request may reach (cached input no cheaper than input for the worst case)', () => {
    const p = (input: number, output: number, cachedInput = input) => ({ input: input * 1e-6, cachedInput: cachedInput * 1e-6, output: output * 1e-6 });
    const worst = dearest([p(1, 4), undefined, p(3, 2)])!;
    expect(worst.input).toBeCloseTo(3000);
    expect(worst.output).toBeCloseTo(4000);
    expect(dearest([undefined])).toBeUndefined();
  });

  it('a hard budget gives a request without a cap the largest cap that fits every budget it reserves in', () => {
    const ask = priced({ prompt: 10, bound: 10, n: 1 });
    const want = 4096;
    const amounts = [need(tokens, ask, want), need(dollars, ask, want)];
    // 600 tokens were taken before (room 400), and $0.0005 (room 500 000 nano-dollars: (500 000 - 10 000) / 2000 = 245 tokens).
    const results = [new RateLimiterRes(0, 30_000, 600 + amounts[0]), new RateLimiterRes(0, 30_000, 500_000 + amounts[1])];
    const d = decide([], [tokens, dollars], results, amounts, Date.now(), { ask, want });
    expect(d.refused).toBeUndefined();
    expect(d.cap).toBe(245);
    expect(d.kept).toEqual([10 + 245, 10_000 + 245 * 2000]);
    expect(d.tokens).toMatchObject({ remaining: 400 - 255 });
    expect(d.dollars).toMatchObject({ remaining: 500_000 - 500_000 });
  });

  it('a hard budget refuses a request whose prompt and one token do not fit, naming the tightest budget and what it had', () => {
    const ask = priced({ prompt: 10, bound: 10, n: 1 });
    const amounts = [need(tokens, ask, 64)];
    const d = decide([], [tokens], [new RateLimiterRes(0, 30_000, 990 + amounts[0])], amounts, Date.now(), { ask, want: 64 });
    expect(d.cap).toBeUndefined();
    expect(d.refused).toMatchObject({ budget: { kind: 'tokens' }, msBeforeNext: 30_000 });
    expect(d.left).toBe(10);
    expect(d.asked).toBe(11);
    expect(d.kept).toEqual([0]);
  });

  it('a calendar window is counted per day or month and resets when the calendar says', () => {
    const b = { ...budget('dollars', 5), calendar: 'month' as const };
    const now = Date.UTC(2026, 10, 28, 12);
    expect(keyAt(b, now)).toBe('k:dollars:2026-11');
    expect(periodOf('month', Date.UTC(2026, 11, 31, 23, 59)).id).toBe('2026-12');
    expect(periodOf('day', now)).toEqual({ id: '2026-11-28', startsAt: Date.UTC(2026, 10, 28), endsAt: Date.UTC(2026, 10, 29) });
    const d = decide([], [b], [new RateLimiterRes(0, 999, 6)], [1], now);
    expect(d.refused!.msBeforeNext).toBe(Date.UTC(2026, 11, 1) - now);
  });

  it('settles with the real usage or cost: more charged, the rest given back; after the window ended, only an overrun', () => {
    expect(settlement(100, 110, false)).toBe(10);
    expect(settlement(100, 30, false)).toBe(-70);
    expect(settlement(100, 0, false)).toBe(-100);
    expect(settlement(100, 30, true)).toBe(0);
    expect(settlement(100, 130, true)).toBe(30);
    expect(used(tokens, undefined, 1)).toBe(0);
    expect(used(tokens, { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3.2, estimated: true }, undefined)).toBe(4);
    expect(used(dollars, undefined, 0.000012345)).toBe(12_345);
    expect(used(dollars, undefined, undefined)).toBe(0);
  });
});
