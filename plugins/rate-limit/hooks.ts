// onRequest: one round of budget calls, all sent at once (one request from
// each request budget, the token reservation from each token budget); admit,
// refuse with 429 (giving back what was taken), or answer 503 when Redis is
// out in failMode closed. onFinish: settle the reservations with the real
// usage. (The in-flight slots are the core's: taken before these hooks run.)
import type { Logger } from 'pino';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { limiterUnavailable, type PluginHooks, type RequestContext, type StoreHealthNotes } from '../../src';
import { rateLimited, setRateLimitHeaders } from './headers';
import { decidedInProcess, giveBack, settle } from './limiters';
import { admitted, decide, type Policy, type PolicyOf } from './policy';
import { reservationOf, settlement, usedTokens } from './reservation';

/** Per request: the policy and reservation it was admitted under. */
export interface RateLimitState {
  policy?: Policy;
  /** Tokens reserved in each token budget, each budget's answer, and when it was made. */
  reserved?: { points: number; answers: readonly unknown[]; at: number };
}

// Resolves with the answer whether the limiter resolved or rejected (over budget, or an Error).
const same = (answer: unknown): unknown => answer;
const ignore = (): void => undefined;

export interface HookDeps {
  policies: PolicyOf;
  defaultMaxTokens: number;
  logger: Logger;
  /** Present when the counts live in Redis: where each request's budgets were decided. */
  health?: StoreHealthNotes;
}

export function createHooks({ policies, defaultMaxTokens, logger, health }: HookDeps): PluginHooks<RateLimitState> {
  const observe = (results: readonly unknown[], unavailable: boolean): void => {
    let inProcess = false;
    for (const r of results) if (decidedInProcess(r)) { inProcess = true; break; }
    health!.decided(inProcess, unavailable);
  };

  async function admitBudgets(ctx: RequestContext, policy: Policy, state: RateLimitState): Promise<void> {
    const { requests, tokens } = policy;
    const reserve = tokens.length === 0 ? 0 : reservationOf(ctx, defaultMaxTokens);
    const pending: Array<Promise<unknown>> = [];
    for (const b of requests) pending.push(b.limiter.consume(b.key, 1).then(same, same));
    for (const b of tokens) pending.push(b.limiter.consume(b.key, reserve).then(same, same));
    const results = await Promise.all(pending);
    const decision = decide(policy, results, reserve);
    if (health !== undefined) observe(results, decision.unavailable);
    if (decision.requests) setRateLimitHeaders(ctx, 'requests', decision.requests);
    if (decision.tokens) setRateLimitHeaders(ctx, 'tokens', decision.tokens);
    const n = requests.length;
    if (decision.refused === undefined && !decision.unavailable) {
      if (tokens.length > 0) ctx.setHeader('x-ratelimit-reserved-tokens', String(reserve));
      state.policy = policy;
      state.reserved = { points: reserve, answers: results.slice(n), at: Date.now() };
      return;
    }
    // Refused: give back the requests counted by the budgets that had room, every reservation,
    // and what a command that timed out will count when a frozen Redis runs it.
    for (let i = 0; i < n; i++) giveBack(requests[i].limiter, requests[i].key, results[i], admitted(results[i], requests[i]) ? 1 : 0);
    for (let i = 0; i < tokens.length; i++) giveBack(tokens[i].limiter, tokens[i].key, results[n + i], results[n + i] instanceof RateLimiterRes ? reserve : 0);
    if (decision.refused === undefined) throw limiterUnavailable();
    throw rateLimited(decision.refused, reserve, decision.left);
  }

  function settleTokens(ctx: RequestContext, policy: Policy, reserved: NonNullable<RateLimitState['reserved']>): void {
    const used = usedTokens(ctx.usage);
    if (used > 0 && ctx.usage!.estimated) logger.info({ requestId: ctx.id, key: ctx.principal?.id, tokens: used, estimated: true }, 'rate-limit: charged estimated tokens (the backend reported no usage)');
    const failed = health === undefined ? ignore : () => health.decided(false, true);
    const now = Date.now();
    policy.tokens.forEach((b, i) => {
      const answer = reserved.answers[i];
      const windowEnded = answer instanceof RateLimiterRes && now >= reserved.at + answer.msBeforeNext;
      settle(b.limiter, b.key, answer, settlement(reserved.points, used, windowEnded), failed);
    });
  }

  return {
    state: () => ({}),

    onRequest(ctx, state) {
      const policy = ctx.principal === undefined ? undefined : policies(ctx.principal);
      if (policy !== undefined) return admitBudgets(ctx, policy, state);
    },

    onFinish(ctx, _outcome, state) {
      const { policy, reserved } = state;
      if (policy !== undefined && reserved !== undefined && policy.tokens.length > 0) settleTokens(ctx, policy, reserved);
    },
  };
}
