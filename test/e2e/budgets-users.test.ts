// Per-user budgets on the real Redis: 50 end users behind one key whose
// `limits.perUser` gives each a token budget of about two answers. 200
// concurrent requests that name no max_tokens, four from each user, never
// make a user spend more than their share, as the backend itself counts what
// it served by the forwarded `user`, while the key's own budget is far from
// spent; refusals name `user`, and a spent user's neighbours go on. The
// user field of each protocol (chat `user`, Responses `safety_identifier`,
// Messages `metadata.user_id`, the operator's header) names the same budget;
// a key without `endUsers` is not limited per user; a bad id is a 400 naming
// its field; the usage export read by user sums to the spend API's.
import { startMeteredBackend, type MeteredBackend } from '../support/metered-backend';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { admin, makeAdminKey } from '../support/admin';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, type JsonResponse } from '../support/http';
import { exported, spendSums, sumsOf } from '../support/spend';
import { until } from '../support/wait';
import { PER_REQUEST_TOKENS, PER_TEXT_TOKENS } from '../../src/request/token-bound';

jest.setTimeout(120_000);

const PROMPT = 'Count to twenty, one word at a time.';
const PROMPT_TOKENS = 9;
const WORDS = 20;
const BOUND = PROMPT.length + PER_TEXT_TOKENS + PER_REQUEST_TOKENS;
// Two whole answers, and room for a third's prompt bound and a few tokens: the third is cut short or refused.
const PER_USER = 2 * (PROMPT_TOKENS + WORDS) + BOUND + 4;
const KEY_TOKENS = 1_000_000;
const USERS = 50;
const chat = (extra: Record<string, unknown> = {}) => ({ model: 'm-1', messages: [{ role: 'user', content: PROMPT }], ...extra });

