// Where the in-flight leases live, one store per process (kept on `services`,
// so a config reload neither forgets the requests in flight nor loses their
// refresh): in memory with one process and no Redis; in the primary with
// several workers and no Redis (cluster-leases.ts); in Redis otherwise. A
// shared store (the primary, Redis) has an in-process fallback in failMode
// open, or none in failMode closed.
import type { RedisClient, Services } from '../../src';
import { ClusterLeases } from './cluster-leases';
import { FallbackLeases } from './fallback-leases';
import { MemoryLeases, type LeaseStore } from './leases';
import { RedisLeases } from './redis-leases';

interface LeasePools {
  memory: MemoryLeases;
  insurance: MemoryLeases;
  /** With several workers: the primary's leases, as this worker reaches them. */
  cluster?: ClusterLeases;
  /** By lease length: a reload that changes leaseMs gets a store that refreshes at the new pace. */
  redis: Map<number, RedisLeases>;
}

const POOLS = 'rate-limit.leases';

function poolsOf(services: Services): LeasePools {
  let pools = services[POOLS] as LeasePools | undefined;
  if (pools === undefined) {
    pools = { memory: new MemoryLeases(), insurance: new MemoryLeases(), cluster: services.cluster && new ClusterLeases(services.cluster), redis: new Map() };
    services[POOLS] = pools;
  }
  return pools;
}

export function leaseStore(services: Services, client: RedisClient | undefined, failMode: 'open' | 'closed', leaseMs: number): LeaseStore {
  const pools = poolsOf(services);
  const insurance = failMode === 'open' ? pools.insurance : undefined;
  if (client === undefined) return pools.cluster === undefined ? pools.memory : new FallbackLeases(pools.cluster, insurance);
  let redis = pools.redis.get(leaseMs);
  if (redis === undefined) pools.redis.set(leaseMs, (redis = new RedisLeases(client, leaseMs)));
  return new FallbackLeases(redis, insurance);
}
