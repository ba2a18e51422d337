// Measuring clients for the benchmark: sequential latency, one stream's
// timing, and many concurrent streams. Every loop is bounded in count and time.
import { Agent, request } from 'node:http';

export interface Target { name: string; url: string }

const agent1 = new Agent({ keepAlive: true, maxSockets: 1 });
const agentMany = new Agent({ keepAlive: true, maxSockets: Infinity });
const now = (): number => Number(process.hrtime.bigint()) / 1e6;

export function postOnce(url: string, body: string, headers: Record<string, string>, agent = agent1): Promise<{ ms: number; status: number }> {
  return new Promise((resolve, reject) => {
    const start = now();
    const req = request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => resolve({ ms: now() - start, status: res.statusCode ?? 0 }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

export async function latencies(url: string, body: string, headers: Record<string, string>, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const r = await postOnce(url, body, headers);
    if (r.status !== 200) throw new Error(`${url}: HTTP ${r.status}`);
    out.push(r.ms);
  }
  return out;
}

export interface StreamTiming { ok: boolean; firstEventMs: number; gapsMs: number[]; events: number }

export function streamOnce(url: string, body: string, headers: Record<string, string>, agent = agent1): Promise<StreamTiming> {
  return new Promise((resolve) => {
    const start = now();
    let last = 0;
    let first = -1;
    const gaps: number[] = [];
    let events = 0;
    let done = false;
    let buffer = '';
    const req = request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const t = now();
        buffer += chunk;
        let i: number;
        while ((i = buffer.indexOf('\n\n')) !== -1) {
          const event = buffer.slice(0, i);
          buffer = buffer.slice(i + 2);
          events++;
          if (first < 0) first = t - start; else gaps.push(t - last);
          last = t;
          // Chat ends with [DONE]; a Messages stream with its message_stop event.
          if (event === 'data: [DONE]' || event.startsWith('event: message_stop')) done = true;
        }
      });
      res.on('end', () => resolve({ ok: res.statusCode === 200 && done, firstEventMs: first, gapsMs: gaps, events }));
      res.on('error', () => resolve({ ok: false, firstEventMs: first, gapsMs: gaps, events }));
    });
    req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ ok: false, firstEventMs: first, gapsMs: gaps, events }));
    req.end(body);
  });
}

export interface ConcurrencyResult { streams: number; failed: number; stalled: number; maxGapMs: number; maxFirstEventMs: number }

/** `n` streams at once; a stall is a gap between two events of a stream over `stallMs`. */
export async function concurrentStreams(url: string, body: string, headers: Record<string, string>, n: number, stallMs = 250): Promise<ConcurrencyResult> {
  const all = await Promise.all(Array.from({ length: n }, () => streamOnce(url, body, headers, agentMany)));
  let failed = 0;
  let stalled = 0;
  let maxGapMs = 0;
  let maxFirstEventMs = 0;
  for (const s of all) {
    if (!s.ok) failed++;
    const worst = Math.max(0, ...s.gapsMs);
    maxGapMs = Math.max(maxGapMs, worst);
    maxFirstEventMs = Math.max(maxFirstEventMs, s.firstEventMs);
    if (worst > stallMs) stalled++;
  }
  return { streams: n, failed, stalled, maxGapMs: Math.round(maxGapMs), maxFirstEventMs: Math.round(maxFirstEventMs) };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
