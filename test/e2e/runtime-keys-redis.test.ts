// A replica's watch on the runtime keys in the real Redis: the key a message
// on <prefix>keys:changed names is read at once; every key is read when the
// subscription is made and again on the safety-net timer, so a change no
// message announced is found too.
import pino from 'pino';
import Redis from 'ioredis';
import { keysChannel, keysHash, RedisKeyStore } from '../../src/keys/redis-store';
import { RedisKeyWatch } from '../../src/keys/redis-watch';
import { RuntimeKeys } from '../../src/keys/runtime-keys';
import { closeRedisClient, createRedisClient, whenReady } from '../../src/redis/client';
import { hashKey } from '../../src/auth/keys';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { within } from '../support/admin';
import { until } from '../support/wait';

describe('a replica\'s watch on the runtime keys in Redis', () => {
  const prefix = uniquePrefix();
  const silent = pino({ level: 'silent' });
  const at = new Date().toISOString();
  const record = (id: string) => JSON.stringify({ id, sha256: hashKey(`sk-${id}`), entry: {}, createdAt: at, updatedAt: at });
  const has = (keys: RuntimeKeys, id: string): boolean => keys.get(hashKey(`sk-${id}`)) !== undefined;
  let client: ReturnType<typeof createRedisClient>;
  let writer: Redis;

  beforeAll(async () => {
    client = createRedisClient({ url: sharedRedisUrl(), prefix, failMode: 'open', commandTimeoutMs: 2000 }, silent);
    writer = new Redis(sharedRedisUrl());
    await whenReady(client, 5_000);
  });
  afterAll(async () => {
    writer.disconnect();
    await closeRedisClient(client);
    await deletePrefix(sharedRedisUrl(), prefix);
  });

  /** A watch of its own, on a RuntimeKeys of its own. */
  async function watching(reloadMs: number, run: (keys: RuntimeKeys) => Promise<void>): Promise<void> {
    const keys = new RuntimeKeys();
    const watch = new RedisKeyWatch(client, new RedisKeyStore(client, prefix, keys), keys, silent, reloadMs);
    try {
      await watch.loaded;
      await run(keys);
    } finally {
      await watch.close();
    }
  }

  it('reads every key when it subscribes, and again on its safety-net timer: a change no message announced', async () => {
    await writer.hset(keysHash(prefix), 'before', record('before'));
    await watching(200, async (keys) => {
      expect(has(keys, 'before')).toBe(true);
      await writer.hset(keysHash(prefix), 'unannounced', record('unannounced'));
      await writer.hdel(keysHash(prefix), 'before');
      await until(() => has(keys, 'unannounced') && !has(keys, 'before'), 'the full reread');
    });
  });

  it('reads the key a message names at once, long before its next full read', async () => {
    await watching(60_000, async (keys) => {
      await writer.hset(keysHash(prefix), 'told', record('told'));
      expect(has(keys, 'told')).toBe(false);
      await writer.publish(keysChannel(prefix), 'told');
      await within(1000, 'the key a message named', async () => has(keys, 'told'));
      await writer.hdel(keysHash(prefix), 'told');
      await writer.publish(keysChannel(prefix), 'told');
      await within(1000, 'the key a message named gone', async () => !has(keys, 'told'));
    });
  });
});
