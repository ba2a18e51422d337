// The process's response state: the store the config picks and the
// responses running here. One per process, kept across reloads (a reload
// must not forget the conversations in memory); `apply` takes each config.
// The store is Redis when the config names it (shared by the replicas), the
// primary's memory with several workers and no Redis, else this process's
// memory; with `responses.store: false` nothing is kept.
//
//   const responses = new ResponseState({ services, logger }); responses.apply(config);
//   void responses.save(id, record, requestId);      // never fails the request
import type { Logger } from 'pino';
import type { GatewayConfig } from '../../../config/schema';
import type { Services } from '../../../pipeline/contract';
import { ClusterCancelRelay, ClusterResponseStore } from './cluster-responses';
import { MemoryResponseStore } from './memory-store';
import { RedisCancelRelay } from './redis-cancel';
import { RedisResponseStore } from './redis-store';
import { RunningResponses, type CancelRelay } from './running';
import { limitsOf, type ResponseStore, type StoredResponse } from './store';

/** `responses.store: false`: keeps nothing, finds nothing. */
const NO_STORE: ResponseStore = {
  put: async () => false,
  get: async () => undefined,
  delete: async () => false,
  close: async () => undefined,
};

/** What went wrong underneath a store error (the Redis or IPC error), for the log. */
const causeOf = (err: unknown): string => {
  const cause = (err as Error).cause;
  return cause instanceof Error ? cause.message : (err as Error).message;
};

export interface ResponseStateDeps {
  /** Redis once a config names it; the link to the primary in a worker. */
  services: Pick<Services, 'redis' | 'cluster'>;
  logger: Logger;
}

export class ResponseState {
  readonly running = new RunningResponses();
  private current: ResponseStore = NO_STORE;
  private keeping = false;
  private memory: MemoryResponseStore | undefined;
  private redis: RedisResponseStore | undefined;
  private cluster: ClusterResponseStore | undefined;
  /** Which relay `running` has: 'redis:<prefix>', 'primary' or 'none'. */
  private relay = 'none';
  /** A write failed and none has succeeded since: the next failure is not logged again. */
  private failing = false;

  constructor(private readonly deps: ResponseStateDeps) {}

  /** Where responses are kept under the current config (finds nothing when the config keeps none). */
  get store(): ResponseStore { return this.current; }
  /** Whether responses are kept at all (`responses.store`); a response says `store: false` when not. */
  get keeps(): boolean { return this.keeping; }

  apply(config: GatewayConfig): void {
    const limits = limitsOf(config.responses);
    const { redis, cluster } = this.deps.services;
    this.keeping = config.responses.store;
    if (!this.keeping) {
      this.current = NO_STORE;
      this.relayTo('none');
    } else if (config.redis !== undefined && redis !== undefined) {
      const { prefix } = config.redis;
      if (this.redis?.prefix !== prefix) this.redis = new RedisResponseStore(redis, prefix, limits);
      this.redis.configure(limits);
      this.current = this.redis;
      this.relayTo(`redis:${prefix}`, () => new RedisCancelRelay(redis, prefix, this.running));
    } else if (cluster !== undefined) {
      (this.cluster ??= new ClusterResponseStore(cluster, limits)).configure(limits);
      this.current = this.cluster;
      this.relayTo('primary', () => new ClusterCancelRelay(cluster, this.running));
    } else {
      (this.memory ??= new MemoryResponseStore(limits)).configure(limits);
      this.current = this.memory;
      this.relayTo('none');
    }
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
      if (this.failing) logger.info('responses: the store takes responses again');
      this.failing = false;
      if (!stored) logger.warn({ requestId, responseId: id }, 'responses: a response over responses.maxResponseBytes was not stored');
      return stored;
    } catch (err) {
      const fields = { requestId, responseId: id, err: causeOf(err) };
      if (this.failing) logger.debug(fields, 'responses: the store cannot answer; responses are not kept until it can');
      else logger.warn(fields, 'responses: the store cannot answer; responses are not kept until it can');
      this.failing = true;
      return false;
    }
  }

  async close(): Promise<void> {
    this.relay = 'none';
    await this.running.close();
    await this.memory?.close();
  }

  private relayTo(kind: string, make?: () => CancelRelay): void {
    if (kind === this.relay) return;
    this.relay = kind;
    void this.running.useRelay(make?.());
  }
}
