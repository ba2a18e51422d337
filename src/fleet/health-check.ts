// Active health checks, optional: a GET of `path` on every endpoint each
// `intervalMs` (vLLM serves /health), never a completion, with the upstream's
// configured headers (a /health behind authentication answers). A failed
// check counts against the endpoint; a passing one brings an ejected endpoint
// back at once, so a pool that was all out recovers without waiting on
// traffic. A check names no model, so it moves no model's health.
import { request } from 'undici';
import type { FleetHealth } from './fleet-health';
import type { Member } from './member';

export interface HealthCheck {
  path: string;
  intervalMs: number;
}

/** Starts the checks; returns their stop. */
export function startHealthChecks(health: FleetHealth, check: HealthCheck, headers: Readonly<Record<string, string>>, timeoutMs: number, ejected: (m: Member) => void): () => void {
  let running = true;
  const probe = async (member: Member): Promise<void> => {
    const url = new URL(member.url);
    const target = `${url.origin}${check.path}`;
    let ok = false;
    try {
      const res = await request(target, { method: 'GET', headers, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs) });
      await res.body.dump();
      ok = res.statusCode >= 200 && res.statusCode < 300;
    } catch {
      ok = false;
    }
    if (running && health.checked(member, ok, Date.now()) !== undefined) ejected(member);
  };
  const timer = setInterval(() => { for (const m of health.members) void probe(m); }, check.intervalMs);
  timer.unref();
  return () => { running = false; clearInterval(timer); };
}
