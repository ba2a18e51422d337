// Clients that stop reading a stream: while the gateway holds the backend
// back for them (backpressure), the backend's silence timer does not run and
// nothing counts against its health. A client that never reads again is ended
// after server.clientStallMs, with the error event last; the backend is let
// go and stays in rotation.
import { request } from 'node:http';
import type { ServerResponse } from 'node:http';
import { drained } from '../../src/plumbing/backpressure';
import { startJsonServer } from '../support/json-server';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post } from '../support/http';
import { parseExposition, scrape } from '../support/metrics';
import { until } from '../support/wait';

const alice = makeKey('alice');
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => { await Promise.all(open.splice(0).map((o) => o.close())); });

/** A backend that streams `events` events of `eventBytes` characters as fast as it may, heeding backpressure; an unstreamed request gets a short JSON answer. */
async function startStreamer(events: number, eventBytes: number) {
  const state = { base: '', blocked: 0, closed: 0, finished: 0, answered: [] as string[] };
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const text = 'x'.repeat(eventBytes);
  const stream = async (res: ServerResponse): Promise<void> => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < events && !res.destroyed; i++) {
      if (!res.write(chunk({ content: text }))) {
        state.blocked++;
        await drained(res);
      }
    }
    if (res.destroyed) return;
    res.write(chunk({}, 'stop'));
    res.end('data: [DONE]\n\n');
    state.finished++;
  };
  const server = await startJsonServer((_req, res, body) => {
    res.on('close', () => { state.closed++; });
    if (body?.stream !== true) {
      state.answered.push(String(body?.model));
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] }));
    }
    void stream(res);
  });
  state.base = server.base;
  open.push(server);
  return state;
}

/** A streamed request whose client reads the first chunk, then stops reading until `resume()`. */
function pausedStream(url: string, model: string) {
  let resume = (): void => undefined;
  let drop = (): void => undefined;
  const done = new Promise<string>((resolve, reject) => {
    const payload = JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const req = request(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(alice.key) } }, (res) => {
      let raw = '';
      res.setEncoding('utf8');
      res.once('data', () => res.pause());
      res.on('data', (c: string) => { raw += c; });
      resume = () => res.resume();
      res.on('end', () => resolve(raw));
      res.on('error', () => resolve(raw));
    });
    req.on('error', reject);
    req.end(payload);
    drop = () => req.destroy();
  });
  return { done, resume: () => resume(), drop: () => drop() };
}

const events = (raw: string): string[] => raw.split('\n\n').filter((b) => b.startsWith('data: ')).map((b) => b.slice(6));

async function gateway(backend: string, server: Record<string, unknown> = {}): Promise<TestGateway> {
  const gw = await startGateway({
    server: { port: 0, ...server },
    keys: [alice.entry],
    // A short silence bound, and one failure ejects: a stall blamed on the backend would show at once.
    upstreams: { u: { url: backend, timeouts: { idleMs: 300 }, health: { consecutiveFailures: 1, baseEjectionMs: 60_000 } } },
    // `long` by name, so its health has its own label on the metrics listener.
    routes: [{ model: 'long', upstream: 'u' }, { model: '*', upstream: 'u' }],
  }, { metrics: {} });
  open.push(gw);
  return gw;
}

/**
 * Health is per (endpoint, model), and a stall after the head would count
 * against the model: so the model of the stalled stream itself must still be
 * served. Blamed once, `long` would be out for a minute (503, the backend
 * never asked) and its gauge 0; a model never blamed has no gauge sample.
 */
async function expectLongInRotation(gw: TestGateway, backend: { answered: string[] }): Promise<void> {
  const res = await post(`${gw.url}/v1/chat/completions`, { model: 'long', messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
  expect(res.status).toBe(200);
  expect(backend.answered).toEqual(['long']);
  const samples = parseExposition((await scrape(gw.metrics!.url)).text);
  const up = samples.filter((x) => x.name === 'sluice_upstream_model_up' && x.labels.model === 'long');
  expect(up.every((x) => x.value === 1)).toBe(true);
  expect(samples.some((x) => x.name === 'sluice_upstream_ejections_total' && x.value > 0)).toBe(false);
}

describe('a client that stops reading a stream', () => {
  it('holds the backend back without blaming it: a pause longer than idleMs, then the whole stream', async () => {
    const backend = await startStreamer(2000, 32 * 1024);
    const gw = await gateway(backend.base);
    const client = pausedStream(gw.url, 'long');
    await until(() => backend.blocked > 0, 'the backend to be held back', 10_000);
    // The scenario: the client reads nothing for more than twice idleMs (a span of time, not an event to wait for).
    await new Promise((r) => setTimeout(r, 700));
    client.resume();
    const got = events(await client.done);
    expect(got.at(-1)).toBe('[DONE]');
    expect(got.join('')).not.toContain('"error"');
    expect(got.length).toBe(2000 + 2);
    expect(backend.finished).toBe(1);
    await expectLongInRotation(gw, backend);
  }, 20_000);

  it('ends it after server.clientStallMs, the error event last; the backend is let go and stays in rotation', async () => {
    const backend = await startStreamer(2000, 32 * 1024);
    const gw = await gateway(backend.base, { clientStallMs: 500 });
    const client = pausedStream(gw.url, 'long');
    await until(() => backend.blocked > 0, 'the backend to be held back', 10_000);
    const held = Date.now();
    await until(() => backend.closed > 0, 'the backend to be let go', 5_000);
    expect(Date.now() - held).toBeGreaterThanOrEqual(300);
    expect(backend.finished).toBe(0);
    client.resume();
    const got = events(await client.done);
    expect(got.at(-1)).not.toBe('[DONE]');
    expect(JSON.parse(got.at(-1)!).error).toMatchObject({ reason: 'request_timeout', status: 408 });
    await expectLongInRotation(gw, backend);
  }, 20_000);

  it('drops the connection of a client that never reads again, one more clientStallMs after the end', async () => {
    const backend = await startStreamer(2000, 32 * 1024);
    const gw = await gateway(backend.base, { clientStallMs: 400 });
    let closed = false;
    gw.server.once('connection', (socket) => socket.once('close', () => { closed = true; }));
    const client = pausedStream(gw.url, 'long');
    client.done.catch(() => undefined);
    await until(() => backend.blocked > 0, 'the backend to be held back', 10_000);
    await until(() => backend.closed > 0, 'the backend to be let go', 5_000);
    const ended = Date.now();
    // A client that reads nothing more does not see it; the gateway's side of the connection closes.
    await until(() => closed, 'the gateway to drop the connection', 3_000);
    expect(Date.now() - ended).toBeGreaterThanOrEqual(300);
    client.drop();
  }, 20_000);
});
