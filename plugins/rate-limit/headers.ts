// What a client sees of the budgets: the OpenAI-style x-ratelimit-* headers
// (and the same three for dollars), and the 429 that names the spent budget
// and when it refills (resets written as the core writes them: "1s", "6m0s",
// "1h2m3s"; a calendar window's also as the time it starts again).
import { costText, formatReset, GatewayError, retryAfterSeconds, type RequestContext } from '../../src';
import type { Reading } from './decide';
import type { BudgetKind, Scope } from './keys';

const NAMES = {
  requests: ['x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests'],
  tokens: ['x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens'],
  dollars: ['x-ratelimit-limit-dollars', 'x-ratelimit-remaining-dollars', 'x-ratelimit-reset-dollars'],
} as const;

/** A count as the client reads it: dollar budgets count nano-dollars. */
export const amountText = (kind: BudgetKind, points: number): string => (kind === 'dollars' ? costText(points / 1e9) : String(points));

export function setRateLimitHeaders(ctx: RequestContext, kind: BudgetKind, reading: Reading): void {
  const [limit, remaining, reset] = NAMES[kind];
  ctx.setHeader(limit, reading.budget.limitText);
  ctx.setHeader(remaining, amountText(kind, reading.remaining));
  ctx.setHeader(reset, formatReset(reading.msBeforeNext));
}

const OWNER: Record<Scope, string> = { user: 'your per-user', key: "this API key's", team: "your team's", org: "your organization's" };
const NOUN: Record<BudgetKind, [string, string]> = { requests: ['request', 'requests'], tokens: ['token', 'tokens'], dollars: ['dollar', 'dollars'] };

/** "(50 requests per 60 seconds)", "($25 per month)". */
function size(kind: BudgetKind, points: number, window: string): string {
  return kind === 'dollars' ? `$${amountText(kind, points)} ${window}` : `${points} ${NOUN[kind][1]} ${window}`;
}

/** "in 12s" (a calendar window: "in 3h2m0s (at 2026-12-01T00:00:00Z)"). */
function refills(msBeforeNext: number, calendar: boolean): string {
  const ms = Math.max(msBeforeNext, 1);
  if (!calendar) return `in ${formatReset(ms)}`;
  const at = new Date(Math.round((Date.now() + ms) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  return `in ${formatReset(ms)} (at ${at})`;
}

export function refusalMessage(scope: Scope, kind: BudgetKind, points: number, window: string, msBeforeNext: number, calendar = false): string {
  return `Rate limit reached: ${OWNER[scope]} ${NOUN[kind][0]} budget (${size(kind, points, window)}) is used up. It refills ${refills(msBeforeNext, calendar)}.`;
}

/** A reservation that does not fit in what is left of a budget that is not yet used up. */
export function reservationMessage(reading: Reading, left: number, asked: number): string {
  const { budget, msBeforeNext } = reading;
  const what = budget.kind === 'dollars'
    ? `$${amountText('dollars', left)} left, less than the $${amountText('dollars', asked)} this request may cost (its prompt and output cap, at its model's price)`
    : `${left} left, fewer than the ${asked} this request may use (its prompt and max_tokens)`;
  return `Rate limit reached: ${OWNER[budget.scope]} ${NOUN[budget.kind][0]} budget (${size(budget.kind, budget.points, budget.window)}) has ${what}. Ask for fewer tokens, or retry when it refills ${refills(msBeforeNext, budget.calendar !== undefined)}.`;
}

export function rateLimited(reading: Reading, left = 0, asked = 0): GatewayError {
  const { budget, msBeforeNext } = reading;
  const message = budget.kind !== 'requests' && left > 0
    ? reservationMessage(reading, left, asked)
    : refusalMessage(budget.scope, budget.kind, budget.points, budget.window, msBeforeNext, budget.calendar !== undefined);
  return new GatewayError('rate_limited', message, {
    param: budget.scope,
    headers: { 'retry-after': String(retryAfterSeconds(msBeforeNext)) },
    details: { scope: budget.scope, budget: budget.kind },
  });
}
