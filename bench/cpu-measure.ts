// CPU time per request, read from /proc for each process under the same
// load in turn (JSON answers through autocannon, then streams 64 at a time):
// the bare proxy, the gateway, and each variant beside it (traced, spend off,
// a dollar budget, a baseline tree), each warmed first under that load.
import type { ChildProcess } from 'node:child_process';
import { concurrentStreams, latencies } from './client';
import { cpuPerRequest } from './cpu';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: object) => Promise<{ requests: { average: number; total: number }; non2xx: number; errors: number }>;

type Proc = { child: ChildProcess; port: number };

export async function measureCpu(quick: boolean, bare: Proc, gateway: Proc, others: Array<[string, Proc]>, headers: Record<string, string>, chat: string, stream: string) {
  const jsonCount = quick ? 5_000 : 20_000;
  const streamCount = quick ? 512 : 2_048;
  const procs: Array<[string, Proc]> = [['bare', bare], ['gateway', gateway], ...others];
  const json: Record<string, number> = {};
  const streamed: Record<string, number> = {};
  for (const [name, p] of procs) {
    const url = `http://127.0.0.1:${p.port}/v1/chat/completions`;
    // Warm under the same load as the measure, so neither side is measured while its JIT is still compiling.
    await latencies(url, chat, headers, 500);
    await autocannon({ url, method: 'POST', headers, body: chat, connections: 32, amount: jsonCount / 2 });
    json[name] = await cpuPerRequest(p.child.pid!, jsonCount, async () => {
      const r = await autocannon({ url, method: 'POST', headers, body: chat, connections: 32, amount: jsonCount });
      if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors under load`);
    });
    streamed[name] = await cpuPerRequest(p.child.pid!, streamCount, async () => {
      for (let sent = 0; sent < streamCount; sent += 64) {
        const r = await concurrentStreams(url, stream, headers, 64);
        if (r.failed > 0) throw new Error(`${name}: ${r.failed} streams failed`);
      }
    });
  }
  return { json, stream: streamed, requests: { json: jsonCount, stream: streamCount } };
}
