// A worker's stored responses and cancels when the primary keeps them
// (server.workers above 1, no Redis; primary-responses.ts). A record is
// encoded and checked against the cap here, so one over it never crosses the
// channel. A primary that does not answer within PRIMARY_TIMEOUT_MS is
// `store_unavailable` (503), never "absent".
import type { WorkerLink } from '../contract/plugin';
import { PRIMARY_TIMEOUT_MS } from '../worker-link/tick-batcher';
import { CANCEL_CHANNEL, CANCEL_POLL_MS, CANCELS_CHANNEL, STORE_CHANNEL, type StoreOp } from './primary-responses';
import type { CancelRelay, RunningResponses } from './running';
import { decodeRecord, encodeRecord, reportPut, storeUnavailable, type EvictionSink, type PutOutcome, type ResponseStore, type StoreLimits, type StoredResponse } from './store';

export class ClusterResponseStore implements ResponseStore {
  /** `evicted`: told of what the primary's store let go for this worker's writes. */
  constructor(private readonly link: WorkerLink, private limits: StoreLimits, private readonly evicted?: EvictionSink) {}

  configure(limits: StoreLimits): void {
    this.limits = limits;
  }

  async put(id: string, record: StoredResponse): Promise<boolean> {
    const encoded = encodeRecord(record, this.limits.maxResponseBytes);
    // Over the cap: what the id held goes (a running response's first record), so nothing stale stays.
    if (encoded === undefined) return this.ask(['delete', id, record.owner]).then(() => false);
    return this.tell(await this.ask(['put', id, record.owner, encoded.json, encoded.bytes]) as PutOutcome);
  }

  async remember(id: string, owner: string): Promise<void> {
    this.tell(await this.ask(['remember', id, owner]) as PutOutcome);
  }

  async owns(id: string, owner: string): Promise<boolean> {
    return await this.ask(['owns', id, owner]) as boolean;
  }

  async get(id: string, owner: string): Promise<StoredResponse | undefined> {
    const json = await this.ask(['get', id, owner]) as string | null;
    return json === null ? undefined : decodeRecord(json);
  }

  async delete(id: string, owner: string): Promise<boolean> {
    return await this.ask(['delete', id, owner]) as boolean;
  }

  async close(): Promise<void> {}

  private tell(outcome: PutOutcome): boolean {
    return reportPut(outcome, this.evicted);
  }

  private async ask(op: StoreOp): Promise<unknown> {
    try {
      return await this.link.request(STORE_CHANNEL, op, PRIMARY_TIMEOUT_MS);
    } catch (err) {
      throw storeUnavailable(err);
    }
  }
}

/** Cancels through the primary: sent there, and polled for while this worker runs responses. */
export class ClusterCancelRelay implements CancelRelay {
  private polling = false;
  private closed = false;

  constructor(private readonly link: WorkerLink, private readonly running: RunningResponses) {}

  async publish(id: string): Promise<void> {
    try {
      await this.link.request(CANCEL_CHANNEL, id, PRIMARY_TIMEOUT_MS);
    } catch (err) {
      throw storeUnavailable(err);
    }
  }

  busy(): void {
    if (this.polling || this.closed) return;
    this.polling = true;
    void this.poll();
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** One poll open at a time, while some response runs here. */
  private async poll(): Promise<void> {
    while (!this.closed && this.running.size > 0) {
      try {
        const ids = await this.link.request<string[]>(CANCELS_CHANNEL, null, CANCEL_POLL_MS + PRIMARY_TIMEOUT_MS);
        for (const id of ids) this.running.cancelHere(id);
      } catch {
        // The primary is gone or stuck: try again shortly, without a storm of failures.
        await new Promise((resolve) => setTimeout(resolve, PRIMARY_TIMEOUT_MS).unref());
      }
    }
    this.polling = false;
  }
}
