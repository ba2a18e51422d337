// onRequest: one round of budget calls, all sent at once (one request from
// each request budget, a reservation from each token and dollar budget);
// admit, refuse with 429 (giving back what was taken), or answer 503 when
// Redis is out in failMode closed. A request without an output cap under a
// hard budget takes room for defaultMaxTokens, keeps what fits, gives back
// the rest and goes to its backend with that cap. onFinish: settle the
// reservations with the real usage and cost. (The in-flight slots are the
// core's: taken before these hooks run.)
import type { Logger } from 'pino';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { audioCost, decidedInProcess, giveBack, imageCost, limiterUnavailable, settle, type PluginHooks, type Price, type PriceList, type RequestContext, type StoreHealthNotes } from '../../src';
import { decide, type Fit } from './decide';
import { amountText, rateLimited, setRateLimitHeaders } from './headers';
import { admitted, keyAt, type CompiledBudget, type Policy, type PolicyOf } from './policy';
import { askOf, dearest, largestCap, need, settlement, used, type Ask } from './reservation';

/** Per request: the policy it was admitted under and what it reserved. */
export interface RateLimitState {
  policy?: Policy;
  /** The reservation budgets it reserved in, the store key, points kept and answer of each, and when. */
  reserved?: { budgets: readonly CompiledBudget[]; keys: string[]; points: number[]; answers: readonly unknown[]; at: number };
}

// Resolves with the answer whether the limiter resolved or rejected (over budget, or an Error).
const same = (answer: unknown): unknown => answer;
const ignore = (): void => undefined;

export interface HookDeps {
  policies: PolicyOf;
  defaultMaxTokens: number;
  prices: PriceList;
  logger: Logger;
  /** Present when the counts live in Redis: where each request's budgets were decided. */
  health?: StoreHealthNotes;
}

