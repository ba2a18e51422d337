// The fleets on the metrics listener: each endpoint in or out of rotation,
// each model on it that had trouble, ejections by scope and reason, retries
// by reason, fallbacks by route. Registered once per registry (reloads build
// fleets anew and replace what they watch). Every label value comes from the
// config, never from a client: a model is a name the config gives (a route's
// exact model or its upstreamModel), or "other".
import { Counter, Gauge, type Registry } from 'prom-client';
import type { EjectionCause, Member } from './member';
import type { RetryReason } from './retry-decision';

export interface FleetMetrics {
  /** The endpoints of one upstream, read at each scrape (a reload replaces them). */
  watch(upstream: string, members: readonly Member[]): void;
  /** `model`: the model's label when one model on the endpoint went out, '' when the whole endpoint did. */
  ejected(upstream: string, endpoint: string, model: string, reason: EjectionCause): void;
  retried(upstream: string, reason: RetryReason): void;
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
      for (const [upstream, members] of fleets) for (const m of members) this.set({ upstream, endpoint: m.shown }, m.isEjected(now) ? 0 : 1);
    },
  });
  new Gauge({
    name: 'sluice_upstream_model_up', help: 'Whether a model on an upstream endpoint is in rotation (1) or out (0), for each model the endpoint failed or rate-limited since the config loaded; several models under one label: 0 while any is out.',
    labelNames: ['upstream', 'endpoint', 'model'], registers: [registry],
    aggregator: 'average',
    collect() {
      this.reset();
      const now = Date.now();
      for (const [upstream, members] of fleets) {
        for (const m of members) {
          const up = new Map<string, number>();
          for (const h of m.models.values()) up.set(h.label, Math.min(up.get(h.label) ?? 1, h.isEjected(now) ? 0 : 1));
          for (const [model, value] of up) this.set({ upstream, endpoint: m.shown, model }, value);
        }
      }
    },
  });
  const ejections = new Counter({ name: 'sluice_upstream_ejections_total', help: 'Endpoints, or one model on an endpoint, taken out of rotation, by reason.', labelNames: ['upstream', 'endpoint', 'model', 'reason'], registers: [registry] });
  const retries = new Counter({ name: 'sluice_upstream_retries_total', help: 'Attempts made again on another endpoint, on the same one, or on a fresh connection, by reason.', labelNames: ['upstream', 'reason'], registers: [registry] });
  const fallbacks = new Counter({ name: 'sluice_fallbacks_total', help: 'Requests sent on to a fallback model, by the upstream that could not answer and the fallback model.', labelNames: ['upstream', 'model'], registers: [registry] });
  const metrics: FleetMetrics = {
    watch: (upstream, members) => { fleets.set(upstream, members); },
    ejected: (upstream, endpoint, model, reason) => ejections.inc({ upstream, endpoint, model, reason }),
    retried: (upstream, reason) => retries.inc({ upstream, reason }),
    fellBack: (upstream, model) => fallbacks.inc({ upstream, model }),
  };
  byRegistry.set(registry, metrics);
  return metrics;
}
