import { badAnswer, fromSocketError, fromUpstreamStatus, outOfRotation } from '../../../src/proxy/status';
import { DROP_WINDOW_MS, silenceEnd, socketEnd, statusEnd } from '../../../src/proxy/attempt-end';
import { catalogueReasons, errorBody, GatewayError, registerReasons } from '../../../src/contract/errors';
import { PluginRegistry } from '../../../src/pipeline/registry';
import { builtinPlugins } from '../../../plugins';
import { mediaTypeProblem } from '../../../src/api/json-body';

const socketError = (code: string): NodeJS.ErrnoException => Object.assign(new Error(code), { code });

describe('fromSocketError', () => {
  it('maps a timeout to upstream_timeout 504, whatever the socket error', () => {
    const err = fromSocketError(socketError('ECONNRESET'), true, 'vllm', 'queue');
    expect(err).toMatchObject({ reason: 'upstream_timeout', status: 504, param: null, details: { kind: 'timeout', upstream: 'vllm', phase: 'queue' } });
  });

  it.each(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EHOSTUNREACH', 'EPIPE'])('maps %s before the answer to upstream_error 502 (connect)', (code) => {
    const err = fromSocketError(socketError(code), false, 'vllm', 'connect');
    expect(err).toMatchObject({ reason: 'upstream_error', status: 502, details: { kind: 'connect', upstream: 'vllm', phase: 'connect', code } });
    // The client is never told an internal upstream's name.
    expect(err.message).not.toContain('vllm');
    expect(err.message).toContain('x-request-id');
  });

  it('maps a failure during a stream to upstream_error (stream)', () => {
    expect(fromSocketError(socketError('ECONNRESET'), false, 'vllm', 'stream')).toMatchObject({ reason: 'upstream_error', status: 502, details: { kind: 'stream', phase: 'stream' } });
  });
});

describe('fromUpstreamStatus', () => {
  const body = JSON.stringify({ error: { message: 'temperature must be at most 2', param: 'temperature', type: 'invalid_request_error' } });

  it.each([400, 404, 409, 422, 429])('passes a backend %i through as upstream_rejected with its status, message and param', (status) => {
    const err = fromUpstreamStatus(status, body, 'vllm');
    expect(err).toMatchObject({ reason: 'upstream_rejected', status, param: 'temperature', message: 'temperature must be at most 2' });
  });

  it.each([401, 403])('turns a backend %i into upstream_error 502: the client is not at fault', (status) => {
    const err = fromUpstreamStatus(status, body, 'vllm');
    expect(err).toMatchObject({ reason: 'upstream_error', status: 502, param: null });
    expect(err.message).not.toContain('temperature');
  });

  // The backend's status as the client gets it (docs/fleets.md, "Backend statuses as the client gets them").
  it.each([
    [500, 'upstream_error', 502], [502, 'upstream_error', 502], [503, 'upstream_unavailable', 503], [504, 'upstream_timeout', 504],
    [507, 'upstream_error', 502], [301, 'upstream_error', 502],
  ] as const)('turns a backend %i into %s %i', (status, reason, sent) => {
    const err = fromUpstreamStatus(status, body, 'vllm');
    expect(err).toMatchObject({ reason, status: sent, param: null, details: { kind: 'status', code: `HTTP ${status}` } });
    expect(err.message).toContain(`HTTP ${status}`);
    expect(err.message).not.toContain('temperature');
  });

  it("passes a backend 503's Retry-After on, when it is one", () => {
    expect(fromUpstreamStatus(503, body, 'u', '7').headers).toEqual({ 'retry-after': '7' });
    expect(fromUpstreamStatus(503, body, 'u', 'soon').headers).toBeUndefined();
    expect(fromUpstreamStatus(500, body, 'u', '7').headers).toBeUndefined();
  });

  it('reads the message from the shapes backends use', () => {
    expect(fromUpstreamStatus(400, '{"message":"flat"}', 'u').message).toBe('flat');
    expect(fromUpstreamStatus(422, '{"detail":"fastapi style"}', 'u').message).toBe('fastapi style');
    expect(fromUpstreamStatus(400, 'plain words  ', 'u').message).toBe('plain words');
  });

  it('still says something useful when the backend sent no message', () => {
    for (const text of ['', '{}', '{"error":{}}']) {
      const err = fromUpstreamStatus(404, text, 'u');
      expect(err).toMatchObject({ reason: 'upstream_rejected', status: 404, param: null });
      expect(err.message).toMatch(/404/);
    }
  });

  it('caps a long backend message', () => {
    const err = fromUpstreamStatus(400, JSON.stringify({ error: { message: 'x'.repeat(5000) } }), 'u');
    expect(err.message.length).toBeLessThanOrEqual(1000);
  });
});

