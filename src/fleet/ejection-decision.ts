// How long a scope stays out of rotation, and what a request does when no
// endpoint is in rotation for its model: pure functions of the facts, as the
// retry decision is (retry-decision.ts). An ejection is a guess that a
// backend is still down; it never outlives its bound, and when every
// endpoint is out the request goes to the one most likely to have recovered
// (Envoy's panic routing) instead of being refused for an old failure. Only
// a backend that asked to wait (a 429's Retry-After) is not tried early.
//
//   decideOutOfRotation([{ back: now + 900, cause: 'failures', load: 0 }, { back: now + 4000, ... }], now)
//     -> { kind: 'panic', index: 0, cause: 'failures', backInMs: 900 }
import type { EjectionCause } from './member';

/** The length of a scope's next ejection: `baseMs` doubling with each ejection before it, never past `maxMs`. */
export function ejectionMs(ejectionsBefore: number, baseMs: number, maxMs: number): number {
  // 2 ** 1100 is Infinity: the bound holds however long a backend keeps failing.
  return Math.min(baseMs * 2 ** Math.min(ejectionsBefore, 40), maxMs);
}

/** One endpoint's standing for a model while none is in rotation for it. */
export interface Standing {
  /** When it is back in rotation for the model (ms since epoch; at most now when only a trial in flight holds it). */
  back: number;
  /** Why it is out: the later of the endpoint's and the model's ejections. */
  cause: EjectionCause;
  /** Requests in flight per unit of weight. */
  load: number;
}

export type OutOfRotation =
  /** Every endpoint rests on the backend's own Retry-After: the client hears of it (a 429) with what is left. */
  | { readonly kind: 'wait'; readonly backInMs: number }
  /** Nothing else can serve: the request goes to this endpoint (index in the standings). */
  | { readonly kind: 'panic'; readonly index: number; readonly cause: EjectionCause; readonly backInMs: number };

/**
 * The endpoint most likely to have recovered: the soonest back, fewer in
 * flight on a tie, among those not resting on a Retry-After; when all are,
 * the wait with what is left of the shortest.
 */
export function decideOutOfRotation(standings: readonly Standing[], now: number): OutOfRotation {
  let best = -1;
  let rest = Infinity;
  for (let i = 0; i < standings.length; i++) {
    const s = standings[i];
    if (s.cause === 'rate_limited') { rest = Math.min(rest, s.back); continue; }
    const b = best < 0 ? undefined : standings[best];
    if (b === undefined || s.back < b.back || (s.back === b.back && s.load < b.load)) best = i;
  }
  if (best < 0) return { kind: 'wait', backInMs: Math.max(0, rest - now) };
  const chosen = standings[best];
  return { kind: 'panic', index: best, cause: chosen.cause, backInMs: Math.max(0, chosen.back - now) };
}
