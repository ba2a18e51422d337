// The wait for a free slot. A request over an in-flight limit waits, in
// priority order (high, normal, low) and FIFO within a priority, for at most
// `queueTimeoutMs`, with at most `queueMax` waiting on each limit in this
// process; then it gets 429. When that queue is full, a newcomer of higher
// priority takes the place of the newest waiter of the lowest priority below
// its own (shed first), else it is refused at once. A client that leaves while
// queued leaves the queue and is never sent on.
// Waiters are tried again whenever a slot here is released, and with a shared
// store also every POLL_MS (slots freed by other replicas). A pass tries them
// in order; one blocked by a limit holds back everyone behind it on that limit.
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import type { GatewayError } from '../contract/errors';
import { attempt, release, type Held, type Tried } from './attempt';
import { limiterUnavailable, tooManyInFlight, type QueueRefusal } from './refusals';
import type { LeaseStore } from './leases';
import type { ConcurrencyLimit } from '../contract/admission';

export const POLL_MS = 100;

export type WaitOutcome = 'admitted' | 'timeout' | 'displaced' | 'left' | 'unavailable';

/** What the queue reports, for the metrics and the store-health log. */
export interface AdmissionObserver {
  decided(tried: Tried): void;
  queued(rank: number, delta: 1 | -1): void;
  waited(outcome: WaitOutcome, seconds: number): void;
  shed(limit: ConcurrencyLimit, rank: number, why: QueueRefusal): void;
  held(held: Held, delta: 1 | -1): void;
}

export interface QueueSettings {
  timeoutMs: number;
  max: number;
}

interface Waiter {
  readonly limits: readonly ConcurrencyLimit[];
  readonly rank: number;
  readonly seq: number;
  readonly lease: string;
  readonly since: number;
  /** The limits that refused it last; the first names the refusal. */
  refused: ConcurrencyLimit[];
  done: boolean;
  settle(outcome: Held | GatewayError | undefined): void;
}

const PROCESS = randomBytes(6).toString('hex');
let leases = 0;
const nextLease = (): string => `${PROCESS}:${(++leases).toString(36)}`;

export class AdmissionQueue {
  private readonly waiters: Waiter[] = [];
  private seq = 0;
  private pumping = false;
  private again = false;
  private poll?: NodeJS.Timeout;
  private readonly unsubscribe: () => void;

  constructor(private readonly store: LeaseStore, private readonly settings: QueueSettings, private readonly observer: AdmissionObserver) {
    this.unsubscribe = store.onRelease(() => this.pump());
  }

  /** The leases for every limit; undefined when the client left while waiting. Throws 429 or 503. */
  async admit(limits: readonly ConcurrencyLimit[], rank: number, signal: AbortSignal): Promise<Held | undefined> {
    const lease = nextLease();
    let refused = this.waitingAhead(limits, rank);
    if (refused === undefined) {
      const tried = await this.tryOnce(limits, lease);
      if (tried.held !== undefined) return tried.held;
      refused = tried.refused;
    }
    if (signal.aborted) return undefined;
    return this.wait(limits, rank, lease, refused, signal);
  }

  release(held: Held): void {
    this.observer.held(held, -1);
    release(this.store, held);
  }

  /** Gives back the slots of `held` under `limits`; what it still holds after, or undefined when nothing. */
  releaseSome(held: Held, limits: readonly ConcurrencyLimit[]): Held | undefined {
    const gone = held.limits.filter((l) => limits.includes(l));
    if (gone.length === 0) return held;
    this.release({ ...held, limits: gone });
    const rest = held.limits.filter((l) => !limits.includes(l));
    return rest.length === 0 ? undefined : { ...held, limits: rest };
  }

  close(): void {
    this.unsubscribe();
    clearTimeout(this.poll);
  }

  private async tryOnce(limits: readonly ConcurrencyLimit[], lease: string): Promise<Tried> {
    const tried = await attempt(this.store, limits, lease);
    this.observer.decided(tried);
    if (tried.unavailable) throw limiterUnavailable();
    if (tried.held !== undefined) this.observer.held(tried.held, 1);
    return tried;
  }

