// Several endpoints behind one upstream: a request goes to one in rotation,
// and while nothing has reached the client a refused connection, a 5xx or a
// 429 is tried on another; endpoints that keep failing leave the rotation;
// with the whole pool out a request still goes to the endpoint most likely to
// have recovered, and an endpoint comes back through one trial request.
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, postSse, type JsonResponse } from '../support/http';
import { expectError } from '../support/errors';
import { parseExposition, scrape } from '../support/metrics';
import { answer, closedPort, failing, serve } from '../support/fleet-servers';

describe('fleets', () => {
  let good: Backend;
  let overloaded: Awaited<ReturnType<typeof failing>>;
  let gw: TestGateway;
  const alice = makeKey('alice');
  const chat = (model: string, extra: object = {}) => post(`${gw.url}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'hi' }], ...extra }, bearer(alice.key));
  let lone: { url: string; port: number };
  let dead: { url: string; port: number };

  beforeAll(async () => {
    good = await startBackend({ format: 'openai', events: 2, gapMs: 0 });
    overloaded = await failing(503);
    dead = await closedPort();
    lone = await closedPort();
    gw = await startGateway({
      keys: [alice.entry],
      upstreams: {
        fleet: {
          endpoints: [{ url: good.base }, { url: dead.url }, { url: overloaded.url }],
          retry: { attempts: 2 },
          health: { consecutiveFailures: 3, baseEjectionMs: 60_000, maxEjectedShare: 0.67 },
        },
        lone: { url: lone.url, retry: { attempts: 0 }, health: { consecutiveFailures: 3, baseEjectionMs: 60_000, maxEjectionMs: 60_000, probeIntervalMs: 0 } },
      },
      routes: [{ model: 'lone-*', upstream: 'lone' }, { model: '*', upstream: 'fleet' }],
    }, { metrics: {} });
  });
  afterAll(async () => { await gw.close(); await good.close(); await overloaded.close(); });

  it('answers every request though two of three endpoints fail, and takes the failing ones out of rotation: the refusing endpoint, the model on the failing one', async () => {
    const before = good.requests.length;
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await chat('ok-a', i % 2 ? { stream: false } : {})).status);
    expect(statuses).toEqual(Array(30).fill(200));
    expect(good.requests.length - before).toBe(30);
    // Once ejected (3 failures each), the failing endpoints see nothing more.
    const overloadedSeen = overloaded.seen();
    for (let i = 0; i < 10; i++) expect((await chat('ok-a')).status).toBe(200);
    expect(overloaded.seen()).toBe(overloadedSeen);
    expect(overloadedSeen).toBeLessThanOrEqual(3);
    // On the metrics listener: which endpoints, and which models on them, are in rotation, why the others left, the retries it took.
    // The model's label: "other", since no route names ok-a.
    const samples = parseExposition((await scrape(gw.metrics!.url)).text);
    const value = (name: string, labels: Record<string, string>) => samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
    expect(value('sluice_upstream_endpoint_up', { upstream: 'fleet', endpoint: good.base })).toBe(1);
    expect(value('sluice_upstream_endpoint_up', { upstream: 'fleet', endpoint: dead.url })).toBe(0);
    expect(value('sluice_upstream_endpoint_up', { upstream: 'fleet', endpoint: overloaded.url })).toBe(1); // it answers, with 503s for this model
    expect(value('sluice_upstream_model_up', { upstream: 'fleet', endpoint: overloaded.url, model: 'other' })).toBe(0);
    expect(value('sluice_upstream_model_up', { upstream: 'fleet', endpoint: good.base, model: 'other' })).toBeUndefined();
    expect(value('sluice_upstream_ejections_total', { upstream: 'fleet', endpoint: dead.url, model: '', reason: 'failures' })).toBe(1);
    expect(value('sluice_upstream_ejections_total', { upstream: 'fleet', endpoint: overloaded.url, model: 'other', reason: 'failures' })).toBe(1);
    const retried = (reason: string) => value('sluice_upstream_retries_total', { upstream: 'fleet', reason }) ?? 0;
    expect(retried('refused')).toBeGreaterThanOrEqual(1);
    expect(retried('failed')).toBeGreaterThanOrEqual(1);
    expect(retried('refused') + retried('failed')).toBeGreaterThanOrEqual(4);
  });

  it('retries a stream whose first attempt failed before anything reached the client', async () => {
    // Round robin starts with the overloaded endpoint: its 503 must not reach the client.
    const rr = await startGateway({
      keys: [alice.entry],
      upstreams: { f: { endpoints: [{ url: overloaded.url }, { url: good.base }], picker: 'round_robin', retry: { attempts: 1 } } },
      routes: [{ model: '*', upstream: 'f' }],
    });
    try {
      const seen = overloaded.seen();
      const res = await postSse(`${rr.url}/v1/chat/completions`, { model: 'ok-a', stream: true, messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
      expect(overloaded.seen()).toBe(seen + 1);
      expect(res.status).toBe(200);
      expect(res.events.at(-1)!.data).toBe('[DONE]');
      expect(res.raw).not.toContain('error');
    } finally {
      await rr.close();
    }
  });

  it('once a lone endpoint is out, still tries it: a refused connection is a 502 at once, and it serves as soon as it is back', async () => {
    for (let i = 0; i < 3; i++) expectError(await chat('lone-a'), 502, 'upstream_error', null);
    const started = Date.now();
    // Out of rotation for a minute, but nothing else can serve: tried, and refused now.
    expectError(await chat('lone-a'), 502, 'upstream_error', null);
    expect(Date.now() - started).toBeLessThan(100);
    // The backend comes back on the same port: the next request is served, long before the ejection ends.
    const revived = await serve((_req, res) => answer(res, 'back'), lone.port);
    try {
      const back: JsonResponse = await chat('lone-a');
      expect(back.status).toBe(200);
      expect(back.body.choices[0].message.content).toBe('back');
      expect((await chat('lone-a')).status).toBe(200);
    } finally {
      await revived.close();
    }
  });
});
