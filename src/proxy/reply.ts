// The one writer of a forwarded request's response. Whatever the backend
// does, exactly one of these happens, once: a JSON answer, a stream's head
// (its events follow from the relay), or a failure: an error response before
// the head, one error event mid-stream, a dropped connection otherwise.
import type { Logger } from 'pino';
import { errorBody, GatewayError, isGatewayError } from '../errors';
import type { Context } from '../pipeline/context';
import type { Pipeline } from '../pipeline/pipeline';
import { runHeadHooks } from '../pipeline/runner';
import { sendJson } from '../request/send-json';

const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
  connection: 'keep-alive',
};

export interface Reply {
  /** A 200 JSON answer. */
  json(ctx: Context, body: string): void;
  /** The head of a 200 event stream; the relay writes the events. */
  startStream(ctx: Context): void;
  /** A stream's end, with its last events: after [DONE], or when the backend closes after it. */
  endStream(ctx: Context, tail?: string): void;
  /** Ends the request with an error, however far it got. */
  fail(ctx: Context, err: unknown): void;
}

export function createReply(pipeline: Pipeline, logger: Logger): Reply {
  return {
    json(ctx, body) {
      if (ctx.forwarding.settled) return;
      ctx.forwarding.settled = true;
      runHeadHooks(pipeline, ctx, { status: 200, stream: false }, logger);
      ctx.trace?.answered(body);
      sendJson(ctx.res, 200, body);
    },
    startStream(ctx) {
      if (ctx.forwarding.streaming) return; // a continuation: the head went out with the first part
      runHeadHooks(pipeline, ctx, { status: 200, stream: true }, logger);
      ctx.res.writeHead(200, STREAM_HEADERS);
      ctx.res.flushHeaders();
      ctx.forwarding.streaming = true;
    },
    endStream(ctx, tail) {
      if (ctx.forwarding.settled) return;
      ctx.forwarding.settled = true;
      ctx.res.end(tail);
    },
    fail(ctx, err) {
      const f = ctx.forwarding;
      if (f.settled) return;
      // Nothing has reached the client yet: a fallback model may still answer.
      if (!ctx.res.headersSent && f.fallbacks?.tryNext(err)) return;
      // Cut after content was sent: a fallback may continue it, once.
      if (f.streaming && f.fallbacks?.continueStream(err)) return;
      // A continuation that added nothing: the client hears of the original failure, not the fallback's.
      if (f.continuation !== undefined && f.streamedChars === f.continuation.charsAtStart) err = f.continuation.cause;
      f.settled = true;
      const d = isGatewayError(err) ? err.details : undefined;
      if (d?.upstream !== undefined && logger.isLevelEnabled('debug')) {
        logger.debug({ requestId: ctx.id, upstream: d.upstream, kind: d.kind, phase: d.phase, code: d.code, elapsedMs: Math.round(ctx.elapsed()) }, 'upstream attempt failed');
      }
      ctx.forwarding.call?.abandon();
      const res = ctx.res;
      if (!res.headersSent) return ctx.forwarding.fail(err);
      const error = isGatewayError(err) ? err : new GatewayError('internal_error', 'The gateway failed while sending the response.');
      ctx.error = error;
      if (!ctx.forwarding.streaming) return void res.destroy();
      // A truncated stream ends with one error event and no [DONE] (in another protocol, its own failure events).
      const failure = ctx.forwarding.stream?.failure;
      if (!res.destroyed) res.end(failure === undefined ? `data: ${errorBody(error)}\n\n` : failure.call(ctx.forwarding.stream, error));
      if (error.reason === 'internal_error') logger.error({ requestId: ctx.id, err: (err as Error)?.message }, 'stream failed');
    },
  };
}
