// The plugin's entry in `plugins:`, and the budget fields it adds to every
// key's and org's `limits`: requests and tokens per window. `defaults` is the
// budget of every key whose entry names no budget of its own; without it such
// keys are unlimited (their org's limits still apply).
import { z } from 'zod';
import { intLike } from '../../src';

/** What the plugin adds to keys[].limits and orgs.<name>.limits. */
export const budgetFields = {
  requests: intLike(1, Number.MAX_SAFE_INTEGER).optional(),
  tokens: intLike(1, Number.MAX_SAFE_INTEGER).optional(),
  windowSeconds: intLike(1, 86_400 * 31).optional(),
};

/** A `limits` block as the plugin reads it: its own fields, the window 60 s unless given. */
export const budgetSchema = z.looseObject(budgetFields).transform((b) => ({ requests: b.requests, tokens: b.tokens, windowSeconds: b.windowSeconds ?? 60 }));
export type Budget = z.infer<typeof budgetSchema>;

// Settings that moved to the core's `admission` section: named, so an old config says where they went.
const moved = (to: string) => z.never({ error: `moved: set ${to} instead` }).optional();

export const settingsSchema = z.strictObject({
  defaults: z.strictObject({ ...budgetFields, concurrency: moved('admission.keyConcurrency') }).optional(),
  /** Completion tokens reserved for a chat request that names no max_tokens / max_completion_tokens. */
  defaultMaxTokens: z.number().int().min(0).max(10_000_000).default(0),
  queueTimeoutMs: moved('admission.queueTimeoutMs'),
  queueMax: moved('admission.queueMax'),
  leaseMs: moved('admission.leaseMs'),
});

export type RateLimitSettings = z.infer<typeof settingsSchema>;
