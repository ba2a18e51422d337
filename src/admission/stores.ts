// Where the in-flight leases live, one set per process (on `services`, so a
// config reload neither forgets the requests in flight nor loses their
// refresh): in memory with one process and no Redis; in the primary with
// several workers and no Redis (cluster-leases.ts); in Redis otherwise. A
// shared store (the primary, Redis) has an in-process fallback in failMode
// open, or none in failMode closed.
import type { RedisClient } from '../contract/types';
import type { WorkerLink } from '../contract/plugin';
import { ClusterLeases } from './cluster-leases';
import { FallbackLeases } from './fallback-leases';
import { MemoryLeases, type LeaseStore } from './leases';
import { RedisLeases } from './redis-leases';

export class LeasePools {
  readonly memory = new MemoryLeases();
  /** failMode open's in-process stand-in while the shared store cannot answer. */
  readonly insurance = new MemoryLeases();
  /** With several workers: the primary's leases, as this worker reaches them. */
  private readonly cluster?: ClusterLeases;
  /** By lease length: a reload that changes leaseMs gets a store that refreshes at the new pace. */
  private readonly redis = new Map<number, RedisLeases>();

  constructor(link: WorkerLink | undefined) {
    this.cluster = link && new ClusterLeases(link);
  }

  store(client: RedisClient | undefined, failMode: 'open' | 'closed', leaseMs: number): LeaseStore {
    const insurance = failMode === 'open' ? this.insurance : undefined;
    if (client === undefined) return this.cluster === undefined ? this.memory : new FallbackLeases(this.cluster, insurance);
    let redis = this.redis.get(leaseMs);
    if (redis === undefined) this.redis.set(leaseMs, (redis = new RedisLeases(client, leaseMs)));
    return new FallbackLeases(redis, insurance);
  }
}
