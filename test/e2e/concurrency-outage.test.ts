// In-flight limits while Redis hangs (SIGSTOP) and dies under load, on a
// throwaway redis-server: in failMode open streams keep flowing on the
// in-process fallback, in failMode closed requests get 503; and when Redis is
// back no slot is leaked: not by an acquire that timed out and ran when Redis
// woke, not by a release that could not be sent.
import type Redis from 'ioredis';
import { startGatedBackend, type GatedBackend } from '../support/gated-backend';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { cleanupRedis, startRedisServer, type RedisProcess } from '../support/redis';
import { leases, queued, streamChat, until, type Streamed } from '../support/admission';

jest.setTimeout(60_000);

const N = 4;

describe('in-flight limits while Redis hangs and dies', () => {
  let backend: GatedBackend;
  let server: RedisProcess;
  let a: TestGateway;
  let b: TestGateway;
  let closed: TestGateway;
  const busy = makeKey('busy', { limits: { concurrency: N } });
  const strict = makeKey('strict', { limits: { concurrency: N } });
  const leaseKey = 'outage:{key:busy}:inflight';

  const config = (failMode: 'open' | 'closed') => ({
    redis: { url: server.url, prefix: 'outage:', failMode },
    keys: [busy.entry, strict.entry],
    upstreams: { b: { url: backend.base, format: 'openai' } },
    routes: [{ model: '*', upstream: 'b' }],
    // A long lease: a slot leaked in Redis would still be there at the end.
    admission: { leaseMs: 60_000, queueTimeoutMs: 5_000 },
    plugins: [{ name: 'rate-limit' }],
  });
  const clientOf = (gw: TestGateway) => gw.gateway.services.redis as Redis;
  const insurance = (gw: TestGateway) => gw.gateway.services.leases.insurance;
  const allReady = () => [a, b, closed].every((g) => clientOf(g).status === 'ready');
  const completed = (s: Streamed): boolean => s.status === 200 && s.body.includes('data: [DONE]');

  /** N clients (half on each open replica) stream back to back for `ms`; `during` runs at `atMs`. */
  async function load(ms: number, atMs: number, during: () => Promise<unknown>): Promise<Streamed[]> {
    const out: Streamed[] = [];
    const end = Date.now() + ms;
    let n = 0;
    const event = new Promise<void>((resolve) => setTimeout(() => void during().then(() => resolve()), atMs));
    await Promise.all([event, ...Array.from({ length: N }, async (_, i) => {
      while (Date.now() < end) out.push(await streamChat((i % 2 ? a : b).url, busy.key, { model: 'stream-a' }, `busy:${n++}`).done);
    })]);
    return out;
  }

  async function expectNoSlotLeaked(): Promise<void> {
    await until(async () => (await leases(clientOf(a), leaseKey)) === 0, 'no lease left in Redis');
    expect(insurance(a).inFlight(leaseKey) + insurance(b).inFlight(leaseKey)).toBe(0);
    // Exactly N slots: N + 2 held streams, N at the backend and 2 waiting.
    const burstsSeen = (): number => backend.seen.filter((id) => id.startsWith('burst:')).length;
    const seenBefore = burstsSeen();
    const burst = Array.from({ length: N + 2 }, (_, i) => streamChat((i % 2 ? a : b).url, busy.key, { model: 'hold-a' }, `burst:${i}`));
    await backend.waitForOpen(N, 'burst');
    await until(async () => (await queued(a)) + (await queued(b)) === 2, 'two waiting');
    expect(backend.open('burst')).toBe(N);
    // Released until all N + 2 have reached the backend (the 2 waiting get their slots as the first N end) and none is open.
    await until(() => { backend.release(); return burstsSeen() - seenBefore === N + 2 && backend.open('burst') === 0 && backend.holding === 0; }, 'the burst released and done');
    expect((await Promise.all(burst.map((s) => s.done))).every(completed)).toBe(true);
    await until(async () => (await leases(clientOf(a), leaseKey)) === 0, 'the burst\'s leases given back');
  }

  beforeAll(async () => {
    backend = await startGatedBackend({ events: 6, gapMs: 20 });
    server = await startRedisServer();
    a = await startGateway(config('open'));
    b = await startGateway(config('open'));
    closed = await startGateway(config('closed'));
  });
  afterAll(async () => {
    server?.resume();
    backend?.release();
    await Promise.all([a, b, closed].map((g) => g?.close()));
    await backend?.close();
    await cleanupRedis();
  });

  it('frozen (SIGSTOP) under load: open keeps every stream flowing, closed answers 503, and no slot is leaked after', async () => {
    let refused: Streamed | undefined;
    const results = await load(1500, 300, async () => {
      server.pause();
      refused = await streamChat(closed.url, strict.key, { model: 'stream-a' }, 'strict:frozen').done;
      // The outage itself: Redis stays frozen this long under load (the scenario, not a wait for anything).
      await new Promise((r) => setTimeout(r, 500));
      server.resume();
    });
    expect(results.length).toBeGreaterThan(N * 2);
    expect(results.filter((r) => !completed(r)).map((r) => r.body)).toEqual([]);
    expect(refused!.status).toBe(503);
    expect(JSON.parse(refused!.body).error.reason).toBe('limiter_unavailable');
    expect(backend.max.get('busy')).toBeLessThanOrEqual(N);
    await expectNoSlotLeaked();
  });

  it('killed under load, then restarted empty: open keeps flowing, closed answers 503, and no slot is leaked after', async () => {
    let refused: Streamed | undefined;
    const results = await load(1500, 300, async () => {
      await server.stop();
      refused = await streamChat(closed.url, strict.key, { model: 'stream-a' }, 'strict:killed').done;
    });
    expect(results.filter((r) => !completed(r)).map((r) => r.body)).toEqual([]);
    expect(refused!.status).toBe(503);
    await server.start();
    await until(allReady, 'every gateway to reconnect');
    expect(completed(await streamChat(closed.url, strict.key, { model: 'stream-a' }, 'strict:back').done)).toBe(true);
    await expectNoSlotLeaked();
  });
});
