// Pass-through routes: other endpoints of a backend, passed as bytes under
// the gateway's policy (key, model allow-list, request hooks, lifecycle),
// against a real node:http backend. Tracing is off here: the client's trace
// context passes as sent (a traced request's: test/e2e/tracing.test.ts).
import { request } from 'node:http';
import pino from 'pino';
import { validateConfig } from '../../src/config/load';
import { gatewayConfigCheck } from '../../src/gateway';
import { startRawBackend, EMBEDDINGS_ANSWER, SPEECH_EVENTS, type RawBackend } from '../support/raw-backend';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call, postChunked, rawRequest } from '../support/http';
import { expectError } from '../support/errors';
import { freePort } from '../support/process';
import { parseExposition, scrape, series } from '../support/metrics';
import { until } from '../support/wait';

const JSON_TYPE = { 'content-type': 'application/json' };

/** Not what JSON.stringify would write: spacing, an escape, a number beyond a double's integers, a 1.0. */
const EMBEDDINGS_BODY = '{ "model" : "emb-small", "input": ["caf\\u00e9", "naïve"], "dimensions": 1.0, "user": 12345678901234567890 }';

const MULTIPART_TYPE = 'multipart/form-data; boundary=XyZ';
const multipart = (text: string): string =>
  `--XyZ\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n${text}\r\n--XyZ--\r\n`;

