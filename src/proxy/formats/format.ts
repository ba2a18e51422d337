// What a backend format must provide: the body to send, the JSON answer to
// return, and a per-request stream transformer fed one event at a time.
import type { Context } from '../../pipeline/context';
import type { Usage } from '../../pipeline/contract';

export interface StreamTransformer {
  /** One event's data from the backend; calls `emit` for each payload to send. */
  push(data: string, emit: (payload: string) => void): void;
  /** True once the backend's `[DONE]` was seen. */
  readonly done: boolean;
  /**
   * The backend closed the stream cleanly without `[DONE]`: when every choice
   * it started had its finish reason, emits what `[DONE]` would have (the last
   * chunk with usage, then `[DONE]`) and returns true; else false (the answer
   * was cut, and must not pass as a success).
   */
  finishIfComplete(emit: (payload: string) => void): boolean;
}

/** A JSON answer as the client gets it, and the tokens it cost (reported, else estimated). */
export interface JsonAnswer {
  body: string;
  usage: Usage;
}

export interface Format {
  requestBody(ctx: Context, upstreamModel: string): string;
  /** The backend's 2xx JSON body → the client's answer and its usage. Throws on a bad answer. */
  respondJson(ctx: Context, text: string, upstream: string): JsonAnswer;
  streamTransformer(ctx: Context, upstream: string): StreamTransformer;
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
