// A trace collector that misbehaves never touches a request: one that answers
// only after 10 s, one that is down, one that refuses. Requests take as long
// as with a healthy collector, the gateway holds at most its queue of spans
// (maxQueueSize, plus the batches under way), and every span it made is
// accounted for: exported, or dropped and counted by reason. Wall-clock
// assertions, so a suite of their own; the gateway is its own process.
import { startBackend, type Backend } from '../support/backends';
import { makeKey } from '../support/gateway';
import { bearer, post } from '../support/http';
import { parseExposition, scrape, series } from '../support/metrics';
import { freePort } from '../support/net';
import { spawnGateway, type GatewayProcess } from '../support/process';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver';
import { until } from '../support/wait';
import { readFileSync } from 'node:fs';

const QUEUE = 64;
/** What the gateway may hold: its queue, and at most two batches (of at most a queue each) at the collector. */
const HELD_MAX = 3 * QUEUE;
/** A JSON request on a plain route makes two spans: the server span and its one attempt. */
const SPANS_PER_REQUEST = 2;

describe('a misbehaving trace collector', () => {
  let backend: Backend;
  let receiver: OtlpReceiver;
  let gw: GatewayProcess;
  let metricsUrl: string;
  let requests = 0;
  let baselineP50 = 0;
  const alice = makeKey('alice');

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai', events: 2, gapMs: 0 });
    receiver = await startOtlpReceiver();
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}`;
    gw = await spawnGateway(JSON.stringify({
      server: { metrics: { port: metricsPort } },
      keys: [alice.entry],
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'b' }],
      telemetry: { traces: { endpoint: receiver.url, maxQueueSize: QUEUE, scheduledDelayMs: 20, timeoutMs: 1_500 } },
    }));
  });
  afterAll(async () => {
    gw.kill();
    await receiver.close();
    await backend.close();
  });

  /** Sequential JSON requests; each one's latency in ms, sorted. */
  async function latencies(n: number): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const started = performance.now();
      const res = await post(`${gw.url}/v1/chat/completions`, { model: 'ok-1', messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
      out.push(performance.now() - started);
      expect(res.status).toBe(200);
      requests++;
    }
    return out.sort((a, b) => a - b);
  }
  const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

  async function counts(): Promise<{ exported: number; queueFull: number; failed: number }> {
    const samples = parseExposition((await scrape(metricsUrl)).text);
    const dropped = series(samples, 'sluice_trace_spans_dropped_total');
    return { exported: series(samples, 'sluice_trace_spans_exported_total')[''] ?? 0, queueFull: dropped['reason=queue_full'] ?? 0, failed: dropped['reason=export_failed'] ?? 0 };
  }
  const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${gw.pid}/status`, 'utf8'))![1]) / 1024;
  /**
   * What the gateway keeps beyond its young generation, in MB: the old
   * generation's heap, large objects and memory outside the heap, from its
   * own process metrics. RSS alone also counts the young generation's pages
   * as allocation first touches them (up to the 64 MB that
   * --max-semi-space-size=32 commits), which it does in a few hundred
   * requests whatever the collector does.
   */
  const keptMb = async (): Promise<number> => {
    const samples = parseExposition((await scrape(metricsUrl)).text);
    const used = series(samples, 'nodejs_heap_space_size_used_bytes');
    return (used['space=old'] + used['space=large_object'] + series(samples, 'nodejs_external_memory_bytes')['']) / 2 ** 20;
  };
  const youngMb = async (): Promise<number> => series(parseExposition((await scrape(metricsUrl)).text), 'nodejs_heap_space_size_total_bytes')['space=new'] / 2 ** 20;
  /** Spans made and not yet exported or counted as dropped. */
  const held = async () => {
    const c = await counts();
    return requests * SPANS_PER_REQUEST - c.exported - c.queueFull - c.failed;
  };

  it('a healthy collector: every span exported, none dropped', async () => {
    // Warm: the first few hundred requests grow the heap and the compiled code
    // by tens of MB whatever the collector does (Node 24 more than Node 20), so
    // the slow collector's RSS is measured after them.
    await latencies(400);
    baselineP50 = pct(await latencies(100), 50);
    await until(async () => (await counts()).exported === requests * SPANS_PER_REQUEST, 'every span exported');
    expect(await counts()).toMatchObject({ queueFull: 0, failed: 0 });
  });

  it('one that answers after 10 s: requests as fast, the queue bounded, the rest counted as dropped', async () => {
    receiver.setMode({ kind: 'slow', ms: 10_500 });
    const [rssBefore, keptBefore] = [rssMb(), await keptMb()];
    const slow = await latencies(400);
    expect(pct(slow, 50)).toBeLessThan(baselineP50 + 5);
    expect(pct(slow, 99)).toBeLessThan(250);
    // At any moment the gateway holds at most its queue and the batches under way.
    expect(await held()).toBeLessThanOrEqual(HELD_MAX);
    expect((await counts()).queueFull).toBeGreaterThan(0);
    expect((await keptMb()) - keptBefore).toBeLessThan(10);
    expect(rssMb() - rssBefore).toBeLessThan(30 + (await youngMb()));
    await until(async () => (await counts()).failed > 0, 'a batch given up after timeoutMs');
  });

  it('one that is down: requests as fast, the failure logged once, the spans counted', async () => {
    await receiver.down();
    const from = gw.logs.length;
    const down = await latencies(200);
    expect(pct(down, 50)).toBeLessThan(baselineP50 + 5);
    expect(pct(down, 99)).toBeLessThan(250);
    expect(await held()).toBeLessThanOrEqual(HELD_MAX);
    await gw.waitForLog('trace export failed', 0, 10_000);
    await receiver.up();
    receiver.setMode({ kind: 'ok' });
    await latencies(10);
    await gw.waitForLog('trace export recovered', from);
    expect(gw.logs.filter((l) => l.msg === 'trace export failed')).toHaveLength(1);
  });

  it('one that refuses (503): requests as fast, the batches counted as failed', async () => {
    receiver.setMode({ kind: 'refuse' });
    const before = (await counts()).failed;
    const refused = await latencies(100);
    expect(pct(refused, 99)).toBeLessThan(250);
    await until(async () => (await counts()).failed > before, 'a refused batch counted', 15_000);
  });

  it('back to healthy: every span the gateway made is exported or counted as dropped', async () => {
    receiver.setMode({ kind: 'ok' });
    await latencies(10);
    await until(async () => (await held()) === 0, 'every span accounted for', 15_000);
  });
});
