// Writes the backend's answer to the client. A stream is handled one chunk at
// a time as it arrives: every complete event goes out in the same tick, with
// backpressure from the client pausing the backend. A JSON answer is read
// whole (it is one object) and reshaped by the upstream's format.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { errorBody, GatewayError, isGatewayError } from '../errors';
import type { Context } from '../pipeline/context';
import type { Pipeline } from '../pipeline/registry';
import { runEventHooks, runHeadHooks } from '../pipeline/runner';
import type { Format } from './formats/format';
import { SseParser } from './sse';
import { sendJson } from '../api/json';
import { badAnswer, fromUpstreamStatus, upstreamTimeout } from './status';
import type { AnswerLimits, ResponseHandler } from './upstream';

const MAX_ERROR_BYTES = 64 * 1024;
/** How long a backend may keep a stream open after its [DONE] before its connection is dropped. */
const AFTER_DONE_MS = 250;

/** A body that stopped early: the timeout's doing if the backend fell silent, else a bad answer. */
const brokeOff = (ctx: Context, upstream: string, what: string, midStream = false): GatewayError =>
  ctx.upstreamTimedOut ? upstreamTimeout(upstream, midStream ? 'stream' : 'body') : badAnswer(upstream, what, midStream);

/**
 * After [DONE] the backend has nothing more to say: a connection it keeps open
 * (with pings) would hold a pool socket for good, so it is dropped unless the
 * answer ends on its own right away (then the socket goes back to the pool).
 */
function releaseAfterDone(ctx: Context, proxyRes: IncomingMessage): void {
  if (proxyRes.complete) return;
  const timer = setTimeout(() => ctx.upstreamRequest?.destroy(), AFTER_DONE_MS);
  timer.unref();
  proxyRes.once('end', () => clearTimeout(timer));
}

const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
  connection: 'keep-alive',
};

