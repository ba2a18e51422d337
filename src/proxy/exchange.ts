// How a request of another client protocol than chat completions (the
// Responses API, the Messages API) reaches an upstream: relayed in its own
// protocol when the backend serves it (`apis`), else translated to chat
// completions and the answer translated back, event by event. A chat
// request has no exchange: it goes in its upstream's format, unchanged.
import type { ClientProtocol } from '../contract/types';
import type { Usage } from '../contract/plugin';
import type { Context } from '../pipeline/context';
import type { ProtocolUsage } from '../protocols/usage';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../request/json-depth';
import type { Format } from './formats/format';
import { badAnswer } from './status';
import type { Upstream } from './upstream';

export interface Exchange {
  readonly protocol: ClientProtocol;
  /** Whether the upstream can serve the request: in its own protocol, or through chat. */
  serves(upstream: Upstream, ctx: Context): boolean;
  /** The request's format on that upstream (one that serves it); called as the request is sent there. */
  formatFor(upstream: Upstream, ctx: Context): Format;
}

/** A protocol's usage as the core counts it. */
export function coreUsage(u: ProtocolUsage): Usage {
  const usage: Usage = { prompt_tokens: u.input_tokens, completion_tokens: u.output_tokens, total_tokens: u.input_tokens + u.output_tokens, estimated: false };
  if (u.cached_input_tokens !== undefined) usage.cached_tokens = u.cached_input_tokens;
  if (u.reasoning_tokens !== undefined) usage.reasoning_tokens = u.reasoning_tokens;
  return usage;
}

/** A backend's JSON answer, parsed: nesting past MAX_JSON_DEPTH is refused before anything recurses into it. */
export function parseBackendJson(text: string, upstream: string): unknown {
  const parsed = readEvent(text, upstream, false);
  if (parsed === undefined) throw badAnswer(upstream, 'the body is not JSON');
  return parsed;
}

/** One event's JSON; undefined when it is not JSON (skipped, as chat skips it); nesting too deep is a bad answer. */
export function readEvent(text: string, upstream: string, midStream = true): unknown {
  if (jsonDepthExceeds(text)) throw badAnswer(upstream, `the JSON nests deeper than ${MAX_JSON_DEPTH} levels`, midStream);
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
