// Team budgets on the real Redis, two replicas of two workers each: an org
// with two teams of two keys, one team with a token budget and one with a
// dollar budget, each fitting the real cost of about ten answers. 100
// concurrent requests that name no max_tokens, 25 from each key, never make
// a team spend more than its budget, as the backend itself counts what it
// served; every refusal names the level that refused (`param: "team"`); the
// spend API's sums for each team are what the backend served, and the usage
// export read by team sums to the same.
import { startMeteredBackend, type MeteredBackend, type Served } from '../support/metered-backend';
import { freePort, spawnGateway, type GatewayProcess } from '../support/process';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { makeAdminKey } from '../support/admin';
import { makeKey } from '../support/gateway';
import { bearer, post, postSse, type JsonResponse } from '../support/http';
import { exported, spendSums, sumsOf } from '../support/spend';
import { until } from '../support/wait';
import Redis from 'ioredis';
import { PER_REQUEST_TOKENS, PER_TEXT_TOKENS } from '../../src/request/token-bound';

jest.setTimeout(120_000);

// $1 per million input tokens and $2 per million output: 1000 and 2000 nano-dollars a token.
const PRICING = [{ model: '*', input: 1, output: 2 }];
// The teams' prompts differ in length, so what the backend served tells the teams apart: 9 and 10 prompt tokens.
const PROMPT = { alpha: 'Count to twenty, one word at a time.', beta: 'Count to twenty, one word at a time now.' };
const PROMPT_TOKENS = { alpha: 9, beta: 10 };
const WORDS = 20;
const bound = (text: string): number => text.length + PER_TEXT_TOKENS + PER_REQUEST_TOKENS;
const TOKEN_BUDGET = 10 * (PROMPT_TOKENS.alpha + WORDS) + bound(PROMPT.alpha) + 4;
const DOLLAR_BUDGET = 10 * (PROMPT_TOKENS.beta * 1000 + WORDS * 2000) + bound(PROMPT.beta) * 1000 + 10 * 2000;
const costNanos = (s: Served): number => s.prompt * 1000 + s.completion * 2000;
const chat = (team: 'alpha' | 'beta', stream: boolean) => ({ model: 'm-1', stream, messages: [{ role: 'user', content: PROMPT[team] }] });

