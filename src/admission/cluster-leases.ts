// A worker's in-flight leases when the primary keeps them (server.workers
// above 1, no Redis; primary-leases.ts). Acquires and releases go to the
// primary in one message per tick, in the order they were made, so a release
// sent after an acquire whose answer timed out undoes it there. A refusal
// opens a poll that the primary answers when a slot frees on any worker;
// its answer tells the wait queue to try again. Wrapped in FallbackLeases,
// like Redis: while the primary cannot answer, failMode open decides in this
// worker and closed refuses with 503.
import type { WorkerLink } from '../contract/plugin';
import { PRIMARY_TIMEOUT_MS, TickBatcher } from '../worker-link/tick-batcher';
import { ReleaseListeners, type LeaseAnswer, type LeaseStore } from './leases';
import { LEASES_CHANNEL, POLL_WAIT_MS, WAKE_CHANNEL, type LeaseOp, type LeaseReply } from './primary-leases';

const ignore = (): void => undefined;

export class ClusterLeases implements LeaseStore {
  /** Slots free in other workers too; the primary's wake-ups say when, the queue's poll is the backstop. */
  readonly shared = true;
  private readonly batcher: TickBatcher<LeaseOp, LeaseReply>;
  private readonly released = new ReleaseListeners();
  private polling = false;

  constructor(private readonly link: WorkerLink) {
    this.batcher = new TickBatcher(link, LEASES_CHANNEL, PRIMARY_TIMEOUT_MS);
  }

  async acquire(key: string, limit: number, lease: string): Promise<LeaseAnswer> {
    const [admitted, inFlight] = await this.batcher.send(['acquire', key, lease, limit]) as Exclude<LeaseReply, 0>;
    if (admitted === 0) this.watch();
    return { admitted: admitted === 1, inFlight };
  }

  /** Counts in the primary a lease the in-process fallback gave: it is in flight all the same. */
  keep(key: string, lease: string): void {
    this.batcher.send(['keep', key, lease]).catch(ignore);
  }

  release(key: string, lease: string, quiet = false): void {
    // A release that cannot be sent has nothing left to undo: the primary is gone, and its leases with it.
    this.batcher.send([quiet ? 'drop' : 'release', key, lease]).catch(ignore);
    if (!quiet) this.released.notify();
  }

  onRelease(listener: () => void): () => void {
    return this.released.add(listener);
  }

  /** One poll open at a time; whatever its answer, waiters try again (and a refusal opens the next). */
  private watch(): void {
    if (this.polling) return;
    this.polling = true;
    this.link.request<boolean>(WAKE_CHANNEL, null, POLL_WAIT_MS + PRIMARY_TIMEOUT_MS).catch(ignore).then(() => {
      this.polling = false;
      this.released.notify();
    });
  }
}
