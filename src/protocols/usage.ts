// Token usage as every protocol translator returns it: what the backend
// reported, in one shape, whichever protocol the client or backend speaks,
// so budgets and metrics need not know which one ran. A translator returns
// undefined when the backend reported none, so the caller can estimate (and
// say so) instead of counting zero.
import { readUsage } from '../request/usage';

/**
 * `input_tokens` counts every prompt token the backend processed, cached or
 * not; `cached_input_tokens` is the part of it read from a prompt cache and
 * `cache_creation_input_tokens` the part written to one (Anthropic's
 * backends report both; a chat backend reports only reads).
 */
export interface ProtocolUsage {
  input_tokens: number;
  output_tokens: number;
  /** Input tokens read from the backend's prompt cache (part of input_tokens). */
  cached_input_tokens?: number;
  /** Output tokens spent on reasoning (part of output_tokens). */
  reasoning_tokens?: number;
  /** Input tokens written to the prompt cache (part of input_tokens). */
  cache_creation_input_tokens?: number;
}

/** A token count: a whole number, not negative. A backend's nonsense reads as absent. */
export const isCount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;

/** A chat-completions usage object ({prompt_tokens, completion_tokens, *_details}) in protocol terms, as the one reader reads it; undefined without both counts. */
export function chatUsage(raw: unknown): ProtocolUsage | undefined {
  const read = readUsage(raw);
  if (read === undefined) return undefined;
  const usage: ProtocolUsage = { input_tokens: read.prompt_tokens, output_tokens: read.completion_tokens };
  if (read.cached_tokens !== undefined) usage.cached_input_tokens = read.cached_tokens;
  if (read.reasoning_tokens !== undefined) usage.reasoning_tokens = read.reasoning_tokens;
  return usage;
}
