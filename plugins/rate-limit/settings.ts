// The plugin's entry in `plugins:`. `defaults` is the budget of every key whose
// entry names no `limits` of its own; without it such keys are unlimited
// (their org's limits still apply). The rest tune the in-flight limits and the
// token reservations.
import { z } from 'zod';
import { budgetSchema } from '../../src';

export const settingsSchema = z.strictObject({
  defaults: budgetSchema.optional(),
  /** Longest a request over an in-flight limit waits for a slot; 0 refuses it at once. */
  queueTimeoutMs: z.number().int().min(0).max(600_000).default(10_000),
  /** Most requests waiting on one limit, per replica; 0 refuses at once. */
  queueMax: z.number().int().min(0).max(100_000).default(100),
  /** How long a lease outlives a replica that died holding it (refreshed every third of it while the request runs). */
  leaseMs: z.number().int().min(300).max(3_600_000).default(30_000),
  /** Completion tokens reserved for a chat request that names no max_tokens / max_completion_tokens. */
  defaultMaxTokens: z.number().int().min(0).max(10_000_000).default(0),
});

export type RateLimitSettings = z.infer<typeof settingsSchema>;
