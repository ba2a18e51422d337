// The access log: one JSON line per API request with ids, names and numbers,
// never a prompt, a message, a key or a header value; level from LOG_LEVEL.
import pino from 'pino';
import { createLogger } from '../../src/plumbing/log';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, postSse } from '../support/http';
import { until } from '../support/wait';

describe('access log', () => {
  let backend: Backend;
  let gw: TestGateway;
  const lines: string[] = [];
  const alice = makeKey('alice', { org: 'acme' });
  const SECRET = 'my very secret prompt text';
  const requestLines = () => lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai', events: 3, gapMs: 5 });
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    gw = await startGateway({
      keys: [alice.entry],
      orgs: { acme: {} },
      upstreams: { b: { url: backend.base, format: 'openai', headers: { authorization: 'Bearer upstream-secret' } } },
      routes: [{ model: '*', upstream: 'b' }],
      plugins: [{ name: 'metrics' }],
    }, { logger });
  });
  afterAll(async () => { await gw.close(); await backend.close(); });

  async function linesFor(count: number): Promise<any[]> {
    await until(() => requestLines().length >= count, `${count} access lines`, 3000);
    return requestLines();
  }

  it('writes one line per request with ids, names, numbers and tokens', async () => {
    const json = await post(`${gw.url}/v1/chat/completions`, { model: 'ok-1', messages: [{ role: 'user', content: SECRET }] }, { ...bearer(alice.key), 'x-request-id': 'req-json-1' });
    expect(json.status).toBe(200);
    const sse = await postSse(`${gw.url}/v2/chat/completions`, { model: 'nousage-2', stream: true, messages: [{ role: 'user', content: SECRET }] }, bearer(alice.key));
    expect(sse.status).toBe(200);
    const denied = await post(`${gw.url}/v1/chat/completions`, { model: 'ok-1', messages: [{ role: 'user', content: SECRET }] }, bearer('sk-not-a-real-key-0123456789'));
    expect(denied.status).toBe(401);

    const [first, second, third] = await linesFor(3);
    expect(requestLines()).toHaveLength(3);
    expect(first).toMatchObject({
      level: 30, msg: 'request', requestId: 'req-json-1', keyId: 'alice', org: 'acme', endpoint: 'chat', version: 'v1',
      model: 'ok-1', upstream: 'b', upstreamEndpoint: backend.base, attempts: 1, stream: false, status: 200,
      tokens: { prompt: 11, completion: 3, total: 14, estimated: false },
    });
    expect(first.reason).toBeUndefined();
    expect(first.durationMs).toBeGreaterThan(0);
    expect(first.upstreamFirstByteMs).toBeGreaterThan(0);
    expect(first.upstreamFirstByteMs).toBeLessThanOrEqual(first.durationMs);

    expect(second).toMatchObject({ keyId: 'alice', version: 'v2', model: 'nousage-2', stream: true, status: 200, tokens: { estimated: true } });
    expect(second.requestId).toBe(sse.headers['x-request-id']);
    expect(second.firstEventMs).toBeGreaterThan(0);

    expect(third).toMatchObject({ status: 401, reason: 'unauthorized', endpoint: 'chat' });
    expect(third.keyId).toBeUndefined();
  });

  it('never logs a prompt, a reply, a key or a header value', () => {
    const all = lines.join('\n');
    expect(all).not.toContain(SECRET);
    expect(all).not.toContain(alice.key);
    expect(all).not.toContain('sk-not-a-real-key');
    expect(all).not.toContain('upstream-secret');
    expect(all).not.toContain('Bearer');
    expect(all).not.toMatch(/alpha|beta|gamma/); // the backend's reply words
  });

  it('takes its level from LOG_LEVEL', () => {
    const saved = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = 'warn';
    try {
      const logger = createLogger();
      expect(logger.level).toBe('warn');
      expect(logger.isLevelEnabled('info')).toBe(false);
    } finally {
      if (saved === undefined) delete process.env.LOG_LEVEL; else process.env.LOG_LEVEL = saved;
    }
  });
});
