// Records every finished API request for chargeback, once per process and
// kept across reloads (`apply` takes each config). A request's record goes
// into this process's memory store at its finish; for Redis or the primary
// it is queued and the turn's records go in one batch (one Redis pipeline,
// or one message to the primary), one batch in flight at a time: the busier
// the process, the bigger the batch. A store that
// cannot answer never fails or slows a request: the batch is dropped and
// counted (sluice_spend_dropped_total), the outage logged once.
//
//   const spend = new SpendRecorder({ services, logger }); spend.apply(config);
//   spend.record(ctx, outcome);   // at the finish, after ctx.cost is set
//   spend.add(record);            // a record made elsewhere (an MCP tool call)
import { Counter } from 'prom-client';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema';
import type { Outcome, RequestContext, Services } from '../contract/plugin';
import { ClusterSpendStore } from './cluster-spend';
import { MemorySpendStore } from './memory-store';
import { usageRecordOf, type UsageRecord } from './record';
import { limitsOf, RedisStores, type SpendSource } from './stores';
import type { SpendStore } from './store';

/** Records waiting while a batch is out, at most; past it the oldest go (counted as dropped). */
export const MAX_QUEUED = 50_000;
export const DROPPED_TOTAL = 'sluice_spend_dropped_total';

export interface SpendRecorderDeps {
  services: Pick<Services, 'redis' | 'cluster' | 'metrics'>;
  logger: Logger;
}

export class SpendRecorder implements SpendSource {
  private store: SpendStore | undefined;
  private memory: MemorySpendStore | undefined;
  private readonly redisStores = new RedisStores();
  private queue: UsageRecord[] = [];
  private scheduled = false;
  private writing: Promise<void> | undefined;
  private failing = false;
  private readonly dropped?: Counter;

  constructor(private readonly deps: SpendRecorderDeps) {
    const registry = deps.services.metrics;
    this.dropped = registry && ((registry.getSingleMetric(DROPPED_TOTAL) as Counter | undefined) ?? new Counter({
      name: DROPPED_TOTAL, registers: [registry],
      help: 'Usage records not kept because the spend store (Redis, or the primary) could not take them.',
    }));
  }

  /** What the admin API reads in this process: the memory or Redis store (a worker's is the primary's). */
  get reader(): SpendStore | undefined {
    return this.store instanceof ClusterSpendStore ? undefined : this.store;
  }

  apply(config: GatewayConfig): void {
    const { redis, cluster } = this.deps.services;
    const limits = limitsOf(config.spend);
    if (!config.spend.record) {
      this.store = undefined;
      this.queue = [];
    }
    else if (config.redis !== undefined && redis !== undefined) this.store = this.redisStores.pick(config, redis);
    else if (cluster !== undefined) this.store = this.store instanceof ClusterSpendStore ? this.store : new ClusterSpendStore(cluster);
    else {
      (this.memory ??= new MemorySpendStore(limits)).configure(limits);
      this.store = this.memory;
    }
  }

  /** Queues one finished request's record; API requests that list models or read stored turns are not usage. */
  record(ctx: RequestContext, outcome: Outcome): void {
    if (this.store === undefined || ctx.endpoint === 'models') return;
    this.add(usageRecordOf(ctx, outcome, Date.now()));
  }

  /** Queues a record made elsewhere (an MCP tool call's, src/mcp/usage.ts): the same store, sums and export as a model request's. */
  add(record: UsageRecord): void {
    if (this.store === undefined) return;
    // This process's memory takes it at once: nothing to batch, nothing to wait for.
    if (this.store === this.memory) return this.memory!.addOne(record);
    if (this.queue.push(record) > MAX_QUEUED) {
      this.queue.shift();
      this.dropped?.inc();
    }
    if (this.scheduled || this.writing !== undefined) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Writes what is queued; resolves once nothing is left (the drain at close). */
  async close(): Promise<void> {
    if (this.store === undefined) this.queue = [];
    while (this.writing !== undefined || this.queue.length > 0) await (this.writing ?? this.flush());
  }

  private flush(): Promise<void> {
    this.scheduled = false;
    const store = this.store;
    const batch = this.queue;
    if (batch.length === 0 || this.writing !== undefined || store === undefined) return Promise.resolve();
    this.queue = [];
    this.writing = store.add(batch).then(() => this.wrote(), (err: unknown) => this.failed(batch.length, err)).finally(() => {
      this.writing = undefined;
      if (this.queue.length > 0 && !this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
    return this.writing;
  }

  private wrote(): void {
    if (this.failing) this.deps.logger.info('spend: the store takes usage records again');
    this.failing = false;
  }

  private failed(count: number, err: unknown): void {
    this.dropped?.inc(count);
    if (!this.failing) this.deps.logger.warn({ dropped: count, err: (err as Error).message }, 'spend: the store cannot answer; usage records are dropped (sluice_spend_dropped_total) until it can');
    this.failing = true;
  }
}
