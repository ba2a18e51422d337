// CPU time per request, read from /proc for each process under the same
// load in turn (JSON answers through autocannon, then streams 64 at a time):
// the bare proxy, the gateway, and each variant beside it (traced, spend off,
// a dollar budget, baseline trees), in rounds, each reported as its median.
import type { ChildProcess } from 'node:child_process';
import { concurrentStreams, latencies } from './client';
import { availableParallelism } from 'node:os';
import { cpuPerRequest, pinTo, processTree } from './cpu';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: object) => Promise<{ requests: { average: number; total: number }; non2xx: number; errors: number }>;

type Proc = { child: ChildProcess; port: number };

/** The middle value: a round the machine disturbed moves it less than a mean. */
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * While they are measured, the proxies run on the last CPU and the load
 * generator (this process) and the backend (`helpers`) on the others, so
 * every proxy is measured where the others are: left to the scheduler, one
 * process of two identical gateways measured 120 µs a JSON request and the
 * other 188, round after round, while pinned they agreed within a few per
 * cent. Returns the undoing, which gives every process every CPU again.
 */
function pinned(procs: Proc[], helpers: number[]): () => void {
  const cpus = availableParallelism();
  if (cpus < 2) return () => undefined;
  const all = `0-${cpus - 1}`;
  const proxies = procs.flatMap((p) => processTree(p.child.pid!));
  const rest = [process.pid, ...helpers];
  if (!proxies.every((pid) => pinTo(pid, String(cpus - 1))) || !rest.every((pid) => pinTo(pid, `0-${cpus - 2}`))) {
    for (const pid of [...proxies, ...rest]) pinTo(pid, all);
    return () => undefined;
  }
  return () => { for (const pid of [...proxies, ...rest]) pinTo(pid, all); };
}

/**
 * Each process is warmed once; then, in `rounds` rounds, each is measured in
 * turn (the order rotated each round, so none is always measured first or
 * last while the machine drifts), and its median round is reported, with
 * each round's figure beside it. A difference of a few per cent between two
 * trees shows only when their rounds do not overlap. `helpers`: the pids of
 * the backend and anything else the load needs (pinned away from the proxies).
 */
export async function measureCpu(quick: boolean, bare: Proc, gateway: Proc, others: Array<[string, Proc]>, headers: Record<string, string>, chat: string, stream: string, helpers: number[]) {
  const procs: Array<[string, Proc]> = [['bare', bare], ['gateway', gateway], ...others];
  const urlOf = (p: Proc): string => `http://127.0.0.1:${p.port}/v1/chat/completions`;
  const unpin = pinned(procs.map(([, p]) => p), helpers);
  try {
    return await measureRounds(procs, urlOf, quick, headers, chat, stream);
  } finally {
    unpin();
  }
}

async function measureRounds(procs: Array<[string, Proc]>, urlOf: (p: Proc) => string, quick: boolean, headers: Record<string, string>, chat: string, stream: string) {
  const rounds = quick ? 1 : 5;
  const jsonCount = quick ? 5_000 : 4_000;
  const streamCount = 512;
  for (const [, p] of procs) {
    // Warm under the same load as the measure, so none is measured while its JIT is still compiling.
    await latencies(urlOf(p), chat, headers, 500);
    await autocannon({ url: urlOf(p), method: 'POST', headers, body: chat, connections: 32, amount: 10_000 });
    await concurrentStreams(urlOf(p), stream, headers, 64);
  }
  const jsonRounds: Record<string, number[]> = {};
  const streamRounds: Record<string, number[]> = {};
  for (let round = 0; round < rounds; round++) {
    const order = procs.map((_, i) => procs[(i + round) % procs.length]);
    for (const [name, p] of order) {
      const url = urlOf(p);
      (jsonRounds[name] ??= []).push(await cpuPerRequest(p.child.pid!, jsonCount, async () => {
        const r = await autocannon({ url, method: 'POST', headers, body: chat, connections: 32, amount: jsonCount });
        if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors under load`);
      }));
      (streamRounds[name] ??= []).push(await cpuPerRequest(p.child.pid!, streamCount, async () => {
        for (let sent = 0; sent < streamCount; sent += 64) {
          const r = await concurrentStreams(url, stream, headers, 64);
          if (r.failed > 0) throw new Error(`${name}: ${r.failed} streams failed`);
        }
      }));
    }
  }
  const medians = (all: Record<string, number[]>) => Object.fromEntries(Object.entries(all).map(([k, xs]) => [k, median(xs)]));
  return { json: medians(jsonRounds), stream: medians(streamRounds), rounds: { json: jsonRounds, stream: streamRounds }, requests: { json: jsonCount * rounds, stream: streamCount * rounds } };
}
