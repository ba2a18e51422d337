// In-flight limits and the wait queue across the workers of one machine
// (server.workers: 2, no Redis): the primary keeps every worker's leases, so a
// limit of N holds N across both; it knows which worker holds each lease, so a
// worker killed with SIGKILL frees its slots at once (the lease expiry is set
// far beyond the test); a slot freed on one worker admits a request queued on
// the other; and a primary that cannot answer is the store-down case
// (failMode open: decided in the worker, logged once, counted as fallback).
// Which worker holds a connection: /proc (holderOfConnection).
import { Agent } from 'node:http';
import { streamChat, until, type Streamed } from '../support/admission';
import { startGatedBackend, type GatedBackend } from '../support/gated-backend';
import { makeKey } from '../support/gateway';
import { parseExposition, scrape, series } from '../support/metrics';
import { childPids, freePort, holderOfConnection, spawnGateway, type GatewayProcess } from '../support/process';

jest.setTimeout(90_000);

const N = 3;
/** Far beyond any wait in this file: a slot that comes back came back because its worker exited or released it. */
const LEASE_MS = 600_000;
const keys = {
  exact: makeKey('exact', { limits: { concurrency: N } }),
  killed: makeKey('killed', { limits: { concurrency: 2 } }),
  cross: makeKey('cross', { limits: { concurrency: 1 } }),
  stalled: makeKey('stalled', { limits: { concurrency: 2 } }),
};

