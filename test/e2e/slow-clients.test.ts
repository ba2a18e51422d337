// Slow and malformed clients are cut in seconds with the interface's error
// object: headers that never finish, a body trickling a byte at a time, a
// Content-Length the body never reaches, headers too large, bad HTTP.
import { connect } from 'node:net';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { expectError } from '../support/errors';
import type { JsonResponse } from '../support/http';

/** Writes `parts` to a raw socket `gapMs` apart and reads the whole answer. */
function trickle(url: string, parts: string[], gapMs: number): Promise<JsonResponse & { ms: number }> {
  const { hostname, port } = new URL(url);
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      const head = raw.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of head.slice(1)) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      let body: any;
      try { body = JSON.parse(raw.slice(split + 4)); } catch { body = undefined; }
      resolve({ status: Number(head[0]?.split(' ')[1] ?? 0), headers, body, text: raw.slice(split + 4), ms: Date.now() - started });
    });
    let i = 0;
    const next = (): void => {
      if (i < parts.length && !socket.destroyed) socket.write(parts[i++]);
      if (i < parts.length) timer = setTimeout(next, gapMs);
    };
    next();
  });
}

describe('slow and malformed clients', () => {
  let backend: Backend;
  let gw: TestGateway;
  const alice = makeKey('alice');
  const head = (length: number) => `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${alice.key}\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\nconnection: close\r\n\r\n`;
  const body = JSON.stringify({ model: 'ok-a', messages: [{ role: 'user', content: 'hi' }] });

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai', slowMs: 300 });
    gw = await startGateway({ server: { port: 0, headersTimeoutMs: 1000, requestTimeoutMs: 1500 }, keys: [alice.entry], upstreams: { b: { url: backend.base } }, routes: [{ model: '*', upstream: 'b' }] });
  });
  afterAll(async () => { await gw.close(); await backend.close(); });

  it('cuts a body trickling one byte at a time with 408 request_timeout', async () => {
    const res = await trickle(gw.url, [head(body.length), ...body.split('')], 200);
    expectError(res, 408, 'request_timeout', null);
    expect(res.ms).toBeLessThan(4000);
  });

  it('cuts a Content-Length the body never reaches with 408', async () => {
    const res = await trickle(gw.url, [head(body.length + 100), body], 0);
    expectError(res, 408, 'request_timeout', null);
    expect(res.ms).toBeLessThan(4000);
  });

  it('cuts headers that never finish with 408', async () => {
    const res = await trickle(gw.url, ['POST /v1/chat/completions HTTP/1.1\r\n', ...Array.from({ length: 40 }, (_, i) => `x-h${i}: 1\r\n`)], 100);
    expectError(res, 408, 'request_timeout', null);
    expect(res.ms).toBeLessThan(4000);
  });

  it('answers headers too large with 431 and bad HTTP with 400, as error objects', async () => {
    expectError(await trickle(gw.url, [`GET /healthz HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`], 0), 431, 'headers_too_large', null);
    expectError(await trickle(gw.url, ['GARBAGE / HTTP/9.9\r\n\r\n'], 0), 400, 'invalid_request', null);
  });

  it.each([
    ['in the same packet', 'ok-a', 1],
    ['while the backend is still answering', 'slow-a', 2],
  ])('serves a request that said Connection: close and ignores the bytes that follow it, %s', async (_when, model, writes) => {
    const before = backend.requests.length;
    const json = JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] });
    const extra = 'GET /healthz HTTP/1.1\r\nhost: x\r\n\r\nmore garbage';
    const parts = writes === 1 ? [head(json.length) + json + extra] : [head(json.length) + json, extra];
    const res = await trickle(gw.url, parts, 50);
    // One answer, the request's own: never a 400 for the trailing bytes after the request was forwarded.
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('chat.completion');
    expect(res.text.match(/HTTP\/1\.1 /g)).toBeNull();
    expect(backend.requests.length).toBe(before + 1);
  });

  it('still serves a prompt client', async () => {
    const res = await trickle(gw.url, [head(body.length) + body], 0);
    expect(res.status).toBe(200);
  });
});
