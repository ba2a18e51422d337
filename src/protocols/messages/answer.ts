// What a chat backend's answer (whole or streamed) says, in Messages' terms:
// why it stopped, how many tokens it used, a tool call's input. Shared by the
// JSON translation and the stream translation so the two never disagree.
import { jsonDepthExceeds } from '../../request/json-depth';
import { chatUsage, type ProtocolUsage } from '../usage';
import type { MessagesUsage, StopReason } from './types';

const STOP_REASONS = new Map<string, StopReason>([
  ['stop', 'end_turn'], ['length', 'max_tokens'], ['tool_calls', 'tool_use'], ['function_call', 'tool_use'], ['content_filter', 'refusal'],
]);

/**
 * finish_reason as stop_reason. A stop string the backend names makes it
 * `stop_sequence`; tool calls under a plain `stop` (some servers) make it `tool_use`.
 */
export function stopReasonOf(finishReason: unknown, stopSequence: string | null, hasToolUse: boolean): StopReason {
  if (stopSequence !== null) return 'stop_sequence';
  const reason = typeof finishReason === 'string' ? STOP_REASONS.get(finishReason) : undefined;
  if (hasToolUse && (reason === undefined || reason === 'end_turn')) return 'tool_use';
  return reason ?? 'end_turn';
}

/** The stop string that ended the answer: vLLM's `stop_reason`, SGLang's `matched_stop` (a number there is a token id, not a string). */
export function stopSequenceOf(choice: Record<string, unknown>): string | null {
  if (choice.finish_reason !== 'stop') return null;
  const matched = choice.stop_reason ?? choice.matched_stop;
  return typeof matched === 'string' ? matched : null;
}

/** The reasoning text of a message or a delta: `reasoning_content` (vLLM's reasoning parsers, SGLang), or `reasoning`. */
export function reasoningOf(message: Record<string, unknown>): string | undefined {
  const text = message.reasoning_content ?? message.reasoning;
  return typeof text === 'string' && text !== '' ? text : undefined;
}

/**
 * A tool call's arguments as the object Messages clients require. Arguments
 * that are not a JSON object (a model's malformed output) become `{}`, which
 * the client's own input check then reports back to the model.
 */
export function toolInput(args: string): Record<string, unknown> {
  if (args.trim() === '' || jsonDepthExceeds(args)) return {};
  try {
    const value: unknown = JSON.parse(args);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Not JSON: as for any other non-object.
  }
  return {};
}

export interface AnswerUsage {
  /** As the client reads it: Anthropic's `input_tokens` leaves out the tokens read from the cache. */
  body: MessagesUsage;
  usage: ProtocolUsage;
}

/** A token count: a whole number, not negative; anything else is not a count. */
export const count = (n: unknown): number | undefined => (Number.isSafeInteger(n) && (n as number) >= 0 ? (n as number) : undefined);

/** A chat `usage` object in both forms, or undefined when it has no token counts. */
export function usageOf(raw: unknown): AnswerUsage | undefined {
  const usage = chatUsage(raw);
  if (usage === undefined) return undefined;
  const cached = usage.cached_input_tokens ?? 0;
  return {
    body: { input_tokens: usage.input_tokens - cached, output_tokens: usage.output_tokens, cache_creation_input_tokens: 0, cache_read_input_tokens: cached },
    usage,
  };
}
