// The fleets on the metrics listener: each endpoint in or out of rotation,
// ejections by reason, retries by reason, fallbacks by route. Registered once
// per registry (reloads build fleets anew and replace what they watch).
// Every label value comes from the config, never from a client.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Member } from './member';

export interface FleetMetrics {
  /** The endpoints of one upstream, read at each scrape (a reload replaces them). */
  watch(upstream: string, members: readonly Member[]): void;
  ejected(upstream: string, endpoint: string, reason: 'failures' | 'rate_limited' | 'check'): void;
  retried(upstream: string, reason: 'failed' | 'dropped' | 'timeout' | 'rate_limited'): void;
  /** From the upstream that could not answer to a fallback model (both from the config: bounded labels). */
  fellBack(upstream: string, model: string): void;
}

const NONE: FleetMetrics = { watch: () => undefined, ejected: () => undefined, retried: () => undefined, fellBack: () => undefined };

const byRegistry = new WeakMap<Registry, FleetMetrics>();

export function fleetMetrics(registry: Registry | undefined): FleetMetrics {
  if (registry === undefined) return NONE;
  const known = byRegistry.get(registry);
  if (known) return known;
  const fleets = new Map<string, readonly Member[]>();
  new Gauge({
    name: 'sluice_upstream_endpoint_up', help: 'Whether an upstream endpoint is in rotation (1) or ejected (0); with several workers, the share of workers that have it in rotation.',
    labelNames: ['upstream', 'endpoint'], registers: [registry],
    // Each worker keeps its own passive health: the machine's value is the share in rotation, still 1 or 0 when they agree.
    aggregator: 'average',
    collect() {
      this.reset();
      const now = Date.now();
      for (const [upstream, members] of fleets) for (const m of members) this.set({ upstream, endpoint: m.url }, m.isEjected(now) ? 0 : 1);
    },
  });
  const ejections = new Counter({ name: 'sluice_upstream_ejections_total', help: 'Endpoints taken out of rotation, by reason.', labelNames: ['upstream', 'endpoint', 'reason'], registers: [registry] });
  const retries = new Counter({ name: 'sluice_upstream_retries_total', help: 'Attempts made again on another endpoint or connection, by reason.', labelNames: ['upstream', 'reason'], registers: [registry] });
  const fallbacks = new Counter({ name: 'sluice_fallbacks_total', help: 'Requests sent on to a fallback model, by the upstream that could not answer and the fallback model.', labelNames: ['upstream', 'model'], registers: [registry] });
  const metrics: FleetMetrics = {
    watch: (upstream, members) => { fleets.set(upstream, members); },
    ejected: (upstream, endpoint, reason) => ejections.inc({ upstream, endpoint, reason }),
    retried: (upstream, reason) => retries.inc({ upstream, reason }),
    fellBack: (upstream, model) => fallbacks.inc({ upstream, model }),
  };
  byRegistry.set(registry, metrics);
  return metrics;
}
