// Several endpoints behind one upstream: a request goes to one in rotation,
// and while nothing has reached the client a refused connection, a 5xx or a
// 429 is tried on another; endpoints that keep failing leave the rotation, a
// whole pool down fails fast with 503 upstream_unavailable and Retry-After,
// and an endpoint comes back through one trial request.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startBackend, type Backend } from '../support/backends';
import { startJsonServer } from '../support/json-server';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, postSse, type JsonResponse } from '../support/http';
import { expectError } from '../support/errors';
import { parseExposition, scrape } from '../support/metrics';
import { until } from '../support/wait';

interface Served { url: string; port: number; close(): Promise<void> }

/** A one-purpose backend on loopback: `handle` answers each request once its body is read. */
async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void, port = 0): Promise<Served> {
  const s = await startJsonServer((req, res) => handle(req, res), port);
  return { url: s.base, port: s.port, close: s.close };
}

/** A chat completion whose message says `content`. */
function answer(res: ServerResponse, content: string): void {
  const body = JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** A backend that always answers `status` (counting what it saw). */
async function failing(status: number): Promise<Served & { seen: () => number }> {
  let seen = 0;
  const served = await serve((_req, res) => { seen++; res.writeHead(status, { 'content-type': 'application/json' }); res.end('{"error":{"message":"busy"}}'); });
  return { ...served, seen: () => seen };
}

async function closedPort(): Promise<{ url: string; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return { url: `http://127.0.0.1:${port}/v1`, port };
}

/** sluice_upstream_endpoint_up of the gateway's one endpoint. */
async function endpointUp(gw: TestGateway): Promise<number | undefined> {
  const gauge = gw.gateway.services.metrics!.getSingleMetric('sluice_upstream_endpoint_up');
  return gauge === undefined ? undefined : (await gauge.get()).values[0]?.value;
}

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
        lone: { url: lone.url, retry: { attempts: 0 }, health: { consecutiveFailures: 3, baseEjectionMs: 300 } },
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

  it('fails fast with 503 upstream_unavailable once a lone endpoint is out, and lets it back in through one trial', async () => {
    for (let i = 0; i < 3; i++) expectError(await chat('lone-a'), 502, 'upstream_error', null);
    const started = Date.now();
    const refused = await chat('lone-a');
    expectError(refused, 503, 'upstream_unavailable', null);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Date.now() - started).toBeLessThan(100);
    // The backend comes back on the same port; after the ejection, one trial brings the endpoint back.
    const revived = await serve((_req, res) => answer(res, 'back'), lone.port);
    try {
      // Refused at once while ejected; the first request after the ejection is the trial that brings it back.
      let back: JsonResponse | undefined;
      await until(async () => (back = await chat('lone-a')).status === 200, 'the endpoint back after its ejection', 3000);
      back = back!;
      expect(back.body.choices[0].message.content).toBe('back');
      expect((await chat('lone-a')).status).toBe(200);
    } finally {
      await revived.close();
    }
  });
});

