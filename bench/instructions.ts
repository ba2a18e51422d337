// `npm run bench:instructions`: instructions per request, counted by
// valgrind's callgrind, for this tree and for built trees beside it
// (BENCH_BASELINES=<label>=<dir>,…; BENCH_IR_OUTPUT=1 measures every tree
// with output rules on, and only that). CPU time on a shared virtual machine
// drifts with its neighbours; an instruction count does not, so a change of
// a few per cent between two trees shows here when CPU time cannot tell.
// Each gateway runs under callgrind with instrumentation off, is warmed with
// JSON requests and streams, then counts over a fixed number of each
// (callgrind_control turns instrumentation on, zeroes, dumps, and turns it
// off again). The count is the main thread's (callgrind keeps each thread
// apart): V8's background threads, which compile hot functions and help the
// collector, still did more than the main thread itself a request after a
// thousand requests under callgrind, and how much they do in a window is
// when V8 decides, not what the request costs. Slow: a minute or two a tree.
// The bare node:http pass-through proxy (bench/bare-proxy.ts) is counted on
// the same requests, and every row is also read as a multiple of it: the
// floor any Node gateway pays, which a shared machine's drift does not move.
// Needs valgrind (apt-get install valgrind).
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { concurrentStreams, latencies, streamOnce } from './client';
import { baselineTrees, benchConfig, BENCH_KEY } from './config';

const JSON_REQUESTS = Number(process.env.BENCH_IR_JSON ?? 1000);
const STREAMS = Number(process.env.BENCH_IR_STREAMS ?? 64);
/** JSON requests to warm each proxy with before counting (BENCH_IR_WARM). */
const WARM = Number(process.env.BENCH_IR_WARM ?? 3000);
/** The same hash seed in every proxy: where its strings fall in V8's hash tables is not left to chance. */
const V8_FLAGS = (process.env.BENCH_IR_V8 ?? '--hash-seed=1 --random-seed=1').split(' ').filter(Boolean);
/** Windows counted per row (BENCH_IR_REPEAT): the median is reported. */
const REPEAT = Math.max(1, Number(process.env.BENCH_IR_REPEAT ?? 3));
const headers = { 'content-type': 'application/json', authorization: `Bearer ${BENCH_KEY}` };
const chat = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'Say something about foxes.' }] });
const stream = JSON.stringify({ model: 'bench-e20-g0', stream: true, messages: [{ role: 'user', content: 'Stream please.' }] });
// Counted one stream at a time, its events 5 ms apart: each event reaches the proxy as a chunk of its own. Sent all at
// once, how many events shared a chunk depended on how far behind the proxy was under callgrind, and the count with it.
const paced = JSON.stringify({ model: 'bench-e20-g5', stream: true, messages: [{ role: 'user', content: 'Stream please.' }] });
async function streamsInTurn(url: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    if (!(await streamOnce(url, paced, headers)).ok) throw new Error(`${url}: a stream failed`);
  }
}
const children: ChildProcess[] = [];

function portOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(JSON.parse(d.toString().split('\n')[0]).port));
    child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
  });
}

async function ready(port: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return;
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the gateway under callgrind never got ready');
}

/** Total instructions (Ir) in a callgrind dump. */
function irOf(file: string): number {
  const line = readFileSync(file, 'utf8').split('\n').find((l) => l.startsWith('summary:') || l.startsWith('totals:'));
  return Number(line!.split(/\s+/)[1]);
}

// Where V8's collector enters on the main thread: a scavenge or a full collection, and the marking steps between them.
const COLLECTOR = /:v8::internal::(Heap::CollectGarbage\(|IncrementalMarking::AdvanceOnAllocation\(|IncrementalMarkingJob::Task::RunInternal\()/;

/**
 * The instructions the collector spent in a dump (inclusive, callgrind_annotate):
 * a window of a thousand requests holds one or two scavenges, a tenth of the
 * count each, so the count without them is the one that says what a change did.
 */
function collectorIrOf(file: string): number {
  const out = execFileSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', file], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  let sum = 0;
  for (const line of out.split('\n')) if (COLLECTOR.test(line)) sum += Number(line.trim().split(' ')[0].replace(/,/g, ''));
  return sum;
}

/** Instructions per request: all of the main thread's, and without the collector's. */
export interface Count { json: number; stream: number; jsonMutator: number; streamMutator: number }

async function dumped(dir: string, before: Set<string>): Promise<string> {
  for (let i = 0; i < 300; i++) {
    const fresh = readdirSync(dir).filter((f) => f.startsWith('cg.') && f.endsWith('-01') && !before.has(f));
    if (fresh.length > 0) { await new Promise((r) => setTimeout(r, 500)); return join(dir, fresh[0]); }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('no callgrind dump');
}

/** A process under callgrind, instrumentation off until counting. */
function underCallgrind(dir: string, args: string[], env: NodeJS.ProcessEnv, stdout: 'pipe' | 'ignore'): ChildProcess {
  const child = spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', `--callgrind-out-file=${join(dir, 'cg.%p.%n')}`, process.execPath, ...args], {
    env: { ...process.env, ...env }, stdio: ['ignore', stdout, 'ignore'],
  });
  children.push(child);
  return child;
}

/** Warms the proxy at `port` with JSON requests and streams, then counts each per request. */
async function counted(label: string, child: ChildProcess, port: number, dir: string): Promise<Count> {
  const url = `http://127.0.0.1:${port}/v1/chat/completions`;
  await latencies(url, chat, headers, WARM);
  await concurrentStreams(url, stream, headers, 128);
  const count = async (run: () => Promise<unknown>): Promise<{ all: number; mutator: number }> => {
    const before = new Set(readdirSync(dir));
    execFileSync('callgrind_control', ['-i', 'on', String(child.pid)], { stdio: 'ignore' });
    execFileSync('callgrind_control', ['-z', String(child.pid)], { stdio: 'ignore' });
    await run();
    execFileSync('callgrind_control', ['-d', String(child.pid)], { stdio: 'ignore' });
    execFileSync('callgrind_control', ['-i', 'off', String(child.pid)], { stdio: 'ignore' });
    const file = await dumped(dir, before);
    const all = irOf(file);
    return { all, mutator: all - collectorIrOf(file) };
  };
  // Each counted REPEAT times, the median kept (of all, and of the count without the collector, apart).
  const median = (xs: number[]): number => Math.round(xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]);
  const windows = async (run: () => Promise<unknown>, n: number): Promise<[number, number]> => {
    const counts: Array<{ all: number; mutator: number }> = [];
    for (let i = 0; i < REPEAT; i++) counts.push(await count(run));
    return [median(counts.map((c) => c.all / n)), median(counts.map((c) => c.mutator / n))];
  };
  const [json, jsonMutator] = await windows(() => latencies(url, chat, headers, JSON_REQUESTS), JSON_REQUESTS);
  const [streamed, streamMutator] = await windows(() => streamsInTurn(url, STREAMS), STREAMS);
  child.kill('SIGKILL');
  process.stderr.write(`${label}: ${json} / ${streamed} instructions per JSON / streamed request (${jsonMutator} / ${streamMutator} without the collector)\n`);
  return { json, stream: streamed, jsonMutator, streamMutator };
}

async function measure(label: string, serverJs: string, backendPort: number, options: Parameters<typeof benchConfig>[2]): Promise<Count> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-ir-'));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, benchConfig(backendPort, 1, options));
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child = underCallgrind(dir, [...V8_FLAGS, '--max-semi-space-size=32', serverJs], { GATEWAY_CONFIG: file, PORT: String(port), LOG_LEVEL: 'info' }, 'ignore');
  await ready(port);
  return counted(label, child, port, dir);
}

