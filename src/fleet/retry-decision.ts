// Whether and where a failed attempt goes again: one pure function of the
// facts, as undici's retry handler takes retry as a function of (error,
// state, options). The dispatch handler that owns timers and bytes says what
// happened; the fleet gathers the facts, asks, and carries the answer out.
//
//   decideRetry({ reason: 'failed', attempts: 1, maxRetries: 1, elsewhere: false, sameInRotation: true, ... })
//     -> { go: true, where: 'same', delayMs: <the backoff>, budgeted: true }

/**
 * What ended the attempt, while nothing had reached the client:
 * - dropped: a pooled connection died before the backend could have read the request
 * - refused: the connection could not be made (refused, unreachable, TLS)
 * - failed: the backend answered with a 5xx, an error event first, or a bad answer
 * - closed: the backend took the request and closed the connection without an answer
 * - timeout: the backend was silent for longer than its timeout
 * - rate_limited: the backend answered 429
 */
export type RetryReason = 'dropped' | 'refused' | 'failed' | 'closed' | 'timeout' | 'rate_limited';

export interface RetryFacts {
  reason: RetryReason;
  /** Attempts counted so far, this one included (a dropped connection tried again is not counted). */
  attempts: number;
  /** retry.attempts: further attempts allowed after the first. */
  maxRetries: number;
  /** The request's age, and retry.deadlineMs: no attempt starts at or after it. */
  elapsedMs: number;
  deadlineMs: number;
  /** The pool's retry budget has room for one more retry in flight. */
  budget: boolean;
  /** Another endpoint this request has not tried is in rotation for its model. */
  elsewhere: boolean;
  /** This endpoint is still in rotation for the request's model, this attempt's outcome recorded. */
  sameInRotation: boolean;
  /** This attempt went over a connection of its own (it was a dropped one tried again). */
  fresh: boolean;
  /** The backend's Retry-After on a 429 or a 5xx, in ms, when it sent one. */
  retryAfterMs: number | undefined;
  /** retry.maxRetryAfterWaitMs: the longest Retry-After waited out before trying the same endpoint again. */
  maxRetryAfterWaitMs: number;
  /** The jittered backoff a retry on the same endpoint waits at least. */
  backoffMs: number;
}

export type RetryDecision =
  | { readonly go: false }
  | { readonly go: true; readonly where: 'elsewhere' | 'same' | 'fresh'; readonly delayMs: number; readonly budgeted: boolean };

const STOP: RetryDecision = { go: false };
const ELSEWHERE: RetryDecision = { go: true, where: 'elsewhere', delayMs: 0, budgeted: true };
/** A dropped pooled connection is the pool's own churn, not the backend's load: it spends no budget, whatever attempts came before. */
const FRESH: RetryDecision = { go: true, where: 'fresh', delayMs: 0, budgeted: false };
const ELSEWHERE_FREE: RetryDecision = { go: true, where: 'elsewhere', delayMs: 0, budgeted: false };

export function decideRetry(f: RetryFacts): RetryDecision {
  if (f.elapsedMs >= f.deadlineMs) return STOP;
  if (f.reason === 'dropped' && !f.fresh) return f.elsewhere ? ELSEWHERE_FREE : FRESH;
  if (f.attempts > f.maxRetries || !f.budget) return STOP;
  if (f.elsewhere) return ELSEWHERE;
  const delayMs = sameEndpointDelay(f);
  // A wait that would overrun the deadline is not started.
  if (delayMs === undefined || f.elapsedMs + delayMs >= f.deadlineMs) return STOP;
  return { go: true, where: 'same', delayMs, budgeted: true };
}

/** The wait before the same endpoint is tried again, or undefined when it is not. */
function sameEndpointDelay(f: RetryFacts): number | undefined {
  const after = f.retryAfterMs;
  switch (f.reason) {
    // Out of rotation until its Retry-After: waited out when short, else the 429 is the answer.
    case 'rate_limited': return after !== undefined && after <= f.maxRetryAfterWaitMs ? after : undefined;
    case 'refused':
    case 'failed':
      if (!f.sameInRotation) return undefined;
      if (after === undefined) return f.backoffMs;
      return after <= f.maxRetryAfterWaitMs ? Math.max(after, f.backoffMs) : undefined;
    // A silence would repeat; a backend that took the request and closed may have run it: never again there.
    default: return undefined;
  }
}
