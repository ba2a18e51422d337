// The in-flight limits' metrics, registered once per Prometheus registry:
//   sluice_concurrency_inflight{scope,name}            leases this replica holds per limited subject
//   sluice_concurrency_queue_length{priority}          requests waiting for a slot on this replica
//   sluice_concurrency_queue_wait_seconds{outcome}     how long they waited, by how the wait ended
//   sluice_concurrency_shed_total{scope,priority,reason}  requests refused over an in-flight limit
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { StoreHealthNotes } from '../contract/plugin';
import type { Held, Tried } from './attempt';
import type { AdmissionObserver } from './queue';
import { PRIORITIES } from './scopes';

const SCOPES = ['key', 'org', 'model', 'upstream'] as const;
const REASONS = ['none', 'full', 'timeout', 'displaced'] as const;

function metric<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

interface QueueMetrics {
  inflight: Gauge;
  length: Gauge;
  wait: Histogram;
  shed: Counter;
}

function queueMetrics(registry: Registry): QueueMetrics {
  const registers = [registry];
  return {
    inflight: metric(registry, 'sluice_concurrency_inflight', () => new Gauge({
      name: 'sluice_concurrency_inflight', registers, labelNames: ['scope', 'name'],
      help: 'Requests this replica holds a slot for, per limited subject (key, org, model, upstream).',
    })),
    length: metric(registry, 'sluice_concurrency_queue_length', () => new Gauge({
      name: 'sluice_concurrency_queue_length', registers, labelNames: ['priority'],
      help: 'Requests waiting on this replica for a slot under an in-flight limit.',
    })),
    wait: metric(registry, 'sluice_concurrency_queue_wait_seconds', () => new Histogram({
      name: 'sluice_concurrency_queue_wait_seconds', registers, labelNames: ['outcome'],
      help: 'Time requests waited for a slot, by how the wait ended (admitted, timeout, displaced, left, unavailable).',
      buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    })),
    shed: metric(registry, 'sluice_concurrency_shed_total', () => new Counter({
      name: 'sluice_concurrency_shed_total', registers, labelNames: ['scope', 'priority', 'reason'],
      help: 'Requests refused over an in-flight limit: no queue, queue full, wait timed out, or displaced by a higher priority.',
    })),
  };
}

/** What the queue reports, into the metrics (when there is a registry) and the store-health log. */
export function admissionObserver(registry: Registry | undefined, health: StoreHealthNotes | undefined, anyLimit: boolean): AdmissionObserver {
  const m = registry === undefined ? undefined : queueMetrics(registry);
  if (m !== undefined && anyLimit) {
    for (const priority of PRIORITIES) m.length.labels(priority).inc(0);
    for (const scope of SCOPES) for (const priority of PRIORITIES) for (const reason of REASONS) m.shed.labels(scope, priority, reason).inc(0);
  }
  return {
    decided: (tried: Tried) => health?.decided(tried.inProcess, tried.unavailable),
    queued: (rank, delta) => m?.length.labels(PRIORITIES[rank]).inc(delta),
    waited: (outcome, seconds) => m?.wait.labels(outcome).observe(seconds),
    shed: (limit, rank, why) => m?.shed.labels(limit.scope, PRIORITIES[rank], why).inc(),
    held: (h: Held, delta: 1 | -1) => { if (m !== undefined) for (const l of h.limits) m.inflight.labels(l.scope, l.name).inc(delta); },
  };
}