/** The bare pass-through proxy, on the same requests. */
async function measureBare(backendPort: number): Promise<Count> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-ir-'));
  const child = underCallgrind(dir, [...V8_FLAGS, join(__dirname, 'bare-proxy.js'), String(backendPort)], {}, 'pipe');
  return counted('bare proxy', child, await portOf(child), dir);
}

async function main(): Promise<void> {
  const backend = spawn(process.execPath, [join(__dirname, 'backend.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(backend);
  const backendPort = await portOf(backend);
  const here = join(__dirname, '..', 'src', 'server.js');
  const rows: Array<[string, Count]> = [];
  rows.push(['bare proxy', await measureBare(backendPort)]);
  // BENCH_IR_OUTPUT=1: every tree with the content filter's output rules on (a change to the rules measured against the trees before it).
  const options = process.env.BENCH_IR_OUTPUT === '1' ? { unpriced: true, output: true } : { unpriced: true };
  const config = options.output ? 'unpriced, output rules' : 'unpriced';
  for (const [label, serverJs] of baselineTrees()) rows.push([`${label}, ${config}`, await measure(label, serverJs, backendPort, options)]);
  rows.push([`this tree, ${config}`, await measure('this tree', here, backendPort, options)]);
  if (process.env.BENCH_IR_ONLY_TREES === '1' || options.output) return print(rows);
  rows.push(['this tree, priced', await measure('this tree, priced', here, backendPort, {})]);
  rows.push(['this tree, no plugins', await measure('this tree, no plugins', here, backendPort, { unpriced: true, noPlugins: true })]);
  rows.push(['this tree, a dollar budget', await measure('this tree, a dollar budget', here, backendPort, { dollars: true })]);
  rows.push(['this tree, output rules', await measure('this tree, output rules', here, backendPort, { output: true })]);
  rows.push(['this tree, traced, sampled out', await measure('this tree, traced, sampled out', here, backendPort, { traces: { endpoint: 'http://127.0.0.1:9/v1/traces', sampler: { ratio: 0 } } })]);
  print(rows);
}

function print(rows: Array<[string, Count]>): void {
  const width = Math.max(...rows.map(([l]) => l.length));
  const [, bare] = rows[0];
  const cell = (n: number, of: number): string => `${String(n).padStart(10)} ${`${(n / of).toFixed(2)} x`.padStart(7)}`;
  process.stdout.write(`instructions per request on the main thread (callgrind; the median of ${REPEAT} windows of ${JSON_REQUESTS} JSON requests and of ${STREAMS} streams of 20 events, one at a time), and as a multiple of the bare proxy's; then the same without V8's collector\n\n`);
  process.stdout.write(`${''.padEnd(width)}  ${'JSON'.padStart(18)}  ${'stream'.padStart(18)}  ${'JSON, no GC'.padStart(18)}  ${'stream, no GC'.padStart(18)}\n`);
  for (const [label, r] of rows) {
    process.stdout.write(`${label.padEnd(width)}  ${cell(r.json, bare.json)}  ${cell(r.stream, bare.stream)}  ${cell(r.jsonMutator, bare.jsonMutator)}  ${cell(r.streamMutator, bare.streamMutator)}\n`);
  }
}

main().then(() => { for (const c of children) c.kill('SIGKILL'); }, (err: Error) => {
  process.stderr.write(`bench:instructions: ${err.message}\n`);
  for (const c of children) c.kill('SIGKILL');
  process.exitCode = 1;
});
