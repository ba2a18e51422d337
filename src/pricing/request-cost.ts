// What one finished request cost, from the same usage the token budgets
// charge (streams cut short included: their usage is the estimate made at the
// finish). Images are priced per image, for an answer that was sent whole.
import type { Outcome, RequestContext } from '../contract/plugin';
import type { PriceList } from '../contract/types';
import { imageCost, tokenCost } from './prices';

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined);

/** Dollars, or undefined when no price names the model (or the request reached no model, or is not usage: a token count, a stored response). */
export function requestCost(prices: PriceList, ctx: RequestContext, outcome: Pick<Outcome, 'status' | 'aborted'>): number | undefined {
  if (prices.empty || ctx.model === undefined || ctx.endpoint === 'models') return undefined;
  const price = prices.of(ctx.model);
  if (price === undefined) return undefined;
  if (ctx.image !== undefined) {
    if (outcome.status >= 300 || outcome.aborted) return 0;
    const params = ctx.image.model_params;
    return imageCost(price, count(params.n) ?? 1, typeof params.size === 'string' ? params.size : undefined) ?? 0;
  }
  return ctx.usage === undefined ? 0 : tokenCost(price, ctx.usage);
}
