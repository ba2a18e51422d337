// The metrics listener: its own port, GET /metrics only, an optional bearer
// token; the public port never serves metrics. Also how src/server.ts starts
// and stops it from the config (port 0 turns it off).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway as startServer } from '../../src/server';
import { makeKey, silentLogger, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call } from '../support/http';
import { scrape } from '../support/metrics';

const TOKEN = 'scrape-secret-token';

describe('metrics listener with a token', () => {
  let gw: TestGateway;
  const alice = makeKey('alice');

  beforeAll(async () => {
    gw = await startGateway({ keys: [alice.entry], plugins: [{ name: 'metrics' }] }, { metrics: { token: TOKEN } });
  });
  afterAll(() => gw.close());

  it('refuses a scrape without the token, or with a wrong one', async () => {
    const none = await scrape(gw.metrics!.url);
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    expect(none.text).not.toContain('sluice_');
    expect((await scrape(gw.metrics!.url, 'wrong-token')).status).toBe(401);
    expect((await call('GET', `${gw.metrics!.url}/metrics`, undefined, { authorization: TOKEN })).status).toBe(401);
  });

  it('serves the Prometheus text format with the token', async () => {
    const res = await scrape(gw.metrics!.url, TOKEN);
    expect(res.status).toBe(200);
    expect((await call('GET', `${gw.metrics!.url}/metrics`, undefined, { authorization: `bearer ${TOKEN}` })).status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toContain('# TYPE sluice_requests_total counter');
    expect(res.text).toContain('# TYPE sluice_request_duration_seconds histogram');
  });

  it('serves nothing but GET /metrics', async () => {
    expect((await call('GET', `${gw.metrics!.url}/`, undefined, bearer(TOKEN))).status).toBe(404);
    expect((await call('GET', `${gw.metrics!.url}/metricsx`, undefined, bearer(TOKEN))).status).toBe(404);
    const post = await call('POST', `${gw.metrics!.url}/metrics`, '', bearer(TOKEN));
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('is not served on the public port, with or without a key', async () => {
    for (const headers of [{}, bearer(alice.key), bearer(TOKEN)]) {
      const res = await call('GET', `${gw.url}/metrics`, undefined, headers);
      expect(res.status).toBe(404);
      expect(res.body.error.reason).toBe('not_found');
      expect(res.text).not.toContain('sluice_');
    }
  });
});

describe('metrics listener without a token', () => {
  let gw: TestGateway;
  beforeAll(async () => { gw = await startGateway({ plugins: [{ name: 'metrics' }] }, { metrics: {} }); });
  afterAll(() => gw.close());

  it('serves any scrape', async () => {
    const res = await scrape(gw.metrics!.url);
    expect(res.status).toBe(200);
    expect(res.text).toContain('sluice_inflight_requests 0');
  });
});

describe('src/server.ts starts the metrics listener from the config', () => {
  let dir: string;
  const savedPort = process.env.PORT;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-metrics-'));
    delete process.env.PORT;
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    if (savedPort !== undefined) process.env.PORT = savedPort;
  });

  const writeConfig = (metrics: string): string => {
    const file = join(dir, `gateway-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(file, `server: { host: 127.0.0.1, port: 0, drainSeconds: 0, metrics: ${metrics} }\nplugins:\n  - { name: metrics }\n`);
    return file;
  };

  async function freePort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }

  it('listens on server.metrics.port with its token, and stops with the gateway', async () => {
    const port = await freePort();
    const running = await startServer(writeConfig(`{ host: 127.0.0.1, port: ${port}, token: ${TOKEN} }`), silentLogger());
    try {
      expect(running.metrics?.url).toBe(`http://127.0.0.1:${port}`);
      expect((await scrape(running.metrics!.url)).status).toBe(401);
      expect((await scrape(running.metrics!.url, TOKEN)).status).toBe(200);
    } finally {
      await running.stop();
    }
    // A kept-alive client socket may learn of the close only when reused: "socket hang up".
    await expect(scrape(`http://127.0.0.1:${port}`, TOKEN)).rejects.toThrow(/ECONNREFUSED|socket hang up|ECONNRESET/);
  });

  it('does not listen when server.metrics.port is 0', async () => {
    const running = await startServer(writeConfig('{ port: 0 }'), silentLogger());
    try {
      expect(running.metrics).toBeUndefined();
    } finally {
      await running.stop();
    }
  });
});
