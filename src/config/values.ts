// Value forms the config accepts in several places, as zod schemas. A leaf
// like schema.ts: it imports nothing from the core.
import { z } from 'zod';

/** Accepts 8080 or "8080" (values often come from ${ENV} interpolation). */
export const intLike = (min: number, max: number) =>
  z.preprocess((v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v), z.number().int().min(min).max(max));

const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };
/** A byte count, or a size like "1mb" / "512kb" (binary units, as Express writes them); parsed to bytes at load. */
export const sizeLike = z.union([
  z.number().int().positive(),
  z.string().regex(/^\d+(\.\d+)?\s*(b|kb|mb|gb)?$/i, 'must look like 1mb, 512kb or a byte count').transform((s) => {
    const [, amount, unit] = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(s)!;
    return Math.floor(Number(amount) * SIZE_UNITS[(unit || 'b').toLowerCase()]);
  }),
]);
