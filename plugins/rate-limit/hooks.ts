// onRequest: one round of limiter calls, all sent at once (consume one request
// from each request budget, read each token budget), then admit, refuse with
// 429, or answer 503 when Redis is out in failMode closed. onFinish: charge
// the request's tokens to each token budget it was admitted under.
import type { Logger } from 'pino';
import type { PluginHooks, RequestContext } from '../../src';
import { limiterUnavailable, rateLimited, setRateLimitHeaders } from './headers';
import type { StoreHealth } from './health';
import { decidedInProcess, giveBack } from './limiters';
import type { LimiterMetrics } from './metrics';
import { admitted, decide, type Policy } from './policy';

/** Per request: the policy it was admitted under (its token budgets are charged at the end). */
export interface RateLimitState { policy?: Policy }

// Resolves with the answer whether the limiter resolved or rejected (over budget, or an Error).
const settle = (answer: unknown): unknown => answer;
const ignore = (): void => undefined;

export interface HookDeps {
  policies: ReadonlyMap<string, Policy>;
  logger: Logger;
  metrics: LimiterMetrics;
  /** Present when the counts live in Redis. */
  health?: StoreHealth;
}

export function createHooks({ policies, logger, metrics, health }: HookDeps): PluginHooks<RateLimitState> {
  const observe = (results: readonly unknown[], unavailable: boolean): void => {
    let inProcess = false;
    for (const r of results) if (decidedInProcess(r)) { inProcess = true; break; }
    if (inProcess) metrics.fallback?.inc();
    health!.note(unavailable ? 'unavailable' : inProcess ? 'fallback' : 'shared');
  };

  async function admit(ctx: RequestContext, policy: Policy, state: RateLimitState): Promise<void> {
    const { requests, tokens } = policy;
    const pending: Array<Promise<unknown>> = [];
    for (const b of requests) pending.push(b.limiter.consume(b.key, 1).then(settle, settle));
    for (const b of tokens) pending.push(b.limiter.get(b.key).then(settle, settle));
    const results = await Promise.all(pending);
    const decision = decide(policy, results);
    if (health !== undefined) observe(results, decision.unavailable);
    if (decision.refused === undefined && !decision.unavailable) {
      if (decision.requests) setRateLimitHeaders(ctx, 'requests', decision.requests);
      if (decision.tokens) setRateLimitHeaders(ctx, 'tokens', decision.tokens);
      state.policy = policy;
      return;
    }
    // Refused: give back the requests counted by the budgets that had room, and what a
    // command that timed out will count when a frozen Redis runs it.
    for (let i = 0; i < requests.length; i++) giveBack(requests[i].limiter, requests[i].key, results[i], admitted(results[i], requests[i]));
    if (decision.refused === undefined) throw limiterUnavailable();
    if (decision.requests) setRateLimitHeaders(ctx, 'requests', decision.requests);
    if (decision.tokens) setRateLimitHeaders(ctx, 'tokens', decision.tokens);
    throw rateLimited(decision.refused);
  }

  return {
    state: () => ({}),

    onRequest(ctx, state) {
      const policy = ctx.principal === undefined ? undefined : policies.get(ctx.principal.id);
      if (policy !== undefined) return admit(ctx, policy, state);
    },

    onFinish(ctx, _outcome, state) {
      const policy = state.policy;
      if (policy === undefined || policy.tokens.length === 0) return;
      // The core fills usage from the backend, or estimates it (a backend that reports none, a stream cut short).
      if (ctx.usage === undefined || !(ctx.usage.total_tokens > 0)) return;
      const tokens = Math.ceil(ctx.usage.total_tokens);
      if (ctx.usage.estimated) logger.info({ requestId: ctx.id, key: ctx.principal?.id, tokens, estimated: true }, 'rate-limit: charged estimated tokens (the backend reported no usage)');
      const failed = health === undefined ? ignore : () => health.note('unavailable');
      for (const b of policy.tokens) b.limiter.penalty(b.key, tokens).catch(failed);
    },
  };
}
