// The limiter's own metrics, registered once per Prometheus registry (a
// reload calls create() again and finds them there):
//   sluice_redis_up                 1 while the Redis connection is ready, else 0
//   sluice_limiter_fallback_total   requests decided in-process because the shared store could not answer
import { Counter, Gauge } from 'prom-client';
import type { Services } from '../../src';

export const REDIS_UP = 'sluice_redis_up';
export const FALLBACK_TOTAL = 'sluice_limiter_fallback_total';

export interface LimiterMetrics {
  fallback?: Counter;
}

export function limiterMetrics(services: Services): LimiterMetrics {
  const registry = services.metrics;
  if (registry === undefined) return {};
  if (services.redis !== undefined && registry.getSingleMetric(REDIS_UP) === undefined) {
    new Gauge({
      name: REDIS_UP,
      help: 'Whether the Redis connection behind the shared rate limits is ready (1) or not (0); with several workers, 1 only when every worker\'s is.',
      registers: [registry],
      // Each worker has its own connection: the machine's value is the worst of them.
      aggregator: 'min',
      collect() {
        this.set(services.redis?.status === 'ready' ? 1 : 0);
      },
    });
  }
  const fallback = (registry.getSingleMetric(FALLBACK_TOTAL) as Counter | undefined) ?? new Counter({
    name: FALLBACK_TOTAL,
    help: 'Requests whose rate limits were decided in-process because the shared store (Redis, or the primary for the workers\' in-flight limits) could not answer.',
    registers: [registry],
  });
  return { fallback };
}
