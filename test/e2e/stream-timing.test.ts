// Streaming without buffering, timed: the backend sends one event every
// 100 ms; each must reach the client within 20 ms of leaving the backend.
// Backend, gateway and client share this process and its clock (Date.now(),
// 1 ms steps), so a delay is measured directly; 2 ms are allowed for the
// clock's granularity. Buffering or batching would show as ~100 ms on every
// run; a pause of this shared, busy machine shows once, hence the retries.
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, postSse } from '../support/http';

const EVENTS = 10;
const GAP_MS = 100;
const BOUND_MS = 20 + 2;

jest.retryTimes(2, { logErrorsBeforeRetry: true });

describe.each(['openai', 'native'] as const)('stream timing, %s format', (format) => {
  let backend: Backend;
  let gw: TestGateway;
  const alice = makeKey('alice');

  beforeAll(async () => {
    backend = await startBackend({ format, events: EVENTS, gapMs: GAP_MS });
    gw = await startGateway({
      keys: [alice.entry],
      upstreams: { b: { url: backend.base, format } },
      routes: [{ model: '*', upstream: 'b' }],
      plugins: [{ name: 'content-filter', terms: ['forbidden phrase'] }, { name: 'limits' }],
    });
  });
  afterAll(async () => { await gw.close(); await backend.close(); });

  it('delivers each event within 20 ms of the backend sending it, the first long before the end', async () => {
    const started = Date.now();
    const res = await postSse(`${gw.url}/v1/chat/completions`, { model: 'ok-timed', stream: true, messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
    expect(res.status).toBe(200);
    const sent = backend.sentAt.at(-1)!;
    // Content events map one to one (the openai format folds its finish and usage chunks into the last one).
    const delays = sent.slice(0, EVENTS).map((at, i) => res.events[i].at - at);
    expect(delays.every((d) => d >= 0)).toBe(true);
    expect(delays.filter((d) => d > BOUND_MS)).toEqual([]);
    // The events really were spread out, not delivered together at the end.
    const arrivals = res.events.map((e) => e.at);
    expect(arrivals[EVENTS - 1] - arrivals[0]).toBeGreaterThanOrEqual((EVENTS - 1) * GAP_MS - 10);
    expect(arrivals[0] - started).toBeLessThan(GAP_MS);
    expect(arrivals.at(-1)! - arrivals[0]).toBeGreaterThan(800);
  });
});
