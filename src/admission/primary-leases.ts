// The in-flight leases of every worker of the machine (server.workers above 1,
// no Redis), kept by the primary, so a limit of N holds N across the workers.
// The primary knows which worker holds each lease: a worker that exits (a
// crash, SIGKILL) gives its leases back at once, with no expiry to wait for.
// Slots that free wake the workers refused there: a worker keeps one poll
// open while it has requests waiting, answered at the first release of a
// limit it was refused on (or after POLL_WAIT_MS with nothing), so a waiter is
// tried again as soon as a slot frees on any worker, and no message flows
// while nothing waits. Interest is noted with the refusal itself, so a
// release between the refusal and the poll is not missed.
import type { PrimaryLink } from '../contract/plugin';
import { WorkerPolls } from '../worker-link/worker-polls';

export const LEASES_CHANNEL = 'sluice.leases';
export const WAKE_CHANNEL = 'sluice.leases.wake';
/** Longest the primary holds a worker's poll with nothing freed before it answers false. */
export const POLL_WAIT_MS = 5_000;

/**
 * One call on a lease: take it under a limit; give it back (`drop`: quietly,
 * the worker told nobody, so its own waiters are woken too); count it as
 * held whatever the limit (it was admitted by the worker's in-process
 * fallback while the primary could not answer).
 */
export type LeaseOp =
  | readonly ['acquire', key: string, lease: string, limit: number]
  | readonly ['release' | 'drop' | 'keep', key: string, lease: string];

/** An acquire's answer: [admitted 1 | 0, leases held in the key after it]; 0 for the rest. */
export type LeaseReply = readonly [admitted: 0 | 1, inFlight: number] | 0;

export class PrimaryLeases {
  /** key → lease → the worker holding it. */
  private readonly held = new Map<string, Map<string, number>>();
  /** key → the workers refused there since its last release. */
  private readonly refused = new Map<string, Set<number>>();
  /** Workers owed a wake-up that have no poll open. */
  private readonly owed = new Set<number>();
  private readonly polls = new WorkerPolls(false);
  /** Workers that exited: a message of theirs still in the channel takes nothing. */
  private readonly gone = new Set<number>();

  run(op: LeaseOp, worker: number): LeaseReply {
    if (op[0] === 'acquire') return this.acquire(worker, op[1], op[2], op[3]);
    if (op[0] === 'keep') this.add(worker, op[1], op[2]);
    else this.release(op[1], op[2], op[0] === 'release' ? worker : undefined);
    return 0;
  }

  acquire(worker: number, key: string, lease: string, limit: number): LeaseReply {
    const leases = this.held.get(key);
    const n = leases?.size ?? 0;
    if (this.gone.has(worker)) return [0, n];
    if (leases?.has(lease) || n < limit) return [1, this.add(worker, key, lease)];
    let waiting = this.refused.get(key);
    if (waiting === undefined) this.refused.set(key, (waiting = new Set()));
    waiting.add(worker);
    return [0, n];
  }

  /** Leases held in `key`. */
  inFlight(key: string): number {
    return this.held.get(key)?.size ?? 0;
  }

  /** Resolves true once a limit the worker was refused on frees, false after `waitMs` with nothing. */
  poll(worker: number, waitMs = POLL_WAIT_MS): boolean | Promise<boolean> {
    if (this.owed.delete(worker)) return true;
    if (this.gone.has(worker)) return false;
    return this.polls.hold(worker, waitMs);
  }

  /** A worker exited: every lease it held is free now, and it is owed nothing. */
  exited(worker: number): void {
    this.gone.add(worker);
    this.owed.delete(worker);
    this.polls.answer(worker, false);
    for (const waiting of this.refused.values()) waiting.delete(worker);
    for (const [key, leases] of this.held) {
      for (const [lease, holder] of leases) if (holder === worker) this.release(key, lease, undefined);
    }
  }

  private add(worker: number, key: string, lease: string): number {
    if (this.gone.has(worker)) return this.inFlight(key);
    let leases = this.held.get(key);
    if (leases === undefined) this.held.set(key, (leases = new Map()));
    leases.set(lease, worker);
    return leases.size;
  }

  /** `by`: the worker that released it and woke its own waiters (none when quiet, or its exit). */
  private release(key: string, lease: string, by: number | undefined): void {
    const leases = this.held.get(key);
    if (leases === undefined || !leases.delete(lease)) return;
    if (leases.size === 0) this.held.delete(key);
    const waiting = this.refused.get(key);
    if (waiting === undefined) return;
    this.refused.delete(key);
    for (const worker of waiting) if (worker !== by) this.wake(worker);
  }

  private wake(worker: number): void {
    if (!this.polls.answer(worker, true)) this.owed.add(worker);
  }
}

/** The primary's side: answers each batch of lease calls in order, and the workers' polls. */
export function serveLeases(primary: PrimaryLink): PrimaryLeases {
  const leases = new PrimaryLeases();
  primary.handle(LEASES_CHANNEL, (body, worker) => (body as LeaseOp[]).map((op) => leases.run(op, worker)));
  primary.handle(WAKE_CHANNEL, (_body, worker) => leases.poll(worker));
  primary.onWorkerExit((worker) => leases.exited(worker));
  return leases;
}
