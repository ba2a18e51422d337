// A pool's retry budget, as Envoy counts it: retries in flight may be at most
// `share` of the requests in flight (and always a few), so a fleet in trouble
// under load is not hit by a storm of retries on top of it, while a quiet
// pool can always retry.

/** Retries always allowed in flight at once. */
const MIN_RETRIES_IN_FLIGHT = 3;

export class RetryBudget {
  private retriesInFlight = 0;

  constructor(private readonly share: number) {}

  /** Whether one more retry fits, given the pool's requests in flight (a fact for the retry decision). */
  hasRoom(requestsInFlight: number): boolean {
    return this.retriesInFlight < Math.max(MIN_RETRIES_IN_FLIGHT, this.share * requestsInFlight);
  }

  /** A retry the decision took starts. */
  take(): void {
    this.retriesInFlight++;
  }

  /** A retry's attempt ended. */
  release(): void {
    this.retriesInFlight--;
  }
}
