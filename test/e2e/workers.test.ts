// server.workers: 2, as the image runs it: one primary, two workers on one
// listening socket. What one process guarantees holds across the workers: a
// memory-store budget is exact, the metrics count each request once, SIGHUP
// reaches every worker (a broken file none), SIGTERM drains every worker, and
// a worker that dies is replaced while its clients see an error, not a hang.
// Which worker served a request: the pid on its access log line.
import { startBackend, streamsUnderWay, type Backend } from '../support/backends';
import { until } from '../support/wait';
import { makeKey } from '../support/gateway';
import { bearer, call, post, postSse, type JsonResponse, type SseResponse } from '../support/http';
import { parseExposition, promtoolCheck, scrape, series } from '../support/metrics';
import { freePort, spawnGateway, type GatewayProcess } from '../support/process';

const chat = (model: string, stream = false) => ({ model, stream, messages: [{ role: 'user', content: 'hello' }] });
const done = (s: SseResponse) => s.events.at(-1)?.data === '[DONE]';
// A connection of its own for each request: node:cluster hands connections, not requests, to the workers in turn.
const FRESH = true;

function configYaml(backend: Backend, keys: Array<Record<string, unknown>>, server: Record<string, unknown> = {}, plugins: unknown[] = [{ name: 'metrics' }]): string {
  return JSON.stringify({
    server: { host: '127.0.0.1', port: 0, workers: 2, drainSeconds: 5, metrics: { port: 0 }, ...server },
    keys,
    upstreams: { b: { url: backend.base, format: 'openai' } },
    routes: [{ model: '*', upstream: 'b' }],
    plugins,
  });
}

/** The pids on the access log lines of these request ids. */
function servedBy(gw: GatewayProcess, responses: JsonResponse[]): Set<number> {
  const ids = new Set(responses.map((r) => r.headers['x-request-id']));
  return new Set(gw.logs.filter((l) => l.msg === 'request' && ids.has(l.requestId as string)).map((l) => l.pid as number));
}

/** Waits until every one of these responses has its access log line. */
async function logged(gw: GatewayProcess, responses: JsonResponse[], from = 0): Promise<void> {
  await gw.waitForLogs('request', responses.length, from);
}

async function sendAll(n: number, send: () => Promise<JsonResponse>, concurrency = 8): Promise<JsonResponse[]> {
  const out: JsonResponse[] = [];
  for (let i = 0; i < n; i += concurrency) out.push(...await Promise.all(Array.from({ length: Math.min(concurrency, n - i) }, send)));
  return out;
}

