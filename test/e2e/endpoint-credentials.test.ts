// Credentials in an upstream's URL never leave the config: an endpoint
// configured as http://user:PASS@host/v1?key=QKEY is shown with its userinfo
// and query values replaced, in the metrics listener's labels (a listener
// that may need no token), the attempt spans exported over OTLP and every log
// line (the access line's upstreamEndpoint among them); requests still reach
// the backend. The gateway runs as its own process, as in production.
import { startBackend, type Backend } from '../support/backends';
import { makeKey } from '../support/gateway';
import { bearer, call, postSse } from '../support/http';
import { freePort } from '../support/net';
import type { GatewayProcess } from '../support/process';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver';
import { CLIENT, spawnWith } from '../support/traced-gateway';

const SECRETS = ['PASS', 'QKEY', 'DEADPASS', 'DEADKEY'];
const withCredentials = (base: string, user: string, pass: string, key: string): string => {
  const u = new URL(base);
  return `${u.protocol}//${user}:${pass}@${u.host}${u.pathname}?key=${key}&api-version=2024`;
};

describe('an upstream URL with credentials', () => {
  let backend: Backend;
  let receiver: OtlpReceiver;
  let gw: GatewayProcess;
  let metricsUrl: string;
  const alice = makeKey('alice');

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai', events: 2, gapMs: 0 });
    receiver = await startOtlpReceiver();
    const dead = `http://127.0.0.1:${await freePort()}/v1`;
    const metricsPort = await freePort();
    gw = await spawnWith({
      server: { metrics: { port: metricsPort } },
      keys: [alice.entry],
      upstreams: {
        // Round robin tries the dead endpoint first (ejected at its first failure), then the live one.
        fleet: {
          endpoints: [{ url: withCredentials(dead, 'ops', 'DEADPASS', 'DEADKEY') }, { url: withCredentials(backend.base, 'user', 'PASS', 'QKEY') }],
          picker: 'round_robin', format: 'openai', health: { consecutiveFailures: 1 },
        },
      },
      routes: [{ model: '*', upstream: 'fleet' }],
      plugins: [{ name: 'metrics' }],
      telemetry: { traces: { endpoint: receiver.url, scheduledDelayMs: 20 } },
    });
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  });
  afterAll(async () => {
    gw?.kill();
    await receiver?.close();
    await backend?.close();
  });

  it('reaches the backend, and no metric, span or log line holds the password or the query key', async () => {
    const requestId = 'credentials-1';
    const res = await postSse(`${gw.url}/v1/chat/completions`, { model: 'm-1', stream: true, messages: [{ role: 'user', content: 'hi' }] }, { ...bearer(alice.key), 'x-request-id': requestId });
    expect(res.status).toBe(200);
    expect(res.events.at(-1)!.data).toBe('[DONE]');

    const access = await gw.waitForLog('request');
    expect(access).toMatchObject({ requestId, status: 200, attempts: 2, upstreamEndpoint: `${backend.base.replace('http://', 'http://***@')}?key=***&api-version=***` });

    const attempts = (await receiver.waitFor((s) => s.kind === CLIENT && s.attributes['sluice.attempt'] === 2, 'the second attempt span')).traceId;
    const spans = await receiver.trace(attempts, 3);
    const endpoints = spans.filter((s) => s.kind === CLIENT).map((s) => s.attributes['sluice.endpoint']).sort();
    expect(endpoints).toEqual([expect.stringMatching(/^http:\/\/\*\*\*@127\.0\.0\.1:\d+\/v1\?key=\*\*\*&api-version=\*\*\*$/), expect.stringMatching(/^http:\/\/\*\*\*@/)]);
    const server = spans.find((s) => s.kind !== CLIENT)!;
    expect(server.attributes['sluice.endpoint']).toBe(access.upstreamEndpoint);

    const metrics = (await call('GET', metricsUrl, undefined)).text;
    expect(metrics).toMatch(/sluice_upstream_endpoint_up\{upstream="fleet",endpoint="http:\/\/\*\*\*@127\.0\.0\.1:\d+\/v1\?key=\*\*\*&api-version=\*\*\*"\} 1/);
    expect(metrics).toMatch(/sluice_upstream_ejections_total\{upstream="fleet",endpoint="http:\/\/\*\*\*@[^"]+",model="",reason="failures"\} 1/);

    const everything = [metrics, JSON.stringify(spans), JSON.stringify(receiver.spans), JSON.stringify(gw.logs), gw.stderr].join('\n');
    for (const secret of SECRETS) expect([secret, everything.includes(secret)]).toEqual([secret, false]);
  });
});
