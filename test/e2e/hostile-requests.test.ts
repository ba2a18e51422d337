// Hostile requests on a real socket: each ends in the gateway's error object,
// never a 500, a hang or a silent change on the way to the backend. Bodies
// nested 100,000 levels deep, numbers too large for a double, two
// Authorization headers, paths that only look like an endpoint.
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call, post, rawRequest } from '../support/http';
import { expectError } from '../support/errors';

const DEEP = 100_000;
const arrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const objects = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
const messages = '[{"role":"user","content":"hi"}]';

describe('hostile requests', () => {
  let backend: Backend;
  let gw: TestGateway;
  const key = makeKey('k');
  const chatUrl = () => `${gw.url}/v1/chat/completions`;
  const imageUrl = () => `${gw.url}/v2/images/generations`;

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai' });
    gw = await startGateway({
      server: { port: 0, bodyLimit: '4mb' },
      keys: [key.entry],
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'b' }, { model: 'free', upstream: 'b', dialect: 'openai' }],
    });
  });
  afterAll(async () => { await gw.close(); await backend.close(); });

  let before = 0;
  beforeEach(() => { before = backend.requests.length; });
  const reachedBackend = () => backend.requests.length - before;

  describe('nesting depth', () => {
    it.each([
      ['the body', () => `{"model":"ok-a","messages":${messages},"x":${arrays(DEEP)}}`],
      ['model_params', () => `{"model":"ok-a","messages":${messages},"model_params":{"x":${arrays(DEEP)}}}`],
      ['model_params, objects', () => `{"model":"ok-a","messages":${messages},"model_params":{"x":${objects(DEEP)}}}`],
      ['messages', () => `{"model":"ok-a","messages":${arrays(DEEP)}}`],
      ['a message content (openai dialect)', () => `{"model":"free","messages":[{"role":"user","content":${arrays(DEEP)}}]}`],
      ['a tool schema', () => `{"model":"free","messages":${messages},"tools":[{"type":"function","function":{"name":"f","parameters":${objects(DEEP)}}}]}`],
      ['the whole body, objects', () => objects(DEEP)],
    ])('100,000 levels in %s: 400 invalid_json saying how deep it may be', async (_where, body) => {
      const res = await post(chatUrl(), body(), bearer(key.key));
      expectError(res, 400, 'invalid_json', null);
      expect(res.body.error.message).toMatch(/more than 64 levels deep/);
      expect(reachedBackend()).toBe(0);
    });

    it('100,000 levels in an image request\'s model_params: the same 400', async () => {
      const res = await post(imageUrl(), `{"model":"ok-img","prompt":"p","model_params":{"x":${arrays(DEEP)}}}`, bearer(key.key));
      expectError(res, 400, 'invalid_json', null);
      expect(reachedBackend()).toBe(0);
    });

    it('takes a body exactly 64 levels deep and refuses 65, whatever is in its strings', async () => {
      // The body is level 1 and model_params level 2, so x holds 62 more.
      const body = (inner: number) => `{"model":"ok-a","messages":[{"role":"user","content":"[[[{{{ \\" [[["}],"model_params":{"x":${arrays(inner)}}}`;
      expect((await post(chatUrl(), body(62), bearer(key.key))).status).toBe(200);
      expect(backend.requests.at(-1)!.body.x).toBeDefined();
      expectError(await post(chatUrl(), body(63), bearer(key.key)), 400, 'invalid_json', null);
      expect(reachedBackend()).toBe(1);
    });
  });

  describe('numbers too large for a double', () => {
    it('1e400 in a typed field: 400 naming it, not "must be a number, got a number"', async () => {
      const res = await post(chatUrl(), `{"model":"ok-a","messages":${messages},"temperature":1e400}`, bearer(key.key));
      expectError(res, 400, 'invalid_request', 'temperature');
      expect(res.body.error.message).toMatch(/^temperature is a number too large to represent/);
    });

    it('1e400 in a model-specific key: 400 naming its path, where it used to reach the backend as null', async () => {
      const res = await post(chatUrl(), `{"model":"ok-a","messages":${messages},"model_params":{"foo":1e400}}`, bearer(key.key));
      expectError(res, 400, 'invalid_request', 'model_params.foo');
      expect(res.body.error.message).toMatch(/^model_params\.foo is a number too large to represent/);
      const nested = await post(chatUrl(), `{"model":"ok-a","messages":${messages},"model_params":{"guided":{"range":[0,-1e999]}}}`, bearer(key.key));
      expectError(nested, 400, 'invalid_request', 'model_params.guided.range[1]');
      const image = await post(imageUrl(), '{"model":"ok-img","prompt":"p","model_params":{"cfg_scale":2e308}}', bearer(key.key));
      expectError(image, 400, 'invalid_request', 'model_params.cfg_scale');
      expect(reachedBackend()).toBe(0);
    });

    it('a large but finite number passes untouched', async () => {
      expect((await post(chatUrl(), `{"model":"ok-a","messages":${messages},"model_params":{"foo":1.7e308}}`, bearer(key.key))).status).toBe(200);
      expect(backend.requests.at(-1)!.body.foo).toBe(1.7e308);
    });
  });

  describe('Authorization', () => {
    const head = (auth: Array<[string, string]>): Array<[string, string]> => [['content-type', 'application/json'], ...auth];
    const body = `{"model":"ok-a","messages":${messages}}`;

    it('two Authorization headers: 401 saying to send one, even when the first is a valid key', async () => {
      for (const auth of [
        [['Authorization', `Bearer ${key.key}`], ['Authorization', 'Bearer sk-someone-else']],
        [['authorization', `Bearer ${key.key}`], ['AUTHORIZATION', `Bearer ${key.key}`]],
        [['Authorization', ''], ['Authorization', `Bearer ${key.key}`]],
      ] as Array<Array<[string, string]>>) {
        const res = await rawRequest(gw.url, 'POST', '/v1/chat/completions', head(auth), body);
        expectError(res, 401, 'unauthorized', null);
        expect(res.body.error.message).toMatch(/Send exactly one/);
        expect(res.headers['www-authenticate']).toBe('Bearer');
      }
      const models = await rawRequest(gw.url, 'GET', '/v1/models', [['Authorization', `Bearer ${key.key}`], ['Authorization', `Bearer ${key.key}`]]);
      expectError(models, 401, 'unauthorized', null);
      expect(reachedBackend()).toBe(0);
    });

    it('one Authorization header among many others still passes', async () => {
      const res = await rawRequest(gw.url, 'POST', '/v1/chat/completions', head([['X-Authorization', 'no'], ['Authorization', `Bearer ${key.key}`], ['Proxy-Authorization', 'Basic eA==']]), body);
      expect(res.status).toBe(200);
    });
  });

  describe('routing', () => {
    const chat = { model: 'ok-a', messages: [{ role: 'user', content: 'hi' }] };

    it('paths match exactly: another case or a trailing slash is 404 not_found', async () => {
      for (const path of ['/V1/chat/completions', '/v1/Chat/Completions', '/v1/chat/completions/', '/v2/images/generations/']) {
        expectError(await post(`${gw.url}${path}`, chat, bearer(key.key)), 404, 'not_found', null);
      }
      for (const path of ['/v1/models/', '/V1/models', '/HEALTHZ', '/healthz/', '/readyz/']) {
        expectError(await call('GET', `${gw.url}${path}`, undefined, bearer(key.key)), 404, 'not_found', null);
      }
      expect(reachedBackend()).toBe(0);
    });

    it('a wrong method on /healthz or /readyz: 405 with Allow: GET, HEAD; HEAD is served', async () => {
      for (const path of ['/healthz', '/readyz']) {
        for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
          const res = await call(method, `${gw.url}${path}`, method === 'POST' ? '{}' : undefined, { 'content-type': 'application/json' });
          expectError(res, 405, 'method_not_allowed', null);
          expect(res.headers.allow).toBe('GET, HEAD');
        }
        expect((await call('HEAD', `${gw.url}${path}`, undefined)).status).toBe(200);
        expect((await call('GET', `${gw.url}${path}`, undefined)).status).toBe(200);
      }
    });
  });
});
