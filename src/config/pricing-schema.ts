// Prices per model (docs/spend.md): dollars per million tokens of each kind,
// per image by size, per minute of audio and per million characters of
// speech. The first entry whose model glob matches prices a request; a model
// no entry matches costs nothing and is counted as such.
import { z } from 'zod';

const dollars = z.number().min(0).max(1_000_000);
const imageSize = z.string().regex(/^(?:[1-9]\d{0,4}x[1-9]\d{0,4}|\*)$/, 'must be <width>x<height> (e.g. 1024x1024) or * for any size');

export const priceSchema = z.strictObject({
  /** The client's model id, or a glob ("gpt-4o*"). */
  model: z.string().min(1),
  /** Dollars per million prompt tokens. */
  input: dollars.default(0),
  /** Dollars per million prompt tokens read from the backend's prompt cache; default: input. */
  cachedInput: dollars.optional(),
  /** Dollars per million completion tokens (reasoning included). */
  output: dollars.default(0),
  /** Dollars per image, by size; "*" for any size not listed. */
  images: z.record(imageSize, dollars).optional(),
  /** Dollars per minute of audio transcribed or translated (billed by the second). */
  audioMinute: dollars.default(0),
  /** Dollars per million characters of speech's input. */
  characters: dollars.default(0),
});

export const pricingSchema = z.array(priceSchema).max(10_000).default([]);

export type PriceConfig = z.infer<typeof priceSchema>;
