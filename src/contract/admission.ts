// The admission subsystem's public types: a leaf, so the plugin contract can
// name them (services and env carry the subsystem) and stay a leaf itself.

/** Who a limit is on: the core's four subjects, or one a plugin names. */
export type LeaseScope = 'key' | 'org' | 'model' | 'upstream' | (string & {});

export interface ConcurrencyLimit {
  readonly scope: LeaseScope;
  /** The subject's configured name (key id, org, route model, upstream): a bounded metrics label. */
  readonly name: string;
  readonly limit: number;
  /** The lease set's store key. */
  readonly key: string;
}

/**
 * In-flight limits and the wait queue, as a policy uses them. One per config;
 * the leases live in the process-wide store (memory, the primary across
 * workers, or Redis across replicas) and outlast a reload.
 */
export interface AdmissionService {
  /** A limit of `limit` requests at once on a subject of the caller's own (e.g. scope "team", name "search"). */
  limit(scope: LeaseScope, name: string, limit: number): ConcurrencyLimit;
  /**
   * Takes a slot under every limit for this request, waiting in the queue (in
   * the key's priority) while one is full; held until the request finishes.
   * Resolves false when the client left while waiting; rejects with 429
   * rate_limited (queue full or the wait ran out) or 503 limiter_unavailable.
   */
  hold(ctx: { readonly signal: AbortSignal; setHeader(name: string, value: string): void }, limits: readonly ConcurrencyLimit[]): Promise<boolean>;
}
