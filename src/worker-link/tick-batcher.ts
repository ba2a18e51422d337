// A worker's calls to the primary on one channel, gathered per turn of the
// event loop: the calls made in one turn (all of one request's budgets or
// leases, and those of the requests read in the same turn) go in one message,
// answered in order. One message is in flight at a time: calls made while it
// is gather and go as the next one when its answer (or failure) is in, so the
// busier the worker, the more calls a message carries. Sent in order on one
// channel, so the primary runs them in the order they were made (a release
// written after an acquire whose answer timed out undoes it).
//
// A call nobody is held up by (`later`: a reservation settled once the answer
// is out, a refused request's count given back) rides with the next message
// instead of sending one of its own, or goes within LATER_MS when none is
// sent: under load that halves the messages per request, and each message
// costs both processes a wake-up. Calls sent later under the same merge key
// while their message has not gone yet become one call (`merge`), which all
// of them are answered with: a key's reservations settled together.
import type { WorkerLink } from '../contract/plugin';

/** How long a worker waits for the primary's answer before the call fails (a budget: 503 limiter_unavailable; a lease: the fallback). */
export const PRIMARY_TIMEOUT_MS = 2_000;

interface Pending<A> { resolve(answer: A): void; reject(reason: unknown): void }

/** How long a call sent `later` may wait for a message to ride with. */
export const LATER_MS = 5;

export class TickBatcher<C, A> {
  private calls: C[] = [];
  private pending: Array<Pending<A>> = [];
  /** A flush is scheduled for the end of this turn. */
  private soon = false;
  /** A message is out and not answered yet. */
  private inFlight = false;
  private later: NodeJS.Timeout | undefined;
  /** Where each merge key's call sits in `calls`, until they are sent. */
  private mergeable = new Map<string, number>();

  constructor(
    private readonly link: WorkerLink,
    private readonly channel: string,
    private readonly timeoutMs: number,
    /** Folds `call` into `into`, an earlier unsent call sent later under the same key. */
    private readonly merge?: (into: C, call: C) => void,
  ) {}

  /**
   * Resolves with the primary's answer to `call`; rejects when the message
   * failed or got no answer within the timeout. Sent at the end of this turn,
   * or with `later`, with the next message and at most LATER_MS from now.
   */
  send(call: C, later = false, mergeKey?: string): Promise<A> {
    if (later && mergeKey !== undefined && this.merge !== undefined) {
      const at = this.mergeable.get(mergeKey);
      if (at !== undefined) {
        this.merge(this.calls[at], call);
        const earlier = this.pending[at];
        return new Promise((resolve, reject) => {
          this.pending[at] = { resolve: (a) => { earlier.resolve(a); resolve(a); }, reject: (e) => { earlier.reject(e); reject(e); } };
        });
      }
      this.mergeable.set(mergeKey, this.calls.length);
    }
    return new Promise((resolve, reject) => {
      this.calls.push(call);
      this.pending.push({ resolve, reject });
      if (this.soon || this.inFlight) return;
      if (later) this.later ??= setTimeout(() => this.flush(), LATER_MS);
      else this.flushSoon();
    });
  }

  private flushSoon(): void {
    this.soon = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.soon = false;
    clearTimeout(this.later);
    this.later = undefined;
    const calls = this.calls;
    const batch = this.pending;
    if (calls.length === 0 || this.inFlight) return;
    this.calls = [];
    this.pending = [];
    this.mergeable.clear();
    this.inFlight = true;
    this.link.request<A[]>(this.channel, calls, this.timeoutMs).then(
      (answers) => batch.forEach((p, i) => p.resolve(answers[i])),
      (err: unknown) => { for (const p of batch) p.reject(err); },
    ).finally(() => {
      this.inFlight = false;
      // What gathered meanwhile goes now, with what the answers just set going.
      if (this.calls.length > 0 && !this.soon) this.flushSoon();
    });
  }
}
