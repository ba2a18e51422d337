// What a client sees of the budgets: the OpenAI-style x-ratelimit-* headers,
// and the 429 that names the spent budget and when it refills (resets written
// as the core writes them: "1s", "6m0s", "1h2m3s").
import { formatReset, GatewayError, retryAfterSeconds, type RequestContext } from '../../src';
import type { BudgetKind, Scope } from './keys';
import type { Reading } from './policy';

const NAMES = {
  requests: ['x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests'],
  tokens: ['x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens'],
} as const;

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