describe('fallback models', () => {
  it('answers from the first fallback that can when the primary cannot, naming the model that answered, and never falls back on a 4xx', async () => {
    const good = await startBackend({ format: 'openai', events: 2, gapMs: 0 });
    const dead = await closedPort();
    const alice = makeKey('alice');
    const gw = await startGateway({
      keys: [alice.entry],
      upstreams: { primary: { url: dead.url }, backup: { url: good.base } },
      routes: [
        { model: 'big', upstream: 'primary', fallbacks: ['missing-on-this-endpoint', 'small'] },
        { model: 'picky', upstream: 'backup', upstreamModel: 'status-400', fallbacks: ['small'] },
        { model: 'missing-on-this-endpoint', upstream: 'backup', endpoints: ['images'] },
        { model: 'small', upstream: 'backup', upstreamModel: 'ok-small' },
      ],
    });
    try {
      const send = (model: string, stream = false) => post(`${gw.url}/v1/chat/completions`, { model, stream, messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
      const json = await send('big');
      expect(json.status).toBe(200);
      expect(json.body.model).toBe('small');
      expect(good.requests.at(-1)!.body.model).toBe('ok-small');
      const streamed = await postSse(`${gw.url}/v1/chat/completions`, { model: 'big', stream: true, messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
      expect(JSON.parse(streamed.events[0].data).model).toBe('small');
      const before = good.requests.length;
      expectError(await send('picky'), 400, 'upstream_rejected', 'temperature', { code: 'upstream_rejected', type: 'invalid_request_error' });
      expect(good.requests.length - before).toBe(1);
    } finally {
      await gw.close();
      await good.close();
    }
  });

  it('refuses a fallback no route serves at load', async () => {
    await expect(startGateway({ upstreams: { b: { url: 'http://127.0.0.1:9/v1' } }, routes: [{ model: 'a', upstream: 'b', fallbacks: ['nowhere'] }] }))
      .rejects.toThrow(/routes\[0\]\.fallbacks\[0\]: no other route serves "nowhere"/);
  });
});

describe('active health checks', () => {
  it('takes an endpoint whose /health fails out of rotation, and brings it back when it passes', async () => {
    let healthy = false;
    let completions = 0;
    const server = await serve((req, res) => {
      if (req.url === '/health') { res.writeHead(healthy ? 200 : 503); return void res.end(); }
      completions++;
      answer(res, 'hi');
    });
    const alice = makeKey('alice');
    const gw = await startGateway({
      keys: [alice.entry],
      upstreams: { u: { url: server.url, healthCheck: { path: '/health', intervalMs: 100 }, health: { consecutiveFailures: 2, baseEjectionMs: 60_000 } } },
      routes: [{ model: '*', upstream: 'u' }],
    });
    const send = () => post(`${gw.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
    try {
      await until(async () => (await endpointUp(gw)) === 0, 'two failed checks to eject it');
      expectError(await send(), 503, 'upstream_unavailable', null);
      expect(completions).toBe(0); // checks only, never a completion
      healthy = true;
      await until(async () => (await endpointUp(gw)) === 1, 'a passing check to bring it back');
      expect((await send()).status).toBe(200);
    } finally {
      await gw.close();
      await server.close();
    }
  });
});

describe('active health checks behind authentication', () => {
  it('send the upstream\'s configured headers, so a /health that needs them keeps the endpoint in', async () => {
    const checks: Array<string | undefined> = [];
    const server = await serve((req, res) => {
      if (req.url === '/health') {
        checks.push(req.headers.authorization);
        res.writeHead(req.headers.authorization === 'Bearer upstream-secret' ? 200 : 401);
        return void res.end();
      }
      answer(res, 'hi');
    });
    const alice = makeKey('alice');
    const gw = await startGateway({
      keys: [alice.entry],
      upstreams: { u: { url: server.url, headers: { Authorization: 'Bearer upstream-secret' }, healthCheck: { path: '/health', intervalMs: 100 }, health: { consecutiveFailures: 2, baseEjectionMs: 60_000 } } },
      routes: [{ model: '*', upstream: 'u' }],
    });
    try {
      await until(() => checks.length >= 3, 'three health checks');
      expect(checks.slice(0, 3)).toEqual(Array(3).fill('Bearer upstream-secret'));
      expect((await post(`${gw.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key))).status).toBe(200);
    } finally {
      await gw.close();
      await server.close();
    }
  });
});

describe('a stream whose first event is an error', () => {
  it('goes to another endpoint, since nothing reached the client yet', async () => {
    let errorsSent = 0;
    const erring = await serve((_req, res) => {
      errorsSent++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${JSON.stringify({ error: { message: 'engine overloaded' } })}\n\n`);
    });
    const good = await startBackend({ format: 'openai', events: 2, gapMs: 0 });
    const alice = makeKey('alice');
    const gw = await startGateway({
      keys: [alice.entry],
      upstreams: { f: { endpoints: [{ url: erring.url }, { url: good.base }], picker: 'round_robin' } },
      routes: [{ model: '*', upstream: 'f' }],
    });
    try {
      const res = await postSse(`${gw.url}/v1/chat/completions`, { model: 'ok-a', stream: true, messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
      expect(errorsSent).toBe(1);
      expect(res.status).toBe(200);
      expect(res.events.at(-1)!.data).toBe('[DONE]');
      expect(res.raw).not.toContain('overloaded');
    } finally {
      await gw.close();
      await good.close();
      await erring.close();
    }
  });
});

describe('timeouts that tell silence from slowness', () => {
  it('gives up on a stream whose first event does not come (pings do not count) and tries another endpoint', async () => {
    const silent = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const ping = setInterval(() => res.write(': ping\n\n'), 20);
      res.on('close', () => clearInterval(ping));
    });
    const silentUrl = silent.url;
    const good = await startBackend({ format: 'openai', events: 2, gapMs: 0 });
    const alice = makeKey('alice');
    const gw = await startGateway({
      keys: [alice.entry],
      upstreams: {
        f: { endpoints: [{ url: silentUrl }, { url: good.base }], picker: 'round_robin', timeouts: { firstEventMs: 150 } },
        alone: { url: silentUrl, timeouts: { firstEventMs: 150 } },
      },
      routes: [{ model: 'alone', upstream: 'alone' }, { model: '*', upstream: 'f' }],
    });
    const body = (model: string) => ({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    try {
      const started = Date.now();
      const res = await postSse(`${gw.url}/v1/chat/completions`, body('ok-a'), bearer(alice.key));
      expect(res.events.at(-1)!.data).toBe('[DONE]');
      expect(Date.now() - started).toBeLessThan(1000);
      // Alone, the timeout is the answer; nothing had reached the client, so it is an error response, not an event.
      expectError(await post(`${gw.url}/v1/chat/completions`, body('alone'), bearer(alice.key)), 504, 'upstream_timeout', null);
    } finally {
      await gw.close();
      await good.close();
      await silent.close();
    }
  });
});

describe('failover on a backend error code', () => {
  it('sends a context-length refusal on to a larger model when the route says so, and passes it on otherwise', async () => {
    const { startOpenAIBackend } = await import('../support/openai-backend');
    const backend = await startOpenAIBackend();
    const alice = makeKey('alice');
    const gw = await startGateway({
      keys: [alice.entry],
      upstreams: { o: { url: backend.base } },
      routes: [
        { model: 'small-ctx', upstream: 'o', upstreamModel: 'ctxlen-small', fallbacks: ['big-ctx'], failoverOn: ['context_length_exceeded'] },
        { model: 'plain-small', upstream: 'o', upstreamModel: 'ctxlen-small', fallbacks: ['big-ctx'] },
        { model: 'big-ctx', upstream: 'o' },
      ],
    });
    const send = (model: string) => post(`${gw.url}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'a long prompt' }] }, bearer(alice.key));
    try {
      const moved = await send('small-ctx');
      expect(moved.status).toBe(200);
      expect(moved.body.model).toBe('big-ctx');
      const kept = await send('plain-small');
      expectError(kept, 400, 'upstream_rejected', 'messages', { code: 'context_length_exceeded', type: 'invalid_request_error' });
      expect(kept.body.error.message).toContain('maximum context length');
      await expect(startGateway({ upstreams: { o: { url: backend.base } }, routes: [{ model: 'a', upstream: 'o', fallbacks: ['b'], failoverOn: ['content_policy_violation'] }, { model: 'b', upstream: 'o' }] }))
        .rejects.toThrow(/routes\[0\]\.failoverOn\[0\]: "content_policy_violation" is a content-policy refusal/);
    } finally {
      await gw.close();
      await backend.close();
    }
  });
});
