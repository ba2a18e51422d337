// Where the in-flight leases live, one store per process (kept on `services`,
// so a config reload neither forgets the requests in flight nor loses their
// refresh): in memory without Redis; in Redis with an in-process fallback in
// failMode open, or none in failMode closed.
import type { RedisClient, Services } from '../../src';
import { MemoryLeases, type LeaseStore } from './leases';
import { RedisLeases, SharedLeases } from './redis-leases';

interface LeasePools {
  memory: MemoryLeases;
  insurance: MemoryLeases;
  /** By lease length: a reload that changes leaseMs gets a store that refreshes at the new pace. */
  redis: Map<number, RedisLeases>;
}

const POOLS = 'rate-limit.leases';

function poolsOf(services: Services): LeasePools {
  let pools = services[POOLS] as LeasePools | undefined;
  if (pools === undefined) {
    pools = { memory: new MemoryLeases(), insurance: new MemoryLeases(), redis: new Map() };
    services[POOLS] = pools;
  }
  return pools;
}

export function leaseStore(services: Services, client: RedisClient | undefined, failMode: 'open' | 'closed', leaseMs: number): LeaseStore {
  const pools = poolsOf(services);
  if (client === undefined) return pools.memory;
  let redis = pools.redis.get(leaseMs);
  if (redis === undefined) pools.redis.set(leaseMs, (redis = new RedisLeases(client, leaseMs)));
  return new SharedLeases(redis, failMode === 'open' ? pools.insurance : undefined);
}
