// What a backend format must provide: the body to send, the JSON answer to
// return, and a per-request stream transformer fed one event at a time. A
// chat request uses its upstream's format (openai or native); a request of
// another client protocol gets one from its exchange (src/proxy/exchange.ts):
// the backend's own protocol relayed, or a translation through chat.
import type { Context } from '../../pipeline/context';
import type { Usage } from '../../contract/plugin';
import type { GatewayError } from '../../contract/errors';

/** Sends one event's data to the client; `event` names it (an `event:` line) for protocols whose events carry names. */
export type Emit = (payload: string, event?: string) => void;

export interface StreamTransformer {
  /** One event's data from the backend; calls `emit` for each payload to send. */
  push(data: string, emit: Emit): void;
  /** True once the backend's stream is complete (chat: its `[DONE]`; other protocols: their last event was sent). */
  readonly done: boolean;
  /**
   * The backend closed the stream cleanly without its end: when the answer
   * was complete, emits what the end would have (chat: the last chunk with
   * usage, then `[DONE]`) and returns true; else false (the answer was cut,
   * and must not pass as a success).
   */
  finishIfComplete(emit: Emit): boolean;
  /** The events that end a stream which failed after it started, in the client's protocol (default: one chat error event). */
  failure?(err: GatewayError): string;
  /** An event to send while the backend is silent after the head (Messages' ping); undefined: none. */
  ping?(): string | undefined;
  /** The sequence_number of the last event sent, in a protocol that numbers its events (Responses). */
  readonly lastSequence?: number;
  /** What the answer is so far: its final object once ended or failed, else its output items as they stand (Responses, translated). */
  partial?(): { response?: object; output?: readonly object[] };
  /**
   * An output rule cut the answer (a block matched): the transformer sends
   * nothing more of the backend's events, only reads them for the usage.
   */
  readonly cutting?: boolean;
  /**
   * Ends a cut answer in the client's protocol, with its usage (the backend's
   * if it came in the same read, else an estimate of everything generated):
   * called by the relay once the backend's chunk that held the cut is read.
   */
  endCut?(emit: Emit): void;
  /**
   * What the answer cost as far as the transformer knows: the backend's
   * report once one came, and once the transformer ended the stream (its end
   * or a cut) what it sent the client, estimated when the backend reported
   * none; undefined before. Only the relay records it on the request.
   */
  readonly usage?: Usage;
}

/** A JSON answer as the client gets it, and the tokens it cost (reported, else estimated; undefined: not usage, as a token count). */
export interface JsonAnswer {
  body: string;
  usage: Usage | undefined;
  /** The answer's type when it is not JSON (a transcription as text, srt or vtt): relayed as it is, no output hook reads it. */
  contentType?: string;
}

export interface Format {
  /** The path under the upstream's URL, when not the endpoint's own (/chat/completions, /images/generations). */
  readonly path?: string;
  requestBody(ctx: Context, upstreamModel: string): string;
  /** The bytes to send in place of requestBody's text, for a body that is not JSON (an upload's multipart). */
  requestBytes?(ctx: Context, upstreamModel: string): Buffer;
  /** The body's type, when not JSON (an upload's multipart/form-data with its boundary). */
  readonly contentType?: string;
  /** What the backend is asked to answer in, when neither JSON nor an event stream (speech: audio). */
  readonly accept?: string;
  /**
   * Set when the answer is bytes (speech's audio), relayed as they arrive
   * under the backend's own type (no JSON, no events): what the request used.
   */
  bytesUsage?(ctx: Context): Usage;
  /** The backend's 2xx JSON body → the client's answer and its usage. Throws on a bad answer. */
  respondJson(ctx: Context, text: string, upstream: string): JsonAnswer;
  streamTransformer(ctx: Context, upstream: string): StreamTransformer;
  /** Headers of the client's request the backend gets as sent (a native Messages backend: anthropic-version, anthropic-beta). */
  passHeaders?: readonly string[];
}

/** model_params without null values: null means "the model's default". */
export function withoutNulls(params: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in params) if (params[key] !== null && params[key] !== undefined) out[key] = params[key];
  return out;
}

export const toUnixSeconds = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) ? Math.trunc(value)
    : typeof value === 'string' && /^\d+$/.test(value) ? Number(value)
    : Math.floor(Date.now() / 1000);
