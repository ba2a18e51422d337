// Backends that attack the gateway: deep nesting, odd shapes, nonsense usage,
// answers and events without end, streams that linger after [DONE], a full
// pool, and keep-alive sockets dropped while idle. Each ends in a clear error
// object (502/504, never 500), or in a clean answer, with the gateway healthy.
import { startHostileBackend, type HostileBackend } from '../support/hostile-backend';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call, post, postSse } from '../support/http';
import { expectError } from '../support/errors';
import { startFaultBackend } from '../support/fault-backend';
import { until } from '../support/wait';

describe('hostile backends', () => {
  let backend: HostileBackend;
  let gw: TestGateway;
  const alice = makeKey('alice');
  const chat = (model: string, extra: object = {}) => post(`${gw.url}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'hi' }], ...extra }, bearer(alice.key));
  const stream = (model: string) => postSse(`${gw.url}/v1/chat/completions`, { model, stream: true, messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
  const lastError = (events: Array<{ data: string }>) => JSON.parse(events.at(-1)!.data).error;

  beforeAll(async () => {
    backend = await startHostileBackend({ hugeBytes: 256 * 1024, holdMs: 1500 });
    const capped = { url: backend.base, maxAnswerBytes: '64kb', maxEventBytes: '64kb' };
    gw = await startGateway({
      keys: [alice.entry],
      upstreams: {
        o: capped,
        wide: { url: backend.base },
        n: { ...capped, format: 'native' },
        one: { url: backend.base, maxSockets: 1, timeoutMs: 400 },
      },
      routes: [
        { model: 'odd-choices', upstream: 'n' },
        { model: 'deep-*', upstream: 'wide' },
        { model: 'pool-*', upstream: 'one', upstreamModel: 'hold' },
        { model: 'linger-one', upstream: 'one', upstreamModel: 'linger' },
        { model: 'ok-one', upstream: 'one', upstreamModel: 'ok' },
        { model: '*', upstream: 'o' },
      ],
    });
  });
  afterAll(async () => { await gw.close(); await backend.close(); });

  afterEach(async () => {
    expect((await call('GET', `${gw.url}/healthz`, undefined)).status).toBe(200);
  });

  it('answers a JSON answer nested 100,000 levels deep with 502, not 500', async () => {
    expectError(await chat('deep-json'), 502, 'upstream_error', null);
  });

  it('ends a stream whose event is nested 100,000 levels deep with one upstream_error event', async () => {
    const res = await stream('deep-event');
    expect(res.status).toBe(200);
    expect(lastError(res.events)).toMatchObject({ reason: 'upstream_error', status: 502 });
    expect(res.raw).not.toContain('[DONE]');
  });

  it('finishes a complete stream closed without [DONE], with its usage, and skips an event that is not JSON', async () => {
    const closed = await stream('no-done');
    const data = closed.events.map((e) => e.data);
    expect(data.at(-1)).toBe('[DONE]');
    expect(JSON.parse(data.at(-2)!)).toMatchObject({ choices: [{ finish_reason: 'stop' }], usage: { total_tokens: 3 } });
    const skipped = await stream('bad-event');
    expect(skipped.events.map((e) => e.data).filter((d) => d !== '[DONE]').map((d) => JSON.parse(d).choices[0].delta.content).filter(Boolean)).toEqual(['a', 'b']);
    expect(skipped.raw).not.toContain('error');
  });

  it('relays a native stream whose choices is not an array without failing', async () => {
    const res = await stream('odd-choices');
    expect(res.events.map((e) => e.data)).toEqual([JSON.stringify({ choices: 42 }), '[DONE]']);
  });

  it('never passes on negative usage: it estimates instead', async () => {
    const res = await chat('neg-usage');
    expect(res.status).toBe(200);
    const { prompt_tokens, completion_tokens, total_tokens } = res.body.usage;
    expect([prompt_tokens, completion_tokens, total_tokens].every((n: number) => Number.isInteger(n) && n >= 0)).toBe(true);
  });

  it('caps a JSON answer at maxAnswerBytes and one event at maxEventBytes', async () => {
    expectError(await chat('huge-json'), 502, 'upstream_error', null);
    // The endless event is the stream's first: nothing has reached the client, so the answer is still an error response.
    const res = await post(`${gw.url}/v1/chat/completions`, { model: 'endless-event', stream: true, messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
    expectError(res, 502, 'upstream_error', null);
  });

  it('releases the upstream socket at [DONE] though the backend keeps the stream open', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await stream('linger-one');
      expect(res.events.at(-1)!.data).toBe('[DONE]');
    }
    // maxSockets is 1: without the release the next request would wait out timeoutMs.
    const started = Date.now();
    expect((await chat('ok-one')).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(350);
  });

  it('bounds the wait for a free socket by timeoutMs', async () => {
    const holding = chat('pool-a');
    await until(() => (backend.seen.hold ?? 0) > 0, 'the first request holding the only socket');
    const started = Date.now();
    expectError(await chat('pool-b'), 504, 'upstream_timeout', null);
    expect(Date.now() - started).toBeLessThan(1000);
    expectError(await holding, 504, 'upstream_timeout', null);
  });

  it('retries once, on a fresh connection, a request whose reused idle socket was dropped', async () => {
    const before = backend.dropped;
    for (let i = 0; i < 20; i++) expect((await chat('drop-reused')).status).toBe(200);
    expect(backend.dropped).toBeGreaterThan(before);
  });
});

describe('an error answer without end', () => {
  it('is cut after 64 KB or a second, whichever comes first: the client gets its error then, not when the backend stops', async () => {
    const backend = await startFaultBackend('b');
    const alice = makeKey('alice');
    const gw = await startGateway({ keys: [alice.entry], upstreams: { u: { url: backend.base } }, routes: [{ model: '*', upstream: 'u' }] });
    const send = () => post(`${gw.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
    try {
      // 100 bytes every 20 ms: the time bound ends it, once for the attempt and once for its retry.
      backend.script({ kind: 'endless-error', status: 500, chunkBytes: 100 });
      let started = Date.now();
      expectError(await send(), 502, 'upstream_error', null);
      expect(backend.bodies.length).toBe(2);
      expect(Date.now() - started).toBeLessThan(3000);
      // 16 KB every 20 ms: the size bound ends it, at once.
      backend.script({ kind: 'endless-error', status: 503, chunkBytes: 16 * 1024 });
      started = Date.now();
      expectError(await send(), 503, 'upstream_unavailable', null); // a backend's 503 stays a 503
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await gw.close();
      await backend.close();
    }
  }, 15_000);
});
