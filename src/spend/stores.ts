// Which store a config's spend records go to, in one place for the recorder
// (every process that serves requests) and the primary (what its admin
// listener reads).
import type { GatewayConfig } from '../config/schema';
import type { RedisClient } from '../contract/types';
import type { SpendLimits } from './memory-store';
import { RedisSpendStore } from './redis-store';
import type { SpendStore } from './store';

/** What the admin API reads spend from: undefined while there is nothing to read. */
export interface SpendSource {
  readonly reader: SpendStore | undefined;
}

export const limitsOf = (spend: GatewayConfig['spend']): SpendLimits => ({ retentionDays: spend.retentionDays, streamMaxLen: spend.streamMaxLen });

/** The Redis store of the config's prefix, kept while the prefix stays. */
export class RedisStores {
  private store: RedisSpendStore | undefined;

  /** The Redis store when the config names Redis and the connection exists, else undefined. */
  pick(config: GatewayConfig, redis: RedisClient | undefined): RedisSpendStore | undefined {
    if (config.redis === undefined || redis === undefined) return undefined;
    const limits = limitsOf(config.spend);
    if (this.store?.prefix !== config.redis.prefix) this.store = new RedisSpendStore(redis, config.redis.prefix, limits);
    this.store.configure(limits);
    return this.store;
  }
}
