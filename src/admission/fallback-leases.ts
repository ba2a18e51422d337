// A shared lease store (Redis, or the primary with several workers) and, in
// failMode open, an in-process store with the same limits that decides while
// the shared one cannot answer (per process, like the budgets' insurance
// limiter). A lease the fallback gave is counted in the shared store too
// (keep), so it is in flight there once it answers again. A release goes to
// both: the store that did not take the lease ignores it.
import { MemoryLeases, type LeaseAnswer, type LeaseStore } from './leases';

/** A shared store that can count a lease taken elsewhere. */
export interface KeepingStore extends LeaseStore {
  keep(key: string, lease: string): void;
}

export class FallbackLeases implements LeaseStore {
  readonly shared = true;

  constructor(private readonly store: KeepingStore, private readonly insurance?: MemoryLeases) {}

  acquire(key: string, limit: number, lease: string): Promise<LeaseAnswer> {
    return this.store.acquire(key, limit, lease).catch((err: unknown) => {
      if (this.insurance === undefined) throw err;
      const answer = this.insurance.take(key, limit, lease);
      if (answer.admitted) this.store.keep(key, lease);
      return { ...answer, inProcess: true };
    });
  }

  release(key: string, lease: string, quiet = false): void {
    this.insurance?.release(key, lease, quiet);
    this.store.release(key, lease, quiet);
  }

  onRelease(listener: () => void): () => void {
    const off = [this.store.onRelease(listener), this.insurance?.onRelease(listener)];
    return () => off.forEach((f) => f?.());
  }
}
