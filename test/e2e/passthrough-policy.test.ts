// Pass-through routes under the gateway's policy: the key, the model
// allow-list, request hooks (content filter, rate limit), the routes a config
// and its reloads list, and the lifecycle that finishes every request once.
import { validateConfig } from '../../src/config/load';
import { gatewayConfigCheck } from '../../src/gateway';
import type { TestGateway } from '../support/gateway';
import { bearer, call, rawRequest } from '../support/http';
import { expectError } from '../support/errors';
import { parseExposition, scrape, series } from '../support/metrics';
import { alice, bob, carol, EMBEDDINGS_BODY, JSON_TYPE, multipart, MULTIPART_TYPE, passthroughSuite } from '../support/passthrough-stack';

describe('pass-through routes', () => {
  let gw: TestGateway;
  const { reached, accessLine, lines } = passthroughSuite((s) => { ({ gw } = s); });

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
    // The gateway serves /v1/moderations itself (a body without a model is a 400) until a pass-through route takes the path.
    expectError(await call('POST', `${gw.url}/v1/moderations`, '{}', { ...JSON_TYPE, ...bearer(alice.key) }), 400, 'invalid_request', 'model');
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
    expectError(await call('POST', `${gw.url}/v1/moderations`, '{}', { ...JSON_TYPE, ...bearer(alice.key) }), 400, 'invalid_request', 'model');
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
