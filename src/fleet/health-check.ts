// Active health checks, optional: a GET of `path` on every endpoint each
// `intervalMs` (vLLM serves /health), never a completion. A failed check
// counts as a failed attempt; a passing one brings an ejected endpoint back
// at once, so a pool that was all out recovers without waiting on traffic.
import { request } from 'undici';
import { recordAttempt, type HealthSettings, type Member } from './member';

export interface HealthCheck {
  path: string;
  intervalMs: number;
}

/** Starts the checks; returns their stop. */
export function startHealthChecks(members: readonly Member[], check: HealthCheck, health: HealthSettings, timeoutMs: number, ejected: (m: Member) => void): () => void {
  let running = true;
  const probe = async (member: Member): Promise<void> => {
    const url = new URL(member.url);
    const target = `${url.origin}${check.path}`;
    let ok = false;
    try {
      const res = await request(target, { method: 'GET', headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs) });
      await res.body.dump();
      ok = res.statusCode >= 200 && res.statusCode < 300;
    } catch {
      ok = false;
    }
    if (!running) return;
    // A passing check brings an ejected endpoint back; it does not clear failures of real requests in rotation.
    if (!ok) { if (recordAttempt(member, 'failure', members, health, Date.now())) ejected(member); }
    else if (member.ejectedUntil !== 0) recordAttempt(member, 'ok', members, health, Date.now());
  };
  const timer = setInterval(() => { for (const m of members) void probe(m); }, check.intervalMs);
  timer.unref();
  return () => { running = false; clearInterval(timer); };
}