describe('two workers', () => {
  let backend: Backend;
  beforeAll(async () => { backend = await startBackend({ format: 'openai', events: 20, gapMs: 100 }); });
  afterAll(async () => { await backend.close(); });

  it('admit exactly N requests for a memory-store budget of N, served by both workers', async () => {
    const key = makeKey('k', { limits: { requests: 10, windowSeconds: 60 } });
    const gw = await spawnGateway(configYaml(backend, [key.entry], {}, [{ name: 'rate-limit' }]));
    try {
      const mark = gw.logs.length;
      const answers = await sendAll(30, () => post(`${gw.url}/v1/chat/completions`, chat('ok-a'), bearer(key.key), FRESH), 6);
      expect(answers.filter((r) => r.status === 200)).toHaveLength(10);
      const refused = answers.filter((r) => r.status === 429);
      expect(refused).toHaveLength(20);
      expect(refused.every((r) => r.body.error.reason === 'rate_limited')).toBe(true);
      await logged(gw, answers, mark);
      expect(servedBy(gw, answers).size).toBe(2);
      expect(servedBy(gw, answers.filter((r) => r.status === 200)).size).toBe(2);
      expect(gw.garbled).toEqual([]);
    } finally {
      gw.kill();
    }
  });

  it('serve one metrics exposition that counts every request once, with no series twice', async () => {
    const key = makeKey('k');
    const metricsPort = await freePort();
    const gw = await spawnGateway(configYaml(backend, [key.entry], { metrics: { port: metricsPort } }));
    try {
      const mark = gw.logs.length;
      const ok = await sendAll(24, () => post(`${gw.url}/v1/chat/completions`, chat('ok-a'), bearer(key.key), FRESH));
      const refused = await sendAll(6, () => post(`${gw.url}/v1/chat/completions`, chat('ok-a'), bearer('sk-nope'), FRESH));
      expect(ok.every((r) => r.status === 200) && refused.every((r) => r.status === 401)).toBe(true);
      await logged(gw, [...ok, ...refused], mark);
      expect(servedBy(gw, ok).size).toBe(2);

      const { status, text } = await scrape(`http://127.0.0.1:${metricsPort}`);
      expect(status).toBe(200);
      const samples = parseExposition(text);
      const ids = samples.map((s) => `${s.name}{${Object.entries(s.labels).sort().map(([k, v]) => `${k}=${v}`).join(',')}}`);
      expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
      expect(series(samples, 'sluice_requests_total')).toEqual({
        'endpoint=chat,model=other,protocol=chat,reason=,status=200,version=v1': 24,
        'endpoint=chat,model=,protocol=chat,reason=unauthorized,status=401,version=v1': 6,
      });
      expect(Object.values(series(samples, 'sluice_request_duration_seconds_count')).reduce((a, b) => a + b, 0)).toBe(30);
      expect(series(samples, 'sluice_inflight_requests')).toEqual({ '': 0 });
      expect(series(samples, 'sluice_workers')).toEqual({ '': 2 });
      expect(Object.keys(series(samples, 'process_start_time_seconds'))).toHaveLength(1);
      expect(promtoolCheck(text)).toEqual({ status: 0, output: '' });
    } finally {
      gw.kill();
    }
  });

  it('reload every worker on SIGHUP, and none on a broken file, which is refused once', async () => {
    const oldKey = makeKey('old');
    const newKey = makeKey('new');
    const gw = await spawnGateway(configYaml(backend, [oldKey.entry]));
    const both = async (key: string, status: number) => {
      const mark = gw.logs.length;
      const answers = await sendAll(8, () => post(`${gw.url}/v1/chat/completions`, chat('ok-a'), bearer(key), FRESH));
      expect(answers.map((r) => r.status)).toEqual(Array(8).fill(status));
      await logged(gw, answers, mark);
      expect(servedBy(gw, answers).size).toBe(2);
    };
    try {
      await both(oldKey.key, 200);
      let mark = gw.logs.length;
      gw.writeConfig(configYaml(backend, [newKey.entry]));
      process.kill(gw.pid, 'SIGHUP');
      expect(await gw.waitForLog('config reloaded', mark)).toMatchObject({ workers: 2 });
      await both(newKey.key, 200);
      await both(oldKey.key, 401);

      mark = gw.logs.length;
      gw.writeConfig(configYaml(backend, [oldKey.entry]).replace('"workers":2', '"workers":2,"nope":1'));
      process.kill(gw.pid, 'SIGHUP');
      const failed = await gw.waitForLog('config reload failed', mark);
      expect(failed.problems).toEqual(['server.nope: unknown field']);
      await both(newKey.key, 200);
      await both(oldKey.key, 401);
      expect(gw.logs.slice(mark).filter((l) => l.msg === 'config reload failed')).toHaveLength(1);
    } finally {
      gw.kill();
    }
  });

  it('drain every worker on SIGTERM: streams on both finish, then the primary exits 0', async () => {
    const key = makeKey('k');
    const gw = await spawnGateway(configYaml(backend, [key.entry], { drainSeconds: 10 }));
    try {
      const since = backend.sentAt.length;
      const streams = Array.from({ length: 4 }, () => postSse(`${gw.url}/v1/chat/completions`, chat('ok-drain', true), bearer(key.key), undefined, FRESH));
      await until(() => streamsUnderWay(backend, since) === 4, 'the four streams under way');
      const mark = gw.logs.length;
      process.kill(gw.pid, 'SIGTERM');
      const draining = await gw.waitForLogs('draining', 2, mark);
      expect(new Set(draining.map((l) => l.pid)).size).toBe(2);
      expect(draining.reduce((n, l) => n + (l.inflight as number), 0)).toBe(4);
      const results = await Promise.all(streams);
      expect(results.every(done)).toBe(true);
      expect(await gw.exited).toBe(0);
      await expect(call('GET', `${gw.url}/healthz`, undefined)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      gw.kill();
    }
  });

  it('end the streams still open at the drain deadline on every worker with shutting_down', async () => {
    const key = makeKey('k');
    const gw = await spawnGateway(configYaml(backend, [key.entry], { drainSeconds: 1 }));
    try {
      const since = backend.sentAt.length;
      const streams = Array.from({ length: 4 }, () => postSse(`${gw.url}/v1/chat/completions`, chat('ok-long', true), bearer(key.key), undefined, FRESH));
      await until(() => streamsUnderWay(backend, since) === 4, 'the four streams under way');
      process.kill(gw.pid, 'SIGTERM');
      const results = await Promise.all(streams);
      for (const s of results) expect(JSON.parse(s.events.at(-1)!.data).error).toMatchObject({ reason: 'shutting_down', status: 503 });
      expect(await gw.exited).toBe(0);
    } finally {
      gw.kill();
    }
  });
});

describe('a worker that dies', () => {
  let backend: Backend;
  beforeAll(async () => { backend = await startBackend({ format: 'openai', events: 50, gapMs: 100 }); });
  afterAll(async () => { await backend.close(); });

  it('is replaced; its clients see the connection close at once, the other worker\'s streams finish, no total goes down', async () => {
    const key = makeKey('k');
    const metricsPort = await freePort();
    const gw = await spawnGateway(configYaml(backend, [key.entry], { metrics: { port: metricsPort } }));
    const total = async () => Object.values(series(parseExposition((await scrape(`http://127.0.0.1:${metricsPort}`)).text), 'sluice_requests_total')).reduce((a, b) => a + b, 0);
    try {
      const started = await gw.waitForLogs('worker started', 2);
      const victim = started[0].workerPid as number;
      await sendAll(8, () => post(`${gw.url}/v1/chat/completions`, chat('ok-a'), bearer(key.key), FRESH));
      await gw.waitForLogs('request', 8);
      const before = await total();
      expect(before).toBe(8);

      const ends: number[] = [];
      const since = backend.sentAt.length;
      const streams = Array.from({ length: 4 }, () => postSse(`${gw.url}/v1/chat/completions`, chat('ok-crash', true), bearer(key.key), undefined, FRESH)
        .catch((err: Error) => ({ status: 0, headers: {}, events: [], raw: err.message }))
        .then((s) => { ends.push(Date.now()); return s; }));
      await until(() => streamsUnderWay(backend, since) === 4, 'the four streams under way');
      const mark = gw.logs.length;
      const killedAt = Date.now();
      process.kill(victim, 'SIGKILL');

      const exited = await gw.waitForLog('worker exited; starting another', mark);
      expect(exited).toMatchObject({ workerPid: victim, signal: 'SIGKILL' });
      const replacement = await gw.waitForLog('worker started', mark);
      expect(replacement.workerPid).not.toBe(victim);

      const results = await Promise.all(streams);
      const cut = results.filter((s) => !done(s));
      const finished = results.filter(done);
      expect(cut.length).toBeGreaterThanOrEqual(1);
      expect(finished.length).toBeGreaterThanOrEqual(1);
      // A cut stream ended right after the kill (a full one takes 5 s): an error, not a hang.
      expect(Math.min(...ends) - killedAt).toBeLessThan(2_000);

      expect(await total()).toBeGreaterThanOrEqual(before + finished.length);
      const after = gw.logs.length;
      const answers = await sendAll(8, () => post(`${gw.url}/v1/chat/completions`, chat('ok-a'), bearer(key.key), FRESH));
      expect(answers.map((r) => r.status)).toEqual(Array(8).fill(200));
      await logged(gw, answers, after);
      expect(servedBy(gw, answers)).toContain(replacement.workerPid);
      const metrics = parseExposition((await scrape(`http://127.0.0.1:${metricsPort}`)).text);
      expect(series(metrics, 'sluice_worker_restarts_total')).toEqual({ '': 1 });
    } finally {
      gw.kill();
    }
  });
});

describe('workers at start', () => {
  it('refuse a public port in use with one line on stderr and exit 1', async () => {
    const { createServer } = await import('node:net');
    const blocker = createServer();
    const port = await new Promise<number>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as { port: number }).port)));
    try {
      await expect(spawnGateway(JSON.stringify({ server: { workers: 2, metrics: { port: 0 } }, upstreams: { b: { url: 'http://127.0.0.1:1/v1' } }, routes: [{ model: '*', upstream: 'b' }] }), port))
        .rejects.toThrow(new RegExp(`gateway exited with 1: sluice: cannot listen on 127\\.0\\.0\\.1:${port} for the public API \\(server\\.host, server\\.port\\): address already in use\\n$`));
    } finally {
      blocker.close();
    }
  });
});
