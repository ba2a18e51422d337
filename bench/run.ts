// `npm run bench`: the gateway (default chain on) against the backend directly
// and against a bare node:http pass-through proxy, in one run, interleaved;
// and the gateway at 1 and at 2 workers beside it for scaling and RSS.
// The load generator runs in a process of its own (bench/generator.ts: wrk
// when installed), so the CPU each party used during a throughput run is
// reported with it. For scaling, each worker gets a share of a core
// (BENCH_WORKER_SHARE, 0.75 by default) in a cgroup with a CPU quota, so that
// on a small machine the load generator and the backend keep the rest.
// The CPU measure also runs the gateway traced (telemetry.traces, exporting to
// a throwaway collector): sampled out (ratio 0), and every request sampled;
// without spend records (spend.record: false), for what they cost; and with a
// dollar budget beside the token budget, for what a dollar budget costs.
// Prints a table and writes bench/results/<date>.json. Quick mode for a smoke
// run: BENCH_QUICK=1. Compare ratios within one run; absolute numbers vary.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { concurrentStreams, latencies, MESSAGES_MARKS, percentile, RESPONSES_MARKS, streamOnce, type ConcurrencyResult } from './client';
import { cpuPerRequest, processTree, rssMb, treeCpuMicros } from './cpu';
import { baselineTrees, benchConfig, BENCH_KEY } from './config';
import { cpuQuota, type CpuQuota } from './cgroup';
import { generator, runLoad } from './generator';
import { startTraceSink } from './trace-sink';
import { outputRulesCost } from './output';
import { measureCpu } from './cpu-measure';
import { formatTable, round } from './table';
import { mcpCost } from './mcp';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: object) => Promise<{ requests: { average: number; total: number }; non2xx: number; errors: number }>;

