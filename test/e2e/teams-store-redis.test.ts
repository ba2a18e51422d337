// The runtime teams in the real Redis, beside the keys in the same hash: a
// team's delete and the check that no key names it are one script; a key is
// never written into a runtime team that is not there (deleted meanwhile,
// between the check of its input and its write); another replica's watch
// hears of a team made, changed and deleted.
import pino from 'pino';
import { GatewayError } from '../../src/contract/errors';
import { keysHash, RedisKeyStore } from '../../src/keys/redis-store';
import { RedisKeyWatch } from '../../src/keys/redis-watch';
import { RuntimeKeys } from '../../src/keys/runtime-keys';
import type { StoredKey } from '../../src/keys/stored-key';
import type { StoredTeam } from '../../src/teams/stored-team';
import { closeRedisClient, createRedisClient, whenReady } from '../../src/redis/client';
import { hashKey } from '../../src/auth/keys';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { within } from '../support/admin';

describe('runtime teams in Redis', () => {
  const prefix = uniquePrefix();
  const silent = pino({ level: 'silent' });
  const at = new Date().toISOString();
  const key = (id: string, team?: string): StoredKey => ({ id, sha256: hashKey(`sk-${id}`), entry: { org: 'acme', ...(team && { team }) }, createdAt: at, updatedAt: at });
  const team = (name: string, tokens = 100): StoredTeam => ({ name, entry: { org: 'acme', limits: { tokens } }, createdAt: at, updatedAt: at });
  let client: ReturnType<typeof createRedisClient>;
  let here: RuntimeKeys;
  let store: RedisKeyStore;

  beforeAll(async () => {
    client = createRedisClient({ url: sharedRedisUrl(), prefix, failMode: 'open', commandTimeoutMs: 2000 }, silent);
    await whenReady(client, 5_000);
    here = new RuntimeKeys();
    here.teams.applyConfig({ orgs: { acme: {} }, teams: { configured: { org: 'acme' } } });
    store = new RedisKeyStore(client, prefix, here);
  });
  afterAll(async () => {
    await closeRedisClient(client);
    await deletePrefix(sharedRedisUrl(), prefix);
  });

  async function refusal(run: () => Promise<unknown>): Promise<GatewayError> {
    try {
      await run();
    } catch (err) {
      return err as GatewayError;
    }
    throw new Error('it was not refused');
  }

  it('keeps teams in the keys hash; deletes one only while no key names it, in one script', async () => {
    expect(await store.createTeam(team('search'))).toBe(true);
    expect(await store.createTeam(team('search'))).toBe(false);
    expect(Object.keys(await client.hgetall(keysHash(prefix)))).toEqual(['team:search']);
    expect(await store.create(key('k1', 'search'))).toBe(true);
    expect(await store.create(key('k2', 'configured'))).toBe(true);
    expect(await store.removeTeam('search')).toEqual(['k1']);
    expect(await store.getTeam('search')).toEqual(team('search'));
    await store.update('k1', (r) => ({ ...r, entry: { org: 'acme' } }));
    expect(await store.removeTeam('search')).toEqual(team('search'));
    expect(await store.removeTeam('search')).toBeUndefined();
    expect(here.teams.get('search')).toBeUndefined();
    expect((await store.readAll()).keys.map((k) => k.id).sort()).toEqual(['k1', 'k2']);
  });

  it('never writes a key into a runtime team that is not there; a configured team needs no record', async () => {
    const made = await refusal(() => store.create(key('ghostly', 'ghost')));
    expect(made).toMatchObject({ reason: 'invalid_request', param: 'team' });
    expect(await store.get('ghostly')).toBeUndefined();
    const moved = await refusal(() => store.update('k2', (r) => ({ ...r, entry: { ...r.entry, team: 'ghost' } })));
    expect(moved).toMatchObject({ reason: 'invalid_request', param: 'team' });
    expect((await store.get('k2'))?.entry.team).toBe('configured');
  });

  it('another replica\'s watch hears of a team made, changed and deleted, each within 1 s', async () => {
    const there = new RuntimeKeys();
    const watch = new RedisKeyWatch(client, new RedisKeyStore(client, prefix, there), there, silent, 60_000);
    try {
      await watch.loaded;
      await store.createTeam(team('heard', 10));
      await within(1000, 'the new team there', async () => there.teams.get('heard')?.limits?.tokens === 10);
      await store.updateTeam('heard', (t) => ({ ...t, entry: { ...t.entry, limits: { tokens: 20 } } }));
      await within(1000, 'the change there', async () => there.teams.get('heard')?.limits?.tokens === 20);
      await store.removeTeam('heard');
      await within(1000, 'the delete there', async () => there.teams.get('heard') === undefined);
    } finally {
      await watch.close();
    }
  });
});