export function createHooks({ policies, defaultMaxTokens, prices, logger, health }: HookDeps): PluginHooks<RateLimitState> {
  const observe = (results: readonly unknown[], unavailable: boolean): void => {
    let inProcess = false;
    for (const r of results) if (decidedInProcess(r)) { inProcess = true; break; }
    health!.decided(inProcess, unavailable);
  };

  /** A model's price in nano-dollars a token, for requests with no fallbacks (most): made once per price entry of the config. */
  const perToken = new WeakMap<Price, Ask['price']>();
  const ownPrice = (model: string): Ask['price'] => {
    const price = prices.of(model);
    if (price === undefined) return undefined;
    let nanos = perToken.get(price);
    if (nanos === undefined) perToken.set(price, (nanos = dearest([price])));
    return nanos;
  };

  /** Prices the ask at the dearest price the request may be charged at (its model's and its fallbacks'); false when none is priced. */
  function priceOf(ctx: RequestContext, ask: Ask): boolean {
    if (ctx.model === undefined) return false;
    const fallbacks = ctx.route?.fallbacks ?? [];
    const price = fallbacks.length === 0 ? ownPrice(ctx.model) : dearest([ctx.model, ...fallbacks].map((m) => prices.of(m)));
    if (price === undefined) return false;
    ask.price = price;
    if (ctx.image !== undefined) ask.fixedNanos = Math.max(...[ctx.model, ...fallbacks].map((m) => imageNanos(ctx, m)));
    if (ctx.audio !== undefined) ask.fixedNanos = Math.max(...[ctx.model, ...fallbacks].map((m) => audioNanos(ctx, m)));
    return true;
  }
  /** An audio request's bound: the most seconds its upload can hold, or its characters of speech, at the model's price. */
  const audioNanos = (ctx: RequestContext, model: string): number => {
    const price = prices.of(model);
    return price === undefined ? 0 : Math.ceil(audioCost(price, ctx.audio!.boundSeconds, ctx.audio!.characters) * 1e9);
  };
  const imageNanos = (ctx: RequestContext, model: string): number => {
    const price = prices.of(model);
    const { n, size } = ctx.image!.model_params;
    const cost = price === undefined ? undefined : imageCost(price, typeof n === 'number' && n > 0 ? n : 1, typeof size === 'string' ? size : undefined);
    return Math.ceil((cost ?? 0) * 1e9);
  };

  /** A request without an output cap under a hard budget: the most it may be given (Infinity: output costs its budgets nothing). */
  function wantOf(reserves: readonly CompiledBudget[], ask: Ask): number {
    if (defaultMaxTokens > 0) return defaultMaxTokens;
    let most = -1;
    for (const b of reserves) most = Math.max(most, largestCap(b, ask, b.points));
    return most;
  }

  async function admitBudgets(ctx: RequestContext, policy: Policy, state: RateLimitState): Promise<void> {
    const { requests } = policy;
    const ask = askOf(ctx, policy.hard);
    const reserves = policy.reserves.length === policy.tokens.length || priceOf(ctx, ask) ? policy.reserves : policy.tokens;
    let fit: Fit | undefined;
    if (ask.cap === undefined && policy.hard && reserves.length > 0) {
      const want = wantOf(reserves, ask);
      if (want >= 1 && want < Infinity) fit = { ask, want };
    }
    const cap = fit?.want ?? ask.cap ?? defaultMaxTokens;
    const now = Date.now();
    const amounts: number[] = [];
    const keys: string[] = [];
    const pending: Array<Promise<unknown>> = [];
    for (const b of requests) pending.push(b.limiter.consume(b.key, 1).then(same, same));
    for (const b of reserves) {
      const amount = need(b, ask, cap);
      const key = keyAt(b, now);
      amounts.push(amount);
      keys.push(key);
      pending.push(b.limiter.consume(key, amount).then(same, same));
    }
    const results = await Promise.all(pending);
    const decision = decide(requests, reserves, results, amounts, now, fit);
    if (health !== undefined) observe(results, decision.unavailable);
    if (decision.requests) setRateLimitHeaders(ctx, 'requests', decision.requests);
    if (decision.tokens) setRateLimitHeaders(ctx, 'tokens', decision.tokens);
    if (decision.dollars) setRateLimitHeaders(ctx, 'dollars', decision.dollars);
    const n = requests.length;
    const { kept } = decision;
    // What a reservation took beyond what it keeps (all of it, when refused) goes back now.
    for (let j = 0; j < reserves.length; j++) {
      const r = results[n + j];
      const back = r instanceof RateLimiterRes ? amounts[j] - kept[j] : 0;
      if (decision.refused !== undefined || decision.unavailable) giveBack(reserves[j].limiter, keys[j], r, back);
      else if (back > 0) settle(reserves[j].limiter, keys[j], r, -back, ignore);
    }
    if (decision.refused === undefined && !decision.unavailable) {
      if (decision.cap !== undefined) ctx.capOutput(decision.cap);
      // Budgets of one kind keep the same (one ask, one cap): a header each kind.
      let tokens: number | undefined;
      let dollars: number | undefined;
      for (let j = 0; j < reserves.length; j++) {
        if (reserves[j].kind === 'tokens') tokens = kept[j];
        else dollars = kept[j];
      }
      if (tokens !== undefined) ctx.setHeader('x-ratelimit-reserved-tokens', String(tokens));
      if (dollars !== undefined) ctx.setHeader('x-ratelimit-reserved-dollars', amountText('dollars', dollars));
      state.policy = policy;
      state.reserved = { budgets: reserves, keys, points: kept, answers: results.slice(n), at: now };
      return;
    }
    // Refused: give back the requests counted by the budgets that had room,
    // and what a command that timed out will count when a frozen Redis runs it.
    for (let i = 0; i < n; i++) giveBack(requests[i].limiter, requests[i].key, results[i], admitted(results[i], requests[i]) ? 1 : 0);
    if (decision.refused === undefined) throw limiterUnavailable();
    throw rateLimited(decision.refused, decision.left, decision.asked);
  }

  function settleReserves(ctx: RequestContext, reserved: NonNullable<RateLimitState['reserved']>): void {
    if (ctx.usage?.estimated === true && ctx.usage.total_tokens > 0) {
      logger.info({ requestId: ctx.id, key: ctx.principal?.id, tokens: Math.ceil(ctx.usage.total_tokens), estimated: true }, 'rate-limit: charged estimated tokens (the backend reported no usage)');
    }
    const failed = health === undefined ? ignore : () => health.decided(false, true);
    const now = Date.now();
    reserved.budgets.forEach((b, i) => {
      const answer = reserved.answers[i];
      // A calendar window's count has a key of its own: settling into an ended one touches nothing current.
      const windowEnded = b.calendar === undefined && answer instanceof RateLimiterRes && now >= reserved.at + answer.msBeforeNext;
      settle(b.limiter, reserved.keys[i], answer, settlement(reserved.points[i], used(b, ctx.usage, ctx.cost), windowEnded), failed);
    });
  }

  return {
    state: () => ({}),

    onRequest(ctx, state) {
      const policy = ctx.principal === undefined ? undefined : policies(ctx.principal, ctx.user);
      if (policy !== undefined) return admitBudgets(ctx, policy, state);
    },

    onFinish(ctx, _outcome, state) {
      const { policy, reserved } = state;
      if (policy !== undefined && reserved !== undefined && reserved.budgets.length > 0) settleReserves(ctx, reserved);
    },
  };
}