export function createResponseHandler(pipeline: Pipeline, logger: Logger): ResponseHandler {
  const onError = (ctx: Context, err: unknown): void => {
    if (ctx.settled) return;
    ctx.settled = true;
    const d = isGatewayError(err) ? err.details : undefined;
    if (d?.upstream !== undefined && logger.isLevelEnabled('debug')) {
      logger.debug({ requestId: ctx.id, upstream: d.upstream, kind: d.kind, phase: d.phase, code: d.code, elapsedMs: Math.round(ctx.elapsed()) }, 'upstream attempt failed');
    }
    ctx.upstreamRequest?.destroy();
    const res = ctx.res;
    if (!res.headersSent) return ctx.fail(err);
    const error = isGatewayError(err) ? err : new GatewayError('internal_error', 'The gateway failed while sending the response.');
    ctx.error = error;
    if (!ctx.streaming) return void res.destroy();
    // A truncated stream ends with one error event and no [DONE].
    if (!res.destroyed) res.end(`data: ${errorBody(error)}\n\n`);
    if (error.reason === 'internal_error') logger.error({ requestId: ctx.id, err: (err as Error)?.message }, 'stream failed');
  };

  const onResponse = (ctx: Context, proxyRes: IncomingMessage, res: ServerResponse, format: Format, limits: AnswerLimits): void => {
    ctx.timings.upstreamFirstByte = ctx.elapsed();
    const upstream = ctx.route!.upstream;
    const status = proxyRes.statusCode ?? 502;
    proxyRes.on('error', () => undefined); // reported through the proxy's error event
    if (status < 200 || status >= 300) {
      return readBody(proxyRes, MAX_ERROR_BYTES, (text) => onError(ctx, fromUpstreamStatus(status, text ?? '', upstream, proxyRes.headers['retry-after'])));
    }
    const declaredStream = (proxyRes.headers['content-type'] ?? '').startsWith('text/event-stream');
    if (declaredStream && !ctx.stream) {
      proxyRes.resume();
      return onError(ctx, badAnswer(upstream, 'an event stream to a request without stream'));
    }
    if (declaredStream) return relayStream(ctx, proxyRes, res, format, upstream, limits);
    // Liberal in what backends send: a streamed request's answer is a stream when it
    // carries events, whatever its content type says.
    if (ctx.stream) {
      return sniffEvents(proxyRes, (events) => {
        if (events === undefined) return onError(ctx, brokeOff(ctx, upstream, 'the answer was empty'));
        if (events) return relayStream(ctx, proxyRes, res, format, upstream, limits);
        proxyRes.resume();
        onError(ctx, badAnswer(upstream, 'an answer that is not an event stream to a streamed request'));
      });
    }
    readBody(proxyRes, limits.maxAnswerBytes, (text) => {
      if (text === undefined) return onError(ctx, brokeOff(ctx, upstream, `the body broke off or is larger than ${limits.maxAnswerBytes} bytes`));
      let body: string;
      try {
        body = format.respondJson(ctx, text, upstream);
      } catch (err) {
        return onError(ctx, err);
      }
      ctx.settled = true;
      runHeadHooks(pipeline, ctx, { status: 200, stream: false }, logger);
      sendJson(res, 200, body);
    });
  };

  const relayStream = (ctx: Context, proxyRes: IncomingMessage, res: ServerResponse, format: Format, upstream: string, limits: AnswerLimits): void => {
    runHeadHooks(pipeline, ctx, { status: 200, stream: true }, logger);
    res.writeHead(200, STREAM_HEADERS);
    res.flushHeaders();
    ctx.streaming = true;
    const transformer = format.streamTransformer(ctx, upstream);
    let batch = '';
    const emit = (payload: string): void => {
      const data = pipeline.onEvent.length === 0 ? payload : runEventHooks(pipeline, ctx, payload);
      if (data !== null) batch += `data: ${data}\n\n`;
    };
    const parser = new SseParser((data) => transformer.push(data, emit), limits.maxEventBytes,
      () => badAnswer(upstream, `an event is larger than ${limits.maxEventBytes} bytes`, true));
    proxyRes.setEncoding('utf8');
    proxyRes.on('data', (chunk: string) => {
      if (ctx.settled) return;
      let threw = false;
      let failure: unknown;
      try {
        parser.push(chunk);
      } catch (err) {
        threw = true;
        failure = err;
      }
      // Events that came before a failure in the same chunk still go out, then the error event.
      if (batch !== '') {
        ctx.timings.firstEvent ??= ctx.elapsed();
        if (transformer.done && !threw) {
          // [DONE] ends the client's stream now, whether or not the backend closes its side.
          ctx.settled = true;
          res.end(batch);
          batch = '';
          return releaseAfterDone(ctx, proxyRes);
        }
        const ok = res.write(batch);
        batch = '';
        if (!ok && !threw) {
          proxyRes.pause();
          res.once('drain', () => proxyRes.resume());
        }
      }
      if (threw) onError(ctx, failure);
    });
    proxyRes.on('end', () => {
      if (ctx.settled) return;
      if (!transformer.done) return onError(ctx, badAnswer(upstream, 'the stream ended without [DONE]', true));
      ctx.settled = true;
      res.end();
    });
    proxyRes.on('aborted', () => onError(ctx, brokeOff(ctx, upstream, 'the stream broke off', true)));
    proxyRes.resume(); // a sniffed answer was paused with its first chunk put back
  };

  return { onResponse, onError };
}

/** How an event stream opens: a field (data, event, id, retry) or a comment. */
const SSE_START = /^(data|event|id|retry)?:/;

/**
 * Looks at the first chunk of a body and puts it back: true if it opens an
 * event stream, false if not, undefined if the body ended or broke with nothing in it.
 */
function sniffEvents(stream: IncomingMessage, decide: (events: boolean | undefined) => void): void {
  let decided = false;
  const onEmpty = (): void => { if (!decided) { decided = true; decide(undefined); } };
  stream.once('end', onEmpty);
  stream.once('close', onEmpty);
  stream.once('data', (chunk: Buffer) => {
    stream.pause();
    stream.unshift(chunk);
    stream.off('end', onEmpty);
    stream.off('close', onEmpty);
    decided = true;
    decide(SSE_START.test(chunk.toString('latin1', 0, Math.min(chunk.length, 64)).trimStart()));
  });
}

/** Reads a whole body up to `limit` bytes; undefined if larger or broken. */
function readBody(stream: IncomingMessage, limit: number, done: (text: string | undefined) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (text: string | undefined) => { if (!finished) { finished = true; done(text); } };
  stream.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) { stream.destroy(); return finish(undefined); }
    chunks.push(chunk);
  });
  stream.on('end', () => finish(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8')));
  stream.on('aborted', () => finish(undefined));
  stream.on('close', () => finish(undefined));
}