describe('in-flight limits across two workers, no Redis', () => {
  let backend: GatedBackend;
  let gw: GatewayProcess;
  let metricsUrl: string;
  let port: number;

  beforeAll(async () => {
    backend = await startGatedBackend({ events: 20, gapMs: 100 });
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}`;
    gw = await spawnGateway(JSON.stringify({
      server: { host: '127.0.0.1', port: 0, workers: 2, drainSeconds: 5, metrics: { port: metricsPort } },
      keys: Object.values(keys).map((k) => k.entry),
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'b' }],
      admission: { leaseMs: LEASE_MS, queueTimeoutMs: 60_000, queueMax: 1000 },
      plugins: [{ name: 'rate-limit' }, { name: 'metrics' }],
    }));
    port = Number(new URL(gw.url).port);
  });
  afterAll(async () => {
    if (gw !== undefined) process.kill(gw.pid, 'SIGCONT');
    gw?.kill();
    backend?.release();
    await backend?.close();
  });

  const total = async (name: string, match: (labels: string) => boolean = () => true): Promise<number> => {
    const samples = parseExposition((await scrape(metricsUrl)).text);
    return Object.entries(series(samples, name)).filter(([labels]) => match(labels)).reduce((sum, [, v]) => sum + v, 0);
  };
  const queued = () => total('sluice_concurrency_queue_length');
  const inflight = (key: string) => total('sluice_concurrency_inflight', (l) => l === `name=${key},scope=key`);
  const workers = () => childPids(gw.pid);
  /** The worker a request's connection was handed to. */
  const workerOf = async (request: { port: Promise<number> }): Promise<number> => {
    const client = await request.port;
    let pid: number | undefined;
    await until(() => (pid = holderOfConnection(workers(), port, client)) !== undefined, 'the connection in a worker');
    return pid!;
  };
  const send = (key: { key: string }, model: string, id: string, abortAfter?: number) => streamChat(gw.url, key.key, { model }, id, abortAfter, false);
  /** Every slot of a key is free: `limit` requests are admitted at once, and one more waits. */
  const allFree = async (key: { key: string }, name: string, limit: number): Promise<void> => {
    await until(async () => (await inflight(name)) === 0 && (await queued()) === 0, `no slot of ${name} held, nothing queued`);
    const held = Array.from({ length: limit }, (_, i) => send(key, 'hold-a', `${name}-free:${i}`));
    await backend.waitForOpen(limit, `${name}-free`);
    const extra = send(key, 'hold-a', `${name}-extra:0`);
    await until(async () => (await queued()) === 1, 'one more request waiting');
    expect(backend.seen).not.toContain(`${name}-extra:0`);
    backend.release();
    await until(() => backend.seen.includes(`${name}-extra:0`), 'the extra request admitted');
    backend.release();
    await Promise.all([...held, extra].map((r) => r.done));
  };

  it('holds 4N long streams from both workers to N at the backend, and every slot is back after they end and after aborts', async () => {
    const mark = gw.logs.length;
    const streams = Array.from({ length: 4 * N }, (_, i) => send(keys.exact, 'stream-a', `exact:${i}`, i % 4 === 1 ? 2 + (i % 3) : undefined));
    await backend.waitForOpen(N, 'exact');
    await until(async () => (await queued()) === 3 * N, 'the rest waiting');
    // Two clients leave while queued: they are never sent on.
    streams[4 * N - 1].abort();
    streams[4 * N - 2].abort();
    const results: Streamed[] = await Promise.all(streams.map((s) => s.done));

    expect(backend.max.get('exact')).toBe(N);
    expect(backend.seen).not.toContain(`exact:${4 * N - 1}`);
    expect(backend.seen).not.toContain(`exact:${4 * N - 2}`);
    const whole = results.filter((_, i) => i % 4 !== 1 && i < 4 * N - 2);
    expect(whole.every((r) => r.status === 200 && r.body.includes('data: [DONE]'))).toBe(true);
    const ids = new Set(streams.map((_, i) => `exact:${i}`));
    await until(() => gw.logs.slice(mark).filter((l) => l.msg === 'request' && ids.has(l.requestId as string)).length === 4 * N, 'an access line for every request');
    const served = gw.logs.slice(mark).filter((l) => l.msg === 'request' && ids.has(l.requestId as string) && l.status === 200);
    expect(new Set(served.map((l) => l.pid)).size).toBe(2);

    await allFree(keys.exact, 'exact', N);
    expect(backend.max.get('exact-free')).toBe(N);
  });

  it('frees at once the slots of a worker killed with SIGKILL, and only those', async () => {
    const held = [0, 1].map((i) => send(keys.killed, 'hold-a', `killed:${i}`));
    await backend.waitForOpen(2, 'killed');
    const holders = await Promise.all(held.map(workerOf));
    const victim = holders[0];
    const freed = holders.filter((p) => p === victim).length;
    const mark = gw.logs.length;
    const killedAt = Date.now();
    process.kill(victim, 'SIGKILL');
    await gw.waitForLog('worker exited; starting another', mark);

    const after = Array.from({ length: freed }, (_, i) => send(keys.killed, 'hold-a', `after-kill:${i}`));
    await backend.waitForOpen(freed, 'after-kill', 10_000);
    expect(Date.now() - killedAt).toBeLessThan(10_000);
    // The survivor's slot still counts: one more waits.
    const extra = send(keys.killed, 'hold-a', 'after-kill-extra:0');
    await until(async () => (await queued()) === 1, 'one more request waiting');
    expect(await inflight('killed')).toBe(2);
    expect(backend.seen).not.toContain('after-kill-extra:0');
    backend.release();
    await until(() => backend.seen.includes('after-kill-extra:0'), 'the extra request admitted');
    backend.release();
    await Promise.all([...held, ...after, extra].map((r) => r.done));
    await allFree(keys.killed, 'killed', 2);
    await gw.waitForLog('worker started', mark); // two workers again for the tests after this one
  });

  it('admits a request queued on one worker when the slot frees on the other', async () => {
    const holder = send(keys.cross, 'hold-a', 'cross-held:0');
    await backend.waitForOpen(1, 'cross-held');
    const x = await workerOf(holder);
    // Queue requests until one waits on the other worker; those on the holder's worker leave.
    let waiting: ReturnType<typeof send> | undefined;
    for (let i = 0; i < 10 && waiting === undefined; i++) {
      const q = send(keys.cross, 'stream-a', `cross:${i}`);
      await until(async () => (await queued()) === 1, 'the request waiting');
      if ((await workerOf(q)) !== x) waiting = q;
      else {
        q.abort();
        await until(async () => (await queued()) === 0, 'the request gone from the queue');
      }
    }
    expect(waiting).toBeDefined();
    const id = backend.seen.length;
    backend.release();
    const result = await waiting!.done;
    expect(result.status).toBe(200);
    expect(result.body).toContain('data: [DONE]');
    expect(backend.seen.slice(id).filter((s) => s.startsWith('cross:'))).toHaveLength(1);
    expect(backend.max.get('cross')).toBe(1);
    await holder.done;
    await allFree(keys.cross, 'cross', 1);
  });

  it('decides in the worker while the primary cannot answer (failMode open), logged once, and leaks no slot', async () => {
    // One kept-alive connection: a stopped primary hands out no new ones, but a worker serves the one it has.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = send(keys.stalled, 'stream-a', 'stalled:0', undefined);
      await first.done;
      const viaAgent = (id: string) => streamChat(gw.url, keys.stalled.key, { model: 'stream-a' }, id, undefined, agent);
      expect((await viaAgent('stalled:1').done).status).toBe(200);
      const fallbackBefore = await total('sluice_limiter_fallback_total');
      const mark = gw.logs.length;
      process.kill(gw.pid, 'SIGSTOP');
      let during: Streamed;
      try {
        during = await viaAgent('stalled:2').done;
      } finally {
        process.kill(gw.pid, 'SIGCONT');
      }
      expect(during.status).toBe(200);
      expect(during.body).toContain('data: [DONE]');
      const down = await gw.waitForLog('limits: the primary cannot answer; in-flight limits are counted in this worker with the same limits until it can (failMode open)', mark);
      expect(down).toMatchObject({ level: 40, limiter: 'fallback' });
      expect((await viaAgent('stalled:3').done).status).toBe(200);
      expect(await gw.waitForLog('limits: the primary answers again; in-flight limits are shared across workers again', mark)).toMatchObject({ limiter: 'shared' });
      expect(gw.logs.slice(mark).filter((l) => l.limiter === 'fallback')).toHaveLength(1);
      expect(await total('sluice_limiter_fallback_total')).toBeGreaterThan(fallbackBefore);
    } finally {
      agent.destroy();
    }
    await allFree(keys.stalled, 'stalled', 2);
  });
});
