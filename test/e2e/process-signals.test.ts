// The real gateway process, started as the image starts it: SIGHUP to the pid
// its "listening" line reports reloads the config without a restart, SIGTERM
// drains in-flight streams and exits 0.
import { startBackend, streamsUnderWay, type Backend } from '../support/backends';
import { until } from '../support/wait';
import { makeKey } from '../support/gateway';
import { bearer, call, post, postSse } from '../support/http';
import { freePort, spawnGateway, type GatewayProcess } from '../support/process';

const chat = (model: string, stream = false) => ({ model, stream, messages: [{ role: 'user', content: 'hello' }] });
const UNCOUNTED = 'metrics listener is on but no plugin in plugins counts requests: no request is counted';
const done = (events: Array<{ data: string }>) => events.at(-1)?.data === '[DONE]';

function configYaml(backend: Backend, keys: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}, metricsPort = 0): string {
  return JSON.stringify({
    server: { host: '127.0.0.1', port: 0, drainSeconds: 5, metrics: { port: metricsPort }, ...(extra.server as object) },
    keys,
    upstreams: { b: { url: backend.base, format: 'openai' } },
    routes: [{ model: '*', upstream: 'b' }],
    plugins: [{ name: 'limits' }],
  });
}

describe('SIGHUP reloads the config', () => {
  let backend: Backend;
  let gw: GatewayProcess;
  let metricsPort: number;
  const oldKey = makeKey('old');
  const newKey = makeKey('new');

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai', events: 15, gapMs: 100 });
    metricsPort = await freePort();
    gw = await spawnGateway(configYaml(backend, [oldKey.entry], {}, metricsPort));
  });
  afterAll(async () => { gw.kill(); await backend.close(); });

  it('reports its own pid on the "listening" line: the process to signal', () => {
    expect(gw.pid).toBe(gw.child.pid);
  });

  it('warns at start that the metrics listener is on without the metrics plugin', async () => {
    const warning = await gw.waitForLog(UNCOUNTED);
    expect(warning.level).toBe(40);
  });

  it('applies a new key set to new requests while a stream started before finishes', async () => {
    const since = backend.sentAt.length;
    const inFlight = postSse(`${gw.url}/v1/chat/completions`, chat('ok-long', true), bearer(oldKey.key));
    await until(() => streamsUnderWay(backend, since) === 1, 'the stream under way');
    const mark = gw.logs.length;
    gw.writeConfig(configYaml(backend, [newKey.entry], {}, metricsPort));
    process.kill(gw.pid, 'SIGHUP');
    await gw.waitForLog('config reloaded', mark);
    await gw.waitForLog(UNCOUNTED, mark); // and again on the reload

    expect((await post(`${gw.url}/v1/chat/completions`, chat('ok-a'), bearer(newKey.key))).status).toBe(200);
    const removed = await post(`${gw.url}/v1/chat/completions`, chat('ok-a'), bearer(oldKey.key));
    expect(removed.status).toBe(401);
    expect(removed.body.error.reason).toBe('unauthorized');

    const stream = await inFlight;
    expect(stream.status).toBe(200);
    expect(done(stream.events)).toBe(true);
  });

  it('rejects an invalid file whole, keeps serving, and counts both outcomes', async () => {
    const mark = gw.logs.length;
    gw.writeConfig('routes:\n  - { model: "x", upstream: nowhere }\nplugins:\n  - { name: limits, nMax: 50 }\n');
    process.kill(gw.pid, 'SIGHUP');
    const failed = await gw.waitForLog('config reload failed', mark);
    expect(failed.problems).toEqual([expect.stringContaining('routes[0].upstream: unknown upstream "nowhere"'), expect.stringContaining('plugins[0].nMax')]);
    expect((await post(`${gw.url}/v1/chat/completions`, chat('ok-a'), bearer(newKey.key))).status).toBe(200);

    const scrape = await call('GET', `http://127.0.0.1:${metricsPort}/metrics`, undefined);
    expect(scrape.text).toMatch(/^sluice_config_reloads_total\{result="success"\} 1$/m);
    expect(scrape.text).toMatch(/^sluice_config_reloads_total\{result="failure"\} 1$/m);
  });

  it('refuses a file with a field named toString or constructor with the normal problems, and keeps the config in force', async () => {
    const mark = gw.logs.length;
    gw.writeConfig(configYaml(backend, [{ ...oldKey.entry, limits: { toString: 1 }, constructor: 1 }]));
    process.kill(gw.pid, 'SIGHUP');
    const failed = await gw.waitForLog('config reload failed', mark);
    expect([...(failed.problems as string[])].sort()).toEqual(['keys[0].constructor: unknown field', 'keys[0].limits.toString: unknown field']);
    expect(JSON.stringify(gw.logs.slice(mark))).not.toContain('safeParse');
    expect((await post(`${gw.url}/v1/chat/completions`, chat('ok-a'), bearer(newKey.key))).status).toBe(200);
    expect((await post(`${gw.url}/v1/chat/completions`, chat('ok-a'), bearer(oldKey.key))).status).toBe(401);
  });
});

describe('SIGTERM drains', () => {
  let backend: Backend;
  beforeAll(async () => { backend = await startBackend({ format: 'openai', events: 20, gapMs: 100 }); });
  afterAll(async () => { await backend.close(); });

  it('lets a 2 s stream complete, refuses new connections, and exits 0 within the deadline', async () => {
    const key = makeKey('k');
    const gw = await spawnGateway(configYaml(backend, [key.entry], { server: { drainSeconds: 10 } }));
    try {
      const since = backend.sentAt.length;
      const inFlight = postSse(`${gw.url}/v1/chat/completions`, chat('ok-drain', true), bearer(key.key));
      await until(() => streamsUnderWay(backend, since) === 1, 'the stream under way');
      const signalled = Date.now();
      process.kill(gw.pid, 'SIGTERM');
      await gw.waitForLog('draining');
      await expect(call('GET', `${gw.url}/healthz`, undefined)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      const stream = await inFlight;
      expect(done(stream.events)).toBe(true);
      expect(stream.events.length).toBe(1 + 20 + 1); // 20 content events (first carries the role), last chunk, [DONE]
      expect(await gw.exited).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(10_000);
    } finally {
      gw.kill();
    }
  });

  it('ends a stream still open at the deadline with a shutting_down error event', async () => {
    const key = makeKey('k');
    const gw = await spawnGateway(configYaml(backend, [key.entry], { server: { drainSeconds: 1 } }));
    try {
      const since = backend.sentAt.length;
      const inFlight = postSse(`${gw.url}/v1/chat/completions`, chat('ok-too-long', true), bearer(key.key));
      await until(() => streamsUnderWay(backend, since) === 1, 'the stream under way');
      process.kill(gw.pid, 'SIGTERM');
      const stream = await inFlight;
      const last = JSON.parse(stream.events.at(-1)!.data);
      expect(last.error).toMatchObject({ reason: 'shutting_down', status: 503, param: null });
      expect(done(stream.events)).toBe(false);
      expect(await gw.exited).toBe(0);
    } finally {
      gw.kill();
    }
  });
});
