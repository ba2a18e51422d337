import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
// Every error the gateway raises before a backend is involved, on a real socket.
import { z } from 'zod';
import type { PluginDefinition } from '../../src/contract/plugin';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call, post } from '../support/http';
import { expectError } from '../support/errors';

const boom: PluginDefinition<Record<string, never>> = {
  name: 'boom',
  schema: z.strictObject({}),
  create: () => ({
    onRequest(ctx) {
      if (ctx.model?.startsWith('boom-')) throw new Error('secret detail from a plugin bug');
    },
  }),
};

describe('request errors', () => {
  let backend: Backend;
  let gw: TestGateway;
  const alice = makeKey('alice');
  const bob = makeKey('bob', { models: ['ok-a*'] });
  const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }] });
  const chatUrl = () => `${gw.url}/v1/chat/completions`;

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai' });
    gw = await startGateway({
      server: { port: 0, bodyLimit: '2kb' },
      keys: [alice.entry, bob.entry],
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [
        { model: 'ok-*', upstream: 'b' },
        { model: 'boom-*', upstream: 'b' },
        { model: 'img-only', upstream: 'b', endpoints: ['images'] },
        { model: 'v2-only', upstream: 'b', versions: ['v2'] },
      ],
      plugins: [{ name: 'content-filter', terms: ['forbidden phrase'], contact: 'policy@example.com' }, { name: 'boom' }],
    }, { plugins: [boom] });
  });
  afterAll(async () => { await gw.close(); await backend.close(); });

  // None of these may reach the backend.
  let before = 0;
  beforeEach(() => { before = backend.requests.length; });
  afterEach(() => expect(backend.requests.length).toBe(before));

  it('invalid_json 400 for a body that is not JSON', async () => {
    for (const text of ['{"model":', 'not json', '{"model":"ok-a"} trailing']) {
      expectError(await post(chatUrl(), text, bearer(alice.key)), 400, 'invalid_json', null);
    }
  });

  it('invalid_json 400 saying what to fix for an empty body, a byte order mark, or bytes that are not UTF-8', async () => {
    const json = JSON.stringify(chat('ok-a'));
    const headers = { 'content-type': 'application/json', ...bearer(alice.key) };
    const cases: Array<[string | Buffer, RegExp]> = [
      ['', /empty/],
      [' \r\n\t ', /empty/],
      [`\ufeff${json}`, /byte order mark/],
      // Latin-1 bytes sent as if they were UTF-8: decoding would forward U+FFFD in place of each.
      [Buffer.from(JSON.stringify({ model: 'ok-a', messages: [{ role: 'user', content: 'café crème' }] }), 'latin1'), /not valid UTF-8/],
      // UTF-16 without a charset, byte order mark first.
      [Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(json, 'utf16le')]), /not valid UTF-8/],
    ];
    for (const [body, message] of cases) {
      const res = await call('POST', chatUrl(), body, headers);
      expectError(res, 400, 'invalid_json', null);
      expect(res.body.error.message).toMatch(message);
    }
  });

  it('invalid_request 400 for valid JSON that is not an object, saying what it got', async () => {
    for (const [text, got] of [['null', 'null'], ['"a string"', 'a string'], ['42', 'a number'], ['true', 'a boolean'], ['[]', 'an array']]) {
      const res = await post(chatUrl(), text, bearer(alice.key));
      expectError(res, 400, 'invalid_request', null);
      expect(res.body.error.message).toBe(`The request body must be a JSON object, got ${got}.`);
    }
    expectError(await post(`${gw.url}/v1/images/generations`, '[{"model":"img-only","prompt":"p"}]', bearer(alice.key)), 400, 'invalid_request', null);
  });

  it('invalid_request 400 naming the field, on both endpoints and both versions', async () => {
    const bad = { model: 'ok-a', messages: [{ role: 'user', content: 'a' }, { role: 'robot', content: 'b' }] };
    expectError(await post(chatUrl(), bad, bearer(alice.key)), 400, 'invalid_request', 'messages[1].role');
    expectError(await post(`${gw.url}/v2/chat/completions`, { ...chat('ok-a'), functions: [] }, bearer(alice.key)), 400, 'invalid_request', 'functions');
    expectError(await post(`${gw.url}/v2/chat/completions`, { ...chat('ok-a'), tools: [{ type: 'function' }] }, bearer(alice.key)), 400, 'invalid_request', 'tools[0].function');
    expectError(await post(`${gw.url}/v1/images/generations`, { model: 'img-only' }, bearer(alice.key)), 400, 'invalid_request', 'prompt');
    expectError(await post(`${gw.url}/v2/images/generations`, { model: 'img-only', prompt: 'p', model_params: { size: 'big' } }, bearer(alice.key)), 400, 'invalid_request', 'model_params.size');
    expectError(await post(chatUrl(), [chat('ok-a')], bearer(alice.key)), 400, 'invalid_request', null);
  });

  it('content_filter 400 with exactly the interface\'s body', async () => {
    const res = await post(chatUrl(), { model: 'ok-a', messages: [{ role: 'user', content: 'say the Forbidden Phrase' }] }, bearer(alice.key));
    expectError(res, 400, 'content_filter', 'prompt');
    expect(res.text).toMatch(/^\{"error":\{"message":"[^"]+","param":"prompt","reason":"content_filter","status":400,"code":"content_filter","type":"invalid_request_error"\}\}$/);
    expect(res.body.error.message).toContain('policy@example.com');
    expect(res.body.error.message).not.toMatch(/forbidden/i);
  });

  it('unauthorized 401 with WWW-Authenticate for a missing, malformed or unknown key', async () => {
    const cases: Array<Record<string, string>> = [{}, { authorization: '' }, { authorization: `Basic ${alice.key}` }, { authorization: 'Bearer' }, { authorization: alice.key }, bearer('sk-unknown')];
    for (const headers of cases) {
      const res = await post(chatUrl(), chat('ok-a'), headers);
      expectError(res, 401, 'unauthorized', null);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.text).not.toContain(alice.key);
    }
    expectError(await call('GET', `${gw.url}/v2/models`, undefined, bearer('sk-unknown')), 401, 'unauthorized');
    expectError(await post(`${gw.url}/v2/images/generations`, { model: 'img-only', prompt: 'p' }), 401, 'unauthorized');
  });

  it('model_not_allowed 403 when the key\'s models globs exclude the model', async () => {
    expectError(await post(chatUrl(), chat('ok-b'), bearer(bob.key)), 403, 'model_not_allowed', 'model');
    expectError(await post(`${gw.url}/v2/images/generations`, { model: 'img-only', prompt: 'p' }, bearer(bob.key)), 403, 'model_not_allowed', 'model');
  });

  it('not_found 404 for an unknown path', async () => {
    expectError(await call('GET', `${gw.url}/`, undefined), 404, 'not_found', null);
    expectError(await post(`${gw.url}/v1/completions`, chat('ok-a'), bearer(alice.key)), 404, 'not_found');
    expectError(await post(`${gw.url}/v3/chat/completions`, chat('ok-a'), bearer(alice.key)), 404, 'not_found');
    expectError(await call('GET', `${gw.url}/v1/model/ok-a`, undefined, bearer(alice.key)), 404, 'not_found');
  });

  it('model_not_found 404 when retrieving a model the key may not use or no route serves', async () => {
    expectError(await call('GET', `${gw.url}/v1/models/llama`, undefined, bearer(alice.key)), 404, 'model_not_found', 'model');
    expectError(await call('GET', `${gw.url}/v1/models/ok-b`, undefined, bearer(bob.key)), 404, 'model_not_found', 'model');
  });

  it('model_not_found 404 when no route serves the model, endpoint and version', async () => {
    expectError(await post(chatUrl(), chat('llama'), bearer(alice.key)), 404, 'model_not_found', 'model');
    expectError(await post(chatUrl(), chat('img-only'), bearer(alice.key)), 404, 'model_not_found', 'model');
    expectError(await post(chatUrl(), chat('v2-only'), bearer(alice.key)), 404, 'model_not_found', 'model');
    expectError(await post(`${gw.url}/v1/images/generations`, { model: 'v2-only', prompt: 'p' }, bearer(alice.key)), 404, 'model_not_found', 'model');
  });

  it('method_not_allowed 405 with the Allow header', async () => {
    for (const [method, path, allow] of [['GET', '/v1/chat/completions', 'POST'], ['PUT', '/v2/chat/completions', 'POST'], ['DELETE', '/v1/images/generations', 'POST'], ['POST', '/v2/models', 'GET, HEAD'], ['DELETE', '/v1/models/ok-a', 'GET, HEAD'], ['POST', '/healthz', 'GET, HEAD'], ['PUT', '/readyz', 'GET, HEAD']]) {
      const res = await call(method, `${gw.url}${path}`, undefined, bearer(alice.key));
      expectError(res, 405, 'method_not_allowed', null);
      expect(res.headers.allow).toBe(allow);
    }
  });

  it('payload_too_large 413 above server.bodyLimit', async () => {
    const big = { model: 'ok-a', messages: [{ role: 'user', content: 'x'.repeat(3000) }] };
    expectError(await post(chatUrl(), big, bearer(alice.key)), 413, 'payload_too_large', null);
    const fits = { model: 'ok-a', messages: [{ role: 'user', content: 'x'.repeat(1500) }] };
    expect((await post(chatUrl(), fits, bearer(alice.key))).status).toBe(200);
    before += 1;
  });

  it('payload_too_large 413 for a chunked body (no Content-Length) that grows past the limit', async () => {
    const res = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = request(chatUrl(), { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(alice.key) } }, (r) => {
        let text = '';
        r.on('data', (c) => { text += c; });
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body: JSON.parse(text) }));
      });
      req.on('error', reject);
      req.write('{"model":"ok-a","messages":[{"role":"user","content":"');
      for (let i = 0; i < 4; i++) req.write('x'.repeat(1000));
      req.end('"}]}');
    });
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ reason: 'payload_too_large', status: 413, param: null });
  });

  it('unsupported_media_type 415 for a body that is not sent as UTF-8 JSON', async () => {
    const body = JSON.stringify(chat('ok-a'));
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1']) {
      expectError(await call('POST', chatUrl(), body, { 'content-type': type, ...bearer(alice.key) }), 415, 'unsupported_media_type', null);
    }
    expectError(await call('POST', chatUrl(), body, bearer(alice.key)), 415, 'unsupported_media_type');
    expectError(await call('POST', chatUrl(), body, { 'content-type': 'application/json', 'content-encoding': 'compress', ...bearer(alice.key) }), 415, 'unsupported_media_type');
    const utf16 = await call('POST', chatUrl(), Buffer.from(body, 'utf16le'), { 'content-type': 'application/json; charset=utf-16le', ...bearer(alice.key) });
    expectError(utf16, 415, 'unsupported_media_type', null);
    expect(utf16.body.error.message).toMatch(/utf-16le.*UTF-8/);
  });

  it('unsupported_media_type 415 for a compressed body, however it is compressed', async () => {
    const gzipped = gzipSync(JSON.stringify(chat('ok-a')));
    for (const encoding of ['gzip', 'GZIP', 'deflate', 'br', 'gzip, identity']) {
      const res = await call('POST', chatUrl(), gzipped, { 'content-type': 'application/json', 'content-encoding': encoding, ...bearer(alice.key) });
      expectError(res, 415, 'unsupported_media_type', null);
      expect(res.body.error.message).toMatch(/Send the body uncompressed/);
    }
    expect((await call('POST', chatUrl(), JSON.stringify(chat('ok-a')), { 'content-type': 'application/json', 'content-encoding': 'identity', ...bearer(alice.key) })).status).toBe(200);
    before += 1;
  });

  it('internal_error 500 with a generic message and no stack for a bug', async () => {
    const res = await post(chatUrl(), chat('boom-a'), bearer(alice.key));
    expectError(res, 500, 'internal_error', null);
    expect(res.text).not.toMatch(/secret detail|at .*\.ts|Error:|stack/);
    expect(res.body.error.message).toMatch(/x-request-id/);
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('every error carries x-request-id: the client\'s, or a new one', async () => {
    const res = await post(chatUrl(), chat('ok-a'), { 'x-request-id': 'trace-123' });
    expectError(res, 401, 'unauthorized');
    expect(res.headers['x-request-id']).toBe('trace-123');
    expect((await call('GET', `${gw.url}/nowhere`, undefined, { 'x-request-id': 'trace-404' })).headers['x-request-id']).toBe('trace-404');
    expect((await call('GET', chatUrl(), undefined)).headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
