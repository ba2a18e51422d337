// The workers' spend records when there is no Redis (server.workers above
// 1): one memory store in the primary, so the sums are exact for the
// machine whichever worker served a request, and the admin listener (the
// primary's) reads them where they are. A worker sends its batches here
// (cluster-spend.ts); with Redis they go there and the primary keeps none.
import type { GatewayConfig } from '../config/schema';
import type { PrimaryLink } from '../contract/plugin';
import type { RedisClient } from '../contract/types';
import { MemorySpendStore } from './memory-store';
import type { UsageRecord } from './record';
import { RedisStores, limitsOf, type SpendSource } from './stores';
import type { SpendStore } from './store';

export const SPEND_CHANNEL = 'sluice.spend';

export class PrimarySpend implements SpendSource {
  private config: GatewayConfig | undefined;
  /** Made at the first batch or read: with Redis, the primary keeps nothing. */
  private memory: MemorySpendStore | undefined;
  private readonly redisStores = new RedisStores();

  constructor(private readonly redis: () => RedisClient | undefined) {}

  apply(config: GatewayConfig): void {
    this.config = config;
    this.memory?.configure(limitsOf(config.spend));
  }

  add(records: readonly UsageRecord[]): true {
    this.memoryStore().addNow(records);
    return true;
  }

  /** Where the admin API reads: Redis when the config names it, else this memory. */
  get reader(): SpendStore | undefined {
    const config = this.config;
    if (config === undefined) return undefined;
    return this.redisStores.pick(config, this.redis()) ?? this.memoryStore();
  }

  private memoryStore(): MemorySpendStore {
    return this.memory ??= new MemorySpendStore(limitsOf(this.config!.spend));
  }
}

/** The primary's side; `apply` each config before the workers get it. `redis`: the primary's connection, when it has one. */
export function serveSpend(primary: PrimaryLink, redis: () => RedisClient | undefined): PrimarySpend {
  const spend = new PrimarySpend(redis);
  primary.handle(SPEND_CHANNEL, (body) => spend.add(body as UsageRecord[]));
  return spend;
}