describe('per-user budgets', () => {
  const adminKey = makeAdminKey();
  const app = makeKey('app', { org: 'acme', endUsers: {}, limits: { tokens: KEY_TOKENS, windowSeconds: 3600, perUser: { tokens: PER_USER, windowSeconds: 3600 } } });
  const proto = makeKey('proto', { org: 'acme', endUsers: { header: 'X-End-User' }, limits: { perUser: { requests: 4, windowSeconds: 3600 } } });
  const plain = makeKey('plain', { org: 'acme', limits: { perUser: { requests: 1, windowSeconds: 3600 } } });
  // Two keys of a team whose template they share: one user across both; a key's own template comes first.
  const member1 = makeKey('member1', { org: 'acme', team: 'crew', endUsers: {} });
  const member2 = makeKey('member2', { org: 'acme', team: 'crew', endUsers: {} });
  const ownTemplate = makeKey('own-template', { org: 'acme', team: 'crew', endUsers: {}, limits: { perUser: { requests: 3, windowSeconds: 3600 } } });
  const prefix = uniquePrefix();
  let backend: MeteredBackend;
  let gw: TestGateway;
  let adminUrl: string;
  const chatAs = (key: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> =>
    post(`${gw.url}/v1/chat/completions`, body, { ...bearer(key), ...headers }, true);

  beforeAll(async () => {
    backend = await startMeteredBackend({ words: WORDS, gapMs: 2 });
    gw = await startGateway({
      redis: { url: sharedRedisUrl(), prefix, commandTimeoutMs: 2000 },
      admin: { keys: [adminKey.digest] },
      keys: [app.entry, proto.entry, plain.entry, member1.entry, member2.entry, ownTemplate.entry],
      orgs: { acme: {} },
      teams: { crew: { org: 'acme', limits: { perUser: { requests: 2, windowSeconds: 3600 } } } },
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'b' }],
      pricing: [{ model: '*', input: 1, output: 2 }],
      plugins: [{ name: 'rate-limit', defaultMaxTokens: 64 }],
    }, { admin: true });
    adminUrl = gw.admin!.url;
  });
  afterAll(async () => {
    await gw?.close();
    await backend?.close();
    await deletePrefix(sharedRedisUrl(), prefix);
  });

  it('50 users, 200 concurrent requests: no user spends more than their share, refusals name user, the key budget is not spent', async () => {
    const results = await Promise.all(Array.from({ length: USERS * 4 }, async (_, i) => {
      const user = `u${i % USERS}`;
      return { user, res: await chatAs(app.key, chat({ user })) };
    }));
    expect(results.every(({ res }) => res.status === 200 || res.status === 429)).toBe(true);
    for (let u = 0; u < USERS; u++) {
      const user = `u${u}`;
      const served = backend.served.filter((s) => s.user === user);
      const tokens = served.reduce((n, s) => n + s.prompt + s.completion, 0);
      expect(tokens).toBeLessThanOrEqual(PER_USER);
      // Every user got at least the first two whole answers' worth of room.
      expect(served.length).toBeGreaterThanOrEqual(2);
      expect(served.length).toBeLessThan(4);
    }
    const refused = results.filter(({ res }) => res.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(USERS);
    for (const { res } of refused) {
      expect(res.body.error).toMatchObject({ reason: 'rate_limited', param: 'user', status: 429 });
      expect(res.body.error.message).toMatch(/your per-user token budget/);
      // Never the key's figures.
      expect(res.body.error.message).not.toContain(String(KEY_TOKENS));
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    const servedAll = backend.served.reduce((n, s) => n + s.prompt + s.completion, 0);
    expect(servedAll).toBeLessThan(KEY_TOKENS / 10);
    // A spent user stays refused; one who has spent nothing goes on.
    const again = await chatAs(app.key, chat({ user: 'u0', max_tokens: 8 }));
    expect(again.status).toBe(429);
    expect(again.body.error.param).toBe('user');
    expect((await chatAs(app.key, chat({ user: 'newcomer' }))).status).toBe(200);
    // The Redis keys of a user's budget carry a TTL: idle users expire.
    const { default: Redis } = await import('ioredis');
    const redis = new Redis(sharedRedisUrl());
    try {
      const ttl = await redis.pttl(`${prefix}{user:key/app/u0}:tokens`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(3600_000);
    } finally {
      redis.disconnect();
    }
  });

  it('each protocol\'s user field and the named header count against the same budget', async () => {
    const auth = bearer(proto.key);
    const answers = [
      await chatAs(proto.key, chat({ user: 'same' })),
      await post(`${gw.url}/v1/responses`, { model: 'm-1', input: PROMPT, safety_identifier: 'same' }, auth, true),
      await post(`${gw.url}/v1/messages`, { model: 'm-1', max_tokens: 16, messages: [{ role: 'user', content: PROMPT }], metadata: { user_id: 'same' } }, auth, true),
      await chatAs(proto.key, chat(), { 'x-end-user': 'same' }),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const fifth = await post(`${gw.url}/v1/messages`, { model: 'm-1', max_tokens: 16, messages: [{ role: 'user', content: PROMPT }], metadata: { user_id: 'same' } }, auth, true);
    expect(fifth.status).toBe(429);
    expect(fifth.body.error.type).toBe('rate_limit_error');
    const sixth = await chatAs(proto.key, chat({ user: 'same' }));
    expect(sixth.status).toBe(429);
    expect(sixth.body.error).toMatchObject({ param: 'user', reason: 'rate_limited' });
    expect(sixth.body.error.message).toMatch(/your per-user request budget \(4 requests per 3600 seconds\)/);
    // The header names the user before the body does; another user is untouched.
    expect((await chatAs(proto.key, chat({ user: 'same' }), { 'x-end-user': 'other' })).status).toBe(200);
    // A request that names no user is under the key's budgets alone (it has none).
    expect((await chatAs(proto.key, chat())).status).toBe(200);
  });

  it('a team\'s template bounds a user across the team\'s keys; a key\'s own template comes first', async () => {
    expect((await chatAs(member1.key, chat({ user: 'crew-user' }))).status).toBe(200);
    expect((await chatAs(member2.key, chat({ user: 'crew-user' }))).status).toBe(200);
    const third = await chatAs(member1.key, chat({ user: 'crew-user' }));
    expect(third.status).toBe(429);
    expect(third.body.error.param).toBe('user');
    expect(third.body.error.message).toMatch(/\(2 requests per 3600 seconds\)/);
    // The key with its own template counts the same id on its own, under its own budget.
    for (let i = 0; i < 3; i++) expect((await chatAs(ownTemplate.key, chat({ user: 'crew-user' }))).status).toBe(200);
    expect((await chatAs(ownTemplate.key, chat({ user: 'crew-user' }))).status).toBe(429);
  });

  it('a key that may not name end users is not limited per user, and its user field is forwarded as before', async () => {
    for (let i = 0; i < 3; i++) expect((await chatAs(plain.key, chat({ user: 'same' }))).status).toBe(200);
    expect((await chatAs(plain.key, chat({ user: '<b>not an id</b>' }))).status).toBe(200);
    expect(backend.served.some((s) => s.user === '<b>not an id</b>')).toBe(true);
  });

  it('an id that is markup, too long or not a string is a 400 naming its field, before anything is spent', async () => {
    const before = backend.served.length;
    const cases: Array<[Promise<JsonResponse>, string]> = [
      [chatAs(app.key, chat({ user: '<script>alert(1)</script>' })), 'user'],
      [chatAs(app.key, chat({ user: 'a'.repeat(129) })), 'user'],
      [chatAs(app.key, chat({ user: 'two words' })), 'user'],
      [post(`${gw.url}/v1/responses`, { model: 'm-1', input: PROMPT, safety_identifier: 'x'.repeat(500) }, bearer(proto.key), true), 'safety_identifier'],
      [post(`${gw.url}/v1/messages`, { model: 'm-1', max_tokens: 16, messages: [{ role: 'user', content: PROMPT }], metadata: { user_id: '"><img src=x>' } }, bearer(proto.key), true), 'metadata.user_id'],
      [chatAs(proto.key, chat(), { 'x-end-user': '<img src=x onerror=alert(1)>' }), 'x-end-user'],
    ];
    for (const [pending, param] of cases) {
      const res = await pending;
      expect(res.status).toBe(400);
      // The Messages API's error has no param: its message names the field.
      if (param !== 'metadata.user_id') expect(res.body.error.param).toBe(param);
      expect(res.body.error.message).toContain(`${param} must name the end user in 1 to 128`);
    }
    expect(backend.served.length).toBe(before);
    // 128 characters is still an id (on the key with a request budget: the id is part of the text a token budget bounds).
    expect((await chatAs(proto.key, chat({ user: 'a'.repeat(128) }))).status).toBe(200);
  });

  it('each usage record carries its user; the export read by user sums to the spend API\'s', async () => {
    await until(async () => (await spendSums(adminUrl, adminKey.key, '?user=u1')).requests === 4, 'u1\'s four requests in the spend sums');
    for (const user of ['u1', 'u7', 'same', 'newcomer']) {
      const sums = await spendSums(adminUrl, adminKey.key, `?user=${user}`);
      const records = await exported(adminUrl, adminKey.key, 'jsonl', `2000-01-01&user=${user}`);
      expect(records.length).toBeGreaterThan(0);
      expect(records.every((r) => r.user === user)).toBe(true);
      expect(sumsOf(records)).toEqual(sums);
      const csv = await exported(adminUrl, adminKey.key, 'csv', `2000-01-01&user=${user}`);
      expect(sumsOf(csv)).toEqual(sums);
    }
    // The backend's own count of what it served to u1 is what the spend API says u1 used.
    const served = backend.served.filter((s) => s.user === 'u1');
    const u1 = await spendSums(adminUrl, adminKey.key, '?user=u1');
    expect(u1.prompt_tokens + u1.completion_tokens).toBe(served.reduce((n, s) => n + s.prompt + s.completion, 0));
    // A key that may not name users leaves its records' user null.
    const all = await exported(adminUrl, adminKey.key, 'jsonl');
    const plains = all.filter((r) => r.key === 'plain');
    expect(plains.length).toBeGreaterThan(0);
    expect(plains.every((r) => r.user === null)).toBe(true);
    // A user id in the query is checked like any other name.
    const bad = await admin(adminUrl, 'GET', `/admin/spend?user=${'x'.repeat(300)}`, adminKey.key);
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('user');
  });
});
