// sluice_redis_up: 1 while the process's Redis connection is ready, else 0.
// Registered once per registry, when the config names Redis.
import { Gauge, type Registry } from 'prom-client';
import type { RedisClient } from '../contract/types';

export const REDIS_UP = 'sluice_redis_up';

export function watchRedisUp(registry: Registry | undefined, services: { redis?: RedisClient }): void {
  if (registry === undefined || services.redis === undefined || registry.getSingleMetric(REDIS_UP) !== undefined) return;
  new Gauge({
    name: REDIS_UP,
    help: 'Whether the Redis connection behind the shared limits is ready (1) or not (0); with several workers, 1 only when every worker\'s is.',
    registers: [registry],
    // Each worker has its own connection: the machine's value is the worst of them.
    aggregator: 'min',
    collect() {
      this.set(services.redis?.status === 'ready' ? 1 : 0);
    },
  });
}
