// Token usage as every protocol translator returns it: what the backend
// reported, in one shape, whichever protocol the client or backend speaks,
// so budgets and metrics need not know which one ran. A translator returns
// undefined when the backend reported none, so the caller can estimate (and
// say so) instead of counting zero.
import { isObject } from './json';

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

const field = (value: unknown, key: string): unknown => (isObject(value) ? value[key] : undefined);

/** A chat-completions usage object ({prompt_tokens, completion_tokens, *_details}), or undefined without both counts. */
export function chatUsage(raw: unknown): ProtocolUsage | undefined {
  const input = field(raw, 'prompt_tokens');
  const output = field(raw, 'completion_tokens');
  if (!isCount(input) || !isCount(output)) return undefined;
  const usage: ProtocolUsage = { input_tokens: input, output_tokens: output };
  const cached = field(field(raw, 'prompt_tokens_details'), 'cached_tokens');
  if (isCount(cached)) usage.cached_input_tokens = cached;
  const reasoning = field(field(raw, 'completion_tokens_details'), 'reasoning_tokens');
  if (isCount(reasoning)) usage.reasoning_tokens = reasoning;
  return usage;
}
