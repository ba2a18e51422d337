// The content filter and the limits in the real chain: refusals never reach a backend.
import { ConfigError } from '../../src/config/load';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post } from '../support/http';
import { expectError } from '../support/errors';

describe('policy plugins through the gateway', () => {
  let backend: Backend;
  let filtered: TestGateway;
  let bare: TestGateway;
  let tight: TestGateway;
  const alice = makeKey('alice');

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai', events: 2, gapMs: 0 });
    const base = { keys: [alice.entry], upstreams: { b: { url: backend.base } }, routes: [{ model: '*', upstream: 'b' }] };
    filtered = await startGateway({ ...base, plugins: [{ name: 'content-filter', terms: ['forbidden phrase'], patterns: ['\\bcredit card number\\b'], contact: 'policy@example.com' }] });
    bare = await startGateway(base);
    tight = await startGateway({ ...base, plugins: [{ name: 'limits', promptMaxChars: 10, nMax: 2 }] });
  });
  afterAll(async () => { await Promise.all([filtered.close(), bare.close(), tight.close()]); await backend.close(); });

  let before = 0;
  beforeEach(() => { before = backend.requests.length; });
  const reachedBackend = () => backend.requests.length - before;

  it.each(['v1', 'v2'])('refuses a filtered image prompt with the exact content_filter body (%s)', async (version) => {
    const res = await post(`${filtered.url}/${version}/images/generations`, { model: 'ok-img', prompt: 'my Credit Card Number please' }, bearer(alice.key));
    expectError(res, 400, 'content_filter', 'prompt');
    expect(JSON.parse(res.text)).toEqual({ error: { message: expect.stringContaining('policy@example.com'), param: 'prompt', reason: 'content_filter', status: 400, code: 'content_filter', type: 'invalid_request_error' } });
    expect(reachedBackend()).toBe(0);
  });

  it('refuses a filtered term in any chat message, streamed or not', async () => {
    const messages = [{ role: 'system', content: 'the   FORBIDDEN phrase' }, { role: 'user', content: 'hello' }];
    expectError(await post(`${filtered.url}/v1/chat/completions`, { model: 'ok-a', messages }, bearer(alice.key)), 400, 'content_filter', 'prompt');
    const streamed = await post(`${filtered.url}/v2/chat/completions`, { model: 'ok-a', stream: true, messages: [...messages].reverse() }, bearer(alice.key));
    expectError(streamed, 400, 'content_filter', 'prompt');
    expect(reachedBackend()).toBe(0);
  });

  it('lets innocent text and near misses through', async () => {
    const res = await post(`${filtered.url}/v1/chat/completions`, { model: 'ok-a', messages: [{ role: 'user', content: 'forbidden phrases and credit card numbers' }] }, bearer(alice.key));
    expect(res.status).toBe(200);
    expect(reachedBackend()).toBe(1);
  });

  it('holds the interface\'s limits even when the config lists no plugin', async () => {
    expectError(await post(`${bare.url}/v1/images/generations`, { model: 'ok-img', prompt: 'x'.repeat(1001) }, bearer(alice.key)), 400, 'invalid_request', 'prompt');
    expectError(await post(`${bare.url}/v2/images/generations`, { model: 'ok-img', prompt: 'p', model_params: { n: 11 } }, bearer(alice.key)), 400, 'invalid_request', 'model_params.n');
    expectError(await post(`${bare.url}/v2/images/generations`, { model: 'ok-img', prompt: 'p', n: 0 }, bearer(alice.key)), 400, 'invalid_request', 'model_params.n');
    expectError(await post(`${bare.url}/v1/images/generations`, { model: 'ok-img', prompt: 'p', model_params: { n: 1.5 } }, bearer(alice.key)), 400, 'invalid_request', 'model_params.n');
    expectError(await post(`${bare.url}/v1/chat/completions`, { model: 'ok-a', n: 11, messages: [{ role: 'user', content: 'x' }] }, bearer(alice.key)), 400, 'invalid_request', 'model_params.n');
    expect(reachedBackend()).toBe(0);
    const ok = await post(`${bare.url}/v1/images/generations`, { model: 'ok-img', prompt: 'x'.repeat(1000), model_params: { n: 10 } }, bearer(alice.key));
    expect(ok.status).toBe(200);
    expect(ok.body.data).toHaveLength(10);
    expect((await post(`${bare.url}/v1/images/generations`, { model: 'ok-img', prompt: 'p', model_params: { n: null } }, bearer(alice.key))).body.data).toHaveLength(1);
  });

  it('applies tightened limits', async () => {
    expectError(await post(`${tight.url}/v1/images/generations`, { model: 'ok-img', prompt: 'eleven char' }, bearer(alice.key)), 400, 'invalid_request', 'prompt');
    expectError(await post(`${tight.url}/v1/images/generations`, { model: 'ok-img', prompt: 'p', model_params: { n: 3 } }, bearer(alice.key)), 400, 'invalid_request', 'model_params.n');
    expect((await post(`${tight.url}/v1/images/generations`, { model: 'ok-img', prompt: 'ten chars!', model_params: { n: 2 } }, bearer(alice.key))).status).toBe(200);
  });

  it('stops the start on invalid plugin settings, naming each problem\'s path', async () => {
    const config = { upstreams: { b: { url: backend.base } }, plugins: [{ name: 'content-filter', patterns: ['([a-z'] }, { name: 'limits', nMax: 11 }, { name: 'no-such-plugin' }] };
    const failure = await startGateway(config).then(() => undefined, (err: unknown) => err);
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as ConfigError).problems).toEqual([
      expect.stringMatching(/^plugins\[0\]\.patterns\[0\]: /),
      expect.stringMatching(/^plugins\[1\]\.nMax: /),
      expect.stringMatching(/^plugins\[2\]\.name: unknown plugin "no-such-plugin"/),
    ]);
  });
});
