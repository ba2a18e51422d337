// The process's response state: the store the config picks and the
// responses running here. One per process, kept across reloads (a reload
// must not forget the conversations in memory); `apply` takes each config.
// The store is Redis when the config names it (shared by the replicas), the
// primary's memory with several workers and no Redis, else this process's
// memory; with `responses.store: false` no response is kept, and the store
// holds only the ids of the responses relayed from a native backend, each
// with the owner it was relayed to. What an owner's bounds push out is
// counted in sluice_responses_evicted_total.
//
//   const responses = new ResponseState({ services, logger }); responses.apply(config);
//   void responses.save(id, record, requestId);      // never fails the request
//   void responses.remember(id, owner, requestId);   // a native backend's own id, relayed to owner
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { GatewayConfig } from '../config/schema';
import type { Services } from '../contract/plugin';
import { ClusterCancelRelay, ClusterResponseStore } from './cluster-responses';
import { MemoryResponseStore } from './memory-store';
import { RedisCancelRelay } from './redis-cancel';
import { RedisResponseStore } from './redis-store';
import { RunningResponses, type CancelRelay } from './running';
import { limitsOf, type EvictionSink, type ResponseStore, type StoredResponse } from './store';

/** `responses.store: false`: the endpoints keep nothing and find nothing. */
const NO_STORE: ResponseStore = {
  put: async () => false,
  get: async () => undefined,
  delete: async () => false,
  remember: async () => undefined,
  owns: async () => false,
  close: async () => undefined,
};

export const EVICTED_TOTAL = 'sluice_responses_evicted_total';

/** The eviction counter of `registry` (one per registry, both bounds shown from 0). */
function evictionCounter(registry: Registry | undefined): EvictionSink | undefined {
  if (registry === undefined) return undefined;
  let counter = registry.getSingleMetric(EVICTED_TOTAL) as Counter<'bound'> | undefined;
  if (counter === undefined) {
    counter = new Counter({
      name: EVICTED_TOTAL, labelNames: ['bound'], registers: [registry],
      help: 'Stored responses (and remembered ids of relayed ones) let go before their TTL to stay within a bound: the owner\'s count or bytes, or a memory store\'s total.',
    });
    for (const bound of ['owner', 'total']) counter.inc({ bound }, 0);
  }
  const c = counter;
  return (bound, count) => c.inc({ bound }, count);
}

/** What went wrong underneath a store error (the Redis or IPC error), for the log. */
const causeOf = (err: unknown): string => {
  const cause = (err as Error).cause;
  return cause instanceof Error ? cause.message : (err as Error).message;
};

export interface ResponseStateDeps {
  /** Redis once a config names it; the link to the primary in a worker; the registry the eviction counter goes in. */
  services: Pick<Services, 'redis' | 'cluster' | 'metrics'>;
  logger: Logger;
}

export class ResponseState {
  readonly running = new RunningResponses();
  /** Where responses (or, when none are kept, relayed ids) go under the current config. */
  private current: ResponseStore = NO_STORE;
  private keeping = false;
  private readonly evicted: EvictionSink | undefined;
  private memory: MemoryResponseStore | undefined;
  private redis: RedisResponseStore | undefined;
  private cluster: ClusterResponseStore | undefined;
  /** Which relay `running` has: 'redis:<prefix>', 'primary' or 'none'. */
  private relay = 'none';
  /** A write failed and none has succeeded since: the next failure is not logged again. */
  private failing = false;

  constructor(private readonly deps: ResponseStateDeps) {
    this.evicted = evictionCounter(deps.services.metrics);
  }

  /** Where responses are kept under the current config (finds nothing when the config keeps none). */
  get store(): ResponseStore { return this.keeping ? this.current : NO_STORE; }
  /** Whether responses are kept at all (`responses.store`); a response says `store: false` when not. */
  get keeps(): boolean { return this.keeping; }

  apply(config: GatewayConfig): void {
    const limits = limitsOf(config.responses);
    const { redis, cluster } = this.deps.services;
    this.keeping = config.responses.store;
    // Without kept responses there is nothing to cancel elsewhere: no relay.
    const keeps = this.keeping;
    if (config.redis !== undefined && redis !== undefined) {
      const { prefix } = config.redis;
      if (this.redis?.prefix !== prefix) this.redis = new RedisResponseStore(redis, prefix, limits, this.evicted);
      this.redis.configure(limits);
      this.current = this.redis;
      this.relayTo(keeps ? `redis:${prefix}` : 'none', () => new RedisCancelRelay(redis, prefix, this.running));
    } else if (cluster !== undefined) {
      (this.cluster ??= new ClusterResponseStore(cluster, limits, this.evicted)).configure(limits);
      this.current = this.cluster;
      this.relayTo(keeps ? 'primary' : 'none', () => new ClusterCancelRelay(cluster, this.running));
    } else {
      (this.memory ??= new MemoryResponseStore(limits, { evicted: this.evicted })).configure(limits);
      this.current = this.memory;
      this.relayTo('none');
    }
  }

  /**
   * Remembers that a native backend's own response id was relayed to
   * `owner` (when the gateway keeps no responses, the backend keeps them):
   * only that owner may then continue from it. Never rejects: a store that
   * cannot answer is logged as a save is, and a later turn naming the id
   * gets 404.
   */
  async remember(id: string, owner: string, requestId: string): Promise<void> {
    try {
      await this.current.remember(id, owner);
      this.answered();
    } catch (err) {
      this.cannotAnswer(err, requestId, id);
    }
  }

  /** Whether `owner` was given `id` (stored, or relayed and remembered); rejects with `store_unavailable`. */
  owns(id: string, owner: string): Promise<boolean> {
    return this.current.owns(id, owner);
  }

  /**
   * Stores a response (when responses are kept): true when it was. Never
   * rejects, so a store that cannot answer never fails the client's request:
   * the first failure of an outage is logged with its request id, the rest
   * at debug until a write succeeds again.
   */
  async save(id: string, record: StoredResponse, requestId: string): Promise<boolean> {
    if (!this.keeping) return false;
    const { logger } = this.deps;
    try {
      const stored = await this.current.put(id, record);
      this.answered();
      if (!stored) logger.warn({ requestId, responseId: id }, 'responses: a response over responses.maxResponseBytes was not stored');
      return stored;
    } catch (err) {
      this.cannotAnswer(err, requestId, id);
      return false;
    }
  }

  async close(): Promise<void> {
    this.relay = 'none';
    await this.running.close();
    await this.memory?.close();
  }

  /** A write went through: an outage, if there was one, is over. */
  private answered(): void {
    if (this.failing) this.deps.logger.info('responses: the store takes responses again');
    this.failing = false;
  }

  /** A write failed: the first failure of an outage at warn, with its request id; the rest at debug. */
  private cannotAnswer(err: unknown, requestId: string, responseId: string): void {
    const fields = { requestId, responseId, err: causeOf(err) };
    if (this.failing) this.deps.logger.debug(fields, 'responses: the store cannot answer; responses are not kept until it can');
    else this.deps.logger.warn(fields, 'responses: the store cannot answer; responses are not kept until it can');
    this.failing = true;
  }

  private relayTo(kind: string, make?: () => CancelRelay): void {
    if (kind === this.relay) return;
    this.relay = kind;
    void this.running.useRelay(make?.());
  }
}
