// OpenTelemetry traces end to end: the real gateway exports over OTLP/HTTP to
// a real receiver that decodes the official protobuf schema. A streamed
// request that fails over from a dead endpoint to a healthy one is one trace:
// the server span, an attempt span per endpoint with its outcome, the retry
// and first-token events, the GenAI attributes with the usage the backend
// reported and the cost priced from it, in each client protocol. A refusal
// carries its reason and never the prompt; an incoming traceparent is
// continued and the backend gets a child of it, in each protocol; a traced
// pass-through request's backend gets the server span as parent, an untraced
// one the client's own; the access line names the trace. The gateway runs as
// its own process, as in production (the exporter loads node:http with a
// dynamic import, which a test runner's module sandbox cannot serve).
import { startBackend, type Backend } from '../support/backends';
import { makeKey } from '../support/gateway';
import { bearer, call, post, postSse } from '../support/http';
import { freePort } from '../support/net';
import { childPids, type GatewayProcess } from '../support/process';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { CLIENT, MAX_TOKENS, SERVER, spawnWith, TEMPERATURE, TRACE_PROTOCOLS as PROTOCOLS, tracedSetup, type TracedSetup } from '../support/traced-gateway';
import { until } from '../support/wait';

const SECRET = 'a prompt nobody may read';

/** A trace id of the protocol's own, so each row continues a trace of its own. */
const traceIdOf = (name: string): string => Buffer.from(name).toString('hex').padEnd(32, '0');

