// One request's decision from its budgets' answers: admitted, refused by the
// spent budget that refills last, or undecided (a store failed, no insurance).
// A reservation budget's answer counts what this request took (`amounts`);
// what was left before it is the budget less the rest. Under a hard budget a
// request without an output cap took room for `want` tokens a choice and now
// keeps the largest cap that fits every budget it reserves in: at least one
// token, or it is refused. Pure: the hooks send the calls and carry it out.
import { RateLimiterRes } from 'rate-limiter-flexible';
import { msBefore, type CompiledBudget } from './policy';
import { largestCap, need, type Ask } from './reservation';

export interface Reading {
  budget: CompiledBudget;
  remaining: number;
  msBeforeNext: number;
}

export interface Decision {
  /** The spent budget that refills last (so Retry-After covers every spent one). */
  refused?: Reading;
  /** A limiter failed with no insurance (failMode closed). */
  unavailable: boolean;
  /** The tightest budget of each kind, for the headers. */
  requests?: Reading;
  tokens?: Reading;
  dollars?: Reading;
  /** What the refusing reservation budget had left, and what the request would have taken of it. */
  left?: number;
  asked?: number;
  /** The output cap a request without one was given (hard budgets). */
  cap?: number;
  /** What each reservation budget keeps of what it took (0 when refused). */
  kept: number[];
}

/** A request without an output cap, under a hard budget: what it asked about and the most it may be given. */
export interface Fit {
  ask: Ask;
  want: number;
}

/** Fewer remaining is tighter; on a tie, the one that refills later. */
const tighter = (remaining: number, ms: number, than: Reading | undefined): boolean =>
  than === undefined || remaining < than.remaining || (remaining === than.remaining && ms > than.msBeforeNext);

const consumedOf = (r: RateLimiterRes | null): number => (r === null ? 0 : r.consumedPoints);
const answered = (r: unknown): r is RateLimiterRes | null => r === null || r instanceof RateLimiterRes;
const clamp = (n: number, max: number): number => Math.min(Math.max(n, 0), max);

/** Keeps `budget` as the refusing one when it refills later than the one kept. */
function refuse(d: Decision, budget: CompiledBudget, r: RateLimiterRes | null, now: number): void {
  const ms = msBefore(budget, r, now);
  if (d.refused === undefined || ms > d.refused.msBeforeNext) d.refused = { budget, remaining: 0, msBeforeNext: ms };
}

/** Keeps the reading when its budget is the tightest of its kind so far. */
function note(d: Decision, budget: CompiledBudget, remaining: number, ms: number): void {
  const kind = budget.kind;
  const than = kind === 'requests' ? d.requests : kind === 'tokens' ? d.tokens : d.dollars;
  if (!tighter(remaining, ms, than)) return;
  const reading = { budget, remaining, msBeforeNext: ms };
  if (kind === 'requests') d.requests = reading;
  else if (kind === 'tokens') d.tokens = reading;
  else d.dollars = reading;
}

/**
 * `results` holds, in order, one consume() answer per request budget (1
 * point) and one per reservation budget (`amounts[j]` points), each a
 * RateLimiterRes, null (nothing counted yet) or an Error (settled, never
 * thrown). The headers then show the budgets as they are once a refused
 * request has given back what it took. (Every field of the decision is made
 * at once, so every decision has the one shape.)
 */
export function decide(requests: readonly CompiledBudget[], reserves: readonly CompiledBudget[], results: readonly unknown[], amounts: readonly number[], now: number, fit?: Fit): Decision {
  const d: Decision = { refused: undefined, unavailable: false, requests: undefined, tokens: undefined, dollars: undefined, left: undefined, asked: undefined, cap: undefined, kept: amounts.slice() };
  const n = requests.length;
  for (let i = 0; i < n; i++) {
    const r = results[i];
    if (!answered(r)) d.unavailable = true;
    else if (r !== null && r.consumedPoints > requests[i].points) refuse(d, requests[i], r, now);
  }
  // What each reservation budget had before this request; the cap every one of them fits.
  const rooms: number[] = [];
  for (let j = 0; j < reserves.length; j++) {
    const r = results[n + j];
    rooms.push(answered(r) ? reserves[j].points - (consumedOf(r) - amounts[j]) : Infinity);
  }
  if (fit !== undefined) {
    let cap = fit.want;
    let tightest = -1;
    for (let j = 0; j < reserves.length; j++) {
      if (!answered(results[n + j])) { d.unavailable = true; continue; }
      const c = largestCap(reserves[j], fit.ask, rooms[j]);
      if (c < cap) { cap = c; tightest = j; }
    }
    if (cap >= 1) {
      d.cap = cap;
      for (let j = 0; j < reserves.length; j++) d.kept[j] = need(reserves[j], fit.ask, cap);
    } else if (tightest >= 0) {
      refuse(d, reserves[tightest], results[n + tightest] as RateLimiterRes | null, now);
      d.left = clamp(rooms[tightest], reserves[tightest].points);
      d.asked = need(reserves[tightest], fit.ask, 1);
    }
  } else {
    for (let j = 0; j < reserves.length; j++) {
      const r = results[n + j];
      if (!answered(r)) d.unavailable = true;
      else if (amounts[j] > rooms[j]) {
        const before = d.refused;
        refuse(d, reserves[j], r, now);
        if (d.refused !== before) { d.left = clamp(rooms[j], reserves[j].points); d.asked = amounts[j]; }
      }
    }
  }
  const givenBack = d.refused !== undefined || d.unavailable;
  if (givenBack) d.kept.fill(0);
  for (let i = 0; i < results.length; i++) {
    const r = results[i];
    if (!answered(r)) continue;
    const budget = i < n ? requests[i] : reserves[i - n];
    // A request budget's point stays counted when it was the one over; a refused request gives the rest back.
    const back = i < n ? (givenBack && consumedOf(r) <= budget.points ? 1 : 0) : amounts[i - n] - d.kept[i - n];
    note(d, budget, clamp(budget.points - consumedOf(r) + back, budget.points), msBefore(budget, r, now));
  }
  return d;
}
