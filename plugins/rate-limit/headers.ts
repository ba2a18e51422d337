// What a client sees: the OpenAI-style x-ratelimit-* headers, and the 429 that
// names the spent budget and when it refills. Resets are written the way
// OpenAI writes them ("1s", "6m0s", "1h2m3s"), rounded up to whole seconds.
import { GatewayError, type RequestContext } from '../../src';
import type { BudgetKind, Scope } from './keys';
import type { Reading } from './policy';
import type { Held } from './attempt';
import type { ConcurrencyLimit, LeaseScope } from './scopes';

const NAMES = {
  requests: ['x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests'],
  tokens: ['x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens'],
} as const;

/** 12_000 → "12s", 360_000 → "6m0s", 3_723_000 → "1h2m3s"; rounded up, never negative. */
export function formatReset(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

/** Retry-After in whole seconds, at least 1. */
export const retryAfterSeconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

export function setRateLimitHeaders(ctx: RequestContext, kind: BudgetKind, reading: Reading): void {
  const [limit, remaining, reset] = NAMES[kind];
  ctx.setHeader(limit, reading.budget.limitText);
  ctx.setHeader(remaining, String(reading.remaining));
  ctx.setHeader(reset, formatReset(reading.msBeforeNext));
}

const OWNER: Record<Scope, string> = { key: "this API key's", org: "your organization's" };
const NOUN: Record<BudgetKind, [string, string]> = { requests: ['request', 'requests'], tokens: ['token', 'tokens'] };

export function refusalMessage(scope: Scope, kind: BudgetKind, points: number, windowSeconds: number, msBeforeNext: number): string {
  const [one, many] = NOUN[kind];
  const window = windowSeconds === 1 ? 'second' : `${windowSeconds} seconds`;
  return `Rate limit reached: ${OWNER[scope]} ${one} budget (${points} ${many} per ${window}) is used up. It refills in ${formatReset(Math.max(msBeforeNext, 1))}.`;
}

/** A token reservation that does not fit in what is left of a budget that is not yet used up. */
export function reservationMessage(scope: Scope, points: number, windowSeconds: number, left: number, reserve: number, msBeforeNext: number): string {
  const window = windowSeconds === 1 ? 'second' : `${windowSeconds} seconds`;
  return `Rate limit reached: ${OWNER[scope]} token budget (${points} tokens per ${window}) has ${left} left, fewer than the ${reserve} this request may use (its prompt and max_tokens). Ask for fewer tokens, or retry when it refills in ${formatReset(Math.max(msBeforeNext, 1))}.`;
}

export function rateLimited({ budget, msBeforeNext }: Reading, reserve = 1, left = 0): GatewayError {
  const message = budget.kind === 'tokens' && left > 0
    ? reservationMessage(budget.scope, budget.points, budget.windowSeconds, left, reserve, msBeforeNext)
    : refusalMessage(budget.scope, budget.kind, budget.points, budget.windowSeconds, msBeforeNext);
  return new GatewayError('rate_limited', message, {
    headers: { 'retry-after': String(retryAfterSeconds(msBeforeNext)) },
    details: { scope: budget.scope, budget: budget.kind },
  });
}

export const limiterUnavailable = (): GatewayError => new GatewayError('limiter_unavailable', 'The rate limiter cannot reach its store, so this request cannot be admitted now. Retry in a moment.', {
  headers: { 'retry-after': '1' },
});

export function setConcurrencyHeaders(ctx: RequestContext, { tightest }: Held): void {
  ctx.setHeader('x-ratelimit-limit-concurrency', String(tightest.limit.limit));
  ctx.setHeader('x-ratelimit-remaining-concurrency', String(tightest.remaining));
}

/** Why a request over an in-flight limit was refused: no queue, a full queue, its wait ran out, or a waiter of higher priority took its place. */
export type QueueRefusal = 'none' | 'full' | 'timeout' | 'displaced';

// The backend's limits are described, never named: a client is not told upstream names.
const IN_FLIGHT_OWNER: Record<LeaseScope, string> = {
  key: "this API key's limit",
  org: "your organization's limit",
  model: "this model's limit",
  upstream: "the limit of this model's backend",
};

const WHY: Record<QueueRefusal, (timeoutMs: number) => string> = {
  none: () => '',
  full: () => ', and the queue for a free slot is full',
  timeout: (ms) => `, and no slot came free within ${formatReset(ms)} of waiting`,
  displaced: () => ', and a request of higher priority took this one\'s place in the queue',
};

export function tooManyInFlight(limit: ConcurrencyLimit, why: QueueRefusal, timeoutMs: number): GatewayError {
  const message = `Too many requests at once: ${IN_FLIGHT_OWNER[limit.scope]} of ${limit.limit} in flight is reached${WHY[why](timeoutMs)}. Retry when one of them has finished.`;
  return new GatewayError('rate_limited', message, {
    headers: { 'retry-after': '1' },
    details: { scope: limit.scope, budget: 'concurrency' },
  });
}