describe('traces', () => {
  let backend: Backend;
  let receiver: OtlpReceiver;
  let gw: GatewayProcess;
  let deadPort: number;
  const alice = makeKey('alice', { org: 'acme' });

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai', events: 3, gapMs: 2 });
    receiver = await startOtlpReceiver();
    deadPort = await freePort();
    gw = await spawnWith({
      keys: [alice.entry],
      orgs: { acme: {} },
      upstreams: {
        // Round robin tries the dead endpoint first; the retry goes to the healthy one.
        fleet: { endpoints: [{ url: `http://127.0.0.1:${deadPort}/v1` }, { url: backend.base }], picker: 'round_robin', format: 'openai', health: { consecutiveFailures: 1000 } },
        plain: { url: backend.base, format: 'openai' },
        once: { url: backend.base, format: 'openai', retry: { attempts: 0 } },
      },
      routes: [
        { model: 'ok-fleet', upstream: 'fleet' },
        // A backend's 503 goes on to a fallback; a stream cut after content continues on one that takes the prefix.
        { model: 'status-503', upstream: 'once', fallbacks: ['ok-fb'] },
        { model: 'break-1', upstream: 'once', fallbacks: ['ok-cont'], continueOnFailure: true },
        { model: 'ok-cont', upstream: 'plain', assistantPrefix: { params: { continue_final_message: true, add_generation_prompt: false } } },
        { model: 'ok-*', upstream: 'plain', maxInFlight: 100 },
      ],
      passthrough: [{ path: '/v1/embeddings', upstream: 'plain' }],
      plugins: [{ name: 'content-filter', terms: ['forbidden phrase'] }],
      // Dollars per million tokens: the failover's 11 prompt and 3 completion tokens cost 17 µ$.
      pricing: [{ model: '*', input: 1, output: 2 }],
      telemetry: { traces: { endpoint: receiver.url, scheduledDelayMs: 20, captureContent: true } },
    });
  });
  afterAll(async () => {
    gw.kill();
    await receiver.close();
    await backend.close();
  });

  const serverSpanOf = (requestId: string): Promise<ReceivedSpan> =>
    receiver.waitFor((s) => s.kind === SERVER && s.attributes['sluice.request_id'] === requestId, `the server span of ${requestId}`);

  it.each(PROTOCOLS)('$name: a stream that fails over is one trace with both attempts, the retry, the first token and the usage', async (p) => {
    const requestId = `failover-${p.name}`;
    const res = await postSse(`${gw.url}${p.path}`, p.body('ok-fleet'), { ...bearer(alice.key), 'x-request-id': requestId });
    expect(res.status).toBe(200);
    const server = await serverSpanOf(requestId);
    const spans = await receiver.trace(server.traceId, 3);
    const attempts = spans.filter((s) => s.kind === CLIENT).sort((a, b) => Number(a.attributes['sluice.attempt']) - Number(b.attributes['sluice.attempt']));

    expect(server.name).toBe(`POST ${p.path}`);
    expect(server.parentSpanId).toBe('');
    expect(server.encoding).toBe('protobuf');
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST', 'http.route': p.path, 'http.response.status_code': 200,
      'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'ok-fleet', 'gen_ai.response.model': 'ok-fleet',
      'gen_ai.usage.input_tokens': 11, 'gen_ai.usage.output_tokens': 3, 'gen_ai.response.finish_reasons': [p.finish],
      'sluice.key_id': 'alice', 'sluice.org': 'acme', 'sluice.route': 'ok-fleet', 'sluice.upstream': 'fleet', 'sluice.attempts': 2,
      'sluice.protocol': p.name, 'sluice.usage.estimated': false,
      'gen_ai.request.max_tokens': MAX_TOKENS, 'gen_ai.request.temperature': TEMPERATURE, 'sluice.cost': (11 * 1 + 3 * 2) / 1e6,
    });
    expect(typeof server.attributes['gen_ai.response.id']).toBe('string');
    expect(server.attributes['gen_ai.response.time_to_first_chunk']).toBeGreaterThan(0);
    expect(server.resource).toMatchObject({ 'service.name': 'sluice', 'process.pid': gw.pid });
    expect(server.events.find((e) => e.name === 'sluice.retry')?.attributes).toMatchObject({ 'sluice.retry.reason': 'refused', 'sluice.retry.where': 'elsewhere' });

    expect(attempts).toHaveLength(2);
    const [dead, healthy] = attempts;
    for (const a of attempts) {
      expect(a.parentSpanId).toBe(server.spanId);
      expect(a.name).toBe('chat ok-fleet');
      expect(a.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'ok-fleet', 'server.address': '127.0.0.1', 'sluice.upstream': 'fleet', 'sluice.picker': 'round_robin' });
    }
    expect(dead.attributes).toMatchObject({ 'sluice.attempt': 1, 'server.port': deadPort, 'sluice.attempt.outcome': 'unreachable', 'error.type': 'ECONNREFUSED', 'sluice.picker.reason': 'next_in_turn' });
    expect(dead.status.code).toBe(2);
    expect(healthy.attributes).toMatchObject({ 'sluice.attempt': 2, 'server.port': Number(new URL(backend.url).port), 'sluice.attempt.outcome': 'ok', 'http.response.status_code': 200, 'sluice.retry.reason': 'refused' });
    expect(healthy.attributes['error.type']).toBeUndefined();
    expect(healthy.events.map((e) => e.name)).toEqual(['sluice.first_token']);

    // The backend that answered was sent a child of its attempt's span.
    const sent = backend.requests.at(-1)!.headers.traceparent;
    expect(sent).toBe(`00-${server.traceId}-${healthy.spanId}-01`);
    // The access line names the trace.
    const isLine = (l: Record<string, unknown>) => l.msg === 'request' && l.requestId === requestId;
    await until(() => gw.logs.some(isLine), 'the access line');
    expect(gw.logs.find(isLine)!.traceId).toBe(server.traceId);
  });

  it.each(PROTOCOLS)('$name: a content-filter refusal: the span carries the reason and no prompt text, and no attempt is made', async (p) => {
    const requestId = `refused-${p.name}`;
    const sent = backend.requests.length;
    const res = await post(`${gw.url}${p.path}`, p.body('ok-plain', `${SECRET} forbidden phrase`), { ...bearer(alice.key), 'x-request-id': requestId });
    expect(res.status).toBe(400);
    const server = await serverSpanOf(requestId);
    expect(server.name).toBe(`POST ${p.path}`);
    expect(server.attributes).toMatchObject({ 'sluice.protocol': p.name, 'sluice.reason': 'content_filter', 'error.type': 'content_filter', 'http.response.status_code': 400, 'sluice.key_id': 'alice' });
    // A client's error leaves the server span's status unset.
    expect(server.status.code).toBe(0);
    expect(receiver.spans.filter((s) => s.traceId === server.traceId)).toEqual([server]);
    expect(backend.requests.length).toBe(sent);
    // captureContent is on, yet a request refused before it was forwarded carries no text.
    expect(server.attributes['gen_ai.input.messages']).toBeUndefined();
    expect(JSON.stringify(receiver.spans)).not.toContain(SECRET);
  });

  it('captureContent: what was forwarded and what came back, after the filter', async () => {
    const requestId = 'captured-1';
    const res = await post(`${gw.url}/v1/chat/completions`, { model: 'ok-plain', messages: [{ role: 'user', content: 'Tell me about foxes.' }] }, { ...bearer(alice.key), 'x-request-id': requestId });
    expect(res.status).toBe(200);
    const server = await serverSpanOf(requestId);
    expect(JSON.parse(String(server.attributes['gen_ai.input.messages']))).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'Tell me about foxes.' }] }]);
    expect(JSON.parse(String(server.attributes['gen_ai.output.messages']))).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: 'alpha beta gamma' }], finish_reason: 'stop' }]);
  });

  it('a fallback is a span of its own, with its slots and its attempt under it', async () => {
    const requestId = 'fallback-1';
    const res = await post(`${gw.url}/v1/chat/completions`, { model: 'status-503', messages: [{ role: 'user', content: 'hi' }] }, { ...bearer(alice.key), 'x-request-id': requestId });
    expect(res.status).toBe(200);
    const server = await serverSpanOf(requestId);
    const spans = await receiver.trace(server.traceId, 5);
    const byName = (name: string) => spans.filter((s) => s.name === name);
    const [first] = byName('chat status-503');
    const [fallback] = byName('sluice.fallback ok-fb');
    expect(first.parentSpanId).toBe(server.spanId);
    expect(first.attributes).toMatchObject({ 'http.response.status_code': 503, 'error.type': '503', 'sluice.attempt.outcome': 'failed' });
    expect(fallback.parentSpanId).toBe(server.spanId);
    expect(fallback.attributes).toMatchObject({ 'sluice.fallback.model': 'ok-fb', 'sluice.fallback.from': 'status-503', 'sluice.fallback.cause': 'upstream_unavailable' }); // the backend's 503, kept
    const [admission] = byName('sluice.admission');
    const [second] = byName('chat ok-fb');
    expect(admission.parentSpanId).toBe(fallback.spanId);
    expect(admission.attributes).toMatchObject({ 'sluice.admission.limits': 1, 'sluice.admission.outcome': 'admitted' });
    expect(second.parentSpanId).toBe(fallback.spanId);
    expect(second.attributes).toMatchObject({ 'sluice.attempt': 2, 'sluice.attempt.outcome': 'ok' });
    expect(server.attributes).toMatchObject({ 'gen_ai.request.model': 'status-503', 'gen_ai.response.model': 'ok-fb', 'sluice.route': 'ok-*', 'sluice.attempts': 2 });
  });

  it('a continuation of a cut stream is a span of its own, with the prefix it carried', async () => {
    const requestId = 'continued-stream-1';
    const res = await postSse(`${gw.url}/v1/chat/completions`, { model: 'break-1', stream: true, messages: [{ role: 'user', content: 'hi' }] }, { ...bearer(alice.key), 'x-request-id': requestId });
    expect(res.status).toBe(200);
    const server = await serverSpanOf(requestId);
    const spans = await receiver.trace(server.traceId, 4);
    const [cut] = spans.filter((s) => s.name === 'chat break-1');
    const [continuation] = spans.filter((s) => s.name === 'sluice.continuation ok-cont');
    const [rest] = spans.filter((s) => s.name === 'chat ok-cont');
    expect(cut.events.map((e) => e.name)).toEqual(['sluice.first_token']);
    expect(cut.attributes['sluice.attempt.outcome']).toBe('failed');
    expect(continuation.attributes).toMatchObject({ 'sluice.fallback.model': 'ok-cont', 'sluice.fallback.cause': 'upstream_error' });
    expect(continuation.attributes['sluice.continuation.prefix_tokens']).toBeGreaterThan(0);
    expect(rest.parentSpanId).toBe(continuation.spanId);
    expect(rest.events).toEqual([]);
  });

  it('a pass-through request and the model list: a server span each, named by the route', async () => {
    // A tracestate without a traceparent belongs to no trace: it is not passed on.
    const passed = await post(`${gw.url}/v1/embeddings`, { model: 'ok-1', input: 'x' }, { ...bearer(alice.key), 'x-request-id': 'passed-1', tracestate: 'stale=1' });
    expect(passed.status).toBe(200);
    const forwarded = backend.requests.at(-1)!.headers;
    const listed = await call('GET', `${gw.url}/v1/models/ok-1`, undefined, { ...bearer(alice.key), 'x-request-id': 'listed-1' });
    expect(listed.status).toBe(200);
    const server = await serverSpanOf('passed-1');
    expect(server.attributes).toMatchObject({ 'http.route': '/v1/embeddings', 'http.response.status_code': 200, 'sluice.key_id': 'alice' });
    // No attempt span: the backend's parent is the server span.
    expect(forwarded.traceparent).toBe(`00-${server.traceId}-${server.spanId}-01`);
    expect(forwarded.tracestate).toBeUndefined();
    const models = await serverSpanOf('listed-1');
    expect(models.name).toBe('GET /v1/models/*id');
    expect(models.attributes['gen_ai.operation.name']).toBeUndefined();
  });

  it.each(PROTOCOLS)('$name: continues an incoming traceparent and hands the backend a child of its attempt', async (p) => {
    const traceId = traceIdOf(p.name);
    const parent = '00f067aa0ba902b7';
    const res = await postSse(`${gw.url}${p.path}`, p.body('ok-plain'),
      { ...bearer(alice.key), 'x-request-id': `continued-${p.name}`, traceparent: `00-${traceId}-${parent}-01`, tracestate: 'vendor=abc' });
    expect(res.status).toBe(200);
    const spans = await receiver.trace(traceId, 2);
    const [server, attempt] = [spans.find((s) => s.kind === SERVER)!, spans.find((s) => s.kind === CLIENT)!];
    expect(server.attributes).toMatchObject({ 'http.route': p.path, 'sluice.protocol': p.name });
    expect(server.parentSpanId).toBe(parent);
    expect(attempt.parentSpanId).toBe(server.spanId);
    const headers = backend.requests.at(-1)!.headers;
    expect(headers.traceparent).toBe(`00-${traceId}-${attempt.spanId}-01`);
    expect(headers.tracestate).toBe('vendor=abc');
  });

  it('a traced pass-through request: its backend gets the server span as parent, not the client\'s traceparent', async () => {
    const traceId = traceIdOf('passthrough');
    const parent = '00f067aa0ba902b7';
    const res = await post(`${gw.url}/v1/embeddings`, { model: 'ok-1', input: 'x' },
      { ...bearer(alice.key), 'x-request-id': 'passed-2', traceparent: `00-${traceId}-${parent}-01`, tracestate: 'vendor=abc' });
    expect(res.status).toBe(200);
    const headers = backend.requests.at(-1)!.headers;
    const server = await serverSpanOf('passed-2');
    expect(server.traceId).toBe(traceId);
    expect(server.parentSpanId).toBe(parent);
    expect(headers.traceparent).toBe(`00-${traceId}-${server.spanId}-01`);
    expect(headers.tracestate).toBe('vendor=abc');
  });
});

