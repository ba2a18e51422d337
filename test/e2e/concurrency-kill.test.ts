// A replica killed with SIGKILL mid-stream cannot give its slots back: they
// come back when its leases expire (leaseMs), not sooner, not never. While a
// replica lives, its long stream keeps its slot however long it runs (the
// lease is refreshed).
import Redis from 'ioredis';
import { startGatedBackend, type GatedBackend } from '../support/gated-backend';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { spawnGateway, type GatewayProcess } from '../support/process';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { leases, queued, streamChat, until } from '../support/admission';

jest.setTimeout(60_000);

const LEASE_MS = 1500;

describe('a replica killed mid-stream', () => {
  let backend: GatedBackend;
  let redis: Redis;
  let replica: GatewayProcess;
  let gw: TestGateway;
  const prefix = uniquePrefix();
  const key = makeKey('killed', { limits: { concurrency: 1 } });

  beforeAll(async () => {
    backend = await startGatedBackend();
    redis = new Redis(sharedRedisUrl());
    const config = {
      redis: { url: sharedRedisUrl(), prefix },
      keys: [key.entry],
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'b' }],
      admission: { leaseMs: LEASE_MS, queueTimeoutMs: 20_000 },
      plugins: [{ name: 'rate-limit' }],
    };
    replica = await spawnGateway(JSON.stringify({ server: { metrics: { port: 0 } }, ...config }));
    gw = await startGateway(config);
  });
  afterAll(async () => {
    replica?.kill();
    backend?.release();
    await gw?.close();
    await backend?.close();
    await deletePrefix(sharedRedisUrl(), prefix);
    redis?.disconnect();
  });

  it('keeps its slot through a stream longer than the lease, and loses it only at the lease expiry after SIGKILL', async () => {
    const held = streamChat(replica.url, key.key, { model: 'hold-a' }, 'killed:process');
    await until(() => backend.seen.includes('killed:process'), 'the killed replica\'s stream at the backend');
    const waiting = streamChat(gw.url, key.key, { model: 'stream-a' }, 'killed:waiting');
    await until(async () => (await queued(gw)) === 1, 'the other replica\'s request in its queue');
    // Past the lease's first expiry, refreshed since: without refreshes the slot would have expired and the waiter gone through.
    const leaseKey = `${prefix}{key:killed}:inflight`;
    const expiry = async (): Promise<number> => Number((await redis.zrange(leaseKey, 0, 0, 'WITHSCORES'))[1]);
    const redisNow = async (): Promise<number> => { const [s, us] = await redis.time(); return Number(s) * 1000 + Math.floor(Number(us) / 1000); };
    const firstExpiry = await expiry();
    await until(async () => (await redisNow()) > firstExpiry + LEASE_MS / 3 && (await expiry()) > firstExpiry, 'the lease outliving its first expiry, refreshed', 3 * LEASE_MS);
    expect(backend.seen).not.toContain('killed:waiting');
    expect(await leases(redis, `${prefix}{key:killed}:inflight`)).toBe(1);

    const killedAt = Date.now();
    process.kill(replica.pid, 'SIGKILL');
    await replica.exited;
    await until(() => backend.seen.includes('killed:waiting'), 'the waiter admitted once the lease expired', 3 * LEASE_MS);
    const after = Date.now() - killedAt;
    // The lease was refreshed at most a third of it before the kill: it lived at least two thirds of it on.
    expect(after).toBeGreaterThanOrEqual((2 * LEASE_MS) / 3 - 100);
    expect(after).toBeLessThan(LEASE_MS + 1500);
    expect((await waiting.done).status).toBe(200);
    await held.done;
    await until(async () => (await leases(redis, `${prefix}{key:killed}:inflight`)) === 0, 'the lease set empty');
  });
});
