// Teams at runtime, across two replicas sharing the real Redis: replica A
// serves the admin API, replica B only honours what it says. A team made on A
// governs a request on B within 1 s (its models and its budget); a key moved
// to another team is charged to the new team from its next request; a team
// named by a key cannot be deleted (409 with the count); a read-only admin
// key reads and changes nothing (403); bad input is a 400 naming the field;
// a config team changes only in the file (409). Each call has its audit line.
import { Writable } from 'node:stream';
import pino from 'pino';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, type JsonResponse } from '../support/http';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { admin, makeAdminKey, within } from '../support/admin';
import { spendSums } from '../support/spend';
import { until } from '../support/wait';

const chat = (model = 'm-1') => ({ model, messages: [{ role: 'user', content: 'hello' }] });

describe('runtime teams on two replicas (Redis)', () => {
  const prefix = uniquePrefix();
  const adminKey = makeAdminKey();
  const reader = makeAdminKey();
  const fileKey = makeKey('from-file', { org: 'acme', team: 'configured' });
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(chunk.toString())); done(); } }));
  let backend: Backend;
  let a: TestGateway;
  let b: TestGateway;
  let api: string;
  const ask = (method: string, path: string, body?: unknown, key = adminKey.key) => admin(api, method, path, key, body);
  const chatOn = (gw: TestGateway, key: string, model?: string): Promise<JsonResponse> => post(`${gw.url}/v1/chat/completions`, chat(model), bearer(key));

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai' });
    const config = {
      redis: { url: sharedRedisUrl(), prefix, commandTimeoutMs: 2000 },
      admin: { keys: [adminKey.digest], readKeys: [reader.digest] },
      keys: [fileKey.entry],
      orgs: { acme: {}, other: {} },
      teams: { configured: { org: 'acme' } },
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'b' }],
      plugins: [{ name: 'rate-limit' }],
    };
    a = await startGateway(config, { admin: true, logger });
    b = await startGateway(config);
    api = a.admin!.url;
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await backend?.close();
    await deletePrefix(sharedRedisUrl(), prefix);
  });

  it('a team made on replica A governs a request on replica B within 1 s: its models and its budget', async () => {
    const made = await ask('POST', '/admin/teams', { name: 'search', org: 'acme', models: ['m-*'], limits: { requests: 2, windowSeconds: 3600 } });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ name: 'search', source: 'runtime', org: 'acme', models: ['m-*'], limits: { requests: 2, windowSeconds: 3600 }, keys: 0 });
    const key = await ask('POST', '/admin/keys', { id: 'searcher', org: 'acme', team: 'search' });
    expect(key.status).toBe(201);
    expect(key.body.team).toBe('search');
    await within(1000, 'the key and its team answer on B', async () => (await chatOn(b, key.body.key)).status === 200);
    // The team's allow-list: the key's own admits every model, the team's only m-*.
    const refused = await chatOn(b, key.body.key, 'other-model');
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ reason: 'model_not_allowed', param: 'model' });
    // The team's budget of 2 requests: the one above and the next; the third is the team's refusal.
    expect((await chatOn(b, key.body.key)).status).toBe(200);
    const third = await chatOn(b, key.body.key);
    expect(third.status).toBe(429);
    expect(third.body.error).toMatchObject({ reason: 'rate_limited', param: 'team' });
    expect(third.body.error.message).toMatch(/your team's request budget \(2 requests per 3600 seconds\)/);
    // A change of the team's limits binds on B within 1 s.
    expect((await ask('PATCH', '/admin/teams/search', { limits: { requests: 100 } })).status).toBe(200);
    await within(1000, 'the raised team budget on B', async () => (await chatOn(b, key.body.key)).status === 200);
    const shown = await ask('GET', '/admin/teams/search');
    expect(shown.body).toMatchObject({ name: 'search', keys: 1, limits: { requests: 100 } });
    expect(lines.some((l) => l.action === 'teams.create' && l.team === 'search' && l.outcome === 'ok')).toBe(true);
    expect(lines.some((l) => l.action === 'teams.update' && l.team === 'search' && l.outcome === 'ok')).toBe(true);
  });

  it('a key moved to another team is charged to the new team from its next request', async () => {
    expect((await ask('POST', '/admin/teams', { name: 'red', org: 'acme' })).status).toBe(201);
    expect((await ask('POST', '/admin/teams', { name: 'blue', org: 'acme', limits: { requests: 1, windowSeconds: 3600 } })).status).toBe(201);
    const key = (await ask('POST', '/admin/keys', { id: 'mover', org: 'acme', team: 'red' })).body.key as string;
    await within(1000, 'the key on B', async () => (await chatOn(b, key)).status === 200);
    expect((await chatOn(b, key)).status).toBe(200);
    const moved = await ask('PATCH', '/admin/keys/mover', { team: 'blue' });
    expect(moved.status).toBe(200);
    expect(moved.body.team).toBe('blue');
    // Blue's budget of one request: the first after the move is admitted, the next refused by the team.
    await within(1000, 'the move on B', async () => (await chatOn(b, key)).status === 200);
    const refused = await chatOn(b, key);
    expect(refused.status).toBe(429);
    expect(refused.body.error.param).toBe('team');
    // The spend: red was charged before the move, blue from it (the admitted request and the refused one).
    await until(async () => (await spendSums(api, adminKey.key, '?team=blue')).requests === 2, 'blue\'s two requests in the spend');
    expect((await spendSums(api, adminKey.key, '?team=red')).requests).toBeGreaterThanOrEqual(2);
    const usage = await admin(api, 'GET', '/admin/usage?since=2000-01-01&team=blue', adminKey.key);
    const records = usage.text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
    expect(records.map((r) => [r.key, r.team, r.status])).toEqual([['mover', 'blue', 200], ['mover', 'blue', 429]]);
  });

  it('deletes a team only while no key names it: 409 with the count, then 200 once the key is gone', async () => {
    expect((await ask('POST', '/admin/teams', { name: 'doomed', org: 'acme' })).status).toBe(201);
    expect((await ask('POST', '/admin/keys', { id: 'd1', org: 'acme', team: 'doomed' })).status).toBe(201);
    expect((await ask('POST', '/admin/keys', { id: 'd2', org: 'acme', team: 'doomed' })).status).toBe(201);
    const refused = await ask('DELETE', '/admin/teams/doomed');
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ reason: 'conflict', param: 'name' });
    expect(refused.body.error.message).toMatch(/named by 2 keys/);
    expect((await ask('DELETE', '/admin/keys/d1')).status).toBe(200);
    expect((await ask('PATCH', '/admin/keys/d2', { team: null })).status).toBe(200);
    expect((await ask('DELETE', '/admin/teams/doomed')).body).toEqual({ name: 'doomed', deleted: true });
    expect((await ask('GET', '/admin/teams/doomed')).status).toBe(404);
    expect((await ask('DELETE', '/admin/teams/doomed')).status).toBe(404);
  });

  it('a read-only admin key reads teams, keys and spend, and changes nothing (403 read_only)', async () => {
    expect((await ask('GET', '/admin/teams', undefined, reader.key)).status).toBe(200);
    expect((await ask('GET', '/admin/keys', undefined, reader.key)).status).toBe(200);
    expect((await ask('GET', '/admin/spend', undefined, reader.key)).status).toBe(200);
    for (const [method, path, body] of [['POST', '/admin/teams', { name: 'sneaky', org: 'acme' }], ['PATCH', '/admin/teams/search', { limits: { requests: 1 } }], ['DELETE', '/admin/teams/search', undefined], ['POST', '/admin/keys', { id: 'sneaky' }]] as const) {
      const r = await ask(method, path, body, reader.key);
      expect([method, path, r.status, r.body.error.reason]).toEqual([method, path, 403, 'read_only']);
    }
    expect((await ask('GET', '/admin/teams/sneaky')).status).toBe(404);
    expect((await ask('GET', '/admin/teams/search')).body.limits).toEqual({ requests: 100 });
  });

  it('refuses bad input with 400 naming the field', async () => {
    const cases: Array<[string, string, Record<string, unknown>, string]> = [
      ['POST', '/admin/teams', { name: '<b>x</b>', org: 'acme' }, 'name'],
      ['POST', '/admin/teams', { org: 'acme' }, 'name'],
      ['POST', '/admin/teams', { name: 'ok', org: 'nowhere' }, 'org'],
      ['POST', '/admin/teams', { name: 'ok', org: 'acme', limits: { tokens: 'many' } }, 'limits.tokens'],
      ['POST', '/admin/teams', { name: 'ok', org: 'acme', limits: { requests: '5 a minute' } }, 'limits.requests'],
      ['POST', '/admin/teams', { name: 'ok', org: 'acme', limits: { concurrency: 2 } }, 'limits.concurrency'],
      ['POST', '/admin/teams', { name: 'ok', org: 'acme', models: 'm-1' }, 'models'],
      ['POST', '/admin/teams', { name: 'ok', org: 'acme', colour: 'red' }, 'colour'],
      ['PATCH', '/admin/teams/search', { org: 'other' }, 'org'],
      ['PATCH', '/admin/teams/search', { name: 'renamed' }, 'name'],
      ['PATCH', '/admin/teams/search', { limits: { windowSeconds: 'long' } }, 'limits.windowSeconds'],
      // A key in a team of another org, and a team that does not exist.
      ['POST', '/admin/keys', { id: 'cross', org: 'other', team: 'search' }, 'team'],
      ['POST', '/admin/keys', { id: 'cross', team: 'search' }, 'team'],
      ['POST', '/admin/keys', { id: 'cross', org: 'acme', team: 'nobody' }, 'team'],
      ['PATCH', '/admin/keys/searcher', { org: 'other' }, 'team'],
    ];
    for (const [method, path, body, param] of cases) {
      const r = await ask(method, path, body);
      expect([method, path, JSON.stringify(body), r.status, r.body.error?.reason, r.body.error?.param]).toEqual([method, path, JSON.stringify(body), 400, 'invalid_request', param]);
    }
    expect((await ask('GET', '/admin/teams/ok')).status).toBe(404);
    expect((await ask('GET', '/admin/keys/cross')).status).toBe(404);
  });

  it('lists the config\'s teams with the runtime ones; a config team changes only in the file (409)', async () => {
    const listed = await ask('GET', '/admin/teams');
    const byName = Object.fromEntries((listed.body.data as Array<Record<string, unknown>>).map((t) => [t.name, t]));
    expect(byName.configured).toMatchObject({ source: 'config', org: 'acme', keys: 1 });
    expect(byName.search).toMatchObject({ source: 'runtime', org: 'acme', keys: 1 });
    for (const [method, body] of [['PATCH', { limits: { requests: 1 } }], ['DELETE', undefined]] as const) {
      const r = await ask(method, '/admin/teams/configured', body);
      expect([method, r.status, r.body.error.reason]).toEqual([method, 409, 'conflict']);
    }
    expect((await ask('POST', '/admin/teams', { name: 'configured', org: 'acme' })).status).toBe(409);
    expect((await ask('POST', '/admin/teams', { name: 'search', org: 'acme' })).status).toBe(409);
    expect((await chatOn(b, fileKey.key)).status).toBe(200);
  });
});
