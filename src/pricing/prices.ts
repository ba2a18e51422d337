// The price list a config compiles into, and what a request cost. Costs are
// dollars rounded to the nano-dollar, so sums kept as integers (Math.round
// of cost × 1e9) in the spend store, the usage export and the metrics agree.
import { compileGlob, type Matcher } from '../auth/glob';
import type { PriceConfig } from '../config/pricing-schema';
import type { Price, PriceList, Usage } from '../contract/types';

const PER_MILLION = 1e-6;
/** A client's model ids are unbounded (glob routes): the cache of lookups is not. */
const CACHE_MAX = 4096;

/** Dollars to the nano-dollar. */
export const roundCost = (dollars: number): number => Math.round(dollars * 1e9) / 1e9;

/** Dollars to at most nine decimals, never in exponent form (1e-7 is 0.0000001): the cost header, CSV, the dollar budgets' headers. */
export function costText(dollars: number): string {
  const nanos = Math.round(dollars * 1e9);
  const whole = Math.floor(nanos / 1e9);
  let frac = nanos - whole * 1e9;
  if (frac === 0) return String(whole);
  let digits = 9;
  for (; frac % 10 === 0; digits--) frac /= 10;
  return `${whole}.${String(frac).padStart(digits, '0')}`;
}

/** What `usage` cost at `price`: its tokens (cached prompt tokens at the cached price), and its audio seconds and characters when it has them. */
export function tokenCost(price: Price, usage: Usage): number {
  const prompt = Math.max(usage.prompt_tokens, 0);
  const cached = Math.min(Math.max(usage.cached_tokens ?? 0, 0), prompt);
  const completion = Math.max(usage.completion_tokens, 0);
  const tokens = (prompt - cached) * price.input + cached * price.cachedInput + completion * price.output;
  return roundCost(tokens + audioCost(price, usage.audio_seconds ?? 0, usage.characters ?? 0));
}

/** What `seconds` of audio and `characters` of speech cost at `price` (unrounded: a part of a cost). */
export const audioCost = (price: Price, seconds: number, characters: number): number =>
  Math.max(seconds, 0) * (price.audioSecond ?? 0) + Math.max(characters, 0) * (price.character ?? 0);

/** What `n` images of `size` cost at `price`: undefined when it names no price for images. */
export function imageCost(price: Price, n: number, size: string | undefined): number | undefined {
  const each = price.images === undefined ? undefined : (size === undefined ? undefined : price.images[size]) ?? price.images['*'];
  return each === undefined ? undefined : roundCost(each * n);
}

class Prices implements PriceList {
  private readonly cache = new Map<string, Price | null>();

  constructor(private readonly entries: ReadonlyArray<{ matches: Matcher; price: Price }>) {}

  get empty(): boolean {
    return this.entries.length === 0;
  }

  of(model: string): Price | undefined {
    const hit = this.cache.get(model);
    if (hit !== undefined) return hit ?? undefined;
    const found = this.entries.find((e) => e.matches(model))?.price;
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(model, found ?? null);
    return found;
  }
}

export function compilePrices(configs: readonly PriceConfig[]): PriceList {
  return new Prices(configs.map((c) => ({
    matches: compileGlob(c.model),
    price: {
      input: c.input * PER_MILLION,
      cachedInput: (c.cachedInput ?? c.input) * PER_MILLION,
      output: c.output * PER_MILLION,
      images: c.images,
      audioSecond: c.audioMinute / 60,
      character: c.characters * PER_MILLION,
    },
  })));
}
