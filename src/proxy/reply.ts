// The one writer of a forwarded request's response. Whatever the backend
// does, exactly one of these happens, once: a JSON answer, a stream's head
// (its events follow from the relay), or a failure: an error response before
// the head, one error event mid-stream, a dropped connection otherwise.
import type { Logger } from 'pino';
import { errorBody, GatewayError, isGatewayError } from '../contract/errors';
import type { Context } from '../pipeline/context';
import type { Pipeline } from '../pipeline/pipeline';
import { runHeadHooks } from '../pipeline/runner';
import { sendJson } from '../plumbing/send-json';
import { costText } from '../pricing/prices';
import { requestCost } from '../pricing/request-cost';
import type { PriceList } from '../contract/types';

const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
  connection: 'keep-alive',
};

/** What a priced request cost, in dollars: a JSON answer's header, a stream's trailer (for a client that asks with TE: trailers). */
export const COST_HEADER = 'x-sluice-cost';
const STREAM_HEADERS_WITH_COST = { ...STREAM_HEADERS, trailer: COST_HEADER };
const ANSWERED = { status: 200, aborted: false } as const;

const asksForTrailers = (ctx: Context): boolean => /\btrailers\b/i.test(String(ctx.res.req?.headers.te ?? ''));

function costOf(prices: PriceList, ctx: Context): string | undefined {
  const cost = requestCost(prices, ctx, ANSWERED);
  return cost === undefined ? undefined : costText(cost);
}

export interface Reply {
  /** A 200 JSON answer, or of `contentType` (a transcription as text). */
  json(ctx: Context, body: string, contentType?: string): void;
  /** The head of a 200 event stream (the relay writes the events), or of bytes of `contentType` (speech's audio). */
  startStream(ctx: Context, contentType?: string): void;
  /** A stream's end, with its last events: after [DONE], or when the backend closes after it. */
  endStream(ctx: Context, tail?: string): void;
  /** Ends the request with an error, however far it got; `last`: no fallback may take it over (the total deadline passed). */
  fail(ctx: Context, err: unknown, last?: boolean): void;
}

export function createReply(pipeline: Pipeline, logger: Logger, prices: PriceList): Reply {
  return {
    json(ctx, body, contentType) {
      if (!ctx.forwarding.settle()) return;
      if (!prices.empty) {
        const cost = costOf(prices, ctx);
        if (cost !== undefined) ctx.res.setHeader(COST_HEADER, cost);
      }
      runHeadHooks(pipeline, ctx, { status: 200, stream: false }, logger);
      ctx.trace?.answered(body);
      sendJson(ctx.res, 200, body, contentType === undefined ? undefined : { 'content-type': contentType });
    },
    startStream(ctx, contentType) {
      if (ctx.forwarding.streaming) return; // a continuation: the head went out with the first part
      runHeadHooks(pipeline, ctx, { status: 200, stream: true }, logger);
      // Bytes are not events: a failure after the head drops the connection (streaming stays false) rather than write an event into audio.
      if (contentType !== undefined && contentType !== 'text/event-stream') return void ctx.res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache', 'x-accel-buffering': 'no' }).flushHeaders();
      ctx.forwarding.costTrailer = !prices.empty && asksForTrailers(ctx);
      ctx.res.writeHead(200, ctx.forwarding.costTrailer ? STREAM_HEADERS_WITH_COST : STREAM_HEADERS);
      ctx.res.flushHeaders();
      ctx.forwarding.streaming = true;
    },
    endStream(ctx, tail) {
      if (!ctx.forwarding.settle()) return;
      if (ctx.forwarding.costTrailer && ctx.usage !== undefined) {
        const cost = costOf(prices, ctx);
        if (cost !== undefined) ctx.res.addTrailers({ [COST_HEADER]: cost });
      }
      ctx.res.end(tail);
    },
    fail(ctx, err, last = false) {
      const f = ctx.forwarding;
      if (f.settled) return;
      // Nothing has reached the client yet: a fallback model may still answer.
      if (!last && !ctx.res.headersSent && f.fallbacks?.tryNext(err)) return;
      // Cut after content was sent: a fallback may continue it, once.
      if (!last && f.streaming && f.fallbacks?.continueStream(err)) return;
      // A continuation that added nothing: the client hears of the original failure, not the fallback's.
      if (f.continuation !== undefined && f.streamedChars === f.continuation.charsAtStart) err = f.continuation.cause;
      f.settle();
      const d = isGatewayError(err) ? err.details : undefined;
      if (d?.upstream !== undefined && logger.isLevelEnabled('debug')) {
        logger.debug({ requestId: ctx.id, upstream: d.upstream, kind: d.kind, phase: d.phase, code: d.code, elapsedMs: Math.round(ctx.elapsed()) }, 'upstream attempt failed');
      }
      ctx.forwarding.call?.abandon();
      const res = ctx.res;
      if (!res.headersSent) return ctx.forwarding.fail(err);
      const error = isGatewayError(err) ? err : new GatewayError('internal_error', 'The gateway failed while sending the response.');
      ctx.failWith(error);
      if (!ctx.forwarding.streaming) return void res.destroy();
      // A truncated stream ends with one error event and no [DONE] (in another protocol, its own failure events).
      const failure = ctx.forwarding.stream?.failure;
      if (!res.destroyed) res.end(failure === undefined ? `data: ${errorBody(error)}\n\n` : failure.call(ctx.forwarding.stream, error));
      if (error.reason === 'internal_error') logger.error({ requestId: ctx.id, err: (err as Error)?.message }, 'stream failed');
    },
  };
}
