// Token usage: read from what the backend reports, or estimated (about four
// characters a token) when it reports none, and then marked as estimated.
import type { RequestContext, Usage } from '../contract/plugin';

export const CHARS_PER_TOKEN = 4;

export const estimateTokens = (chars: number): number => Math.ceil(chars / CHARS_PER_TOKEN);

/** A token count: a whole number, not negative, not absurd. A backend's nonsense is ignored, then estimated. */
const isCount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;

const detail = (details: unknown, key: string): unknown => (details !== null && typeof details === 'object' ? (details as Record<string, unknown>)[key] : undefined);

/**
 * The backend's chat-completions usage object, if it has the integer counts:
 * the one reader of that shape, on every path (chat in either format, and
 * Responses and Messages requests translated to chat), so a cached prompt
 * token is priced as cached and a reasoning token recorded whichever API the
 * client spoke. The details are parts of their totals, kept within them.
 */
export function readUsage(raw: unknown): Usage | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  const u = raw as Record<string, unknown>;
  const prompt = u.prompt_tokens;
  const completion = u.completion_tokens;
  if (!isCount(prompt) || !isCount(completion)) return undefined;
  const sum = prompt + completion;
  const total = isCount(u.total_tokens) && u.total_tokens >= sum ? u.total_tokens : sum;
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total, estimated: false };
  const cached = detail(u.prompt_tokens_details, 'cached_tokens');
  if (isCount(cached)) usage.cached_tokens = Math.min(cached, prompt);
  const reasoning = detail(u.completion_tokens_details, 'reasoning_tokens');
  if (isCount(reasoning)) usage.reasoning_tokens = Math.min(reasoning, completion);
  return usage;
}

/**
 * The usage of an answer that generated nothing (embeddings, rerank, score):
 * its prompt tokens, or the total when the backend counts only that (vLLM's
 * rerank); undefined when it reported no count.
 */
export function readInputUsage(raw: unknown): Usage | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  const u = raw as Record<string, unknown>;
  const prompt = isCount(u.prompt_tokens) ? u.prompt_tokens : isCount(u.total_tokens) ? u.total_tokens : undefined;
  return prompt === undefined ? undefined : { prompt_tokens: prompt, completion_tokens: 0, total_tokens: prompt, estimated: false };
}

/** What an estimate reads of a request: the texts it forwards, and the token ids an input request gives. */
type Texts = Pick<RequestContext, 'texts' | 'inputs'>;

export function promptChars(ctx: Texts): number {
  let chars = 0;
  for (const text of ctx.texts) chars += text.length;
  return chars;
}

/** The typical prompt tokens of a request: its texts at about four characters a token, its token ids as they are. */
export const promptEstimate = (ctx: Texts): number => estimateTokens(promptChars(ctx)) + (ctx.inputs?.tokenIds ?? 0);

export function estimateUsage(ctx: Texts, completionChars: number): Usage {
  const prompt = promptEstimate(ctx);
  const completion = estimateTokens(completionChars);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, estimated: true };
}

/** The usage object as the interface shows it (without the `estimated` flag). */
export const publicUsage = (u: Usage) => ({ prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, total_tokens: u.total_tokens });
