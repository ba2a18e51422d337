// While an endpoint is out of rotation because its connection failed, a
// probe every health.probeIntervalMs: a GET of its models list (`<url>/models`,
// what an OpenAI-compatible server serves without running a model), with the
// upstream's configured headers. Any answer, whatever its status, says the
// connection works again: the ejection ends at once and the next request is
// its trial. So a backend that restarts is back in rotation within one
// interval, not after an ejection that doubled while it was down. A model's
// own trouble on a reachable endpoint is the model's scope: probes move none.
import { request } from 'undici';
import type { FleetHealth } from './fleet-health';
import type { Member } from './member';

/** Starts the probes; returns their stop. `target`: the URL probed for an endpoint. */
export function startEjectionProbes(health: FleetHealth, intervalMs: number, headers: Readonly<Record<string, string>>, timeoutMs: number, target: (m: Member) => string): () => void {
  let running = true;
  const probing = new Set<Member>();
  const probe = async (member: Member): Promise<void> => {
    probing.add(member);
    let answered = false;
    try {
      const res = await request(target(member), { method: 'GET', headers, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs) });
      await res.body.dump();
      answered = true;
    } catch {
      answered = false;
    } finally {
      probing.delete(member);
    }
    if (running && answered) health.probed(member, Date.now());
  };
  const timer = setInterval(() => {
    const now = Date.now();
    for (const m of health.members) if (m.isEjected(now) && m.cause === 'failures' && !probing.has(m)) void probe(m);
  }, intervalMs);
  timer.unref();
  return () => { running = false; clearInterval(timer); };
}
