// What output rules cost a stream: the gateway with the content filter's
// output terms on against the same gateway with them off, on the same
// backend stream, interleaved: the gap between events at the client (20 ms
// paced) and the gateway's CPU per streamed request (unpaced, 64 at a time).
import { concurrentStreams, percentile, streamOnce } from './client';
import { cpuPerRequest } from './cpu';
import { round } from './table';

export interface OutputRulesCost {
  gapMs: { off: { p50: number; p99: number }; on: { p50: number; p99: number } };
  /** Event gap p99 with output rules on, minus off. */
  addedGapP99Ms: number;
  cpuMicrosPerStream: { off: number; on: number };
}

interface Gateway { url: string; pid: number }


export async function outputRulesCost(off: Gateway, on: Gateway, headers: Record<string, string>, paced: string, unpaced: string, quick: boolean): Promise<OutputRulesCost> {
  const gaps: Record<'off' | 'on', number[]> = { off: [], on: [] };
  for (let i = 0; i < (quick ? 3 : 15); i++) {
    for (const [name, gw] of [['off', off], ['on', on]] as const) {
      const s = await streamOnce(gw.url, paced, headers);
      if (!s.ok) throw new Error(`output rules ${name}: stream failed`);
      gaps[name].push(...s.gapsMs);
    }
  }
  const count = quick ? 512 : 2_048;
  const cpu = async (gw: Gateway): Promise<number> => {
    await concurrentStreams(gw.url, unpaced, headers, 64); // warm
    return cpuPerRequest(gw.pid, count, async () => {
      for (let sent = 0; sent < count; sent += 64) {
        const r = await concurrentStreams(gw.url, unpaced, headers, 64);
        if (r.failed > 0) throw new Error(`output rules: ${r.failed} streams failed`);
      }
    });
  };
  const p = (xs: number[]) => ({ p50: round(percentile(xs, 50)), p99: round(percentile(xs, 99)) });
  return {
    gapMs: { off: p(gaps.off), on: p(gaps.on) },
    addedGapP99Ms: round(percentile(gaps.on, 99) - percentile(gaps.off, 99)),
    cpuMicrosPerStream: { off: await cpu(off), on: await cpu(on) },
  };
}
