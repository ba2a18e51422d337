// In-flight limits on the real Redis, shared by two gateway replicas: the
// backend counts the streams it has open at once per key, and must never see
// more than the limit, whatever the clients and the backend do; every slot is
// back in Redis afterwards.
import Redis from 'ioredis';
import { startGatedBackend, type GatedBackend } from '../support/gated-backend';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { leases, queued, streamChat, until, type Streamed } from '../support/admission';

jest.setTimeout(60_000);

describe('in-flight limits across two replicas on a shared Redis', () => {
  let backend: GatedBackend;
  let redis: Redis;
  const prefixes: string[] = [];
  const gateways: TestGateway[] = [];

  beforeAll(async () => {
    backend = await startGatedBackend({ events: 8, gapMs: 25 });
    redis = new Redis(sharedRedisUrl());
  });
  afterAll(async () => {
    backend?.release();
    await Promise.all(gateways.map((g) => g.close()));
    await backend?.close();
    for (const p of prefixes) await deletePrefix(sharedRedisUrl(), p);
    redis?.disconnect();
  });

  /** Two replicas of one config on one fresh prefix. */
  async function replicas(config: Record<string, unknown>, settings: Record<string, unknown> = {}): Promise<{ a: TestGateway; b: TestGateway; prefix: string }> {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const full = {
      redis: { url: sharedRedisUrl(), prefix },
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'b' }],
      admission: { queueTimeoutMs: 20_000, leaseMs: 60_000, ...settings },
      plugins: [{ name: 'rate-limit' }],
      ...config,
    };
    const [a, b] = [await startGateway(full), await startGateway(full)];
    gateways.push(a, b);
    return { a, b, prefix };
  }

  const completed = (s: Streamed): boolean => s.status === 200 && s.body.includes('data: [DONE]');

  it('4N long streams of one key over two replicas: never more than N at the backend, the rest wait, every slot back after', async () => {
    const N = 3;
    const key = makeKey('four-n', { limits: { concurrency: N } });
    const { a, b, prefix } = await replicas({ keys: [key.entry] });
    const results = await Promise.all(Array.from({ length: 4 * N }, (_, i) => streamChat((i % 2 ? a : b).url, key.key, { model: 'stream-a' }, `four-n:${i}`).done));
    expect(results.filter((r) => !completed(r)).map((r) => r.body)).toEqual([]);
    expect(backend.max.get('four-n')).toBe(N);
    expect(results.every((r) => r.headers['x-ratelimit-limit-concurrency'] === String(N))).toBe(true);
    await until(async () => (await leases(redis, `${prefix}{key:four-n}:inflight`)) === 0, 'every lease given back');
  });

  it('with a small queue, the requests beyond it are refused at once with 429 rate_limited and Retry-After', async () => {
    const N = 2;
    const key = makeKey('small-q', { limits: { concurrency: N } });
    const { a, b, prefix } = await replicas({ keys: [key.entry] }, { queueMax: 1 });
    const holders = Array.from({ length: N }, (_, i) => streamChat((i % 2 ? a : b).url, key.key, { model: 'hold-a' }, `small-q:h${i}`).done);
    await backend.waitForOpen(N, 'small-q');
    // Three more per replica: one waits on each, two are refused on each.
    const rest = Array.from({ length: 6 }, (_, i) => streamChat((i % 2 ? a : b).url, key.key, { model: 'stream-a' }, `small-q:r${i}`).done);
    await until(async () => (await queued(a)) === 1 && (await queued(b)) === 1, 'one waiter on each replica');
    backend.release();
    const all = [...await Promise.all(holders), ...await Promise.all(rest)];
    const refused = all.filter((r) => r.status === 429);
    expect(refused).toHaveLength(4);
    for (const r of refused) {
      const { error } = JSON.parse(r.body);
      expect(error).toMatchObject({ reason: 'rate_limited', status: 429, code: 'rate_limited', type: 'rate_limit_error', param: null });
      expect(error.message).toMatch(/this API key's limit of 2 in flight is reached, and the queue for a free slot is full/);
      expect(r.headers['retry-after']).toBe('1');
    }
    expect(all.filter(completed)).toHaveLength(4);
    expect(backend.max.get('small-q')).toBe(N);
    await until(async () => (await leases(redis, `${prefix}{key:small-q}:inflight`)) === 0, 'every lease given back');
  });

  it('clients that leave at random points (queued, before the first event, mid-stream) leave no slot behind', async () => {
    const N = 3;
    const key = makeKey('aborts', { limits: { concurrency: N } });
    const { a, b, prefix } = await replicas({ keys: [key.entry] });
    let seed = 7;
    const random = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n; };
    const runs = Array.from({ length: 4 * N }, (_, i) => {
      const mode = random(3);
      const run = streamChat((i % 2 ? a : b).url, key.key, { model: 'stream-a' }, `aborts:${i}`, mode === 0 ? 1 + random(6) : undefined);
      if (mode === 1) setTimeout(run.abort, random(400));
      return run.done;
    });
    const results = await Promise.all(runs);
    expect(results.filter(completed).length).toBeGreaterThan(0);
    expect(results.filter((r) => !completed(r)).length).toBeGreaterThan(0);
    expect(backend.max.get('aborts')).toBeLessThanOrEqual(N);
    await until(async () => (await leases(redis, `${prefix}{key:aborts}:inflight`)) === 0, 'every lease given back');
    await until(async () => backend.open('aborts') === 0, 'the backend to see every stream end');
    // All N slots are free again: N held streams are admitted at once.
    const again = Array.from({ length: N }, (_, i) => streamChat((i % 2 ? a : b).url, key.key, { model: 'hold-a' }, `aborts:again${i}`).done);
    await backend.waitForOpen(N, 'aborts');
    backend.release();
    expect((await Promise.all(again)).every(completed)).toBe(true);
  });

  it('a backend that goes silent: the timeout ends its streams and their slots go to the waiting ones', async () => {
    const N = 2;
    const key = makeKey('silent', { limits: { concurrency: N } });
    const { a, b, prefix } = await replicas({ keys: [key.entry], upstreams: { b: { url: backend.base, format: 'openai', timeouts: { idleMs: 300 } } } });
    const hung = Array.from({ length: N }, (_, i) => streamChat((i % 2 ? a : b).url, key.key, { model: 'hang-a' }, `silent:h${i}`).done);
    await backend.waitForOpen(N, 'silent');
    const waiting = Array.from({ length: N }, (_, i) => streamChat((i % 2 ? a : b).url, key.key, { model: 'stream-a' }, `silent:w${i}`).done);
    for (const r of await Promise.all(hung)) expect(r.body).toContain('"reason":"upstream_timeout"');
    expect((await Promise.all(waiting)).every(completed)).toBe(true);
    expect(backend.max.get('silent')).toBe(N);
    await until(async () => (await leases(redis, `${prefix}{key:silent}:inflight`)) === 0, 'every lease given back');
  });

  it('an upstream\'s maxInFlight holds across keys and replicas; a model\'s maxInFlight likewise', async () => {
    const own = await startGatedBackend({ events: 8, gapMs: 25 });
    try {
      const k1 = makeKey('u1');
      const k2 = makeKey('u2');
      const { a, b, prefix } = await replicas({
        keys: [k1.entry, k2.entry],
        upstreams: { b: { url: own.base, format: 'openai', maxInFlight: 3 } },
        routes: [{ model: 'stream-one', upstream: 'b', maxInFlight: 1 }, { model: '*', upstream: 'b' }],
      });
      const shared = Array.from({ length: 8 }, (_, i) => streamChat((i % 2 ? a : b).url, (i % 4 < 2 ? k1 : k2).key, { model: 'stream-a' }, `upstream:${i}`).done);
      const one = Array.from({ length: 4 }, (_, i) => streamChat((i % 2 ? a : b).url, (i % 2 ? k1 : k2).key, { model: 'stream-one' }, `model:${i}`).done);
      const all = await Promise.all([...shared, ...one]);
      expect(all.every(completed)).toBe(true);
      expect(own.max.get('model')).toBe(1);
      expect(own.max.get('*')).toBe(3);
      await until(async () => (await leases(redis, `${prefix}{upstream:b}:inflight`)) === 0 && (await leases(redis, `${prefix}{model:stream-one}:inflight`)) === 0, 'every lease given back');
    } finally {
      await own.close();
    }
  });
});
