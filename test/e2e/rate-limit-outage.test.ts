// Redis going away under load: a throwaway redis-server that the test kills
// (and later freezes with SIGSTOP) while gateways use it. failMode open keeps
// serving on the in-process insurance limiter, never waiting long; closed
// answers 503; when Redis is back the shared count takes over by itself.
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { Counter } from 'prom-client';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, type JsonResponse } from '../support/http';
import { cleanupRedis, startRedisServer, type RedisProcess } from '../support/redis';
import { until } from '../support/wait';

jest.setTimeout(60_000);

const chat = { model: 'ok-a', messages: [{ role: 'user', content: 'hi' }] };
const MAX_MS = 250;

function capture() {
  const lines: Array<Record<string, any>> = [];
  const stream = new Writable({ write(chunk, _enc, done) { for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l)); done(); } });
  return { logger: pino({ level: 'info' }, stream), lines };
}


interface Timed { res: JsonResponse; ms: number }

async function timedPost(url: string, key: string): Promise<Timed> {
  const t0 = performance.now();
  const res = await post(`${url}/v1/chat/completions`, chat, bearer(key));
  return { res, ms: performance.now() - t0 };
}

/** `loops` clients send requests back to back for `durationMs`; `during` runs at `atMs`. */
async function load(url: string, key: string, durationMs: number, atMs: number, during: () => unknown, loops = 4): Promise<Timed[]> {
  const out: Timed[] = [];
  const end = Date.now() + durationMs;
  const event = new Promise<void>((resolve) => setTimeout(() => { void Promise.resolve(during()).then(() => resolve()); }, atMs));
  await Promise.all([event, ...Array.from({ length: loops }, async () => {
    while (Date.now() < end) out.push(await timedPost(url, key));
  })]);
  return out;
}

const TRANSITIONS = /^limits: Redis (cannot answer|answers again)/;

describe('rate limits while Redis goes down and comes back', () => {
  let backend: Backend;
  let server: RedisProcess;
  let openA: TestGateway;
  let openB: TestGateway;
  let closed: TestGateway;
  const logsA = capture();
  const busy = makeKey('busy', { limits: { requests: 100_000, windowSeconds: 60 } });
  const three = makeKey('three', { limits: { requests: 3, windowSeconds: 60 } });
  const five = makeKey('five', { limits: { requests: 5, windowSeconds: 60 } });
  const latencies: Record<string, number[]> = { killed: [], frozen: [] };

  const config = (failMode: 'open' | 'closed') => ({
    redis: { url: server.url, prefix: 'outage:', failMode },
    keys: [busy.entry, three.entry, five.entry],
    upstreams: { b: { url: backend.base, format: 'openai' } },
    routes: [{ model: '*', upstream: 'b' }],
    plugins: [{ name: 'rate-limit' }],
  });
  const fallbacks = async (gw: TestGateway) => (await (gw.gateway.services.metrics!.getSingleMetric('sluice_limiter_fallback_total') as Counter).get()).values[0]?.value ?? 0;
  const redisUp = async (gw: TestGateway) => (await gw.gateway.services.metrics!.getSingleMetric('sluice_redis_up')!.get()).values[0]?.value;
  const allReady = () => [openA, openB, closed].every((g) => g.gateway.services.redis!.status === 'ready');

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai', events: 2, gapMs: 0 });
    server = await startRedisServer();
    openA = await startGateway(config('open'), { logger: logsA.logger });
    openB = await startGateway(config('open'));
    closed = await startGateway(config('closed'));
  });
  afterAll(async () => {
    await Promise.all([openA, openB, closed].map((g) => g?.close()));
    await backend?.close();
    await cleanupRedis();
  });

  it('serves from the shared count while Redis is up', async () => {
    expect(allReady()).toBe(true);
    expect(await redisUp(openA)).toBe(1);
    for (const gw of [openA, closed]) expect((await timedPost(gw.url, busy.key)).res.status).toBe(200);
    expect(await fallbacks(openA)).toBe(0);
  });

  it('open: Redis killed under load, every request still succeeds and none waits 250 ms', async () => {
    const results = await load(openA.url, busy.key, 1500, 300, () => server.stop());
    latencies.killed = results.map((r) => r.ms);
    expect(results.length).toBeGreaterThan(20);
    expect(results.filter((r) => r.res.status !== 200).map((r) => r.res.body)).toEqual([]);
    expect(Math.max(...results.map((r) => r.ms))).toBeLessThan(MAX_MS);
    expect(await fallbacks(openA)).toBeGreaterThan(0);
    expect(await redisUp(openA)).toBe(0);
  });

  it('open: the insurance limiter keeps the same budgets, per replica', async () => {
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await timedPost(openA.url, three.key)).res.status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });

  it('closed: answers 503 limiter_unavailable at once', async () => {
    const { res, ms } = await timedPost(closed.url, busy.key);
    expect(res.status).toBe(503);
    expect(res.body.error).toEqual({ message: expect.any(String), param: null, reason: 'limiter_unavailable', status: 503, code: 'limiter_unavailable', type: 'server_error' });
    expect(ms).toBeLessThan(MAX_MS);
  });

  it('Redis restarted on the same port: the shared count takes over again by itself', async () => {
    await server.start();
    await until(allReady, 'every gateway to reconnect');
    expect((await timedPost(closed.url, busy.key)).res.status).toBe(200);
    const before = await fallbacks(openA);
    // Shared again: 10 concurrent requests over two replicas, 5 admitted in all.
    const all = await Promise.all(Array.from({ length: 10 }, (_, i) => post(`${(i % 2 ? openA : openB).url}/v1/chat/completions`, chat, bearer(five.key))));
    expect(all.filter((r) => r.status === 200).length).toBe(5);
    expect(await fallbacks(openA)).toBe(before);
    expect(await redisUp(openA)).toBe(1);
  });

  it('Redis frozen (SIGSTOP): requests wait at most the command timeout, then fall back or get 503', async () => {
    server.pause();
    try {
      const results = await load(openA.url, busy.key, 800, 0, () => undefined, 2);
      latencies.frozen = results.map((r) => r.ms);
      expect(results.filter((r) => r.res.status !== 200).map((r) => r.res.body)).toEqual([]);
      expect(Math.max(...results.map((r) => r.ms))).toBeLessThan(MAX_MS);
      const { res, ms } = await timedPost(closed.url, busy.key);
      expect(res.body.error.reason).toBe('limiter_unavailable');
      expect(ms).toBeLessThan(MAX_MS);
    } finally {
      server.resume();
    }
    let shared = false;
    for (let i = 0; i < 50 && !shared; i++) {
      const before = await fallbacks(openA);
      await timedPost(openA.url, busy.key);
      shared = (await fallbacks(openA)) === before;
    }
    expect(shared).toBe(true);
  });

  it('logged each transition once, not once per request', () => {
    const transitions = logsA.lines.filter((l) => TRANSITIONS.test(l.msg)).map((l) => l.limiter);
    expect(transitions).toEqual(['fallback', 'shared', 'fallback', 'shared']);
    const connection = logsA.lines.filter((l) => /^redis /.test(l.msg)).map((l) => l.msg);
    expect(connection).toEqual(['redis connected', 'redis connection lost; retrying in the background', 'redis reachable again']);
    for (const [phase, ms] of Object.entries(latencies)) {
      ms.sort((a, b) => a - b);
      process.stdout.write(`rate-limit outage (${phase}): ${ms.length} requests, median ${ms[ms.length >> 1].toFixed(1)} ms, max ${ms[ms.length - 1].toFixed(1)} ms\n`);
    }
  });
});
