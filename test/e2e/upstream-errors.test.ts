// What the client sees when a backend fails before its answer starts: a dead
// backend, a reset, garbage, its own error statuses, and silence.
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post } from '../support/http';
import { expectError } from '../support/errors';

/** The test backend's refusals carry an OpenAI type and no code: the type is passed on, the code is the reason. */
const BACKEND_TYPE = { code: 'upstream_rejected', type: 'invalid_request_error' };

/** A loopback URL on which nothing listens. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

describe.each(['openai', 'native'] as const)('backend failures, %s format', (format) => {
  let backend: Backend;
  let gw: TestGateway;
  const alice = makeKey('alice');
  const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });
  const send = (version: string, body: unknown) => post(`${gw.url}/${version}/chat/completions`, body, bearer(alice.key));

  beforeAll(async () => {
    backend = await startBackend({ format, slowMs: 400 });
    gw = await startGateway({
      keys: [alice.entry],
      upstreams: {
        b: { url: backend.base, format },
        quick: { url: backend.base, format, timeoutMs: 100 },
        dead: { url: await closedPortUrl(), format },
      },
      routes: [
        { model: 'dead-*', upstream: 'dead' },
        { model: 'slow-*', upstream: 'quick' },
        { model: '*', upstream: 'b' },
      ],
    });
  });
  afterAll(async () => { await gw.close(); await backend.close(); });

  it('upstream_error 502 for a dead backend (closed port), on both endpoints, stream or not', async () => {
    expectError(await send('v1', chat('dead-a')), 502, 'upstream_error', null);
    expectError(await send('v2', chat('dead-a', { stream: true })), 502, 'upstream_error');
    expectError(await post(`${gw.url}/v2/images/generations`, { model: 'dead-a', prompt: 'p' }, bearer(alice.key)), 502, 'upstream_error');
  });

  it('upstream_error 502 when the backend resets the connection', async () => {
    expectError(await send('v1', chat('reset-a')), 502, 'upstream_error');
    expectError(await send('v2', chat('reset-a', { stream: true })), 502, 'upstream_error');
  });

  it('upstream_error 502 when the backend answers 200 with garbage', async () => {
    expectError(await send('v1', chat('garbage-a')), 502, 'upstream_error');
    expectError(await send('v1', chat('garbage-a', { stream: true })), 502, 'upstream_error');
    expectError(await post(`${gw.url}/v1/images/generations`, { model: 'garbage-a', prompt: 'p' }, bearer(alice.key)), 502, 'upstream_error');
  });

  // A backend's 5xx keeps its class, and a 503 or 504 its status (docs/fleets.md, the status table), as JSON and at a stream's start.
  it.each([[500, 502, 'upstream_error'], [502, 502, 'upstream_error'], [503, 503, 'upstream_unavailable'], [504, 504, 'upstream_timeout']] as const)(
    'a backend %i reaches the client as %i %s, stream or not',
    async (status, sent, reason) => {
      for (const [version, stream] of [['v1', false], ['v2', true]] as const) {
        const res = await send(version, chat(`status-${status}`, { stream }));
        expectError(res, sent, reason);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.text).not.toContain('backend says no');
        expect(res.body.error.message).toContain(`HTTP ${status}`);
      }
    },
  );

  it.each([401, 403])('upstream_error 502 when the backend refuses the gateway\'s credentials (%i)', async (status) => {
    expectError(await send('v2', chat(`status-${status}`)), 502, 'upstream_error');
    expectError(await send('v2', chat(`status-${status}`, { stream: true })), 502, 'upstream_error');
  });

  it.each([400, 404, 422, 429])('upstream_rejected keeps the backend\'s %i, its message and param', async (status) => {
    const res = await send('v1', chat(`status-${status}`));
    expectError(res, status, 'upstream_rejected', 'temperature', BACKEND_TYPE);
    expect(res.body.error.message).toBe(`backend says no (${status})`);
    const streamed = await send('v2', chat(`status-${status}`, { stream: true }));
    expectError(streamed, status, 'upstream_rejected', 'temperature', BACKEND_TYPE);
  });

  it('upstream_timeout 504 when the backend is silent longer than timeoutMs, without waiting for it', async () => {
    for (const body of [chat('slow-a'), chat('slow-a', { stream: true })]) {
      const started = Date.now();
      expectError(await send('v1', body), 504, 'upstream_timeout');
      expect(Date.now() - started).toBeLessThan(380);
    }
  });

  it('keeps serving after all of that', async () => {
    const res = await send('v1', chat('ok-a'));
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toBe('alpha beta gamma delta epsilon');
  });
});
