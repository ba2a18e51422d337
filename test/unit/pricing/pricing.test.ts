// Prices: the first matching glob prices a model, cached prompt tokens at
// their own price, images per size, and a request's cost at the finish.
import { compilePrices, costText, imageCost, roundCost, tokenCost } from '../../../src/pricing/prices';
import { requestCost } from '../../../src/pricing/request-cost';
import { pricingSchema } from '../../../src/config/pricing-schema';
import type { Outcome, RequestContext } from '../../../src/contract/plugin';

const prices = compilePrices(pricingSchema.parse([
  { model: 'gpt-4o-mini', input: 0.15, cachedInput: 0.075, output: 0.6 },
  { model: 'gpt-4o*', input: 2.5, output: 10 },
  { model: 'dall-e-*', images: { '1024x1024': 0.04, '*': 0.08 } },
]));
const ok: Outcome = { status: 200, reason: null, aborted: false, durationMs: 1 };
const usage = (prompt: number, completion: number, cached?: number) => ({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, estimated: false, cached_tokens: cached });
const ctx = (over: Partial<RequestContext>): RequestContext => ({ model: 'gpt-4o-mini', ...over }) as RequestContext;

describe('prices', () => {
  it('takes the first entry whose glob matches', () => {
    expect(prices.of('gpt-4o-mini')?.output).toBeCloseTo(0.6e-6, 15);
    expect(prices.of('gpt-4o-2024')?.output).toBeCloseTo(10e-6, 15);
    expect(prices.of('llama')).toBeUndefined();
    expect(prices.empty).toBe(false);
    expect(compilePrices([]).empty).toBe(true);
  });

  it('prices cached prompt tokens at their own price, input when none is given', () => {
    expect(tokenCost(prices.of('gpt-4o-mini')!, usage(1_000_000, 1_000_000, 400_000))).toBe(0.6 * 0.15 + 0.4 * 0.075 + 0.6);
    expect(tokenCost(prices.of('gpt-4o')!, usage(1000, 100, 1000))).toBe(roundCost(1000 * 2.5e-6 + 100 * 10e-6));
  });

  it('rounds to the nano-dollar, so sums kept as integers agree', () => {
    const c = tokenCost(prices.of('gpt-4o-mini')!, usage(7, 3));
    expect(Number.isInteger(Math.round(c * 1e9))).toBe(true);
    expect(Math.abs(c * 1e9 - Math.round(c * 1e9))).toBeLessThan(1e-6);
  });

  it('writes dollars to at most nine decimals, trailing zeros dropped, never in exponent form', () => {
    const cases: Array<[number, string]> = [[0, '0'], [25, '25'], [12.5, '12.5'], [1e-7, '0.0000001'], [0.000123, '0.000123'], [1.000000001, '1.000000001'], [0.1 + 0.2, '0.3'], [1e-10, '0'], [0.0000000006, '0.000000001'], [1234567.89, '1234567.89'], [0.99999999999, '1']];
    for (const [dollars, text] of cases) expect(costText(dollars)).toBe(text);
  });

  it('prices images by size, "*" for the rest, nothing for a model without image prices', () => {
    expect(imageCost(prices.of('dall-e-3')!, 2, '1024x1024')).toBe(0.08);
    expect(imageCost(prices.of('dall-e-3')!, 1, '512x512')).toBe(0.08);
    expect(imageCost(prices.of('gpt-4o')!, 1, '1024x1024')).toBeUndefined();
  });

  it('costs a request from its usage; nothing for an unpriced model, a failed image or no usage', () => {
    expect(requestCost(prices, ctx({ usage: usage(100, 10) }), ok)).toBe(roundCost(100 * 0.15e-6 + 10 * 0.6e-6));
    expect(requestCost(prices, ctx({ model: 'llama', usage: usage(100, 10) }), ok)).toBeUndefined();
    expect(requestCost(prices, ctx({}), ok)).toBe(0);
    const image = { model: 'dall-e-3', prompt: 'x', model_params: { n: 3, size: '1024x1024' }, texts: [] };
    expect(requestCost(prices, ctx({ model: 'dall-e-3', image }), ok)).toBe(0.12);
    expect(requestCost(prices, ctx({ model: 'dall-e-3', image }), { ...ok, status: 502 })).toBe(0);
  });

  it('refuses a size that is not <width>x<height> or *', () => {
    expect(pricingSchema.safeParse([{ model: 'x', images: { big: 1 } }]).success).toBe(false);
    expect(pricingSchema.safeParse([{ model: 'x', input: -1 }]).success).toBe(false);
  });
});
