// A worker's calls to the primary on one channel, gathered per tick: the calls
// made in one tick (all of one request's budgets or leases, and those of
// requests arriving together) go in one message, answered in order. Sent in
// order on one channel, so the primary runs them in the order they were made
// (a release written after an acquire whose answer timed out undoes it).
import type { WorkerLink } from '../../src';

interface Pending<A> { resolve(answer: A): void; reject(reason: unknown): void }

export class TickBatcher<C, A> {
  private calls: C[] = [];
  private pending: Array<Pending<A>> = [];

  constructor(private readonly link: WorkerLink, private readonly channel: string, private readonly timeoutMs: number) {}

  /** Resolves with the primary's answer to `call`; rejects when the message failed or got no answer within the timeout. */
  send(call: C): Promise<A> {
    return new Promise((resolve, reject) => {
      this.calls.push(call);
      if (this.pending.push({ resolve, reject }) === 1) process.nextTick(() => this.flush());
    });
  }

  private flush(): void {
    const calls = this.calls;
    const batch = this.pending;
    this.calls = [];
    this.pending = [];
    this.link.request<A[]>(this.channel, calls, this.timeoutMs).then(
      (answers) => batch.forEach((p, i) => p.resolve(answers[i])),
      (err: unknown) => { for (const p of batch) p.reject(err); },
    );
  }
}