describe('team budgets across two replicas of two workers', () => {
  const adminKey = makeAdminKey();
  const keys = {
    a1: makeKey('a1', { org: 'acme', team: 'alpha' }),
    a2: makeKey('a2', { org: 'acme', team: 'alpha', limits: { requests: 1000 } }),
    b1: makeKey('b1', { org: 'acme', team: 'beta' }),
    b2: makeKey('b2', { org: 'acme', team: 'beta', limits: { tokens: 1_000_000 } }),
  };
  const teamOf = (id: string): 'alpha' | 'beta' => (id.startsWith('a') ? 'alpha' : 'beta');
  const prefix = uniquePrefix();
  let backend: MeteredBackend;
  let replicas: GatewayProcess[];
  let adminUrl: string;
  let redis: Redis;

  beforeAll(async () => {
    redis = new Redis(sharedRedisUrl());
    backend = await startMeteredBackend({ words: WORDS, gapMs: 5 });
    const adminPort = await freePort();
    const config = async (admin: boolean) => JSON.stringify({
      server: { host: '127.0.0.1', port: 0, workers: 2, drainSeconds: 1, metrics: { port: await freePort() } },
      redis: { url: sharedRedisUrl(), prefix, commandTimeoutMs: 2000 },
      ...(admin && { admin: { port: adminPort, keys: [adminKey.digest] } }),
      keys: Object.values(keys).map((k) => k.entry),
      orgs: { acme: { limits: { tokens: 10_000_000 } } },
      teams: {
        alpha: { org: 'acme', limits: { tokens: TOKEN_BUDGET, windowSeconds: 3600 } },
        beta: { org: 'acme', limits: { dollars: DOLLAR_BUDGET / 1e9, dollarWindow: 'day' } },
      },
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

  it('100 concurrent requests from four keys never overspend either team; refusals name the team; the spend API agrees', async () => {
    const ids = Object.keys(keys) as Array<keyof typeof keys>;
    const results = await Promise.all(Array.from({ length: 100 }, async (_, i) => {
      const id = ids[i % 4];
      const url = `${replicas[i % 2].url}/v1/chat/completions`;
      const body = chat(teamOf(id), i % 8 >= 4);
      const res: JsonResponse = i % 8 < 4
        ? await post(url, body, bearer(keys[id].key), true)
        : await postSse(url, body, bearer(keys[id].key), undefined, true).then((r): JsonResponse => ({ status: r.status, headers: r.headers, text: r.raw, body: r.status === 200 ? {} : JSON.parse(r.raw) }));
      return { id, res };
    }));
    expect(results.every(({ res }) => res.status === 200 || res.status === 429)).toBe(true);
    for (const team of ['alpha', 'beta'] as const) {
      const mine = results.filter(({ id }) => teamOf(id) === team);
      const admitted = mine.filter(({ res }) => res.status === 200).length;
      expect(admitted).toBeGreaterThanOrEqual(1);
      expect(admitted).toBeLessThan(50);
      for (const { res } of mine.filter((r) => r.res.status === 429)) {
        expect(res.body.error).toMatchObject({ reason: 'rate_limited', param: 'team', status: 429 });
        expect(res.body.error.message).toMatch(team === 'alpha' ? /your team's token budget \(\d+ tokens per 3600 seconds\)/ : /your team's dollar budget \(\$[\d.]+ per day\)/);
        // The other tenants' figures are never in it: no key's, no org's.
        expect(res.body.error.message).not.toMatch(/10000000|organization|API key's/);
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      }
    }
    // What the backend served, by team (the prompt's length tells them apart).
    const served = (team: 'alpha' | 'beta') => backend.served.filter((s) => s.prompt === PROMPT_TOKENS[team]);
    const alphaTokens = served('alpha').reduce((n, s) => n + s.prompt + s.completion, 0);
    const betaNanos = served('beta').reduce((n, s) => n + costNanos(s), 0);
    expect(alphaTokens).toBeLessThanOrEqual(TOKEN_BUDGET);
    expect(betaNanos).toBeLessThanOrEqual(DOLLAR_BUDGET);
    expect(served('alpha').length + served('beta').length).toBe(results.filter(({ res }) => res.status === 200).length);
    // The spend API's sums per team are exactly what the backend served, every request (refused too) counted.
    const asked = (team: string) => results.filter(({ id }) => teamOf(id) === team).length;
    await until(async () => (await spendSums(adminUrl, adminKey.key, '?team=alpha')).requests === asked('alpha'), 'alpha\'s requests in the spend sums');
    await until(async () => (await spendSums(adminUrl, adminKey.key, '?team=beta')).requests === asked('beta'), 'beta\'s requests in the spend sums');
    const alpha = await spendSums(adminUrl, adminKey.key, '?team=alpha');
    const beta = await spendSums(adminUrl, adminKey.key, '?team=beta');
    expect(alpha.prompt_tokens + alpha.completion_tokens).toBe(alphaTokens);
    expect(beta.cost_nanodollars).toBe(betaNanos);
    const org = await spendSums(adminUrl, adminKey.key, '?org=acme');
    expect(org.requests).toBe(100);
    // The usage export read by team sums to the same, and holds that team's records alone.
    for (const [team, sums] of [['alpha', alpha], ['beta', beta]] as const) {
      const records = await exported(adminUrl, adminKey.key, 'jsonl', `2000-01-01&team=${team}`);
      expect(records.every((r) => r.team === team && teamOf(r.key as string) === team)).toBe(true);
      expect(sumsOf(records)).toEqual(sums);
    }
  });

  it('the team\'s budget is then used to its last cap by both of its keys, one request at a time, and never past it', async () => {
    const counter = `${prefix}{team:alpha}:tokens`;
    const spent = () => backend.served.filter((s) => s.prompt === PROMPT_TOKENS.alpha).reduce((n, s) => n + s.prompt + s.completion, 0);
    let last: JsonResponse | undefined;
    for (let i = 0; i < 50 && last === undefined; i++) {
      // Each is sent once the one before has settled (its unused reservation given back).
      await until(async () => Number(await redis.get(counter)) === spent(), 'the last request settled');
      const res = await post(`${replicas[i % 2].url}/v1/chat/completions`, chat('alpha', false), bearer(keys[i % 2 === 0 ? 'a1' : 'a2'].key), true);
      if (res.status !== 200) last = res;
    }
    expect(last?.status).toBe(429);
    expect(last?.body.error).toMatchObject({ reason: 'rate_limited', param: 'team' });
    expect(spent()).toBeLessThanOrEqual(TOKEN_BUDGET);
    // Less is left than the cheapest answer still admitted: the prompt's bound and one token.
    expect(spent()).toBeGreaterThan(TOKEN_BUDGET - (bound(PROMPT.alpha) + 1));
  });
});
