// The workers' stored responses when there is no Redis (server.workers above
// 1): one memory store in the primary, so a client's next turn finds its
// response whichever worker takes it, and one bound for the machine. The
// primary also carries cancels between workers: a worker with responses
// running keeps one poll open here, answered with the ids another worker was
// asked to cancel (or with none after CANCEL_POLL_MS); a worker between two
// polls gets them with its next one.
import type { PrimaryLink } from '../contract/plugin';
import type { GatewayConfig } from '../config/schema';
import { WorkerPolls } from '../worker-link/worker-polls';
import { MemoryResponseStore } from './memory-store';
import { limitsOf, type PutOutcome } from './store';

export const STORE_CHANNEL = 'sluice.responses';
export const CANCEL_CHANNEL = 'sluice.responses.cancel';
export const CANCELS_CHANNEL = 'sluice.responses.cancels';
/** Longest the primary holds a worker's poll with no cancel for it. */
export const CANCEL_POLL_MS = 5_000;
/** Cancels kept for a worker between its polls; older ones are dropped (their responses have long ended). */
const MAX_OWED = 100;

/** One call on the store: a record goes as its JSON and byte count, as the worker encoded it. */
export type StoreOp =
  | readonly ['put', id: string, owner: string, json: string, bytes: number]
  | readonly ['get' | 'delete' | 'remember' | 'owns', id: string, owner: string];

export class PrimaryResponses {
  private settings: GatewayConfig['responses'] | undefined;
  /** Made at the first call: with Redis, or one worker, the primary keeps nothing. */
  private store: MemoryResponseStore | undefined;
  /** Workers that use the store, each with the cancels it has not polled yet. */
  private readonly owed = new Map<number, string[]>();
  private readonly polls = new WorkerPolls<string[]>([]);

  apply(settings: GatewayConfig['responses']): void {
    this.settings = settings;
    this.store?.configure(limitsOf(settings));
  }

  /**
   * put and remember → what the write pushed out, by bound (the worker counts
   * it), or false when not kept; get → the record's JSON or null; delete →
   * deleted; owns → whether the id is the owner's.
   */
  run(op: StoreOp, worker: number): PutOutcome | boolean | string | null {
    this.know(worker);
    const store = this.store ??= new MemoryResponseStore(limitsOf(this.settings!));
    switch (op[0]) {
      case 'put': return store.putJson(op[1], op[2], op[3], op[4]);
      case 'remember': return store.mark(op[1], op[2]);
      case 'get': return store.getJson(op[1], op[2]) ?? null;
      case 'owns': return store.ownsId(op[1], op[2]);
      default: return store.deleteOwned(op[1], op[2]);
    }
  }

  /** Hands `id` to every other worker that uses the store. */
  cancel(id: string, from: number): true {
    for (const [worker, ids] of this.owed) {
      if (worker === from) continue;
      if (!this.polls.answer(worker, [id]) && ids.push(id) > MAX_OWED) ids.shift();
    }
    return true;
  }

  /** The cancels owed to `worker`, at once if any, else when one comes or CANCEL_POLL_MS passes. */
  poll(worker: number): string[] | Promise<string[]> {
    const ids = this.know(worker);
    return ids.length > 0 ? ids.splice(0) : this.polls.hold(worker, CANCEL_POLL_MS);
  }

  exited(worker: number): void {
    this.owed.delete(worker);
    this.polls.answer(worker, []);
  }

  async close(): Promise<void> {
    this.polls.closeAll();
    await this.store?.close();
  }

  private know(worker: number): string[] {
    let ids = this.owed.get(worker);
    if (ids === undefined) this.owed.set(worker, (ids = []));
    return ids;
  }
}

/** The primary's side; call `apply` with each config before the workers get it. */
export function serveResponses(primary: PrimaryLink): PrimaryResponses {
  const responses = new PrimaryResponses();
  primary.handle(STORE_CHANNEL, (body, worker) => responses.run(body as StoreOp, worker));
  primary.handle(CANCEL_CHANNEL, (body, worker) => responses.cancel(body as string, worker));
  primary.handle(CANCELS_CHANNEL, (_body, worker) => responses.poll(worker));
  primary.onWorkerExit((worker) => responses.exited(worker));
  return responses;
}
