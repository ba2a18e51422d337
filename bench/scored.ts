// `npm run bench:scored`: round_robin, least_inflight and scored, one after
// the other in one run, each in front of its own fleet of four simulated model
// servers (test/support/engine-sim.ts: 4 running slots each, a KV capacity, a
// prefix cache that makes a cached prompt's first event sooner, vLLM-style
// /metrics). The workload is the same for each (a seeded generator):
// multi-turn conversations sharing a few long system prompts, from more
// concurrent clients than the fleet has slots, so queues form. Reports time to
// first event p50/p99, throughput and the fleet's prefix-cache hit ratio.
// Bounded in time: three phases of PHASE_MS.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEngineSim, type EngineSim } from '../test/support/engine-sim';
import { percentile } from './client';
import { BENCH_KEY } from './config';

const quick = process.env.BENCH_QUICK === '1';
const PHASE_MS = quick ? 8_000 : 25_000;
const WARMUP_MS = quick ? 2_000 : 5_000;
const CLIENTS = 40;
const SYSTEM_PROMPTS = 16;
const SYSTEM_CHARS = 6_000;
const USER_CHARS = 400;
const ENDPOINTS = 4;
const SIM = { slots: 4, kvCapacityTokens: 9_000, cacheBlocks: 1_200, blockChars: 64, firstEventMs: 5, prefillMsPerKToken: 40, outputTokens: 24, tokensPerEvent: 6, decodeMsPerToken: 4 };
const PICKERS = ['round_robin', 'least_inflight', 'scored'] as const;

const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
const now = (): number => Number(process.hrtime.bigint()) / 1e6;

