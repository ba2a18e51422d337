// Runtime keys in real processes with two workers each, as the image runs
// them. With Redis, two such gateways share the keys: the admin API of one
// (its primary) makes a key that every worker of both accepts within 1 s,
// and a revocation reaches every worker within 1 s. Without Redis the
// primary keeps the keys file and hands the keys to its workers: a new key
// answers on both workers within 1 s, and after a restart still does.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBackend, type Backend } from '../support/backends';
import { bearer, post, type JsonResponse } from '../support/http';
import { freePort, spawnGateway, type GatewayProcess } from '../support/process';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { admin, makeAdminKey, within } from '../support/admin';
import { makeKey } from '../support/gateway';
import { until } from '../support/wait';

const chat = { model: 'm-1', messages: [{ role: 'user', content: 'hello' }] };
// A connection of its own for each request: node:cluster hands connections, not requests, to the workers in turn.
const FRESH = true;
const PROBES = 4;

describe('runtime keys across workers', () => {
  const adminKey = makeAdminKey();
  /** A key of the file, to warm every worker up first: what is timed is the key's way there, not a cold start. */
  const warm = makeKey('warm');
  let backend: Backend;
  const running: GatewayProcess[] = [];

  const configYaml = (extra: Record<string, unknown>) => JSON.stringify({
    server: { host: '127.0.0.1', port: 0, workers: 2, drainSeconds: 1, metrics: { port: 0 } },
    upstreams: { b: { url: backend.base, format: 'openai' } },
    routes: [{ model: '*', upstream: 'b' }],
    keys: [warm.entry],
    ...extra,
  });
  const spawn = async (extra: Record<string, unknown>): Promise<GatewayProcess> => {
    const gw = await spawnGateway(configYaml(extra));
    running.push(gw);
    return gw;
  };
  /** PROBES requests on connections of their own, so both workers answer some. */
  const probe = (gw: GatewayProcess, key: string): Promise<JsonResponse[]> =>
    Promise.all(Array.from({ length: PROBES }, () => post(`${gw.url}/v1/chat/completions`, chat, bearer(key), FRESH)));
  const allAnswer = async (gws: GatewayProcess[], key: string, status: number): Promise<boolean> =>
    (await Promise.all(gws.map((gw) => probe(gw, key)))).flat().every((r) => r.status === status);
  /** The pids (workers) that answered these requests, from their access lines. */
  const servedBy = async (gw: GatewayProcess, answers: JsonResponse[]): Promise<Set<number>> => {
    const ids = new Set(answers.map((r) => r.headers['x-request-id']));
    const lines = () => gw.logs.filter((l) => l.msg === 'request' && ids.has(l.requestId as string));
    await until(() => lines().length === ids.size, 'the access lines of the probes');
    return new Set(lines().map((l) => l.pid as number));
  };

  beforeAll(async () => { backend = await startBackend({ format: 'openai' }); });
  afterEach(() => { for (const gw of running.splice(0)) gw.kill(); });
  afterAll(async () => { await backend.close(); });

  it('with Redis: a key made on one gateway answers on every worker of both within 1 s; a revoked one is refused on all within 1 s', async () => {
    const prefix = uniquePrefix();
    const adminPort = await freePort();
    const shared = { redis: { url: sharedRedisUrl(), prefix, commandTimeoutMs: 2000 } };
    try {
      const [one, two] = await Promise.all([
        spawn({ ...shared, admin: { port: adminPort, keys: [adminKey.digest] } }),
        spawn({ ...shared, admin: { keys: [adminKey.digest] } }),
      ]);
      const api = `http://127.0.0.1:${adminPort}`;
      expect(await allAnswer([one, two], warm.key, 200)).toBe(true);
      const made = await admin(api, 'POST', '/admin/keys', adminKey.key, { id: 'fleet-bot' });
      expect(made.status).toBe(201);
      const key = made.body.key as string;
      const tookToAnswer = await within(1000, 'the new key on every worker of both gateways', () => allAnswer([one, two], key, 200));
      for (const gw of [one, two]) {
        const answers = await probe(gw, key);
        expect(answers.map((r) => r.status)).toEqual(Array(PROBES).fill(200));
        expect((await servedBy(gw, answers)).size).toBe(2);
      }

      expect((await admin(api, 'DELETE', '/admin/keys/fleet-bot', adminKey.key)).status).toBe(200);
      const tookToRefuse = await within(1000, 'the revoked key refused on every worker of both gateways', () => allAnswer([one, two], key, 401));
      expect([tookToAnswer, tookToRefuse].every((ms) => ms <= 1000)).toBe(true);
      expect(one.logs.filter((l) => l.msg === 'admin action').map((l) => [l.action, l.keyId, l.outcome])).toEqual([['keys.create', 'fleet-bot', 'ok'], ['keys.revoke', 'fleet-bot', 'ok']]);
    } finally {
      await deletePrefix(sharedRedisUrl(), prefix);
    }
  });

  it('without Redis: the primary hands a new key to both workers within 1 s, and the keys file keeps it across a restart', async () => {
    const keysFile = join(mkdtempSync(join(tmpdir(), 'sluice-keys-workers-')), 'keys.json');
    const adminPort = await freePort();
    const settings = { admin: { port: adminPort, keys: [adminKey.digest], keysFile } };
    const first = await spawn(settings);
    const api = `http://127.0.0.1:${adminPort}`;
    expect(await allAnswer([first], warm.key, 200)).toBe(true);
    const key = (await admin(api, 'POST', '/admin/keys', adminKey.key, { id: 'local-bot' })).body.key as string;
    await within(1000, 'the new key on both workers', () => allAnswer([first], key, 200));
    expect((await servedBy(first, await probe(first, key))).size).toBe(2);
    first.kill();
    await first.exited;

    const second = await spawn(settings);
    const answers = await probe(second, key);
    expect(answers.map((r) => r.status)).toEqual(Array(PROBES).fill(200));
    expect((await servedBy(second, answers)).size).toBe(2);
    expect(second.logs.find((l) => l.msg === 'runtime keys loaded')).toMatchObject({ store: keysFile, keys: 1 });
  });
});
