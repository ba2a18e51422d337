// A fallback takes the slots of the route and upstream it falls back to, and
// gives back the first route's: in an outage of route A, A's traffic reaches
// B's backends no faster than B's own limits allow, and queues (then 429s)
// like any request for B.
import { startGatedBackend, type GatedBackend } from '../support/gated-backend';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { queued, streamChat, until } from '../support/admission';
import { freePort } from '../support/net';

describe('a fallback respects the limits of where it falls back to', () => {
  let b: GatedBackend;
  let gw: TestGateway;
  const key = makeKey('k');

  beforeAll(async () => {
    b = await startGatedBackend();
    const dead = await freePort(); // nothing listens: route A's backend refuses every connection
    gw = await startGateway({
      keys: [key.entry],
      upstreams: {
        ua: { url: `http://127.0.0.1:${dead}/v1`, format: 'openai' },
        ub: { url: b.base, format: 'openai', maxInFlight: 2 },
      },
      routes: [
        { model: 'a', upstream: 'ua', upstreamModel: 'hold-a', fallbacks: ['b'], maxInFlight: 1 },
        { model: 'b', upstream: 'ub', upstreamModel: 'hold-b' },
      ],
      admission: { queueTimeoutMs: 5_000 },
    });
  });
  afterAll(async () => {
    b.release();
    await gw.close();
    await b.close();
  });

  it('holds route B\'s upstream to its limit for requests that fell back from A, and frees A\'s own slot', async () => {
    // Five requests for A, one after another: A's limit of 1 is given back as each falls back, so none waits on A.
    const runs = [0, 1, 2, 3, 4].map((i) => streamChat(gw.url, key.key, { model: 'a' }, `fb:${i}`));
    await b.waitForOpen(2, 'fb');
    // B's upstream holds 2; the other three wait in B's queue, not at A's (A held them only briefly).
    await until(async () => (await queued(gw)) === 3, 'three queued for ub');
    expect(b.open('fb')).toBe(2);
    // Each release lets the two held ones finish, and two waiters take their slots.
    b.release();
    await until(() => b.seen.length === 4 && b.holding === 2, 'the next two at ub');
    b.release();
    await until(() => b.seen.length === 5 && b.holding === 1, 'the last at ub');
    b.release();
    const done = await Promise.all(runs.map((r) => r.done));
    expect(done.map((d) => d.status)).toEqual([200, 200, 200, 200, 200]);
    expect(b.max.get('fb')).toBe(2);
  });

  it('gives every slot back: another round finds A and B free', async () => {
    const run = streamChat(gw.url, key.key, { model: 'a' }, 'again:1');
    await b.waitForOpen(1, 'again');
    expect(await queued(gw)).toBe(0);
    b.release();
    expect((await run.done).status).toBe(200);
    const inflight = (await gw.gateway.services.metrics!.getSingleMetric('sluice_concurrency_inflight')!.get()).values;
    expect(inflight.every((v) => v.value === 0)).toBe(true);
  });
});
