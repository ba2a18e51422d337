// The wait queue, in memory (no Redis): waiting requests are admitted in
// order as slots free, high priority first; a client that leaves while
// queued never reaches the backend; a full queue sheds the lowest priority
// first; a wait that runs out is a 429.
import { startGatedBackend, type GatedBackend } from '../support/gated-backend';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { queued, streamChat, until } from '../support/admission';

jest.setTimeout(30_000);

describe('the wait queue for an in-flight limit', () => {
  let backend: GatedBackend;
  const gateways: TestGateway[] = [];
  const keys = {
    high: makeKey('high', { org: 'acme', priority: 'high' }),
    normal: makeKey('normal', { org: 'acme' }),
    low: makeKey('low', { org: 'acme', priority: 'low' }),
  };

  beforeAll(async () => { backend = await startGatedBackend({ events: 3, gapMs: 5 }); });
  afterAll(async () => {
    backend?.release();
    await Promise.all(gateways.map((g) => g.close()));
    await backend?.close();
  });

  async function gateway(settings: Record<string, unknown> = {}): Promise<TestGateway> {
    const gw = await startGateway({
      keys: Object.values(keys).map((k) => k.entry),
      orgs: { acme: { limits: { concurrency: 1 } } },
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'b' }],
      admission: { queueTimeoutMs: 10_000, ...settings },
      plugins: [{ name: 'rate-limit' }],
    });
    gateways.push(gw);
    return gw;
  }

  /** Holds the org's one slot; returns the stream's promise. */
  async function occupy(gw: TestGateway, id: string) {
    const run = streamChat(gw.url, keys.normal.key, { model: 'hold-a' }, id);
    await until(() => backend.seen.includes(id), `${id} at the backend`);
    return run; // not its promise: an async function would wait on it
  }

  /** Queues one request and waits until the queue holds it. */
  async function enqueue(gw: TestGateway, key: keyof typeof keys, id: string) {
    const before = await queued(gw);
    const run = streamChat(gw.url, keys[key].key, { model: 'hold-a' }, id);
    await until(async () => (await queued(gw)) === before + 1, `${id} in the queue`);
    return run;
  }

  /** Releases the held request, then waits for the next one to reach the backend; returns its id. */
  async function next(): Promise<string> {
    const seen = backend.seen.length;
    backend.release(1);
    await until(() => backend.seen.length > seen, 'the next request at the backend');
    return backend.seen[seen];
  }

  it('admits waiting requests in order as the slot frees', async () => {
    const gw = await gateway();
    const first = await occupy(gw, 'order:0');
    const waiting = [];
    for (let i = 1; i <= 4; i++) waiting.push(await enqueue(gw, 'normal', `order:${i}`));
    const order = [];
    for (let i = 1; i <= 4; i++) order.push(await next());
    expect(order).toEqual(['order:1', 'order:2', 'order:3', 'order:4']);
    backend.release();
    await first.done;
    for (const w of waiting) expect((await w.done).status).toBe(200);
    expect(await queued(gw)).toBe(0);
  });

  it('a queued client that disconnects leaves the queue and never reaches the backend', async () => {
    const gw = await gateway();
    const first = await occupy(gw, 'left:0');
    const leaving = await enqueue(gw, 'normal', 'left:gone');
    const staying = await enqueue(gw, 'normal', 'left:stays');
    leaving.abort();
    await until(async () => (await queued(gw)) === 1, 'the leaver out of the queue');
    expect(await next()).toBe('left:stays');
    backend.release();
    await Promise.all([first.done, staying.done]);
    expect(backend.seen).not.toContain('left:gone');
  });

  it('high priority is admitted first and low last, whatever the order they came in', async () => {
    const gw = await gateway();
    const first = await occupy(gw, 'prio:0');
    const waiting = [await enqueue(gw, 'low', 'prio:low'), await enqueue(gw, 'normal', 'prio:normal'), await enqueue(gw, 'high', 'prio:high')];
    const order = [await next(), await next(), await next()];
    expect(order).toEqual(['prio:high', 'prio:normal', 'prio:low']);
    backend.release();
    await Promise.all([first.done, ...waiting.map((w) => w.done)]);
  });

  it('a full queue sheds the newest low-priority waiter for a higher one, and refuses another low one', async () => {
    const gw = await gateway({ queueMax: 2 });
    const first = await occupy(gw, 'shed:0');
    const lowOld = await enqueue(gw, 'low', 'shed:low-old');
    const lowNew = await enqueue(gw, 'low', 'shed:low-new');
    const high = streamChat(gw.url, keys.high.key, { model: 'hold-a' }, 'shed:high');
    const shed = await lowNew.done;
    expect(shed.status).toBe(429);
    expect(JSON.parse(shed.body).error.message).toMatch(/a request of higher priority took this one's place/);
    const refused = await streamChat(gw.url, keys.low.key, { model: 'hold-a' }, 'shed:low-late').done;
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).error.message).toMatch(/the queue for a free slot is full/);
    expect([await next(), await next()]).toEqual(['shed:high', 'shed:low-old']);
    backend.release();
    await Promise.all([first.done, lowOld.done, high.done]);
  });

  it('a wait that runs out is a 429 naming the limit, and nothing reaches the backend', async () => {
    const gw = await gateway({ queueTimeoutMs: 300 });
    const first = await occupy(gw, 'late:0');
    const started = Date.now();
    const late = await streamChat(gw.url, keys.normal.key, { model: 'hold-a' }, 'late:1').done;
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(late.status).toBe(429);
    expect(JSON.parse(late.body).error).toMatchObject({ reason: 'rate_limited', message: expect.stringMatching(/your organization's limit of 1 in flight is reached, and no slot came free within 1s of waiting/) });
    expect(backend.seen).not.toContain('late:1');
    backend.release();
    await first.done;
  });
});
