// GET /v1/models and /v2/models, /healthz and /readyz.
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call } from '../support/http';
import { expectError } from '../support/errors';

describe('models listing and health', () => {
  let backend: Backend;
  let gw: TestGateway;
  const admin = makeKey('admin');
  const chatOnly = makeKey('chat-bot', { models: ['chat-*'] });
  const none = makeKey('nobody', { models: [] });

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai' });
    gw = await startGateway({
      keys: [admin.entry, chatOnly.entry, none.entry],
      upstreams: { b: { url: backend.base } },
      routes: [
        { model: 'chat-exact', upstream: 'b', endpoints: ['chat'] },
        { model: 'chat-*', upstream: 'b', endpoints: ['chat'], advertise: ['chat-small', 'chat-large'] },
        { model: 'img-*', upstream: 'b', endpoints: ['images'] },
        { model: 'img-1', upstream: 'b', endpoints: ['images'] },
        { model: 'next-gen', upstream: 'b', versions: ['v2'] },
      ],
    });
  });
  afterAll(async () => { await gw.close(); await backend.close(); });

  const list = async (version: string, key: string) => {
    const res = await call('GET', `${gw.url}/${version}/models`, undefined, bearer(key));
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('list');
    for (const m of res.body.data) expect(m).toMatchObject({ id: expect.any(String), object: 'model', endpoints: expect.any(Array) });
    return res.body.data as Array<{ id: string; endpoints: string[] }>;
  };

  it('lists the exact ids a key may use, never a glob, with their endpoints', async () => {
    const v1 = await list('v1', admin.key);
    expect(v1.map((m) => [m.id, m.endpoints])).toEqual([
      ['chat-exact', ['chat']], ['chat-small', ['chat']], ['chat-large', ['chat']], ['img-1', ['images']],
    ]);
    expect(v1.some((m) => /[*?]/.test(m.id))).toBe(false);
  });

  it('lists per version', async () => {
    const v2 = await list('v2', admin.key);
    expect(v2.map((m) => m.id)).toEqual(['chat-exact', 'chat-small', 'chat-large', 'img-1', 'next-gen']);
    expect(v2.find((m) => m.id === 'next-gen')!.endpoints).toEqual(['chat', 'images']);
  });

  it('leaves out what the key\'s allow-list excludes', async () => {
    expect((await list('v1', chatOnly.key)).map((m) => m.id)).toEqual(['chat-exact', 'chat-small', 'chat-large']);
    expect(await list('v2', none.key)).toEqual([]);
  });

  it('needs a key', async () => {
    const res = await call('GET', `${gw.url}/v1/models`, undefined);
    expectError(res, 401, 'unauthorized');
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it('answers /healthz without a key', async () => {
    const res = await call('GET', `${gw.url}/healthz`, undefined);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('answers /readyz 200 when ready and 503 while not', async () => {
    expect((await call('GET', `${gw.url}/readyz`, undefined)).status).toBe(200);
    gw.gateway.state.ready = false;
    try {
      expect((await call('GET', `${gw.url}/readyz`, undefined)).status).toBe(503);
      expect((await call('GET', `${gw.url}/healthz`, undefined)).status).toBe(200);
    } finally {
      gw.gateway.state.ready = true;
    }
    expect((await call('GET', `${gw.url}/readyz`, undefined)).status).toBe(200);
  });
});