describe('badAnswer', () => {
  it('is an upstream_error 502 that names the backend in its details only, kind status or stream', () => {
    expect(badAnswer('vllm', 'the body is not JSON')).toMatchObject({ reason: 'upstream_error', status: 502, details: { kind: 'status', upstream: 'vllm', phase: 'body' } });
    expect(badAnswer('vllm', 'broke off', true)).toMatchObject({ reason: 'upstream_error', status: 502, details: { kind: 'stream', phase: 'stream' } });
    expect(badAnswer('vllm', 'x').message).not.toContain('vllm');
  });
});

describe('error catalogue', () => {
  // The catalogue as a gateway has it: the core's reasons and the built-in plugins' (content_filter is the content filter's).
  beforeAll(() => new PluginRegistry(builtinPlugins));

  it('has the statuses the issue fixes', () => {
    expect(Object.fromEntries(catalogueReasons().map((r) => [r.reason, r.status]))).toMatchObject({
      invalid_json: 400, invalid_request: 400, content_filter: 400, unauthorized: 401, model_not_allowed: 403, not_found: 404,
      model_not_found: 404, method_not_allowed: 405, payload_too_large: 413, unsupported_media_type: 415, rate_limited: 429,
      internal_error: 500, upstream_error: 502, upstream_timeout: 504,
    });
  });

  it('takes a plugin\'s reasons with their status, and refuses one that would change a status', () => {
    expect(catalogueReasons()).toContainEqual({ reason: 'content_filter', status: 400, owner: 'content-filter' });
    expect(() => registerReasons({ content_filter: 403 }, 'another')).toThrow(/already in the catalogue with status 400 \(content-filter\)/);
    expect(() => registerReasons({ upstream_error: 500 }, 'another')).toThrow(/status 502 \(the core\)/);
    expect(() => registerReasons({ 'Bad-Name': 400 }, 'another')).toThrow(/lower_snake_case/);
    expect(new GatewayError('content_filter', 'no').status).toBe(400);
  });

  it('serialises exactly {error: {message, param, reason, status, code, type}}', () => {
    const text = errorBody(new GatewayError('content_filter', 'no', { param: 'prompt', details: { kind: 'x' }, headers: { a: 'b' } }));
    expect(text).toBe('{"error":{"message":"no","param":"prompt","reason":"content_filter","status":400,"code":"content_filter","type":"invalid_request_error"}}');
    expect(JSON.parse(errorBody(new GatewayError('not_found', 'x')))).toEqual({ error: { message: 'x', param: null, reason: 'not_found', status: 404, code: 'not_found', type: 'not_found_error' } });
  });

  it.each([
    ['invalid_request', 400, 'invalid_request_error'], ['unauthorized', 401, 'authentication_error'], ['model_not_allowed', 403, 'permission_error'],
    ['model_not_found', 404, 'not_found_error'], ['payload_too_large', 413, 'invalid_request_error'], ['rate_limited', 429, 'rate_limit_error'],
    ['internal_error', 500, 'server_error'], ['upstream_error', 502, 'server_error'], ['limiter_unavailable', 503, 'server_error'], ['upstream_timeout', 504, 'server_error'],
  ] as const)('gives %s (%i) the OpenAI type %s', (reason, status, type) => {
    expect(JSON.parse(errorBody(new GatewayError(reason, 'm'))).error).toMatchObject({ code: reason, status, type });
  });

  it('passes a backend 429\'s Retry-After on, and nothing that is not a delay or a date', () => {
    expect(fromUpstreamStatus(429, '{}', 'u', '7').headers).toEqual({ 'retry-after': '7' });
    expect(fromUpstreamStatus(429, '{}', 'u', 'Wed, 21 Oct 2026 07:28:00 GMT').headers).toEqual({ 'retry-after': 'Wed, 21 Oct 2026 07:28:00 GMT' });
    expect(fromUpstreamStatus(429, '{}', 'u', 'soon<script>').headers).toBeUndefined();
    expect(fromUpstreamStatus(400, '{}', 'u', '7').headers).toBeUndefined();
  });

  it('accepts only UTF-8, uncompressed application/json bodies', () => {
    for (const ok of ['application/json', 'application/json; charset=utf-8', 'Application/JSON;charset="UTF-8"', 'application/json ; charset=utf8']) {
      expect([ok, mediaTypeProblem(ok, undefined)]).toEqual([ok, undefined]);
    }
    expect(mediaTypeProblem('application/json', 'identity')).toBeUndefined();
    for (const bad of [undefined, 'text/plain', 'application/jsonx', 'application/x-www-form-urlencoded', 'application/json; charset=latin1']) {
      expect(mediaTypeProblem(bad, undefined)?.reason).toBe('unsupported_media_type');
    }
    expect(mediaTypeProblem('application/json', 'gzip')).toMatchObject({ reason: 'unsupported_media_type', status: 415 });
  });

});

