// What a backend's answer body is read as: the first bytes of a streamed
// request's answer say whether it is an event stream, and a JSON answer is
// reshaped by its format and, when a plugin asks, checked by the output hooks.
import type { Context } from '../pipeline/context';
import type { Pipeline } from '../pipeline/pipeline';
import type { Format } from './formats/format';
import { runResponseBodyHooks } from '../pipeline/runner';

/** How an event stream opens: a field (data, event, id, retry) or a comment. */
const SSE_START = /^(data|event|id|retry)?:/;

/** Whether an answer's first chunk opens an event stream. */
export function opensEventStream(chunk: Buffer): boolean {
  return SSE_START.test(chunk.toString('latin1', 0, Math.min(chunk.length, 64)).trimStart());
}

/** The client's body for a whole answer (JSON unless it says its type); sets the request's usage. Throws the catalogue's error on a bad answer. */
export function jsonAnswer(ctx: Context, chunks: Buffer[], format: Format, pipeline: Pipeline, upstream: string): { body: string; contentType?: string } {
  const text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8');
  const answer = format.respondJson(ctx, text, upstream);
  ctx.usage = answer.usage;
  // Output policy on JSON answers: only when a plugin asks is the answer parsed again.
  if (pipeline.onResponseBody.length === 0 || answer.contentType !== undefined) return answer;
  return { body: JSON.stringify(runResponseBodyHooks(pipeline, ctx, JSON.parse(answer.body) as Record<string, unknown>)) };
}
