// One gateway for the pass-through suites: a raw backend behind every kind of
// route (JSON, audio with a body limit, GET only, a dead upstream, a silent
// one, one socket), with the content filter, rate limit and metrics on, and
// an access log kept in memory. `passthroughSuite` starts it for a describe.
import pino from 'pino';
import { startRawBackend, type RawBackend } from './raw-backend';
import { makeKey, startGateway, type TestGateway } from './gateway';
import { freePort } from './net';
import { until } from './wait';

export const JSON_TYPE = { 'content-type': 'application/json' };

/** Not what JSON.stringify would write: spacing, an escape, a number beyond a double's integers, a 1.0. */
export const EMBEDDINGS_BODY = '{ "model" : "emb-small", "input": ["caf\\u00e9", "naïve"], "dimensions": 1.0, "user": 12345678901234567890 }';

export const MULTIPART_TYPE = 'multipart/form-data; boundary=XyZ';
export const multipart = (text: string): string =>
  `--XyZ\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n${text}\r\n--XyZ--\r\n`;

export const alice = makeKey('alice');
export const bob = makeKey('bob', { models: ['emb-*'] });
export const carol = makeKey('carol', { limits: { requests: 2, windowSeconds: 60 } });

export interface PassthroughStack {
  backend: RawBackend;
  gw: TestGateway;
}

export interface PassthroughSuite {
  /** Every log line the gateway wrote, as JSON text. */
  lines: string[];
  /** The access-log line of a request, once its finish has run (it comes after the response closed). */
  accessLine(requestId: string): Promise<Record<string, any>>;
  /** The requests the backend saw since the current test began. */
  reached(): RawBackend['requests'];
}

async function startPassthroughStack(lines: string[]): Promise<PassthroughStack> {
  const backend = await startRawBackend({ slowMs: 40 });
  const deadPort = await freePort();
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  const gw = await startGateway({
    keys: [alice.entry, bob.entry, carol.entry],
    upstreams: {
      emb: { url: `${backend.url}/base/v1/`, headers: { Authorization: 'Bearer upstream-secret', 'x-upstream': 'yes' } },
      dead: { url: `http://127.0.0.1:${deadPort}/v1` },
      quiet: { url: `${backend.url}/v1`, timeoutMs: 300 },
      narrow: { url: `${backend.url}/v1`, maxSockets: 1 },
    },
    passthrough: [
      { path: '/v1/embeddings', upstream: 'emb' },
      { path: '/v2/embeddings', upstream: 'emb' },
      { path: '/v1/audio/*', upstream: 'emb', model: 'whisper-1', bodyLimit: '2kb' },
      { path: '/v1/voices', upstream: 'emb', methods: ['GET'] },
      { path: '/v1/rerank', upstream: 'dead' },
      { path: '/v1/quiet/*', upstream: 'quiet' },
      { path: '/v1/narrow/slow', upstream: 'narrow' },
    ],
    plugins: [
      { name: 'content-filter', terms: ['forbidden phrase'] },
      { name: 'rate-limit' },
      { name: 'metrics' },
    ],
  }, { logger, metrics: {} });
  return { backend, gw };
}

/** Starts the stack before the describe's tests (handing it to `started`) and closes it after them. */
export function passthroughSuite(started: (stack: PassthroughStack) => void): PassthroughSuite {
  const lines: string[] = [];
  let stack: PassthroughStack;
  beforeAll(async () => { stack = await startPassthroughStack(lines); started(stack); });
  afterAll(async () => { await stack.gw.close(); await stack.backend.close(); });

  let before = 0;
  beforeEach(() => { before = stack.backend.requests.length; });

  async function accessLine(requestId: string): Promise<Record<string, any>> {
    const find = () => lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.requestId === requestId);
    await until(() => find() !== undefined, `the access line of ${requestId}`, 3000);
    return find();
  }
  return { lines, accessLine, reached: () => stack.backend.requests.slice(before) };
}
