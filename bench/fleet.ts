// `npm run bench:fleet`: four paced backends behind one route, under load;
// one is killed a third of the way in and brought back at two thirds. Reports
// the failed requests (those that had not started streaming must be 0), p99
// latency in each phase against the calm phase, and the share of traffic each
// endpoint got (from the gateway's access log). The route continues a cut
// stream on a fifth backend (a fallback model that takes an assistant prefix),
// so the streams the kill cuts are finished there. Bounded in time and count.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { percentile, postOnce, streamOnce } from './client';
import { BENCH_KEY } from './config';
import { createHash } from 'node:crypto';
import { Agent } from 'node:http';

const quick = process.env.BENCH_QUICK === '1';
const DURATION_MS = quick ? 6_000 : 15_000;
const WORKERS = 32;
const children: ChildProcess[] = [];
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

const freePort = (): Promise<number> => new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => { const { port } = s.address() as { port: number }; s.close(() => resolve(port)); });
});

function startBackend(port: number): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(__dirname, 'backend.js'), String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    child.stdout!.once('data', () => resolve(child));
    child.once('error', reject);
  });
}

async function startGateway(ports: number[], sparePort: number, endpointOf: Map<string, number>): Promise<number> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-fleet-'));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, JSON.stringify({
    server: { host: '127.0.0.1', port, metrics: { port: 0 } },
    keys: [{ id: 'bench', sha256: createHash('sha256').update(BENCH_KEY).digest('hex') }],
    upstreams: {
      fleet: { endpoints: ports.map((p) => ({ url: `http://127.0.0.1:${p}/v1` })), retry: { attempts: 2 }, health: { consecutiveFailures: 2, baseEjectionMs: 1000 } },
      spare: { url: `http://127.0.0.1:${sparePort}/v1` },
    },
    routes: [
      { model: 'bench-fallback', upstream: 'spare', upstreamModel: 'bench-e5-g10', assistantPrefix: { params: { continue_final_message: true, add_generation_prompt: false } } },
      { model: 'bench*', upstream: 'fleet', fallbacks: ['bench-fallback'], continueOnFailure: true },
    ],
  }));
  const child = spawn(process.execPath, ['--max-semi-space-size=32', join(__dirname, '..', 'src', 'cli', 'main.js'), 'serve'], {
    env: { ...process.env, GATEWAY_CONFIG: file, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  let buffer = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    buffer += chunk;
    let i: number;
    while ((i = buffer.indexOf('\n')) !== -1) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      const endpoint = /"upstreamEndpoint":"([^"]+)"/.exec(line)?.[1];
      if (endpoint) endpointOf.set(endpoint, (endpointOf.get(endpoint) ?? 0) + 1);
    }
  });
  for (let i = 0; i < 100; i++) {
    try { if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return port; } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('gateway did not become ready');
}

type Phase = 'calm' | 'down' | 'back';
interface Result { phase: Phase; ok: boolean; started: boolean; ms: number }

async function main(): Promise<void> {
  const ports = await Promise.all([0, 1, 2, 3].map(() => freePort()));
  const backends = await Promise.all(ports.map((p) => startBackend(p)));
  const sparePort = await freePort();
  await startBackend(sparePort);
  const endpointOf = new Map<string, number>();
  const gwPort = await startGateway(ports, sparePort, endpointOf);
  const url = `http://127.0.0.1:${gwPort}/v1/chat/completions`;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${BENCH_KEY}` };
  const chat = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'hi' }] });
  const stream = JSON.stringify({ model: 'bench-e10-g10', stream: true, messages: [{ role: 'user', content: 'hi' }] });

  const start = Date.now();
  let phase: Phase = 'calm';
  const results: Result[] = [];
  const killAt = setTimeout(() => { phase = 'down'; backends[1].kill('SIGKILL'); }, DURATION_MS / 3);
  const reviveAt = setTimeout(() => { phase = 'back'; void startBackend(ports[1]); }, (2 * DURATION_MS) / 3);
  const worker = async (w: number): Promise<void> => {
    for (let n = 0; Date.now() - start < DURATION_MS && n < 100_000; n++) {
      const at = phase;
      const t0 = Date.now();
      if ((n + w) % 4 === 0) {
        const s = await streamOnce(url, stream, headers, agent);
        results.push({ phase: at, ok: s.ok, started: s.events > 0, ms: Date.now() - t0 });
      } else {
        const r = await postOnce(url, chat, headers, agent).catch(() => ({ status: 0, ms: Date.now() - t0 }));
        results.push({ phase: at, ok: r.status === 200, started: r.status !== 0, ms: r.ms });
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
  clearTimeout(killAt);
  clearTimeout(reviveAt);
  await new Promise((r) => setTimeout(r, 300)); // the last access-log lines

  const by = (p: Phase) => results.filter((r) => r.phase === p);
  const p99 = (p: Phase) => Math.round(percentile(by(p).map((r) => r.ms), 99) * 100) / 100;
  const failedBefore = results.filter((r) => !r.ok && !r.started).length;
  const failedAfter = results.filter((r) => !r.ok && r.started).length;
  const total = ports.reduce((sum, p) => sum + (endpointOf.get(`http://127.0.0.1:${p}/v1`) ?? 0), 0);
  const lines = [
    `Sluice fleet benchmark ${new Date().toISOString()}${quick ? ' (quick)' : ''}: 4 endpoints, ${WORKERS} concurrent clients, ${DURATION_MS / 1000} s; endpoint 2 killed at 1/3, back at 2/3`,
    '',
    '| measure | value |',
    '|---|---|',
    `| requests (JSON 3 : stream 1) | ${results.length} |`,
    `| failed before any byte reached the client | ${failedBefore} |`,
    `| failed after the answer started | ${failedAfter} |`,
    `| p99 latency, ms: calm / one down / back | ${p99('calm')} / ${p99('down')} / ${p99('back')} |`,
    `| added p99 while one is down, ms | ${Math.round((p99('down') - p99('calm')) * 100) / 100} |`,
    `| requests finished on the fallback (continued streams included) | ${endpointOf.get(`http://127.0.0.1:${sparePort}/v1`) ?? 0} |`,
    ...ports.map((p, i) => `| share of traffic, endpoint ${i + 1} | ${total === 0 ? 0 : Math.round(((endpointOf.get(`http://127.0.0.1:${p}/v1`) ?? 0) / total) * 1000) / 10} % |`),
  ];
  process.stdout.write(`${lines.join('\n')}\n\n${failedBefore === 0 ? 'met ' : 'MISS'}  no failed request that had not started streaming\n`);
}

main().then(() => { for (const c of children) c.kill('SIGTERM'); }, (err: Error) => {
  process.stderr.write(`bench:fleet: ${err.message}\n`);
  for (const c of children) c.kill('SIGKILL');
  process.exitCode = 1;
});