/** mulberry32: the same workload for every picker. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = 'the of and to in is that for it as with was on be by at this from or an are not have which but all were when we there can more if will one about up out them so some what would into has other than then its only two also time like these over new most may first very after any where'.split(' ');
const text = (random: () => number, chars: number): string => {
  let s = '';
  while (s.length < chars) s += `${WORDS[Math.floor(random() * WORDS.length)]} `;
  return s;
};

const freePort = (): Promise<number> => new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => { const { port } = s.address() as { port: number }; s.close(() => resolve(port)); });
});

interface Turn { ok: boolean; ttfeMs: number; answer: string }

/** One streamed chat turn: time to the first event that carries content, and the answer's text. */
function turn(url: string, body: string): Promise<Turn> {
  return new Promise((resolve) => {
    const start = now();
    let ttfe = -1;
    let answer = '';
    let done = false;
    let buffer = '';
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_KEY}`, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let i: number;
        while ((i = buffer.indexOf('\n\n')) !== -1) {
          const event = buffer.slice(6, i);
          buffer = buffer.slice(i + 2);
          if (event === '[DONE]') { done = true; continue; }
          const content = JSON.parse(event).choices?.[0]?.delta?.content;
          if (typeof content === 'string') { if (ttfe < 0) ttfe = now() - start; answer += content; }
        }
      });
      res.on('end', () => resolve({ ok: res.statusCode === 200 && done, ttfeMs: ttfe, answer }));
      res.on('error', () => resolve({ ok: false, ttfeMs: ttfe, answer }));
    });
    req.setTimeout(60_000, () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ ok: false, ttfeMs: ttfe, answer }));
    req.end(body);
  });
}

async function startGateway(fleets: EngineSim[][], metricsPort: number): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-scored-')), 'gateway.yaml');
  const upstreams = Object.fromEntries(PICKERS.map((picker, i) => [picker, {
    endpoints: fleets[i].map((s) => ({ url: s.base })), picker, maxSockets: 1024, timeoutMs: 60_000,
    ...(picker === 'scored' ? { engineMetrics: { path: '/metrics', flavour: 'vllm', intervalMs: 50 } } : {}),
  }]));
  writeFileSync(file, JSON.stringify({
    server: { host: '127.0.0.1', port, metrics: { port: metricsPort } },
    keys: [{ id: 'bench', sha256: createHash('sha256').update(BENCH_KEY).digest('hex') }],
    upstreams,
    routes: PICKERS.map((p) => ({ model: p, upstream: p })),
  }));
  const child = spawn(process.execPath, ['--max-semi-space-size=32', join(__dirname, '..', 'src', 'cli', 'main.js'), 'serve'], {
    env: { ...process.env, GATEWAY_CONFIG: file, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; i < 100; i++) {
    try { if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return { child, url: `http://127.0.0.1:${port}/v1/chat/completions` }; } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error('gateway did not become ready');
}

interface PhaseResult { picker: string; ttfe: number[]; completed: number; failed: number; windowS: number; hit: number; perEndpoint: number[] }

async function phase(picker: string, url: string, fleet: EngineSim[]): Promise<PhaseResult> {
  const random = rng(42);
  const systems = Array.from({ length: SYSTEM_PROMPTS }, (_, i) => `You are assistant number ${i}. ${text(random, SYSTEM_CHARS)}`);
  const start = now();
  const ttfe: number[] = [];
  let completed = 0;
  let failed = 0;
  let base: { prompt: number; cached: number } | undefined;
  const warm = setTimeout(() => { base = { prompt: fleet.reduce((n, s) => n + s.stats.promptTokens, 0), cached: fleet.reduce((n, s) => n + s.stats.cachedTokens, 0) }; }, WARMUP_MS);
  const before = fleet.map((s) => s.stats.requests);
  const client = async (c: number): Promise<void> => {
    const mine = rng(1000 + c);
    for (let conv = 0; conv < 10_000 && now() - start < PHASE_MS; conv++) {
      const messages: Array<{ role: string; content: string }> = [{ role: 'system', content: systems[Math.floor(mine() * SYSTEM_PROMPTS)] }];
      const turns = 3 + Math.floor(mine() * 6);
      for (let t = 0; t < turns && now() - start < PHASE_MS; t++) {
        messages.push({ role: 'user', content: text(mine, USER_CHARS) });
        const sent = now();
        const r = await turn(url, JSON.stringify({ model: picker, stream: true, messages }));
        const counted = sent - start >= WARMUP_MS && now() - start <= PHASE_MS;
        if (!r.ok) { if (counted) failed++; break; }
        if (counted) { completed++; ttfe.push(r.ttfeMs); }
        messages.push({ role: 'assistant', content: r.answer });
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
  clearTimeout(warm);
  const prompt = fleet.reduce((n, s) => n + s.stats.promptTokens, 0) - (base?.prompt ?? 0);
  const cached = fleet.reduce((n, s) => n + s.stats.cachedTokens, 0) - (base?.cached ?? 0);
  return { picker, ttfe, completed, failed, windowS: (PHASE_MS - WARMUP_MS) / 1000, hit: prompt === 0 ? 0 : cached / prompt, perEndpoint: fleet.map((s, i) => s.stats.requests - before[i]) };
}

async function gatewayPrefixRatio(metricsPort: number): Promise<string> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name}\\{upstream="scored"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  const decisions = [...text.matchAll(/^sluice_picker_decisions_total\{upstream="scored",reason="(\w+)"\} (\S+)$/gm)].map((m) => `${m[1]} ${m[2]}`).join(', ');
  return `gateway prefix index: ${(100 * value('sluice_prefix_blocks_matched_total') / value('sluice_prefix_blocks_total')).toFixed(1)} % of blocks matched, ${value('sluice_prefix_index_entries')} entries (~${Math.round(value('sluice_prefix_index_bytes') / 1024)} KiB); decisions: ${decisions}`;
}

async function main(): Promise<void> {
  const fleets = await Promise.all(PICKERS.map(() => Promise.all(Array.from({ length: ENDPOINTS }, () => startEngineSim(SIM)))));
  const metricsPort = await freePort();
  const gw = await startGateway(fleets, metricsPort);
  try {
    const results: PhaseResult[] = [];
    for (const [i, picker] of PICKERS.entries()) results.push(await phase(picker, gw.url, fleets[i]));
    const ms = (v: number) => Math.round(v);
    const lines = [
      `Sluice scored-picker benchmark ${new Date().toISOString()}${quick ? ' (quick)' : ''}: ${ENDPOINTS} simulated engines x ${SIM.slots} slots, ${CLIENTS} concurrent conversations (${SYSTEM_PROMPTS} shared ${SYSTEM_CHARS}-char system prompts, 3-8 turns), ${PHASE_MS / 1000} s per picker, first ${WARMUP_MS / 1000} s not counted`,
      '',
      '| picker | TTFE p50 ms | TTFE p99 ms | completions/s | failed | prefix-cache hit ratio | requests per endpoint |',
      '|---|---|---|---|---|---|---|',
      ...results.map((r) => `| ${r.picker} | ${ms(percentile(r.ttfe, 50))} | ${ms(percentile(r.ttfe, 99))} | ${(r.completed / r.windowS).toFixed(1)} | ${r.failed} | ${(100 * r.hit).toFixed(1)} % | ${r.perEndpoint.join(' / ')} |`),
      '',
      await gatewayPrefixRatio(metricsPort),
    ];
    const [, li, sc] = results;
    const checks = [
      [percentile(sc.ttfe, 99) < percentile(li.ttfe, 99), 'scored beats least_inflight on TTFE p99'],
      [sc.hit > li.hit, 'scored beats least_inflight on prefix-cache hit ratio'],
      [sc.completed >= li.completed * 0.98, 'scored is not worse on throughput (within 2 %)'],
    ] as const;
    process.stdout.write(`${lines.join('\n')}\n\n${checks.map(([ok, what]) => `${ok ? 'met ' : 'MISS'}  ${what}`).join('\n')}\n`);
  } finally {
    gw.child.kill('SIGTERM');
    await Promise.all(fleets.flat().map((s) => s.close()));
    agent.destroy();
  }
}

main().catch((err: Error) => {
  process.stderr.write(`bench:scored: ${err.stack ?? err.message}\n`);
  process.exitCode = 1;
});
