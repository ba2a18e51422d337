// Reservations. On admission a request reserves, against each token budget,
// its prompt plus the output it may ask for (its output cap, times n), and
// against each dollar budget the same
// priced at the dearest of its model and fallbacks, in whole nano-dollars; so
// concurrent requests cannot together spend more than the budget. A request
// that names no cap under a hard budget is given the largest that fits
// (capOf); under a soft one it reserves defaultMaxTokens. At the end the real
// usage (or cost) is charged and the rest given back; a request that never
// reached the backend gives back all of it. The prompt is reserved at its
// upper bound (UTF-8 bytes, see promptTokenBound) in a hard budget: an
// estimate's error would be multiplied by every request in flight, each of
// which may have reserved too little, so only a bound holds a hard budget;
// a soft one reserves the typical estimate.
import { outputCapOf, promptEstimate, promptTokenBound, type Price, type RequestContext, type Usage } from '../../src';
import type { CompiledBudget } from './policy';

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined);
const NANOS = 1e9;

/** What a request asks of its reservation budgets, and at what price a token. */
export interface Ask {
  /** The prompt estimate, at least 1 token: what a soft budget reserves. */
  prompt: number;
  /** The most prompt tokens a backend can count: what a hard budget reserves (the estimate when no budget is hard). */
  bound: number;
  /** Choices: each may use the cap. */
  n: number;
  /** The output cap the request names; undefined when it names none. */
  cap?: number;
  /** Nano-dollars per input and output token at the dearest model the request may reach; undefined: not priced. */
  price?: { input: number; output: number };
  /** An image request's cost, or an audio request's bound (its seconds or characters), in nano-dollars when priced: the whole of what it reserves in a dollar budget. */
  fixedNanos?: number;
}

/** The dearest of the prices the request may be charged at (its model's, its fallbacks'), in nano-dollars a token. */
export function dearest(prices: ReadonlyArray<Price | undefined>): Ask['price'] {
  let out: Ask['price'];
  for (const p of prices) {
    if (p === undefined) continue;
    const input = Math.max(p.input, p.cachedInput) * NANOS;
    const output = p.output * NANOS;
    out = out === undefined ? { input, output } : { input: Math.max(out.input, input), output: Math.max(out.output, output) };
  }
  return out;
}

/** What the request asks for (its price added by the caller); `hard`: some budget it reserves in is hard. */
export function askOf(ctx: RequestContext, hard: boolean): Ask {
  const prompt = Math.max(promptEstimate(ctx), 1);
  const bound = hard ? Math.max(promptTokenBound(ctx), prompt) : prompt;
  const params = ctx.chat?.model_params;
  if (params === undefined) return { prompt, bound, n: 1, cap: 0 };
  return { prompt, bound, n: count(params.n) ?? 1, cap: outputCapOf(params) };
}

/** What a budget reserves for an output cap of `cap` tokens a choice. */
export function need(budget: CompiledBudget, ask: Ask, cap: number): number {
  const prompt = budget.hard ? ask.bound : ask.prompt;
  if (budget.kind === 'tokens') return prompt + cap * ask.n;
  if (ask.fixedNanos !== undefined) return ask.fixedNanos;
  const price = ask.price!;
  return Math.ceil(prompt * price.input + cap * ask.n * price.output);
}

/** The largest cap whose reservation fits in `room` (-1: not even the prompt fits; Infinity: output costs this budget nothing). */
export function largestCap(budget: CompiledBudget, ask: Ask, room: number): number {
  if (need(budget, ask, 0) > room) return -1;
  const perToken = budget.kind === 'tokens' ? ask.n : ask.price!.output * ask.n;
  if (perToken === 0) return Infinity;
  let cap = Math.floor((room - need(budget, ask, 0)) / perToken);
  while (cap > 0 && need(budget, ask, cap) > room) cap--; // the nano-dollar rounding
  return cap;
}

/** What a finished request used of a budget: its tokens, or its cost in nano-dollars; 0 when nothing came of it. */
export function used(budget: CompiledBudget, usage: Usage | undefined, cost: number | undefined): number {
  if (budget.kind === 'dollars') return cost === undefined ? 0 : Math.round(cost * NANOS);
  return usage === undefined || !(usage.total_tokens > 0) ? 0 : Math.ceil(usage.total_tokens);
}

/**
 * The correction once the usage is known: a positive number to charge more,
 * negative to give back. A reservation made in a window that has since ended
 * was charged to that window: only an overrun is charged to the new one.
 */
export function settlement(reserved: number, spent: number, windowEnded: boolean): number {
  const diff = spent - reserved;
  return windowEnded ? Math.max(diff, 0) : diff;
}
