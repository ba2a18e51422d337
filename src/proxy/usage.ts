// Token usage: read from what the backend reports, or estimated (about four
// characters a token) when it reports none, and then marked as estimated.
import type { Usage } from '../pipeline/contract';
import type { Context } from '../pipeline/context';

export const CHARS_PER_TOKEN = 4;

export const estimateTokens = (chars: number): number => Math.ceil(chars / CHARS_PER_TOKEN);

/** The backend's usage object, if it has the three integer fields. */
export function readUsage(raw: unknown): Usage | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  const u = raw as Record<string, unknown>;
  const prompt = u.prompt_tokens;
  const completion = u.completion_tokens;
  if (!Number.isInteger(prompt) || !Number.isInteger(completion)) return undefined;
  const total = Number.isInteger(u.total_tokens) ? (u.total_tokens as number) : (prompt as number) + (completion as number);
  return { prompt_tokens: prompt as number, completion_tokens: completion as number, total_tokens: total, estimated: false };
}

export function promptChars(ctx: Context): number {
  if (ctx.image) return ctx.image.prompt.length;
  let chars = 0;
  for (const m of ctx.chat?.messages ?? []) chars += m.content.length;
  return chars;
}

export function estimateUsage(ctx: Context, completionChars: number): Usage {
  const prompt = estimateTokens(promptChars(ctx));
  const completion = estimateTokens(completionChars);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, estimated: true };
}

/** The usage object as the interface shows it (without the `estimated` flag). */
export const publicUsage = (u: Usage) => ({ prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, total_tokens: u.total_tokens });