const quick = process.env.BENCH_QUICK === '1';
const dist = join(__dirname);
const children: ChildProcess[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function startChild(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(dist, script), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    child.stdout!.once('data', (d: Buffer) => resolve({ child, port: JSON.parse(d.toString().split('\n')[0]).port }));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

/**
 * BENCH_BASELINE=<dir of another built checkout> adds that tree's gateway as a
 * "baseline" to the CPU measure, so a change is measured before and after in one run.
 */
const baselineDir = process.env.BENCH_BASELINE;
/** BENCH_BASELINES=<label>=<dir>,…: more built trees beside it, in the CPU measure only (a change measured against each tree it followed). */
const moreBaselines = baselineTrees();

type Proc = { child: ChildProcess; port: number };

/** Each worker's share of a core in the scaling runs. */
const workerShare = Number(process.env.BENCH_WORKER_SHARE ?? 0.75);
const quotas: CpuQuota[] = [];

async function startGateway(backendPort: number, { serverJs = join(dist, '..', 'src', 'server.js'), workers = 1, quota, traces, output, spend, dollars, unpriced, mcpUrl }: { serverJs?: string; workers?: number; quota?: CpuQuota; traces?: Record<string, unknown>; output?: boolean; spend?: boolean; dollars?: boolean; unpriced?: boolean; mcpUrl?: string } = {}): Promise<Proc> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-'));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, benchConfig(backendPort, workers, { traces, output, spend, dollars, unpriced, mcpUrl }));
  // The same Node flags as `npm start` and the image: the gateway is measured as it runs in production.
  const argv: [string, string[]] = [process.execPath, ['--max-semi-space-size=32', serverJs]];
  const [cmd, args] = quota ? quota.wrap(...argv) : argv;
  const child = spawn(cmd, args, {
    env: { ...process.env, GATEWAY_CONFIG: file, PORT: String(port), LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  for (let i = 0; i < 100; i++) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      if (res.ok) return { child, port };
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('gateway did not become ready');
}


async function main(): Promise<void> {
  const backend = await startChild('backend.js', []);
  const bare = await startChild('bare-proxy.js', [String(backend.port)]);
  const gateway = await startGateway(backend.port);
  const baseline = baselineDir ? await startGateway(backend.port, { serverJs: join(baselineDir, 'dist', 'src', 'server.js'), unpriced: true }) : undefined;
  // Output rules on, in the baseline and in this tree on its config: what a change to the rules costs.
  const baselineOutput = baselineDir ? await startGateway(backend.port, { serverJs: join(baselineDir, 'dist', 'src', 'server.js'), unpriced: true, output: true }) : undefined;
  const unpricedOutput = baselineDir ? await startGateway(backend.port, { unpriced: true, output: true }) : undefined;
  const trees: Array<[string, Proc]> = [];
  for (const [label, serverJs] of moreBaselines) trees.push([`baseline:${label}`, await startGateway(backend.port, { serverJs, unpriced: true })]);
  // This tree on the config the baselines run: what is compared with them.
  const unpriced = await startGateway(backend.port, { unpriced: true });
  // Traced: sampled out, and every request sampled (a queue that never fills, so every span is exported).
  const sink = await startTraceSink();
  const sampledOut = await startGateway(backend.port, { traces: { endpoint: sink.url, sampler: { ratio: 0 } } });
  const sampledAll = await startGateway(backend.port, { traces: { endpoint: sink.url, sampler: { ratio: 1 }, maxQueueSize: 1_000_000 } });
  const withOutput = await startGateway(backend.port, { output: true });
  const spendOff = await startGateway(backend.port, { spend: false });
  const dollarBudget = await startGateway(backend.port, { dollars: true });
  // The scaling pair: 1 and 2 workers, each worker with its share of a core.
  // Both held to their share, or neither (no cgroup here).
  const quota1 = cpuQuota('sluice-bench-1', workerShare);
  const quota2 = quota1 && cpuQuota('sluice-bench-2', 2 * workerShare);
  if (quota1) quotas.push(quota1);
  if (quota2) quotas.push(quota2);
  const both = quota1 !== undefined && quota2 !== undefined;
  const workers1 = await startGateway(backend.port, { quota: both ? quota1 : undefined });
  const workers2 = await startGateway(backend.port, { workers: 2, quota: both ? quota2 : undefined });
  const workers1Url = `http://127.0.0.1:${workers1.port}/v1/chat/completions`;
  const workers2Url = `http://127.0.0.1:${workers2.port}/v1/chat/completions`;
  const targets = {
    direct: `http://127.0.0.1:${backend.port}/v1/chat/completions`,
    bare: `http://127.0.0.1:${bare.port}/v1/chat/completions`,
    gateway: `http://127.0.0.1:${gateway.port}/v1/chat/completions`,
  };
  type Name = keyof typeof targets;
  const names = Object.keys(targets) as Name[];
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${BENCH_KEY}` };
  const chat = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'Say something about foxes.' }] });
  const streamBody = (events: number, gap: number) => JSON.stringify({ model: `bench-e${events}-g${gap}`, stream: true, messages: [{ role: 'user', content: 'Stream please.' }] });
  const idleRss = rssMb([gateway.child.pid!]);
  const workers2IdleRss = rssMb(processTree(workers2.child.pid!));

  // Warm up every path (JIT, connection pools); the workers' gateway over many connections, so both workers get theirs.
  for (const n of names) await latencies(targets[n], chat, headers, quick ? 200 : 1000);
  for (const url of [workers1Url, workers2Url]) await autocannon({ url, method: 'POST', headers, body: chat, connections: 32, amount: quick ? 2_000 : 8_000 });

  process.stderr.write('cpu per request...\n');
  const outputRows: Array<[string, Proc]> = baselineOutput && unpricedOutput ? [['baselineOutput', baselineOutput], ['unpricedOutput', unpricedOutput]] : [];
  const cpu = await measureCpu(quick, bare, gateway, [...(baseline ? [['baseline', baseline] as [string, Proc]] : []), ['tracedSampledOut', sampledOut], ['tracedAll', sampledAll], ['spendOff', spendOff], ['dollarBudget', dollarBudget], ['unpriced', unpriced], ...outputRows, ...trees], headers, chat, streamBody(20, 0), [backend.child.pid!]);
  for (const p of [sampledOut, sampledAll, spendOff, dollarBudget, unpriced, ...outputRows.map(([, t]) => t), ...trees.map(([, t]) => t)]) p.child.kill('SIGTERM');
  await sink.close();

  process.stderr.write('throughput...\n');
  const rps: Record<Name, number[]> = { direct: [], bare: [], gateway: [] };
  const baselineRps: number[] = [];
  const scaling: Record<'one' | 'two', LoadRun[]> = { one: [], two: [] };
  const duration = quick ? 2 : 5;
  const parties = (gw: Proc) => ({ gateway: processTree(gw.child.pid!), backend: [backend.child.pid!] });
  for (let round_ = 0; round_ < (quick ? 1 : 3); round_++) {
    for (const n of names) rps[n].push((await loadRun(targets[n], headers, chat, duration, {})).rps);
    if (baseline) baselineRps.push((await loadRun(`http://127.0.0.1:${baseline.port}/v1/chat/completions`, headers, chat, duration, {})).rps);
  }
  // The scaling pair on its own, after a pause: a process that has just been under load (the gateway
  // above) goes on collecting its garbage for a while, on the same two cores.
  process.stderr.write('workers...\n');
  for (let round_ = 0; round_ < (quick ? 1 : 3); round_++) {
    await new Promise((r) => setTimeout(r, 2_000));
    scaling.one.push(await loadRun(workers1Url, headers, chat, duration, parties(workers1)));
    await new Promise((r) => setTimeout(r, 2_000));
    scaling.two.push(await loadRun(workers2Url, headers, chat, duration, parties(workers2)));
  }
  const workers2LoadedRss = rssMb(processTree(workers2.child.pid!));

  process.stderr.write('latency...\n');
  const lat: Record<Name, number[]> = { direct: [], bare: [], gateway: [] };
  for (let i = 0; i < (quick ? 3 : 10); i++) for (const n of names) lat[n].push(...await latencies(targets[n], chat, headers, 300));

  process.stderr.write('streaming...\n');
  const ttfe: Record<Name, number[]> = { direct: [], bare: [], gateway: [] };
  const gaps: Record<Name, number[]> = { direct: [], bare: [], gateway: [] };
  // The agents' protocols through the gateway, translated for the same chat backend: their first text delta against the backend's first token.
  const protocols = {
    responses: { url: `http://127.0.0.1:${gateway.port}/v1/responses`, body: JSON.stringify({ model: 'bench-e20-g20', stream: true, input: 'Stream please.' }), marks: RESPONSES_MARKS },
    messages: { url: `http://127.0.0.1:${gateway.port}/v1/messages`, body: JSON.stringify({ model: 'bench-e20-g20', stream: true, max_tokens: 64, messages: [{ role: 'user', content: 'Stream please.' }] }), marks: MESSAGES_MARKS },
  };
  const protocolTtfe: Record<keyof typeof protocols, number[]> = { responses: [], messages: [] };
  const protocolGaps: Record<keyof typeof protocols, number[]> = { responses: [], messages: [] };
  for (let i = 0; i < (quick ? 3 : 15); i++) {
    for (const n of names) {
      const s = await streamOnce(targets[n], streamBody(20, 20), headers);
      if (!s.ok) throw new Error(`${n}: stream failed`);
      ttfe[n].push(s.firstEventMs);
      gaps[n].push(...s.gapsMs);
    }
    for (const [p, t] of Object.entries(protocols) as Array<[keyof typeof protocols, (typeof protocols)['responses']]>) {
      const s = await streamOnce(t.url, t.body, headers, undefined, t.marks);
      if (!s.ok) throw new Error(`${p}: stream failed`);
      protocolTtfe[p].push(s.firstEventMs);
      protocolGaps[p].push(...s.gapsMs);
    }
  }

  process.stderr.write('output rules...\n');
  const gw = (p: Proc) => ({ url: `http://127.0.0.1:${p.port}/v1/chat/completions`, pid: p.child.pid! });
  const outputRules = await outputRulesCost(gw(gateway), gw(withOutput), headers, streamBody(20, 20), streamBody(20, 0), quick);

  process.stderr.write('concurrency...\n');
  const conc: Record<string, Record<Name, ConcurrencyResult>> = {};
  let peakRss = idleRss;
  for (const n of [128, 512]) {
    conc[n] = {} as Record<Name, ConcurrencyResult>;
    for (const t of names) {
      const sampler = t === 'gateway' ? setInterval(() => { peakRss = Math.max(peakRss, rssMb([gateway.child.pid!])); }, 25) : undefined;
      conc[n][t] = await concurrentStreams(targets[t], streamBody(20, 20), headers, n);
      clearInterval(sampler);
    }
  }

  process.stderr.write('mcp...\n');
  const mcp = await mcpBench(backend.port, quick);

  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const added = (src: Record<Name, number[]>, p: number, vs: Name = 'direct') => round(percentile(src.gateway, p) - percentile(src[vs], p));
  const result = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model, memGiB: round(totalmem() / 2 ** 30, 1), node: process.version },
    quick,
    cpuMicrosPerRequest: cpu,
    throughput: { direct: round(mean(rps.direct), 0), bare: round(mean(rps.bare), 0), gateway: round(mean(rps.gateway), 0), gatewayOverBare: round(mean(rps.gateway) / mean(rps.bare), 2), ...(baseline ? { baseline: round(mean(baselineRps), 0), baselineOverBare: round(mean(baselineRps) / mean(rps.bare), 2) } : {}) },
    loadGenerator: generator,
    workers: { ...workersSummary(scaling), coresPerWorker: both ? workerShare : 'all (no cgroup: the load generator and backend share the cores)' },
    latencyMs: Object.fromEntries(names.map((n) => [n, { p50: round(percentile(lat[n], 50)), p99: round(percentile(lat[n], 99)) }])),
    addedLatencyMs: { p50: added(lat, 50), p99: added(lat, 99), bareP50: round(percentile(lat.bare, 50) - percentile(lat.direct, 50)), bareP99: round(percentile(lat.bare, 99) - percentile(lat.direct, 99)) },
    stream: {
      firstEventMs: Object.fromEntries(names.map((n) => [n, { p50: round(percentile(ttfe[n], 50)), p99: round(percentile(ttfe[n], 99)) }])),
      gapMs: Object.fromEntries(names.map((n) => [n, { p50: round(percentile(gaps[n], 50)), p99: round(percentile(gaps[n], 99)) }])),
      addedFirstEventMs: { p50: added(ttfe, 50), p99: added(ttfe, 99) },
      addedGapMs: { p50: added(gaps, 50), p99: added(gaps, 99) },
      // Each protocol's first text delta and gaps, against the backend's own chat stream (direct).
      protocols: Object.fromEntries((Object.keys(protocols) as Array<keyof typeof protocols>).map((p) => [p, {
        addedFirstDeltaMs: { p50: round(percentile(protocolTtfe[p], 50) - percentile(ttfe.direct, 50)), p99: round(percentile(protocolTtfe[p], 99) - percentile(ttfe.direct, 99)) },
        addedGapMs: { p50: round(percentile(protocolGaps[p], 50) - percentile(gaps.direct, 50)), p99: round(percentile(protocolGaps[p], 99) - percentile(gaps.direct, 99)) },
      }])),
    },
    outputRules,
    mcp,
    concurrency: conc,
    rssMb: { idle: round(idleRss, 1), peak512: round(peakRss, 1), workers2Idle: round(workers2IdleRss, 1), workers2Loaded: round(workers2LoadedRss, 1) },
  };

  const targetsMet = {
    'gateway CPU per JSON request <= 2 x bare proxy': cpu.json.gateway <= 2 * cpu.json.bare,
    'throughput >= 0.5 x bare proxy': result.throughput.gatewayOverBare >= 0.5,
    'throughput at 2 workers >= 1.6 x 1 worker': result.workers.twoOverOne >= 1.6,
    'added latency p50 <= 0.25 ms': result.addedLatencyMs.p50 <= 0.25,
    'added latency p99 <= 1 ms': result.addedLatencyMs.p99 <= 1,
    'added first event p99 <= 2 ms': result.stream.addedFirstEventMs.p99 <= 2,
    'added gap p99 <= 0.5 ms': result.stream.addedGapMs.p99 <= 0.5,
    'output rules on: gap p99 within 1 ms of off': Math.abs(outputRules.addedGapP99Ms) <= 1,
    '512 streams: no stall (gap > 250 ms), no failure': conc[512].gateway.failed === 0 && conc[512].gateway.stalled === 0,
    'RSS idle <= 100 MB, peak <= 250 MB': result.rssMb.idle <= 100 && result.rssMb.peak512 <= 250,
  };
  mkdirSync(join(dist, '..', '..', 'bench', 'results'), { recursive: true });
  const out = join(dist, '..', '..', 'bench', 'results', `${result.date.replace(/[:.]/g, '-')}.json`);
  writeFileSync(out, `${JSON.stringify({ ...result, targetsMet }, null, 2)}\n`);
  process.stdout.write(formatTable(result, targetsMet) + `\nwritten: ${out}\n`);
}

/** A tool call direct, through /mcp/<server> and through /mcp (bench/mcp.ts), on a gateway of its own. */
async function mcpBench(backendPort: number, quick: boolean) {
  const server = await startChild('mcp-server.js', []);
  const url = `http://127.0.0.1:${server.port}/mcp`;
  const gateway = await startGateway(backendPort, { mcpUrl: url });
  const base = `http://127.0.0.1:${gateway.port}`;
  const cost = await mcpCost({ direct: url, relay: `${base}/mcp/tools`, federated: `${base}/mcp`, key: BENCH_KEY, gatewayPid: gateway.child.pid!, serverPid: server.child.pid! }, quick);
  gateway.child.kill('SIGTERM');
  server.child.kill('SIGTERM');
  return cost;
}

interface LoadRun {
  rps: number;
  /** CPU cores each party kept busy during the run (CPU time / wall time). */
  cores: Record<string, number>;
}

/**
 * One fixed-length load run from the load generator's own process, at 32
 * connections, with the CPU cores each named party (and the generator) used.
 */
async function loadRun(url: string, headers: Record<string, string>, body: string, duration: number, watched: Record<string, number[]>): Promise<LoadRun> {
  const before = Object.fromEntries(Object.entries(watched).map(([k, pids]) => [k, treeCpuMicros(pids)]));
  const started = process.hrtime.bigint();
  const r = await runLoad(url, headers, body, duration, 32);
  const wallMicros = Number(process.hrtime.bigint() - started) / 1000;
  const cores: Record<string, number> = { load: round(r.cpuMicros / wallMicros, 2) };
  for (const [k, pids] of Object.entries(watched)) cores[k] = round((treeCpuMicros(pids) - before[k]) / wallMicros, 2);
  return { rps: r.rps, cores };
}

function workersSummary(runs: Record<'one' | 'two', LoadRun[]>) {
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const summary = (rs: LoadRun[]) => {
    const rps = mean(rs.map((r) => r.rps));
    const cores = Object.fromEntries(Object.keys(rs[0].cores).map((k) => [k, round(mean(rs.map((r) => r.cores[k])), 2)]));
    return { rps: round(rps, 0), cores, rpsPerCore: round(rps / cores.gateway, 0) };
  };
  const one = summary(runs.one);
  const two = summary(runs.two);
  return { one, two, twoOverOne: round(two.rps / one.rps, 2) };
}

/**
 * CPU microseconds per request in the proxy's own process (from /proc), over a
 * fixed number of requests: JSON at 32 connections, streams 64 at a time.
 */
const removeQuotas = (): void => { setTimeout(() => { for (const q of quotas) q.remove(); }, 500); };

main().then(() => {
  for (const c of children) c.kill('SIGTERM');
  removeQuotas();
}, (err: Error) => {
  process.stderr.write(`bench: ${err.message}\n`);
  for (const c of children) c.kill('SIGKILL');
  removeQuotas();
  process.exitCode = 1;
});
