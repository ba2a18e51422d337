// One tool call's verdict from its limits' consume() answers: admitted when
// every limit had room; limited when one is used up (retry once the last of
// the used-up ones refills); unavailable when a store could not answer and
// had no in-process stand-in (redis.failMode closed). Pure: the caller sends
// the calls and gives back what a refused call took.
import { RateLimiterRes } from 'rate-limiter-flexible';

export interface Verdict {
  verdict: 'admitted' | 'limited' | 'unavailable';
  /** Limited: when the last used-up limit refills (0 otherwise). */
  retryAfterMs: number;
  /** Per limit: its store counted the call, over the limit or not (what a refused call gives back: all of it, so a count is only ever of calls made). */
  counted: boolean[];
}

/**
 * `answers[i]` is limit i's answer to consuming one point: a RateLimiterRes
 * (resolved or rejected: consumedPoints past `points` means over), or
 * anything else when its store failed.
 */
export function verdictOf(limits: ReadonlyArray<{ points: number }>, answers: readonly unknown[]): Verdict {
  let over = false;
  let failed = false;
  let retryAfterMs = 0;
  const counted = answers.map((a, i) => {
    if (!(a instanceof RateLimiterRes)) {
      failed = true;
      return false;
    }
    if (a.consumedPoints > limits[i].points) {
      over = true;
      retryAfterMs = Math.max(retryAfterMs, a.msBeforeNext, 1);
    }
    return true;
  });
  // Over a limit that did answer: a client can act on that (wait), whatever another store did.
  if (over) return { verdict: 'limited', retryAfterMs, counted };
  return { verdict: failed ? 'unavailable' : 'admitted', retryAfterMs: 0, counted };
}
