// One upstream with the shipped defaults (url and format only) in front of one
// backend serving several models: what the backend answers about one model
// (a 429, 5xx) concerns that model on it, never the others; what concerns the
// connection (refused) concerns every model. Out of rotation with nothing
// else to serve, a model or endpoint is still tried. On the metrics listener,
// each by its scope, under a model label the config gives.
import { startFaultBackend, status, type FaultBackend } from '../support/fault-backend';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, type JsonResponse } from '../support/http';
import { expectError } from '../support/errors';
import { parseExposition, scrape } from '../support/metrics';
import { freePort } from '../support/redis';

const alice = makeKey('alice');
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => { await Promise.all(open.splice(0).map((o) => o.close())); });

/** Models chat-a and chat-b by name, anything else through a glob, all on one upstream as shipped: url and format only. */
async function gateway(url: string): Promise<TestGateway> {
  const gw = await startGateway({
    keys: [alice.entry],
    upstreams: { u: { url, format: 'openai' } },
    routes: [{ model: 'chat-a', upstream: 'u' }, { model: 'chat-b', upstream: 'u' }, { model: '*', upstream: 'u' }],
    plugins: [{ name: 'metrics' }],
  }, { metrics: {}, asConfigured: true });
  open.push(gw);
  return gw;
}

async function backend(): Promise<FaultBackend> {
  const b = await startFaultBackend('b');
  open.push(b);
  return b;
}

const chat = (gw: TestGateway, model: string): Promise<JsonResponse> =>
  post(`${gw.url}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));

async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const started = Date.now();
  const out = await run();
  return [out, Date.now() - started];
}

async function metric(gw: TestGateway, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const samples = parseExposition((await scrape(gw.metrics!.url)).text);
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

describe('a backend\'s answer about one model never refuses another', () => {
  it('a 429 for one model rests that model only: it gets 429 rate_limited with the rest of the wait, the others reach the backend', async () => {
    const b = await backend();
    b.scriptModel('chat-a', status(429, { retryAfter: '30' }));
    const gw = await gateway(b.base);
    expectError(await chat(gw, 'chat-a'), 429, 'upstream_rejected', null);
    const [resting, ms] = await timed(() => chat(gw, 'chat-a'));
    expectError(resting, 429, 'rate_limited', null);
    expect(Number(resting.headers['retry-after'])).toBeGreaterThanOrEqual(29);
    expect(ms).toBeLessThan(200);
    for (const model of ['chat-b', 'made-up-model']) expect((await chat(gw, model)).status).toBe(200);
    expect(b.bodies.map((x) => x.model)).toEqual(['chat-a', 'chat-b', 'made-up-model']);
    expect(await metric(gw, 'sluice_upstream_model_up', { upstream: 'u', model: 'chat-a' })).toBe(0);
    expect(await metric(gw, 'sluice_upstream_endpoint_up', { upstream: 'u' })).toBe(1);
    expect(await metric(gw, 'sluice_upstream_ejections_total', { upstream: 'u', model: 'chat-a', reason: 'rate_limited' })).toBe(1);
    expect(await metric(gw, 'sluice_rate_limited_total', { scope: 'backend', budget: 'requests' })).toBe(1);
    expect(await metric(gw, 'sluice_requests_total', { model: 'chat-a', status: '429', reason: 'rate_limited' })).toBe(1);
  });

  it('5xx for one model take that model out after consecutiveFailures; the others are unaffected, and the message claims no more than happened', async () => {
    const b = await backend();
    b.scriptModel('chat-a', status(503));
    const gw = await gateway(b.base);
    // Each request: an attempt and one retry on the same endpoint after a backoff; three failures take chat-a out. The backend's 503 stays a 503.
    expectError(await chat(gw, 'chat-a'), 503, 'upstream_unavailable', null);
    expectError(await chat(gw, 'chat-a'), 503, 'upstream_unavailable', null);
    const seen = b.bodies.length;
    expect(seen).toBe(3);
    // Out of rotation, but nothing else can serve it: one attempt, no retry, and the backend's own answer.
    const [out, ms] = await timed(() => chat(gw, 'chat-a'));
    expectError(out, 503, 'upstream_unavailable', null);
    expect(out.body.error.message).not.toMatch(/repeated|rotation/);
    expect(ms).toBeLessThan(200);
    expect(b.bodies.length).toBe(seen + 1);
    expect((await chat(gw, 'chat-b')).status).toBe(200);
    expect((await chat(gw, 'someone-else')).status).toBe(200);
    expect(await metric(gw, 'sluice_upstream_ejections_total', { upstream: 'u', model: 'chat-a', reason: 'failures' })).toBe(1);
    expect(await metric(gw, 'sluice_upstream_model_up', { upstream: 'u', model: 'chat-a' })).toBe(0);
  });

  it('models no route names share the label "other" on the metrics listener', async () => {
    const b = await backend();
    b.scriptModel('made-up-1', status(429));
    b.scriptModel('made-up-2', status(429));
    const gw = await gateway(b.base);
    for (const model of ['made-up-1', 'made-up-2']) expectError(await chat(gw, model), 429, 'upstream_rejected', null);
    expect(await metric(gw, 'sluice_upstream_ejections_total', { upstream: 'u', model: 'other', reason: 'rate_limited' })).toBe(2);
    const text = (await scrape(gw.metrics!.url)).text;
    expect(text).not.toContain('made-up');
  });

  it('a refused connection concerns the endpoint: once it is out, every model still tries it once, and hears of this try at once', async () => {
    const port = await freePort();
    const gw = await gateway(`http://127.0.0.1:${port}/v1`);
    // An attempt and a retry after a backoff, then one more: three refusals in a row.
    expectError(await chat(gw, 'chat-a'), 502, 'upstream_error', null);
    expectError(await chat(gw, 'chat-b'), 502, 'upstream_error', null);
    const [out, ms] = await timed(() => chat(gw, 'someone-else'));
    expectError(out, 502, 'upstream_error', null);
    expect(out.body.error.message).toMatch(/refused the connection/);
    expect(ms).toBeLessThan(200);
    expect(await metric(gw, 'sluice_upstream_endpoint_up', { upstream: 'u' })).toBe(0);
    expect(await metric(gw, 'sluice_upstream_ejections_total', { upstream: 'u', model: '', reason: 'failures' })).toBe(1);
  });
});
