// The plugin's entry in `plugins:`. `defaults` is the budget of every key whose
// entry names no `limits` of its own; without it such keys are unlimited
// (their org's limits still apply).
import { z } from 'zod';
import { budgetSchema } from '../../src';

export const settingsSchema = z.strictObject({
  defaults: budgetSchema.optional(),
});

export type RateLimitSettings = z.infer<typeof settingsSchema>;