describe('pass-through routes', () => {
  let backend: RawBackend;
  let gw: TestGateway;
  let deadPort: number;
  const lines: string[] = [];
  const alice = makeKey('alice');
  const bob = makeKey('bob', { models: ['emb-*'] });
  const carol = makeKey('carol', { limits: { requests: 2, windowSeconds: 60 } });

  beforeAll(async () => {
    backend = await startRawBackend({ slowMs: 40 });
    deadPort = await freePort();
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    gw = await startGateway({
      keys: [alice.entry, bob.entry, carol.entry],
      upstreams: {
        emb: { url: `${backend.url}/base/v1/`, headers: { Authorization: 'Bearer upstream-secret', 'x-upstream': 'yes' } },
        dead: { url: `http://127.0.0.1:${deadPort}/v1` },
        quiet: { url: `${backend.url}/v1`, timeoutMs: 300 },
        narrow: { url: `${backend.url}/v1`, maxSockets: 1 },
      },
      passthrough: [
        { path: '/v1/embeddings', upstream: 'emb' },
        { path: '/v2/embeddings', upstream: 'emb' },
        { path: '/v1/audio/*', upstream: 'emb', model: 'whisper-1', bodyLimit: '2kb' },
        { path: '/v1/voices', upstream: 'emb', methods: ['GET'] },
        { path: '/v1/rerank', upstream: 'dead' },
        { path: '/v1/quiet/*', upstream: 'quiet' },
        { path: '/v1/narrow/slow', upstream: 'narrow' },
      ],
      plugins: [
        { name: 'content-filter', terms: ['forbidden phrase'] },
        { name: 'rate-limit' },
        { name: 'metrics' },
      ],
    }, { logger, metrics: {} });
  });
  afterAll(async () => { await gw.close(); await backend.close(); });

  /** The access-log line of a request, once its finish has run (it comes after the response closed). */
  async function accessLine(requestId: string): Promise<Record<string, any>> {
    const find = () => lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.requestId === requestId);
    await until(() => find() !== undefined, `the access line of ${requestId}`, 3000);
    return find();
  }

  let before = 0;
  beforeEach(() => { before = backend.requests.length; });
  const reached = () => backend.requests.slice(before);

  it('passes a JSON body and its answer byte for byte, onto the upstream\'s base path', async () => {
    const res = await call('POST', `${gw.url}/v2/embeddings?encoding=float`, EMBEDDINGS_BODY, { ...JSON_TYPE, ...bearer(alice.key), 'x-request-id': 'pt-1' });
    expect(res.status).toBe(200);
    expect(res.text).toBe(EMBEDDINGS_ANSWER);
    expect(res.headers['content-type']).toBe('application/json');
    // The gateway's own headers win over the backend's.
    expect(res.headers['x-request-id']).toBe('pt-1');
    const [seen] = reached();
    expect(seen.body.toString('utf8')).toBe(EMBEDDINGS_BODY);
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/base/v1/embeddings?encoding=float');
    expect(seen.headers['content-length']).toBe(String(Buffer.byteLength(EMBEDDINGS_BODY)));
    expect(seen.headers['x-request-id']).toBe('pt-1');
  });

  it('sends the upstream\'s headers, never the client\'s credentials', async () => {
    const res = await call('POST', `${gw.url}/v1/embeddings`, EMBEDDINGS_BODY, {
      ...JSON_TYPE, ...bearer(alice.key), cookie: 'session=abc', 'proxy-authorization': 'Basic eA==', 'x-client': 'kept',
    });
    expect(res.status).toBe(200);
    const [{ headers }] = reached();
    expect(headers.authorization).toBe('Bearer upstream-secret');
    expect(headers['x-upstream']).toBe('yes');
    expect(headers.cookie).toBeUndefined();
    expect(headers['proxy-authorization']).toBeUndefined();
    expect(headers['x-client']).toBe('kept');
    expect(headers.host).toBe(new URL(backend.url).host);
  });

  it('with tracing off, passes the client\'s trace context on as sent, as a transparent proxy does', async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const res = await call('POST', `${gw.url}/v1/embeddings`, EMBEDDINGS_BODY, { ...JSON_TYPE, ...bearer(alice.key), traceparent, tracestate: 'vendor=abc' });
    expect(res.status).toBe(200);
    const [{ headers }] = reached();
    expect(headers.traceparent).toBe(traceparent);
    expect(headers.tracestate).toBe('vendor=abc');
  });

  it('drops hop-by-hop headers both ways, every header a Connection header names included', async () => {
    const res = await new Promise<{ status?: number; headers: Record<string, unknown> }>((resolve, reject) => {
      const req = request(`${gw.url}/v1/audio/hop`, {
        method: 'POST',
        headers: { ...JSON_TYPE, ...bearer(alice.key), connection: 'keep-alive, X-Client-Hop, te', 'x-client-hop': 'only for the gateway', 'keep-alive': 'timeout=9', te: 'trailers', 'x-client': 'kept' },
        agent: false,
      }, (r) => { r.resume(); r.on('end', () => resolve({ status: r.statusCode, headers: r.headers })); });
      req.on('error', reject);
      req.end('{"model":"whisper-1"}');
    });
    expect(res.status).toBe(200);
    const [{ headers }] = reached();
    expect(headers['x-client-hop']).toBeUndefined();
    expect(headers.te).toBeUndefined();
    expect(headers['keep-alive']).toBeUndefined();
    expect(headers['x-client']).toBe('kept');
    // The backend's own hop-by-hop headers stay between it and the gateway.
    expect(res.headers['x-backend-hop']).toBeUndefined();
    expect(res.headers['keep-alive']).not.toBe('timeout=2');
    expect(String(res.headers.connection)).not.toMatch(/x-backend-hop/i);
    expect(res.headers['x-backend-kept']).toBe('yes');
  });

  it('closes the connection after the answer when the client asked to', async () => {
    const res = await rawRequest(gw.url, 'POST', '/v1/audio/hop', [['content-type', 'application/json'], ['authorization', `Bearer ${alice.key}`]], '{"model":"whisper-1"}');
    expect(res.status).toBe(200);
    expect(res.headers.connection).toBe('close');
  });

  it('relays a streamed answer as it arrives, not when the backend has finished', async () => {
    const endedBefore = backend.streamsEnded;
    const { first, endedAtFirst, text, headers } = await new Promise<{ first: string; endedAtFirst: boolean; text: string; headers: Record<string, unknown> }>((resolve, reject) => {
      const req = request(`${gw.url}/v1/audio/speech`, { method: 'POST', headers: { ...JSON_TYPE, ...bearer(alice.key) } }, (res) => {
        let all = '';
        let first: string | undefined;
        let endedAtFirst = true;
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          if (first === undefined) {
            first = c;
            endedAtFirst = backend.streamsEnded > endedBefore;
            backend.release(); // only now may the backend go on
          }
          all += c;
        });
        res.on('end', () => resolve({ first: first!, endedAtFirst, text: all, headers: res.headers }));
      });
      req.on('error', reject);
      req.end(JSON.stringify({ model: 'whisper-1', input: 'Hello', voice: 'alloy' }));
    });
    expect(first).toBe(SPEECH_EVENTS[0]);
    expect(endedAtFirst).toBe(false);
    expect(text).toBe(SPEECH_EVENTS.join(''));
    expect(headers['content-type']).toBe('text/event-stream');
    expect(reached()[0].url).toBe('/base/v1/audio/speech');
  });

  it('gives up on the backend when the client leaves mid-stream, and finishes the request once', async () => {
    const aborted = backend.nextAbort();
    await new Promise<void>((resolve, reject) => {
      const req = request(`${gw.url}/v1/audio/speech`, { method: 'POST', headers: { ...JSON_TYPE, ...bearer(alice.key), 'x-request-id': 'pt-left' } }, (res) => {
        res.once('data', () => { req.destroy(); resolve(); });
      });
      req.on('error', () => undefined);
      req.on('close', resolve);
      req.end('{"model":"whisper-1"}');
      setTimeout(() => reject(new Error('no first chunk')), 5000).unref();
    });
    await aborted; // the backend saw its connection closed, with its stream still held
    const line = await accessLine('pt-left');
    expect(line).toMatchObject({ endpoint: 'passthrough', status: 499, reason: 'client_closed', stream: true });
    const samples = parseExposition((await scrape(gw.metrics!.url)).text);
    expect(series(samples, 'sluice_active_streams')).toEqual({ '': 0 });
  });

  it('gives up on the backend at once when the client leaves before the answer', async () => {
    const arrived = backend.nextRequest();
    const aborted = backend.nextAbort();
    const req = request(`${gw.url}/v1/audio/silent`, { method: 'POST', headers: { ...JSON_TYPE, ...bearer(alice.key), 'x-request-id': 'pt-gone' } });
    req.on('error', () => undefined);
    req.end('{"model":"whisper-1"}');
    await arrived;
    req.destroy();
    await aborted; // long before the upstream's timeoutMs (60 s)
    expect(await accessLine('pt-gone')).toMatchObject({ status: 499, reason: 'client_closed' });
  });

  it('refuses a missing or unknown key with 401, before the backend', async () => {
    expectError(await call('POST', `${gw.url}/v1/embeddings`, EMBEDDINGS_BODY, JSON_TYPE), 401, 'unauthorized');
    const unknown = await call('POST', `${gw.url}/v1/embeddings`, EMBEDDINGS_BODY, { ...JSON_TYPE, ...bearer('sk-not-a-key') });
    expectError(unknown, 401, 'unauthorized');
    expect(unknown.headers['www-authenticate']).toBe('Bearer');
    expect(reached()).toHaveLength(0);
  });

  it('holds a key to its model allow-list: the body\'s model, else the route\'s', async () => {
    expectError(await call('POST', `${gw.url}/v1/embeddings`, JSON.stringify({ model: 'gpt-big', input: 'x' }), { ...JSON_TYPE, ...bearer(bob.key) }), 403, 'model_not_allowed', 'model');
    // No model named and none on the route: a restricted key cannot tell the backend's choice is allowed.
    expectError(await call('POST', `${gw.url}/v1/embeddings`, JSON.stringify({ input: 'x' }), { ...JSON_TYPE, ...bearer(bob.key) }), 403, 'model_not_allowed', 'model');
    // An upload is not read: the route's model (whisper-1) is what the list must allow.
    expectError(await call('POST', `${gw.url}/v1/audio/transcriptions`, multipart('RIFF'), { 'content-type': MULTIPART_TYPE, ...bearer(bob.key) }), 403, 'model_not_allowed', 'model');
    expectError(await call('POST', `${gw.url}/v1/embeddings`, JSON.stringify({ model: ['emb-small'] }), { ...JSON_TYPE, ...bearer(alice.key) }), 400, 'invalid_request', 'model');
    expect(reached()).toHaveLength(0);
    expect((await call('POST', `${gw.url}/v1/embeddings`, JSON.stringify({ model: 'emb-small', input: 'x' }), { ...JSON_TYPE, ...bearer(bob.key) })).status).toBe(200);
    expect((await call('POST', `${gw.url}/v1/embeddings`, JSON.stringify({ input: 'x' }), { ...JSON_TYPE, ...bearer(alice.key) })).status).toBe(200);
  });

  it('runs the content filter over every string of a JSON body, keys and deep values included', async () => {
    const deep = { model: 'emb-small', input: [{ a: { b: [['fine', 'the FORBIDDEN   phrase']] } }] };
    expectError(await call('POST', `${gw.url}/v1/embeddings`, JSON.stringify(deep), { ...JSON_TYPE, ...bearer(alice.key) }), 400, 'content_filter', 'prompt');
    expectError(await call('POST', `${gw.url}/v1/embeddings`, JSON.stringify({ model: 'emb-small', options: { 'forbidden phrase': 1 } }), { ...JSON_TYPE, ...bearer(alice.key) }), 400, 'content_filter', 'prompt');
    expect(reached()).toHaveLength(0);
  });

  it('passes a multipart upload unread, byte for byte, within the route\'s body limit', async () => {
    const body = multipart('RIFF....WAVEfmt forbidden phrase');
    const res = await call('POST', `${gw.url}/v1/audio/transcriptions`, body, { 'content-type': MULTIPART_TYPE, ...bearer(alice.key) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ bytes: Buffer.byteLength(body), type: MULTIPART_TYPE });
    expect(reached()[0].body.toString('utf8')).toBe(body);
    // Over bodyLimit (2kb): declared, or counted as a chunked body flows.
    expectError(await call('POST', `${gw.url}/v1/audio/transcriptions`, multipart('x'.repeat(3000)), { 'content-type': MULTIPART_TYPE, ...bearer(alice.key) }), 413, 'payload_too_large');
    const streamed = await postChunked(`${gw.url}/v1/audio/transcriptions`, [multipart(''), 'y'.repeat(1500), 'y'.repeat(1500)], { 'content-type': MULTIPART_TYPE, ...bearer(alice.key) });
    expect(streamed).toMatchObject({ status: 413, body: { error: { reason: 'payload_too_large' } } });
  });

  it('reads a chunked JSON body too, and forwards it whole', async () => {
    const res = await postChunked(`${gw.url}/v1/embeddings`, [EMBEDDINGS_BODY.slice(0, 20), EMBEDDINGS_BODY.slice(20)], { ...JSON_TYPE, ...bearer(alice.key) });
    expect(res.status).toBe(200);
    expect(reached()[0].body.toString('utf8')).toBe(EMBEDDINGS_BODY);
  });

  it('refuses a body it cannot read for the policy (415) and invalid JSON (400)', async () => {
    expectError(await call('POST', `${gw.url}/v1/embeddings`, EMBEDDINGS_BODY, { 'content-type': 'text/plain', ...bearer(alice.key) }), 415, 'unsupported_media_type');
    expectError(await call('POST', `${gw.url}/v1/embeddings`, EMBEDDINGS_BODY, bearer(alice.key)), 415, 'unsupported_media_type');
    expectError(await call('POST', `${gw.url}/v1/embeddings`, '{"model": "emb-small",', { ...JSON_TYPE, ...bearer(alice.key) }), 400, 'invalid_json');
    expect(reached()).toHaveLength(0);
  });

  it('applies the rate-limit plugin\'s request budget, with its headers', async () => {
    const ok = await call('POST', `${gw.url}/v1/embeddings`, EMBEDDINGS_BODY, { ...JSON_TYPE, ...bearer(carol.key) });
    expect(ok.status).toBe(200);
    expect(ok.headers).toMatchObject({ 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '1' });
    expect((await call('POST', `${gw.url}/v1/embeddings`, EMBEDDINGS_BODY, { ...JSON_TYPE, ...bearer(carol.key) })).status).toBe(200);
    const refused = await call('POST', `${gw.url}/v1/embeddings`, EMBEDDINGS_BODY, { ...JSON_TYPE, ...bearer(carol.key) });
    expectError(refused, 429, 'rate_limited');
    expect(refused.headers['retry-after']).toBeDefined();
    expect(reached()).toHaveLength(2);
  });

  it('answers a dead backend with 502 and a silent one with 504, as error objects', async () => {
    expectError(await call('POST', `${gw.url}/v1/rerank`, '{"query":"q"}', { ...JSON_TYPE, ...bearer(alice.key) }), 502, 'upstream_error');
    expectError(await call('POST', `${gw.url}/v1/quiet/silent`, '{}', { ...JSON_TYPE, ...bearer(alice.key) }), 504, 'upstream_timeout');
  });

  it('cuts the connection when the backend breaks off an answer already under way', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const req = request(`${gw.url}/v1/audio/break`, { method: 'POST', headers: { ...JSON_TYPE, ...bearer(alice.key) } }, (res) => {
        res.on('data', () => undefined);
        res.on('end', () => resolve('ended'));
        res.on('error', () => resolve('cut'));
        res.on('aborted', () => resolve('cut'));
      });
      req.on('error', () => resolve('cut'));
      req.end('{}');
    });
    expect(outcome).toBe('cut');
  });

  it('queues for a connection without losing a body (maxSockets 1)', async () => {
    const bodies = [1, 2, 3].map((i) => JSON.stringify({ model: 'emb-small', input: `text ${i}`, pad: ' '.repeat(i) }));
    const answers = await Promise.all(bodies.map((b) => call('POST', `${gw.url}/v1/narrow/slow`, b, { ...JSON_TYPE, ...bearer(alice.key) })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(reached().map((r) => r.body.toString('utf8')).sort()).toEqual([...bodies].sort());
  });

  it('answers 405 for a method the route does not list, and 404 for any other path', async () => {
    const wrong = await call('GET', `${gw.url}/v1/embeddings`, undefined, bearer(alice.key));
    expectError(wrong, 405, 'method_not_allowed');
    expect(wrong.headers.allow).toBe('POST');
    expect((await call('GET', `${gw.url}/v1/voices`, undefined, bearer(alice.key))).status).toBe(200);
    expectError(await call('POST', `${gw.url}/v1/voices`, '{}', { ...JSON_TYPE, ...bearer(alice.key) }), 405, 'method_not_allowed');
    // Written on a bare socket: a URL parser would resolve the dot segments before sending. Below a
    // wildcard, nothing a backend would decode or resolve into another of its endpoints matches.
    const paths = ['/v1/embedding', '/v1/embeddings/', '/V1/embeddings', '/v1/audio', '/v1/audio/', '/v1/audio/a//b', '/v1/audio/../chat/completions', '/v1/audio/%2e%2e/chat/completions', '/v1/audio/a%2Fb'];
    for (const path of paths) {
      expectError(await rawRequest(gw.url, 'POST', path, [['content-type', 'application/json'], ['authorization', `Bearer ${alice.key}`]], '{}'), 404, 'not_found');
    }
    expect(reached()).toHaveLength(1); // the GET /v1/voices
  });

  it('takes new routes from a reload, keeping one proxy per upstream setting', async () => {
    const current = gw.gateway.state.runtime.config;
    const reload = (paths: string[]) => gw.gateway.swap({
      config: validateConfig({ ...current, passthrough: [...current.passthrough, ...paths.map((path) => ({ path, upstream: 'emb' }))] }, 'passthrough.yaml', process.env, gatewayConfigCheck()),
      file: 'passthrough.yaml',
    });
    expectError(await call('POST', `${gw.url}/v1/moderations`, '{}', { ...JSON_TYPE, ...bearer(alice.key) }), 404, 'not_found');
    const listeners: number[] = [];
    for (let i = 0; i < 12; i++) {
      await reload(['/v1/moderations']);
      expect((await call('POST', `${gw.url}/v1/moderations`, '{"input":"x"}', { ...JSON_TYPE, ...bearer(alice.key) })).status).toBe(200);
      listeners.push(gw.server.listenerCount('close'));
    }
    expect(reached()[0].url).toBe('/base/v1/moderations');
    // The proxy subscribes to the server's close event once; a reload that keeps the setting adds none.
    expect(new Set(listeners).size).toBe(1);
    await reload([]);
    expectError(await call('POST', `${gw.url}/v1/moderations`, '{}', { ...JSON_TYPE, ...bearer(alice.key) }), 404, 'not_found');
  });

  it('finishes every request once: the access log and the metrics count it as passthrough', async () => {
    await call('POST', `${gw.url}/v1/embeddings`, EMBEDDINGS_BODY, { ...JSON_TYPE, ...bearer(alice.key), 'x-request-id': 'pt-log' });
    const line = await accessLine('pt-log');
    expect(line).toMatchObject({ keyId: 'alice', endpoint: 'passthrough', version: 'v1', model: 'emb-small', status: 200, stream: false });
    expect(line.upstreamFirstByteMs).toBeGreaterThan(0);
    expect(lines.map((l) => JSON.parse(l)).filter((l) => l.requestId === 'pt-log')).toHaveLength(1);
    const samples = parseExposition((await scrape(gw.metrics!.url)).text);
    const requests = series(samples, 'sluice_requests_total');
    expect(requests['endpoint=passthrough,model=other,protocol=chat,reason=,status=200,version=v1']).toBeGreaterThan(0);
    expect(requests['endpoint=passthrough,model=other,protocol=chat,reason=content_filter,status=400,version=v1']).toBeGreaterThan(0);
    expect(series(samples, 'sluice_inflight_requests')).toEqual({ '': 0 });
  });
});
