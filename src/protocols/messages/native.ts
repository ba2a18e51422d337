// Reading a native Messages backend's answer without changing it: the usage
// of a JSON answer, and an observer of its stream that reads the usage from
// message_start and message_delta and rebuilds the message for storage.
//
//   const seen = new NativeMessagesObserver();
//   for each relayed event: seen.observe(JSON.parse(data));
//   then seen.usage, seen.done, seen.message.
import type { ProtocolUsage } from '../usage';
import { MessageAccumulator } from './accumulate';
import { count } from './answer';
import type { ErrorEvent, Message } from './types';

/**
 * Anthropic's usage in the gateway's terms: its `input_tokens` leaves out the
 * tokens read from or written to the cache, so all three make the prompt.
 */
export function usageOfMessages(raw: unknown): ProtocolUsage | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  const u = raw as Record<string, unknown> & { output_tokens_details?: { thinking_tokens?: unknown } | null };
  const input = count(u.input_tokens);
  const output = count(u.output_tokens);
  if (input === undefined || output === undefined) return undefined;
  const read = count(u.cache_read_input_tokens) ?? 0;
  const written = count(u.cache_creation_input_tokens) ?? 0;
  const usage: ProtocolUsage = { input_tokens: input + read + written, output_tokens: output };
  if (read > 0) usage.cached_input_tokens = read;
  if (written > 0) usage.cache_creation_input_tokens = written;
  const thinking = count(u.output_tokens_details?.thinking_tokens);
  if (thinking !== undefined) usage.reasoning_tokens = thinking;
  return usage;
}

/** The usage of a native backend's JSON answer (a message object). */
export function usageOfJson(body: unknown): ProtocolUsage | undefined {
  return body !== null && typeof body === 'object' ? usageOfMessages((body as { usage?: unknown }).usage) : undefined;
}

export class NativeMessagesObserver {
  private readonly accumulator = new MessageAccumulator();
  private failure: ErrorEvent | undefined;

  observe(event: object): void {
    const e = event as Record<string, unknown>;
    if (e.type === 'error') this.failure = event as ErrorEvent;
    else this.accumulator.add(e);
  }

  /** The usage so far: message_start's, updated by each message_delta (whose counts are totals). */
  get usage(): ProtocolUsage | undefined {
    return usageOfMessages(this.accumulator.snapshot?.usage);
  }

  /** Whether message_stop arrived: the answer is whole. */
  get done(): boolean {
    return this.accumulator.final !== undefined;
  }

  /** The error event the backend ended its stream with, if it did. */
  get error(): ErrorEvent | undefined {
    return this.failure;
  }

  /** The whole message, rebuilt from the events (Messages' last event does not carry it). */
  get message(): Message | undefined {
    return this.accumulator.final;
  }
}
