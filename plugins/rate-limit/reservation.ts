// Token reservations. On admission a request reserves, against each token
// budget, its prompt estimate plus the completion it may ask for (max_tokens
// or max_completion_tokens, times n; the plugin's defaultMaxTokens when it
// names none), so concurrent requests cannot together spend more than the
// budget. At the end the real usage is charged and the rest given back; a
// request that never reached the backend gives back all of it.
import { estimateTokens, promptChars, type RequestContext, type Usage } from '../../src';

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined);

/** Tokens to reserve for a request: at least 1. */
export function reservationOf(ctx: RequestContext, defaultMaxTokens: number): number {
  const prompt = estimateTokens(promptChars(ctx));
  const params = ctx.chat?.model_params;
  if (params === undefined) return Math.max(prompt, 1);
  const completion = count(params.max_completion_tokens) ?? count(params.max_tokens) ?? defaultMaxTokens;
  return Math.max(prompt + completion * (count(params.n) ?? 1), 1);
}

/** What a finished request used: its usage, or 0 when nothing came of it. */
export const usedTokens = (usage: Usage | undefined): number =>
  (usage === undefined || !(usage.total_tokens > 0) ? 0 : Math.ceil(usage.total_tokens));

/**
 * The correction once the usage is known: a positive number to charge more,
 * negative to give back. A reservation made in a window that has since ended
 * was charged to that window: only an overrun is charged to the new one.
 */
export function settlement(reserved: number, used: number, windowEnded: boolean): number {
  const diff = used - reserved;
  return windowEnded ? Math.max(diff, 0) : diff;
}
