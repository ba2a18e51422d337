// What a client sees of the in-flight limits: the x-ratelimit-*-concurrency
// headers, and the 429 that says which limit is full and why the wait for a
// slot ended. Resets are written the way OpenAI writes them ("1s", "6m0s",
// "1h2m3s"), rounded up to whole seconds. Budgets (a plugin) word theirs with
// the same helpers, from the public API.
import { GatewayError } from '../contract/errors';
import type { RequestContext } from '../contract/plugin';
import type { Held } from './attempt';
import type { ConcurrencyLimit, LeaseScope } from '../contract/admission';

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

export const limiterUnavailable = (): GatewayError => new GatewayError('limiter_unavailable', 'The rate limiter cannot reach its store, so this request cannot be admitted now. Retry in a moment.', {
  headers: { 'retry-after': '1' },
});

export function setConcurrencyHeaders(ctx: Pick<RequestContext, 'setHeader'>, { tightest }: Held): void {
  ctx.setHeader('x-ratelimit-limit-concurrency', String(tightest.limit.limit));
  ctx.setHeader('x-ratelimit-remaining-concurrency', String(tightest.remaining));
}

/** Why a request over an in-flight limit was refused: no queue, a full queue, its wait ran out, or a waiter of higher priority took its place. */
export type QueueRefusal = 'none' | 'full' | 'timeout' | 'displaced';

// The backend's limits are described, never named: a client is not told upstream names.
const IN_FLIGHT_OWNER: Partial<Record<LeaseScope, string>> = {
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
  const message = `Too many requests at once: ${IN_FLIGHT_OWNER[limit.scope] ?? `the ${limit.scope} limit`} of ${limit.limit} in flight is reached${WHY[why](timeoutMs)}. Retry when one of them has finished.`;
  return new GatewayError('rate_limited', message, {
    headers: { 'retry-after': '1' },
    details: { scope: limit.scope, budget: 'concurrency' },
  });
}
