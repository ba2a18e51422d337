// The plugin's entry in `plugins:`, and the budget fields it adds to every
// key's and org's `limits`: requests and tokens per window, dollars per day,
// month or window, and whether the budgets are hard (a request without an
// output cap is given one that fits) or soft. `defaults` is the budget of
// every key whose entry names no budget of its own; without it such keys are
// unlimited (their org's limits still apply).
import { z } from 'zod';
import { intLike } from '../../src';

/** What the plugin adds to keys[].limits and orgs.<name>.limits. */
export const budgetFields = {
  requests: intLike(1, Number.MAX_SAFE_INTEGER).optional(),
  tokens: intLike(1, Number.MAX_SAFE_INTEGER).optional(),
  windowSeconds: intLike(1, 86_400 * 31).optional(),
  /** Dollars per dollarWindow, priced from the config's `pricing` (counted in nano-dollars: at most a million keeps them exact). */
  dollars: z.number().positive().max(1_000_000).optional(),
  dollarWindow: z.union([z.enum(['day', 'month']), intLike(1, 86_400 * 366)]).optional(),
  /** hard (default): concurrent requests can never together overspend; soft: a request without an output cap reserves defaultMaxTokens and may overshoot. */
  enforce: z.enum(['hard', 'soft']).optional(),
};

/**
 * What the plugin adds to keys[].limits and teams.<name>.limits beside the budgets: `perUser`, the
 * budget every end user of the key (or of the team's keys) gets without being declared (docs/teams.md#end-users).
 */
export const limitsFields = { ...budgetFields, perUser: z.strictObject(budgetFields).optional() };

/** A `limits` block as the plugin reads it: its own fields, the window 60 s and dollars by the month unless given, hard unless soft. */
export const budgetSchema = z.looseObject(budgetFields).transform((b) => ({
  requests: b.requests,
  tokens: b.tokens,
  windowSeconds: b.windowSeconds ?? 60,
  dollars: b.dollars,
  dollarWindow: b.dollarWindow ?? 'month',
  hard: b.enforce !== 'soft',
}));
export type Budget = z.infer<typeof budgetSchema>;

// Settings that moved to the core's `admission` section: named, so an old config says where they went.
const moved = (to: string) => z.never({ error: `moved: set ${to} instead` }).optional();

export const settingsSchema = z.strictObject({
  defaults: z.strictObject({ ...budgetFields, concurrency: moved('admission.keyConcurrency') }).optional(),
  /**
   * The output a request that names no max_tokens / max_completion_tokens may use: under a hard token or
   * dollar budget it is sent with a cap of at most this (less when less is left); under a soft one this is
   * what it reserves. 0: a hard budget's cap is all that is left, a soft one reserves only the prompt.
   */
  defaultMaxTokens: z.number().int().min(0).max(10_000_000).default(4096),
  queueTimeoutMs: moved('admission.queueTimeoutMs'),
  queueMax: moved('admission.queueMax'),
  leaseMs: moved('admission.leaseMs'),
});

export type RateLimitSettings = z.infer<typeof settingsSchema>;
