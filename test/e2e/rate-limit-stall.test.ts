// A request the gateway refused never consumes budget, even when Redis hangs.
// While a throwaway redis-server is frozen (SIGSTOP), each limiter command
// times out but stays in the socket; without care Redis runs it on SIGCONT and
// charges requests that got a 503 (failMode closed) or a 429 from the
// in-process insurance limiter (failMode open). Killed, nothing was taken and
// nothing may be given back.
import type Redis from 'ioredis';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, type JsonResponse } from '../support/http';
import { cleanupRedis, startRedisServer, type RedisProcess } from '../support/redis';
import { until } from '../support/wait';

jest.setTimeout(30_000);

const chat = { model: 'ok-a', messages: [{ role: 'user', content: 'hi' }] };

describe('rate limits while Redis stalls', () => {
  let backend: Backend;
  let server: RedisProcess;
  const gateways: TestGateway[] = [];

  const gateway = async (failMode: 'open' | 'closed', keys: Array<Record<string, unknown>>, orgs: Record<string, unknown> = {}) => {
    const gw = await startGateway({
      redis: { url: server.url, prefix: `stall-${failMode}:`, failMode },
      keys,
      orgs,
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'b' }],
      plugins: [{ name: 'rate-limit' }],
    });
    gateways.push(gw);
    return gw;
  };
  const send = (gw: TestGateway, key: string): Promise<JsonResponse> => post(`${gw.url}/v1/chat/completions`, chat, bearer(key));
  /** Sends one at a time until the first refusal (at most `max`); returns how many were admitted. */
  const admittedUntilRefused = async (gw: TestGateway, key: string, max = 20): Promise<number> => {
    for (let i = 0; i < max; i++) {
      const res = await send(gw, key);
      if (res.status !== 200) {
        expect(res.body.error.reason).toBe('rate_limited');
        return i;
      }
    }
    return max;
  };
  const clientOf = (gw: TestGateway) => gw.gateway.services.redis as Redis;
  // A reply on the gateway's own connection means Redis has run everything sent before it on that connection.
  const drained = (gw: TestGateway) => clientOf(gw).ping();
  const counter = async (gw: TestGateway, key: string) => Number(await clientOf(gw).get(key) ?? 0);

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai', events: 2, gapMs: 0 });
    server = await startRedisServer();
  });
  afterAll(async () => {
    server?.resume();
    await Promise.all(gateways.map((g) => g.close()));
    await backend?.close();
    await cleanupRedis();
  });

  it('closed: the requests refused with 503 during a stall are not charged when Redis resumes', async () => {
    const key = makeKey('c1', { limits: { requests: 5, windowSeconds: 60 } });
    const gw = await gateway('closed', [key.entry]);
    expect((await send(gw, key.key)).status).toBe(200);
    expect((await send(gw, key.key)).status).toBe(200);
    server.pause();
    let refused: JsonResponse[];
    try {
      refused = await Promise.all(Array.from({ length: 6 }, () => send(gw, key.key)));
    } finally {
      server.resume();
    }
    expect(refused.map((r) => r.body.error?.reason)).toEqual(Array(6).fill('limiter_unavailable'));
    await drained(gw);
    expect(await counter(gw, 'stall-closed:{key:c1}:requests')).toBe(2);
    expect(await admittedUntilRefused(gw, key.key)).toBe(3);
  });

  it('open: requests the insurance limiter refused during a stall are not charged; the ones it admitted are', async () => {
    // Key o1 may send 2, its org 6. During the stall the insurance limiter admits 2 of o1's 4
    // requests; afterwards the org has exactly 6 - 2 left, which key o2 finds.
    const o1 = makeKey('o1', { org: 'acme', limits: { requests: 2, windowSeconds: 60 } });
    const o2 = makeKey('o2', { org: 'acme', limits: { requests: 100, windowSeconds: 60 } });
    const gw = await gateway('open', [o1.entry, o2.entry], { acme: { limits: { requests: 6, windowSeconds: 60 } } });
    server.pause();
    const statuses: number[] = [];
    try {
      for (let i = 0; i < 4; i++) statuses.push((await send(gw, o1.key)).status);
    } finally {
      server.resume();
    }
    expect(statuses).toEqual([200, 200, 429, 429]);
    await drained(gw);
    expect(await counter(gw, 'stall-open:{key:o1}:requests')).toBe(2);
    expect(await counter(gw, 'stall-open:{org:acme}:requests')).toBe(2);
    expect(await admittedUntilRefused(gw, o2.key)).toBe(4);
  });

  it('closed: frozen, then killed and restarted empty: nothing is given back to the new server', async () => {
    const key = makeKey('c2', { limits: { requests: 3, windowSeconds: 60 } });
    const gw = await gateway('closed', [key.entry]);
    expect((await send(gw, key.key)).status).toBe(200);
    server.pause();
    const refused = await Promise.all(Array.from({ length: 4 }, () => send(gw, key.key)));
    expect(refused.map((r) => r.body.error?.reason)).toEqual(Array(4).fill('limiter_unavailable'));
    await server.stop();
    expect((await send(gw, key.key)).body.error.reason).toBe('limiter_unavailable');
    await server.start();
    await until(() => clientOf(gw).status === 'ready', 'the connection to the fresh server', 5000);
    await drained(gw);
    // A fresh server: the whole budget, and not one request more.
    expect(await admittedUntilRefused(gw, key.key)).toBe(3);
  });
});
