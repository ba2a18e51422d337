// Faults before anything reached the client, one backend misbehaving at a
// time behind a fleet: what the client got, how many attempts each backend
// saw, how long it took, and that the gateway still answers afterwards.
import { startFaultBackend, ok, status, type FaultBackend } from '../support/fault-backend';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, postSse, type JsonResponse } from '../support/http';
import { expectError } from '../support/errors';
import { freePort } from '../support/net';
import { until } from '../support/wait';

const alice = makeKey('alice');
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => { await Promise.all(open.splice(0).map((o) => o.close())); });

async function backends(...names: string[]): Promise<FaultBackend[]> {
  const started = await Promise.all(names.map((n) => startFaultBackend(n)));
  open.push(...started);
  return started;
}

/** A gateway whose model `m` goes to a fleet of `members` (round robin, so the first takes the first request). */
async function fleet(members: FaultBackend[], upstream: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Promise<TestGateway> {
  const gw = await startGateway({
    keys: [alice.entry],
    upstreams: { f: { endpoints: members.map((b) => ({ url: b.base })), picker: 'round_robin', health: { consecutiveFailures: 3, baseEjectionMs: 60_000, maxEjectedShare: 1 }, ...upstream } },
    routes: [{ model: 'm', upstream: 'f' }],
    ...extra,
  });
  open.push(gw);
  return gw;
}

const chat = (gw: TestGateway, extra: object = {}): Promise<JsonResponse> =>
  post(`${gw.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'hi' }], ...extra }, bearer(alice.key));

/** Whether model m is in rotation on a backend's endpoint (sluice_upstream_model_up; 1 when it never left). */
async function modelUp(gw: TestGateway, backend: FaultBackend): Promise<number> {
  const gauge = gw.gateway.services.metrics!.getSingleMetric('sluice_upstream_model_up');
  const values = gauge === undefined ? [] : (await gauge.get()).values;
  return values.find((v) => v.labels.endpoint === backend.base && v.labels.model === 'm')?.value ?? 1;
}

/** The answer's text, and which backend wrote it. */
const textOf = (res: JsonResponse): string => res.body.choices[0].message.content;

async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const started = Date.now();
  const out = await run();
  return [out, Date.now() - started];
}

describe('a fleet under backend faults, before the answer starts', () => {
  it('429 with Retry-After: answered elsewhere at once, and the endpoint rests until then', async () => {
    const [a, b] = await backends('a', 'b');
    a.script(status(429, { retryAfter: '2', code: 'rate_limit_exceeded', type: 'rate_limit_error' }), ok);
    const gw = await fleet([a, b]);
    const [res, ms] = await timed(() => chat(gw));
    expect(res.status).toBe(200);
    expect(textOf(res)).toContain('b-0');
    expect(ms).toBeLessThan(1000);
    for (let i = 0; i < 4; i++) expect(textOf(await chat(gw))).toContain('b-0');
    expect([a.bodies.length, b.bodies.length]).toEqual([1, 5]);
  });

  it('429 without Retry-After: the model rests on that endpoint for a second, then is back through one trial', async () => {
    const [a, b] = await backends('a', 'b');
    a.script(status(429), ok);
    const gw = await fleet([a, b]);
    expect(textOf(await chat(gw))).toContain('b-0');
    expect(textOf(await chat(gw))).toContain('b-0');
    expect(a.bodies.length).toBe(1);
    await until(async () => (await modelUp(gw, a)) === 1, 'the model back in rotation on a', 3000);
    const answers = [await chat(gw), await chat(gw)].map(textOf).join(' ');
    expect(answers).toContain('a-0');
    expect(a.bodies.length).toBe(2);
  });

  it('429 from a lone endpoint with a long Retry-After: passed on with it and its code, never retried; then 429 rate_limited with what is left of it', async () => {
    const [a] = await backends('a');
    a.script(status(429, { retryAfter: '30', code: 'rate_limit_exceeded', type: 'rate_limit_error' }), ok);
    const gw = await fleet([a]);
    const [res, first] = await timed(() => chat(gw));
    expectError(res, 429, 'upstream_rejected', null, { code: 'rate_limit_exceeded', type: 'rate_limit_error' });
    expect(res.headers['retry-after']).toBe('30');
    expect(first).toBeLessThan(1000);
    expect(a.bodies.length).toBe(1);
    const [refused, ms] = await timed(() => chat(gw));
    expectError(refused, 429, 'rate_limited', null);
    expect(refused.body.error.message).not.toMatch(/repeated/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(29);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(30);
    expect(ms).toBeLessThan(200);
    expect(a.bodies.length).toBe(1);
  });

  it('429 or 503 from a lone endpoint with a short Retry-After: waited out, then tried again there', async () => {
    const [a] = await backends('a');
    a.script(status(429, { retryAfter: '1' }), ok, status(503, { retryAfter: '1' }), ok);
    const gw = await fleet([a]);
    for (const round of [0, 2]) {
      const [res, ms] = await timed(() => chat(gw));
      expect(res.status).toBe(200);
      expect(a.arrivals[round + 1] - a.arrivals[round]).toBeGreaterThanOrEqual(950);
      expect(ms).toBeLessThan(2000);
    }
    expect(a.bodies.length).toBe(4);
  });

  it('a short Retry-After is not waited out past the retry deadline, nor past retry.maxRetryAfterWaitMs', async () => {
    const [a] = await backends('a');
    a.script(status(429, { retryAfter: '1', code: 'rate_limit_exceeded', type: 'rate_limit_error' }), ok);
    const gw = await fleet([a], { retry: { attempts: 1, deadlineMs: 500 } });
    const [res, ms] = await timed(() => chat(gw));
    expectError(res, 429, 'upstream_rejected', null, { code: 'rate_limit_exceeded', type: 'rate_limit_error' });
    expect(ms).toBeLessThan(500);
    const [b] = await backends('b');
    b.script(status(503, { retryAfter: '2' }), ok);
    const strict = await fleet([b], { retry: { attempts: 1, maxRetryAfterWaitMs: 1000 } });
    const [failed, waited] = await timed(() => chat(strict));
    expectError(failed, 503, 'upstream_unavailable', null); // the backend's 503, with its Retry-After
    expect(failed.headers['retry-after']).toBe('2');
    expect(waited).toBeLessThan(1000);
    expect(b.bodies.length).toBe(1);
  });

  it('500 once, then healthy: the one endpoint is tried again after a backoff with jitter', async () => {
    const [a] = await backends('a');
    a.script(status(500), ok, status(500), ok);
    const gw = await fleet([a], { retry: { attempts: 1, backoffMs: 200 } });
    const [res, ms] = await timed(() => chat(gw));
    expect(res.status).toBe(200);
    expect(a.bodies.length).toBe(2);
    expect(a.arrivals[1] - a.arrivals[0]).toBeGreaterThanOrEqual(95); // half the backoff is fixed
    expect(ms).toBeLessThan(2000);
    const streamed = await postSse(`${gw.url}/v1/chat/completions`, { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
    expect(streamed.events.at(-1)!.data).toBe('[DONE]');
    expect(streamed.raw).not.toContain('"error"');
    expect(a.bodies.length).toBe(4);
  });

  it('a persistent 503 everywhere: bounded attempts, then the 503; once all are out, one attempt a request, on the endpoint soonest back', async () => {
    const [a, b] = await backends('a', 'b');
    a.script(status(503));
    b.script(status(503));
    const gw = await fleet([a, b], { retry: { attempts: 2, backoffMs: 20 }, health: { consecutiveFailures: 3, baseEjectionMs: 60_000, maxEjectedShare: 1 } });
    expectError(await chat(gw), 503, 'upstream_unavailable', null);
    expect(a.bodies.length + b.bodies.length).toBe(3); // one attempt and two retries
    // Each endpoint leaves after three failures in a row; until both have, each request makes at most three attempts.
    for (let i = 0; i < 3 && a.bodies.length + b.bodies.length < 6; i++) {
      const before = a.bodies.length + b.bodies.length;
      expectError(await chat(gw), 503, 'upstream_unavailable', null);
      expect(a.bodies.length + b.bodies.length - before).toBeLessThanOrEqual(3);
    }
    const seen = a.bodies.length + b.bodies.length;
    expect(seen).toBe(6);
    // Both out, nothing else to serve: tried anyway, once, without retries, and the backend's answer passed on at once.
    const [answered, ms] = await timed(() => chat(gw));
    expectError(answered, 503, 'upstream_unavailable', null);
    expect(answered.body.error.message).toMatch(/HTTP 503/);
    expect(ms).toBeLessThan(200);
    expect(a.bodies.length + b.bodies.length).toBe(seen + 1);
  });

  it('a reset before the head: tried on the next endpoint', async () => {
    const [a, b] = await backends('a', 'b');
    a.script({ kind: 'reset' }, ok);
    const gw = await fleet([a, b]);
    const res = await chat(gw);
    expect(res.status).toBe(200);
    expect(textOf(res)).toContain('b-0');
    expect([a.bodies.length, b.bodies.length]).toEqual([1, 1]);
    expect((await chat(gw)).status).toBe(200);
  });

  it('a backend that accepts and never answers: given up after firstByteMs and tried elsewhere; alone, a 504, never retried there', async () => {
    const [a, b] = await backends('a', 'b');
    a.script({ kind: 'silent' });
    const gw = await fleet([a, b], { timeouts: { firstByteMs: 300 } });
    const [res, ms] = await timed(() => chat(gw));
    expect(res.status).toBe(200);
    expect(textOf(res)).toContain('b-0');
    expect(ms).toBeGreaterThanOrEqual(280);
    expect(ms).toBeLessThan(2000);
    const [lone] = await backends('lone');
    lone.script({ kind: 'silent' });
    const alone = await fleet([lone], { timeouts: { firstByteMs: 300 }, retry: { attempts: 3, backoffMs: 10 } });
    const [timedOut, lonely] = await timed(() => chat(alone));
    expectError(timedOut, 504, 'upstream_timeout', null);
    expect(lone.bodies.length).toBe(1);
    expect(lonely).toBeLessThan(2000);
    lone.script(ok);
    expect((await chat(alone)).status).toBe(200);
  });

  it('a backend that took the request and hung up after a silence: never resent for free; the silence counts against the attempts', async () => {
    const [lone] = await backends('lone');
    lone.script({ kind: 'hang-up', afterMs: 600 });
    const alone = await fleet([lone]);
    const [res, ms] = await timed(() => chat(alone));
    expectError(res, 502, 'upstream_error', null);
    expect(lone.bodies.length).toBe(1); // a 0.6 s silence never becomes 1.2 s
    expect(ms).toBeLessThan(1100);
    // Two such endpoints and one retry allowed: each tried once, never a third time.
    const [a, b] = await backends('a', 'b');
    a.script({ kind: 'hang-up', afterMs: 300 });
    b.script({ kind: 'hang-up', afterMs: 300 });
    const two = await fleet([a, b], { retry: { attempts: 1 } });
    expectError(await chat(two), 502, 'upstream_error', null);
    expect([a.bodies.length, b.bodies.length]).toEqual([1, 1]);
  });

  it('a slow first event within firstEventMs is slowness, not silence: one attempt, no retry', async () => {
    const [a, b] = await backends('a', 'b');
    a.script({ kind: 'ok', firstEventMs: 400 }, ok);
    const gw = await fleet([a, b], { timeouts: { firstEventMs: 3000 } });
    const [res, ms] = await timed(() => postSse(`${gw.url}/v1/chat/completions`, { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key)));
    expect(res.events.at(-1)!.data).toBe('[DONE]');
    expect(res.raw).toContain('a-0');
    expect(ms).toBeGreaterThanOrEqual(380);
    expect([a.bodies.length, b.bodies.length]).toEqual([1, 0]);
  });
});

describe('refusals that decide routing', () => {
  async function routed(failoverOn?: string[]): Promise<{ gw: TestGateway; small: FaultBackend; big: FaultBackend }> {
    const [small, big] = await backends('small', 'big');
    const gw = await startGateway({
      keys: [alice.entry],
      upstreams: { s: { url: small.base }, b: { url: big.base } },
      routes: [{ model: 'm', upstream: 's', fallbacks: ['m-big'], ...(failoverOn ? { failoverOn } : {}) }, { model: 'm-big', upstream: 'b' }],
    });
    open.push(gw);
    return { gw, small, big };
  }

  it('400 context length: failed over to a larger model when the route names the code, never retried on the same one', async () => {
    const { gw, small, big } = await routed(['context_length_exceeded']);
    small.script(status(400, { code: 'context_length_exceeded', type: 'invalid_request_error' }));
    const res = await chat(gw);
    expect(res.status).toBe(200);
    expect(res.body.model).toBe('m-big');
    expect(res.body.usage).toEqual({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
    expect([small.bodies.length, big.bodies.length]).toEqual([1, 1]);
  });

  it('400 context length without failoverOn: passed on with the backend code, one attempt', async () => {
    const { gw, small, big } = await routed();
    small.script(status(400, { code: 'context_length_exceeded', type: 'invalid_request_error' }));
    expectError(await chat(gw), 400, 'upstream_rejected', null, { code: 'context_length_exceeded', type: 'invalid_request_error' });
    expect([small.bodies.length, big.bodies.length]).toEqual([1, 0]);
  });

  it('400 content policy: one attempt, the backend reason passed on, no fallback asked', async () => {
    const { gw, small, big } = await routed(['context_length_exceeded']);
    small.script(status(400, { code: 'content_policy_violation', type: 'invalid_request_error' }));
    const res = await chat(gw);
    expectError(res, 400, 'upstream_rejected', null, { code: 'content_policy_violation', type: 'invalid_request_error' });
    expect(res.body.error.message).toBe('small refused the request (400)');
    expect([small.bodies.length, big.bodies.length]).toEqual([1, 0]);
  });
});

describe('a primary that is down for a while, then recovers', () => {
  it('moves traffic to the fallback while it is out, and its health probes bring it back', async () => {
    const port = await freePort();
    const [fallback] = await backends('fb');
    const gw = await startGateway({
      keys: [alice.entry],
      upstreams: {
        p: { url: `http://127.0.0.1:${port}/v1`, retry: { attempts: 0 }, healthCheck: { path: '/health', intervalMs: 150 }, health: { consecutiveFailures: 2, baseEjectionMs: 60_000 } },
        fb: { url: fallback.base },
      },
      routes: [{ model: 'm', upstream: 'p', fallbacks: ['m-fb'] }, { model: 'm-fb', upstream: 'fb' }],
    }, { metrics: {} });
    open.push(gw);
    for (let i = 0; i < 5; i++) {
      const res = await chat(gw);
      expect(res.status).toBe(200);
      expect(res.body.model).toBe('m-fb');
    }
    expect(fallback.bodies.length).toBe(5);
    const primary = await startFaultBackend('p', port);
    open.push(primary);
    const started = Date.now();
    let res: JsonResponse | undefined;
    await until(async () => (res = await chat(gw)).body.model === 'm', 'the primary answering again', 3000);
    res = res!;
    expect(res.body.model).toBe('m');
    expect(textOf(res)).toContain('p-0');
    expect(Date.now() - started).toBeLessThan(1000); // within a few probe intervals
    expect(primary.bodies.length).toBe(1); // probes are GETs, never completions
  });
});
