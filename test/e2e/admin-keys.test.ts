// Keys at runtime, across two replicas sharing the real Redis: replica A
// serves the admin API, replica B only honours the keys. A key made on A
// answers on B within 1 s; a revoked key is refused on both within 1 s; a
// rotation keeps both keys valid on both for the grace period, then only the
// new one; a change of limits binds on B within 1 s. The admin API refuses a
// missing, wrong or gateway key (401), bad input with the field named, an
// unknown id (404), and an id taken by the config or another key (409).
import { Writable } from 'node:stream';
import pino from 'pino';
import Redis from 'ioredis';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call, post, type JsonResponse } from '../support/http';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { admin, makeAdminKey, within } from '../support/admin';
import { keysHash } from '../../src/keys/redis-store';

const chat = { model: 'm-1', messages: [{ role: 'user', content: 'hello' }] };

describe('runtime keys on two replicas (Redis)', () => {
  const prefix = uniquePrefix();
  const adminKey = makeAdminKey();
  const fileKey = makeKey('from-file', { org: 'acme' });
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(chunk.toString())); done(); } }));
  let backend: Backend;
  let a: TestGateway;
  let b: TestGateway;
  let api: string;
  /** key null: no Authorization header at all. */
  const ask = (method: string, path: string, body?: unknown, key: string | null = adminKey.key) => admin(api, method, path, key ?? undefined, body);
  const status = (gw: TestGateway, key: string): Promise<number> => post(`${gw.url}/v1/chat/completions`, chat, bearer(key)).then((r) => r.status);
  const chatOn = (gw: TestGateway, key: string): Promise<JsonResponse> => post(`${gw.url}/v1/chat/completions`, chat, bearer(key));

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai' });
    const config = {
      redis: { url: sharedRedisUrl(), prefix, commandTimeoutMs: 2000 },
      admin: { keys: [adminKey.digest] },
      keys: [fileKey.entry],
      orgs: { acme: {}, other: {} },
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

  it('refuses a missing, malformed, wrong or gateway key with 401 and WWW-Authenticate, on any path', async () => {
    for (const key of [null, 'sk-wrong', fileKey.key]) {
      for (const [method, path] of [['GET', '/admin/keys'], ['POST', '/admin/keys'], ['GET', '/admin/nothing-here']]) {
        const r = await ask(method, path, method === 'POST' ? { id: 'x' } : undefined, key);
        expect([method, path, r.status, r.body.error.reason]).toEqual([method, path, 401, 'unauthorized']);
        expect(r.headers['www-authenticate']).toBe('Bearer');
      }
    }
    const malformed = await ask('GET', '/admin/keys', undefined, `${adminKey.key} extra`);
    expect(malformed.status).toBe(401);
    expect((await ask('GET', '/admin/nothing-here')).status).toBe(404);
    expect((await ask('PUT', '/admin/keys')).headers.allow).toBe('POST, GET, HEAD');
  });

  it('makes a key that answers on the other replica within 1 s, shown once, its digest alone in Redis', async () => {
    const made = await ask('POST', '/admin/keys', { id: 'ci-bot', org: 'acme', models: ['m-*'] });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ id: 'ci-bot', source: 'runtime', org: 'acme', models: ['m-*'], expiresAt: null, rotation: null });
    const key = made.body.key as string;
    expect(key).toMatch(/^sk-sluice-/);
    expect(await status(a, key)).toBe(200); // the replica that made it, at once
    await within(1000, 'the new key on replica B', async () => (await status(b, key)) === 200);
    expect((await post(`${b.url}/v1/chat/completions`, { ...chat, model: 'x-1' }, bearer(key))).body.error.reason).toBe('model_not_allowed');

    const shown = await ask('GET', '/admin/keys/ci-bot');
    expect(shown.body).toMatchObject({ id: 'ci-bot', org: 'acme' });
    expect(JSON.stringify(shown.body)).not.toContain(key);
    const listed = await ask('GET', '/admin/keys');
    expect(listed.body.data.map((k: { id: string; source: string }) => [k.id, k.source])).toEqual([['from-file', 'config'], ['ci-bot', 'runtime']]);
    const redis = new Redis(sharedRedisUrl());
    try {
      const stored = await redis.hget(keysHash(prefix), 'ci-bot');
      expect(stored).not.toContain(key);
      expect(JSON.parse(stored!).sha256).toHaveLength(64);
    } finally {
      redis.disconnect();
    }
  });

  it('refuses a revoked key on every replica within 1 s', async () => {
    const key = (await ask('POST', '/admin/keys', { id: 'short-lived' })).body.key as string;
    await within(1000, 'the key on replica B', async () => (await status(b, key)) === 200);
    expect((await ask('DELETE', '/admin/keys/short-lived')).body).toEqual({ id: 'short-lived', revoked: true });
    expect(await status(a, key)).toBe(401);
    await within(1000, 'the revoked key refused on replica B', async () => (await status(b, key)) === 401);
    expect((await ask('DELETE', '/admin/keys/short-lived')).status).toBe(404);
    expect((await ask('GET', '/admin/keys/short-lived')).body.error).toMatchObject({ reason: 'not_found', param: 'id' });
  });

  it('keeps the old and the new key valid on both replicas for the grace period, then only the new one', async () => {
    const old = (await ask('POST', '/admin/keys', { id: 'rotating' })).body.key as string;
    await within(1000, 'the key on replica B', async () => (await status(b, old)) === 200);
    const rotated = await ask('POST', '/admin/keys/rotating/rotate', { graceSeconds: 2 });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.key as string;
    const graceUntil = Date.parse(rotated.body.rotation.graceUntil);
    await within(1000, 'the new key on replica B', async () => (await status(b, fresh)) === 200);
    for (const gw of [a, b]) expect([await status(gw, old), await status(gw, fresh)]).toEqual([200, 200]);
    // The old key ends with its grace period, not before, and the new one stays.
    await within(3500, 'the old key refused on replica B', async () => (await status(b, old)) === 401);
    expect(Date.now()).toBeGreaterThanOrEqual(graceUntil);
    const refused = await chatOn(a, old);
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toMatch(/rotated/);
    for (const gw of [a, b]) expect(await status(gw, fresh)).toBe(200);
  });

  it('applies a change of limits on the other replica within 1 s', async () => {
    const key = (await ask('POST', '/admin/keys', { id: 'metered', limits: { requests: 1000, windowSeconds: 60 } })).body.key as string;
    await within(1000, 'the key on replica B', async () => (await status(b, key)) === 200);
    expect(await status(b, key)).toBe(200);
    const patched = await ask('PATCH', '/admin/keys/metered', { limits: { requests: 2, windowSeconds: 60 } });
    expect(patched.body.limits).toEqual({ requests: 2, windowSeconds: 60 });
    await within(1000, 'the new budget binding on replica B', async () => (await status(b, key)) === 429);
    const cleared = await ask('PATCH', '/admin/keys/metered', { limits: null, org: 'other' });
    expect(cleared.body).toMatchObject({ limits: null, org: 'other' });
    await within(1000, 'no budget on replica B', async () => (await status(b, key)) === 200);
  });

  it('refuses bad input with the error object naming the field', async () => {
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', '/admin/keys', { org: 'acme' }, 'id'],
      ['POST', '/admin/keys', { id: 'has space' }, 'id'],
      ['POST', '/admin/keys', { id: 'k1', org: 'nobody' }, 'org'],
      ['POST', '/admin/keys', { id: 'k1', models: 'm-*' }, 'models'],
      ['POST', '/admin/keys', { id: 'k1', limits: { requests: -1 } }, 'limits.requests'],
      ['POST', '/admin/keys', { id: 'k1', limits: { concurrency: 0 } }, 'limits.concurrency'],
      ['POST', '/admin/keys', { id: 'k1', limits: { furlongs: 5 } }, 'limits.furlongs'],
      ['POST', '/admin/keys', { id: 'k1', priority: 'urgent' }, 'priority'],
      ['POST', '/admin/keys', { id: 'k1', expiresAt: 'tomorrow' }, 'expiresAt'],
      ['POST', '/admin/keys', { id: 'k1', expiresAt: '2001-01-01T00:00:00Z' }, 'expiresAt'],
      ['POST', '/admin/keys', { id: 'k1', sha256: 'a'.repeat(64) }, 'sha256'],
      ['POST', '/admin/keys', { id: 'k1', colour: 'blue' }, 'colour'],
      ['PATCH', '/admin/keys/ci-bot', { id: 'renamed' }, 'id'],
      ['PATCH', '/admin/keys/ci-bot', { limits: { tokens: 'lots' } }, 'limits.tokens'],
      ['POST', '/admin/keys/ci-bot/rotate', { graceSeconds: -1 }, 'graceSeconds'],
      ['POST', '/admin/keys/ci-bot/rotate', { grace: 10 }, 'grace'],
    ];
    for (const [method, path, body, param] of cases) {
      const r = await ask(method, path, body);
      expect([method, JSON.stringify(body), r.status, r.body.error.reason, r.body.error.param]).toEqual([method, JSON.stringify(body), 400, 'invalid_request', param]);
      expect(r.body.error.message).toContain(param);
    }
    const notJson = await call('POST', `${api}/admin/keys`, '{"id":', { ...bearer(adminKey.key), 'content-type': 'application/json' });
    expect([notJson.status, notJson.body.error.reason]).toEqual([400, 'invalid_json']);
    expect((await ask('GET', '/admin/keys/k1')).status).toBe(404); // nothing was made
  });

  it('refuses an id the config or another key holds (409), and never changes a config key', async () => {
    expect((await ask('POST', '/admin/keys', { id: 'from-file' })).body.error).toMatchObject({ reason: 'conflict', param: 'id' });
    expect((await ask('POST', '/admin/keys', { id: 'ci-bot' })).body.error).toMatchObject({ reason: 'conflict', param: 'id' });
    for (const [method, path] of [['PATCH', '/admin/keys/from-file'], ['DELETE', '/admin/keys/from-file'], ['POST', '/admin/keys/from-file/rotate']]) {
      expect((await ask(method, path, method === 'PATCH' ? { org: 'other' } : undefined)).status).toBe(409);
    }
    expect((await ask('GET', '/admin/keys/from-file')).body).toMatchObject({ id: 'from-file', source: 'config', org: 'acme' });
    expect((await ask('PATCH', '/admin/keys/nobody', { org: 'acme' })).status).toBe(404);
    expect(await status(b, fileKey.key)).toBe(200);
  });

  it('writes one audit line per admin call: who, what, which key, how it ended; never a key', async () => {
    const from = lines.length;
    const made = await ask('POST', '/admin/keys', { id: 'audited' });
    await ask('DELETE', '/admin/keys/audited');
    await ask('GET', '/admin/keys', undefined, 'sk-wrong');
    const audit = lines.slice(from).filter((l) => l.msg === 'admin action');
    expect(audit.map((l) => [l.admin, l.action, l.keyId, l.outcome, l.status])).toEqual([
      [adminKey.digest.slice(0, 12), 'keys.create', 'audited', 'ok', 201],
      [adminKey.digest.slice(0, 12), 'keys.revoke', 'audited', 'ok', 200],
      [null, 'keys.list', undefined, 'unauthorized', 401],
    ]);
    const all = JSON.stringify(lines);
    expect(all).not.toContain(made.body.key);
    expect(all).not.toContain(adminKey.key);
  });
});
