// Which headers reach a backend, and the request id's round trip.
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call, post, postSse } from '../support/http';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('upstream headers and request ids', () => {
  let backend: Backend;
  let gw: TestGateway;
  const alice = makeKey('alice');
  const chat = { model: 'ok-a', messages: [{ role: 'user', content: 'hi' }] };
  // What a client might send that must never reach a backend.
  const clientHeaders = {
    ...bearer(alice.key),
    cookie: 'session=abc',
    'proxy-authorization': 'Basic cHJveHk6cHc=',
    connection: 'keep-alive, x-drop-me',
    'x-drop-me': '1',
    'keep-alive': 'timeout=5',
    te: 'trailers',
    upgrade: 'h2c',
    'x-forwarded-for': '10.0.0.1',
    'x-api-key': 'client-key',
    'user-agent': 'client/1.0',
    'openai-organization': 'org-client',
  };

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai', events: 2, gapMs: 0 });
    gw = await startGateway({
      keys: [alice.entry],
      upstreams: {
        withHeaders: { url: backend.base, format: 'openai', headers: { Authorization: 'Bearer upstream-secret', 'X-Tenant': 'acme' } },
        bare: { url: backend.base, format: 'native' },
      },
      routes: [{ model: 'bare-*', upstream: 'bare', upstreamModel: 'ok-bare' }, { model: '*', upstream: 'withHeaders' }],
    });
  });
  afterAll(async () => { await gw.close(); await backend.close(); });

  const allowed = ['host', 'content-type', 'content-length', 'accept', 'x-request-id', 'connection'];

  it('sends only the configured headers plus what the body needs', async () => {
    const res = await post(`${gw.url}/v1/chat/completions`, chat, clientHeaders);
    expect(res.status).toBe(200);
    const { headers } = backend.requests.at(-1)!;
    expect(Object.keys(headers).sort()).toEqual([...allowed, 'authorization', 'x-tenant'].sort());
    expect(headers).toMatchObject({ authorization: 'Bearer upstream-secret', 'x-tenant': 'acme', 'content-type': 'application/json', accept: 'application/json' });
    expect(headers.host).toBe(new URL(backend.url).host);
    expect(headers.connection).toBe('keep-alive');
    expect(Number(headers['content-length'])).toBe(Buffer.byteLength(JSON.stringify(backend.requests.at(-1)!.body)));
  });

  it('never sends the client\'s key, even when the upstream has no headers of its own', async () => {
    const res = await postSse(`${gw.url}/v2/chat/completions`, { ...chat, model: 'bare-a', stream: true }, clientHeaders);
    expect(res.status).toBe(200);
    const { headers } = backend.requests.at(-1)!;
    expect(Object.keys(headers).sort()).toEqual([...allowed].sort());
    expect(headers.accept).toBe('text/event-stream');
    expect(JSON.stringify(headers)).not.toContain(alice.key);
  });

  it('forwards the client\'s x-request-id and echoes it', async () => {
    for (const send of [() => post(`${gw.url}/v1/chat/completions`, chat, { ...bearer(alice.key), 'x-request-id': 'trace-abc.1:2' }),
      () => postSse(`${gw.url}/v1/chat/completions`, { ...chat, stream: true }, { ...bearer(alice.key), 'x-request-id': 'trace-abc.1:2' })]) {
      const res = await send();
      expect(res.status).toBe(200);
      expect(res.headers['x-request-id']).toBe('trace-abc.1:2');
      expect(backend.requests.at(-1)!.headers['x-request-id']).toBe('trace-abc.1:2');
    }
  });

  it('generates an id when the client sent none or an unusable one, and uses it both ways', async () => {
    const seen = new Set<string>();
    for (const given of [undefined, 'has spaces in it', 'x'.repeat(200), 'semi;colon']) {
      const res = await post(`${gw.url}/v2/images/generations`, { model: 'ok-img', prompt: 'p' }, { ...bearer(alice.key), ...(given ? { 'x-request-id': given } : {}) });
      expect(res.status).toBe(200);
      const id = res.headers['x-request-id'] as string;
      expect(id).toMatch(UUID);
      expect(backend.requests.at(-1)!.headers['x-request-id']).toBe(id);
      seen.add(id);
    }
    expect(seen.size).toBe(4);
  });

  it('puts an x-request-id on responses that reach no backend', async () => {
    expect((await call('GET', `${gw.url}/healthz`, undefined)).headers['x-request-id']).toMatch(UUID);
    expect((await call('GET', `${gw.url}/v1/models`, undefined, { ...bearer(alice.key), 'x-request-id': 'list-1' })).headers['x-request-id']).toBe('list-1');
  });
});
