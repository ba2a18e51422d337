// Reading a backend that serves the Responses API itself, without changing
// what it sends: the usage of its JSON answer, and an observer of its stream
// that keeps the usage and the final response of the terminal event.
//
//   const seen = new ResponsesObserver();
//   for each parsed event: seen.observe(event); relay it as it came
//   if (!seen.done) the stream was cut; seen.usage, seen.response for the log and storage
import { isObject, type Json } from '../json';
import { isCount, type ProtocolUsage } from '../usage';

/** A Responses usage object ({input_tokens, output_tokens, *_details}), or undefined without both counts. */
export function responsesUsageOf(raw: unknown): ProtocolUsage | undefined {
  if (!isObject(raw) || !isCount(raw.input_tokens) || !isCount(raw.output_tokens)) return undefined;
  const usage: ProtocolUsage = { input_tokens: raw.input_tokens, output_tokens: raw.output_tokens };
  const cached = isObject(raw.input_tokens_details) ? raw.input_tokens_details.cached_tokens : undefined;
  if (isCount(cached)) usage.cached_input_tokens = cached;
  const reasoning = isObject(raw.output_tokens_details) ? raw.output_tokens_details.reasoning_tokens : undefined;
  if (isCount(reasoning)) usage.reasoning_tokens = reasoning;
  return usage;
}

/** The usage of a Responses JSON answer. */
export const usageOfJson = (body: unknown): ProtocolUsage | undefined => (isObject(body) ? responsesUsageOf(body.usage) : undefined);

/** The events that end a Responses stream; the first three carry the final response. */
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

export class ResponsesObserver {
  usage: ProtocolUsage | undefined;
  /** The response of the terminal event (completed, incomplete or failed), for storage. */
  response: Json | undefined;
  /** The response as the latest event that carried one gave it (response.created, .in_progress, …): what a failure ends. */
  latest: Json | undefined;
  /** Saw an event that ends the stream. */
  done = false;

  observe(event: object): void {
    const e = event as Json;
    if (isObject(e.response)) this.latest = e.response;
    if (typeof e.type !== 'string' || !TERMINAL.has(e.type)) return;
    this.done = true;
    if (!isObject(e.response)) return;
    this.response = e.response;
    this.usage = responsesUsageOf(e.response.usage) ?? this.usage;
  }
}