  /** The limits a waiter of the same or higher priority is held back by, if this request shares one. */
  private waitingAhead(limits: readonly ConcurrencyLimit[], rank: number): ConcurrencyLimit[] | undefined {
    for (const w of this.waiters) {
      if (w.rank > rank) break; // sorted: the rest are of lower priority
      const shared = w.refused.filter((l) => limits.includes(l));
      if (shared.length > 0) return shared;
    }
    return undefined;
  }

  private wait(limits: readonly ConcurrencyLimit[], rank: number, lease: string, refused: ConcurrencyLimit[], signal: AbortSignal): Promise<Held | undefined> {
    const { timeoutMs, max } = this.settings;
    const on = refused[0];
    if (timeoutMs === 0 || max === 0) return this.refuse(on, rank, 'none');
    const queued = this.waiters.filter((w) => w.refused[0] === on);
    if (queued.length >= max) {
      // The newest of the lowest priority below this one's gives up its place.
      let victim: Waiter | undefined;
      for (const w of queued) if (w.rank > rank && (victim === undefined || w.rank >= victim.rank)) victim = w;
      if (victim === undefined) return this.refuse(on, rank, 'full');
      this.drop(victim, 'displaced');
    }
    return new Promise((resolve, reject) => {
      const onAbort = (): void => this.drop(waiter, 'left');
      const timer = setTimeout(() => this.drop(waiter, 'timeout'), timeoutMs);
      const waiter: Waiter = {
        limits, rank, lease, refused, seq: ++this.seq, since: performance.now(), done: false,
        settle: (outcome) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          if (outcome instanceof Error) reject(outcome);
          else resolve(outcome);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      let at = this.waiters.findIndex((w) => w.rank > rank);
      if (at === -1) at = this.waiters.length;
      this.waiters.splice(at, 0, waiter);
      this.observer.queued(rank, 1);
      this.schedulePoll();
    });
  }

  private refuse(limit: ConcurrencyLimit, rank: number, why: QueueRefusal): never {
    this.observer.shed(limit, rank, why);
    throw tooManyInFlight(limit, why, this.settings.timeoutMs);
  }

  /** Takes a waiter out of the queue with its outcome. */
  private finish(w: Waiter, outcome: WaitOutcome, result: Held | GatewayError | undefined): void {
    if (w.done) return;
    w.done = true;
    this.waiters.splice(this.waiters.indexOf(w), 1);
    this.observer.queued(w.rank, -1);
    this.observer.waited(outcome, (performance.now() - w.since) / 1000);
    w.settle(result);
  }

  private drop(w: Waiter, why: 'timeout' | 'displaced' | 'left'): void {
    if (w.done) return;
    if (why !== 'left') this.observer.shed(w.refused[0], w.rank, why);
    this.finish(w, why, why === 'left' ? undefined : tooManyInFlight(w.refused[0], why, this.settings.timeoutMs));
    this.pump(); // those it held back may go now
  }

  private pump(): void {
    if (this.pumping) {
      this.again = true;
      return;
    }
    if (this.waiters.length === 0) return;
    this.pumping = true;
    void this.pass().finally(() => {
      this.pumping = false;
      this.schedulePoll();
    });
  }

  private async pass(): Promise<void> {
    do {
      this.again = false;
      const blocked = new Set<ConcurrencyLimit>();
      for (const w of [...this.waiters]) {
        if (w.done || w.limits.some((l) => blocked.has(l))) continue;
        let tried: Tried;
        try {
          tried = await this.tryOnce(w.limits, w.lease);
        } catch (err) {
          this.finish(w, 'unavailable', err as GatewayError);
          continue;
        }
        if (tried.held !== undefined) {
          // It timed out or left while this try was in flight: what it got goes back.
          if (w.done) this.release(tried.held);
          else this.finish(w, 'admitted', tried.held);
          continue;
        }
        w.refused = tried.refused;
        for (const l of tried.refused) blocked.add(l);
      }
    } while (this.again && this.waiters.length > 0);
  }

  private schedulePoll(): void {
    if (!this.store.shared || this.poll !== undefined || this.waiters.length === 0) return;
    this.poll = setTimeout(() => {
      this.poll = undefined;
      this.pump();
    }, POLL_MS);
    this.poll.unref();
  }
}