describe('sampling', () => {
  const alice = makeKey('alice');
  let t: TracedSetup;

  beforeAll(async () => { t = await tracedSetup(alice, { protocol: 'http/json', sampler: { ratio: 0 } }, {}, { passthrough: [{ path: '/v1/embeddings', upstream: 'b' }] }); });
  afterAll(() => t.close());

  const chat = (headers: Record<string, string>) => post(`${t.gw.url}/v1/chat/completions`, { model: 'ok-1', messages: [{ role: 'user', content: 'hi' }] }, { ...bearer(alice.key), ...headers });

  it('ratio 0: a request without a sampled parent makes no span, sends no traceparent and logs no traceId', async () => {
    expect((await chat({ 'x-request-id': 'out-1' })).status).toBe(200);
    expect((await chat({ 'x-request-id': 'out-2', traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-00` })).status).toBe(200);
    expect(t.backend.requests.map((r) => r.headers.traceparent)).toEqual([undefined, undefined]);
    const lines = await t.gw.waitForLogs('request', 2);
    expect(lines.map((l) => l.traceId)).toEqual([undefined, undefined]);
  });

  it('parent-based: a sampled parent is followed whatever the ratio, over OTLP/JSON', async () => {
    const traceId = 'c'.repeat(32);
    expect((await chat({ 'x-request-id': 'in-1', traceparent: `00-${traceId}-${'d'.repeat(16)}-01` })).status).toBe(200);
    const spans = await t.receiver.trace(traceId, 2);
    expect(spans.every((s) => s.encoding === 'json')).toBe(true);
    expect(spans.find((s) => s.kind === SERVER)?.attributes['sluice.request_id']).toBe('in-1');
    // Nothing else was exported: the requests sampled out left no span.
    expect(t.receiver.spans.filter((s) => s.traceId !== traceId)).toEqual([]);
  });

  it('a pass-through request not sampled: the client\'s traceparent and tracestate reach the backend as sent', async () => {
    const traceparent = `00-${'e'.repeat(32)}-${'f'.repeat(16)}-00`;
    const res = await post(`${t.gw.url}/v1/embeddings`, { model: 'ok-1', input: 'x' }, { ...bearer(alice.key), 'x-request-id': 'out-3', traceparent, tracestate: 'vendor=abc' });
    expect(res.status).toBe(200);
    expect(t.backend.requests.at(-1)!.headers).toMatchObject({ traceparent, tracestate: 'vendor=abc' });
  });
});

describe('workers', () => {
  const alice = makeKey('alice');
  let t: TracedSetup;

  beforeAll(async () => { t = await tracedSetup(alice, {}, { workers: 2 }); });
  afterAll(() => t.close());

  it('each worker exports its own spans, named by its pid; the primary exports none', async () => {
    const workers = childPids(t.gw.child.pid!);
    expect(workers).toHaveLength(2);
    const pids = () => new Set(t.receiver.spans.map((s) => s.resource['process.pid']));
    // A new connection each time: the primary hands connections to the workers in turn.
    await until(async () => {
      expect((await post(`${t.gw.url}/v1/chat/completions`, { model: 'ok-1', messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key), true)).status).toBe(200);
      return pids().size === 2;
    }, 'spans from both workers');
    expect([...pids()].sort()).toEqual([...workers].sort());
  });
});
