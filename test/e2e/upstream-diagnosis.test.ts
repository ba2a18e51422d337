// A 502 or 504 explains itself in the log, never to the client: each failed
// attempt leaves an access-log line naming the cause (kind, phase, socket
// error or status) and a debug line with the elapsed time, while the client
// gets a generic message with no upstream name or address.
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import pino from 'pino';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post } from '../support/http';
import { expectError } from '../support/errors';
import { until } from '../support/wait';

async function listen(onSocket: (s: import('node:net').Socket) => void): Promise<{ url: string; close(): void }> {
  const server = createTcpServer(onSocket);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, close: () => server.close() };
}

describe('upstream failures in the log', () => {
  let gw: TestGateway;
  const lines: any[] = [];
  const alice = makeKey('alice');
  let closedUrl: string;
  const servers: Array<{ close(): void }> = [];

  beforeAll(async () => {
    const closed = await listen(() => undefined);
    closed.close();
    closedUrl = closed.url;
    const reset = await listen((s) => s.once('data', () => s.resetAndDestroy()));
    const silent = await listen(() => undefined);
    servers.push(reset, silent);
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    gw = await startGateway({
      keys: [alice.entry],
      upstreams: {
        'internal-refused': { url: closedUrl },
        'internal-reset': { url: reset.url },
        'internal-silent': { url: silent.url, timeoutMs: 200 },
        'internal-nxdomain': { url: 'http://sluice-no-such-host.invalid:8000/v1', timeoutMs: 5000 },
      },
      routes: ['refused', 'reset', 'silent', 'nxdomain'].map((m) => ({ model: m, upstream: `internal-${m}` })),
    }, { logger });
  });
  afterAll(async () => { await gw.close(); servers.forEach((s) => s.close()); });

  it.each([
    ['refused', 502, 'upstream_error', { kind: 'connect', phase: 'connect', code: 'ECONNREFUSED' }],
    ['reset', 502, 'upstream_error', { kind: 'connect', phase: 'head', code: 'ECONNRESET' }],
    ['silent', 504, 'upstream_timeout', { kind: 'timeout', phase: 'head' }],
    ['nxdomain', 502, 'upstream_error', { kind: 'connect', code: expect.stringMatching(/^(ENOTFOUND|EAI_AGAIN)$/) }],
  ])('%s: the client gets %i %s and no internal name; the log names the cause', async (model, status, reason, cause) => {
    const requestId = `diag-${model}`;
    const res = await post(`${gw.url}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'hi' }] }, { ...bearer(alice.key), 'x-request-id': requestId });
    expectError(res, status, reason, null);
    expect(res.text).not.toMatch(/internal-|127\.0\.0\.1|no-such-host/);
    await until(() => lines.some((l) => l.requestId === requestId && l.msg === 'request'), 'the access line', 2000);
    const access = lines.find((l) => l.requestId === requestId && l.msg === 'request');
    expect(access).toMatchObject({ status, reason, upstream: `internal-${model}`, upstreamError: cause });
    const debug = lines.find((l) => l.requestId === requestId && l.msg === 'upstream attempt failed');
    expect(debug).toMatchObject({ upstream: `internal-${model}`, ...cause, elapsedMs: expect.any(Number) });
  });
});
