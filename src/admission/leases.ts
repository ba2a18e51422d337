// In-flight leases: one per admitted request and limited subject (a key, an
// org, a model's route, an upstream), taken only while fewer than the limit
// are held and given back when the request ends. A store decides; the wait
// queue (queue.ts) sits on top of any of them. MemoryLeases counts in this
// process; ClusterLeases in the primary, across the workers of one machine;
// RedisLeases across replicas.
export interface LeaseAnswer {
  admitted: boolean;
  /** Leases held in the subject after the answer (this one included when admitted). */
  inFlight: number;
  /** True when decided in this process because the shared store could not answer. */
  inProcess?: boolean;
}

export interface LeaseStore {
  /**
   * Takes `lease` in `key` if fewer than `limit` are held; a lease already
   * held counts as taken (so a retry with the same id is safe). Rejects when
   * the store cannot answer.
   */
  acquire(key: string, limit: number, lease: string): Promise<LeaseAnswer>;
  /**
   * Gives `lease` back; a lease never taken is ignored. Never throws.
   * `quiet`: the listeners are not told (a request refused by another limit
   * gives back what it just took; nothing new is free).
   */
  release(key: string, lease: string, quiet?: boolean): void;
  /** `listener` runs after each release made through this store; returns the unsubscribe. */
  onRelease(listener: () => void): () => void;
  /** True when slots may also free elsewhere (other replicas): waiters must ask again now and then. */
  readonly shared: boolean;
}

/** Calls every listener; one that throws does not stop the others. */
export class ReleaseListeners {
  private readonly listeners = new Set<() => void>();

  add(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  notify(): void {
    for (const listener of this.listeners) {
      try { listener(); } catch { /* a waiter's pump handles its own failures */ }
    }
  }
}

export class MemoryLeases implements LeaseStore {
  readonly shared = false;
  private readonly held = new Map<string, Set<string>>();
  private readonly released = new ReleaseListeners();

  acquire(key: string, limit: number, lease: string): Promise<LeaseAnswer> {
    return Promise.resolve(this.take(key, limit, lease));
  }

  /** The synchronous decision, for stores that wrap this one. */
  take(key: string, limit: number, lease: string): LeaseAnswer {
    let leases = this.held.get(key);
    if (leases === undefined) this.held.set(key, (leases = new Set()));
    if (!leases.has(lease)) {
      if (leases.size >= limit) return { admitted: false, inFlight: leases.size };
      leases.add(lease);
    }
    return { admitted: true, inFlight: leases.size };
  }

  release(key: string, lease: string, quiet = false): void {
    const leases = this.held.get(key);
    if (leases === undefined || !leases.delete(lease)) return;
    if (leases.size === 0) this.held.delete(key);
    if (!quiet) this.released.notify();
  }

  onRelease(listener: () => void): () => void {
    return this.released.add(listener);
  }

  /** Leases held in `key` (for tests and the fallback's figures). */
  inFlight(key: string): number {
    return this.held.get(key)?.size ?? 0;
  }
}