describe('outOfRotation', () => {
  it('is rate_limited 429 while a backend asked to wait, with the rest of the wait, and never claims repeated failures', () => {
    const err = outOfRotation('vllm', 'rate_limited', 1_200);
    expect(err).toMatchObject({ reason: 'rate_limited', status: 429, headers: { 'retry-after': '2' }, details: { scope: 'backend', budget: 'requests', upstream: 'vllm' } });
    expect(err.message).not.toMatch(/repeated|vllm/);
  });

  it.each([['failures', /failed recently/], ['check', /health checks/]] as const)('is upstream_unavailable 503 when out for %s, at least one second', (cause, message) => {
    const err = outOfRotation('vllm', cause, 0);
    expect(err).toMatchObject({ reason: 'upstream_unavailable', status: 503, headers: { 'retry-after': '1' } });
    expect(err.message).toMatch(message);
  });
});

describe('what a failed attempt says to the fleet', () => {
  it.each([
    [429, 'rate_limited', 'rate_limited'], [500, 'failed', 'failed'], [503, 'failed', 'failed'], [400, 'neutral', undefined], [404, 'neutral', undefined],
  ] as const)('a backend\'s %i concerns the model: %s, retried as %s', (code, result, reason) => {
    expect(statusEnd(code)).toEqual(reason === undefined ? { result } : { result, reason });
  });

  it.each([
    ['ECONNREFUSED', false, undefined, false, 'unreachable', 'refused'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', false, undefined, false, 'unreachable', 'refused'],
    ['ECONNRESET', true, 5, false, 'unreachable', 'timeout'],
    ['UND_ERR_SOCKET', false, 3, false, 'neutral', 'dropped'],
    ['EPIPE', false, 5_000, false, 'neutral', 'dropped'],
    ['ECONNRESET', false, undefined, false, 'neutral', 'dropped'],
    ['UND_ERR_SOCKET', false, DROP_WINDOW_MS + 1, false, 'unreachable', 'closed'],
    ['ECONNRESET', false, 15_000, false, 'unreachable', 'closed'],
    ['UND_ERR_SOCKET', false, 3, true, 'unreachable', 'closed'],
    ['EWHATEVER', false, 3, false, 'unreachable', undefined],
  ] as const)('a connection that ended with %s (timed out: %s, %s ms after the request went, fresh: %s): %s, retried as %s', (code, timedOut, sentMs, fresh, result, reason) => {
    expect(socketEnd(code, timedOut, sentMs, fresh)).toEqual(reason === undefined ? { result } : { result, reason });
  });

  it('a silence before the head concerns the endpoint; after it, the model', () => {
    expect(silenceEnd(false)).toEqual({ result: 'unreachable', reason: 'timeout' });
    expect(silenceEnd(true)).toEqual({ result: 'failed', reason: 'timeout' });
  });
});
