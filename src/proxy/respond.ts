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
import type { ResponseHandler } from './upstream';

const MAX_JSON_BYTES = 64 * 1024 * 1024;
const MAX_ERROR_BYTES = 64 * 1024;

/** A body that stopped early: the timeout's doing if the backend fell silent, else a bad answer. */
const brokeOff = (ctx: Context, upstream: string, what: string, midStream = false): GatewayError =>
  ctx.upstreamTimedOut ? upstreamTimeout(upstream) : badAnswer(upstream, what, midStream);

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

  const onResponse = (ctx: Context, proxyRes: IncomingMessage, res: ServerResponse, format: Format): void => {
    ctx.timings.upstreamFirstByte = ctx.elapsed();
    const upstream = ctx.route!.upstream;
    const status = proxyRes.statusCode ?? 502;
    proxyRes.on('error', () => undefined); // reported through the proxy's error event
    if (status < 200 || status >= 300) {
      return readBody(proxyRes, MAX_ERROR_BYTES, (text) => onError(ctx, fromUpstreamStatus(status, text ?? '', upstream)));
    }
    const isStream = (proxyRes.headers['content-type'] ?? '').startsWith('text/event-stream');
    if (isStream !== ctx.stream) {
      proxyRes.resume();
      return onError(ctx, badAnswer(upstream, isStream ? 'an event stream to a request without stream' : 'JSON to a streamed request'));
    }
    if (isStream) return relayStream(ctx, proxyRes, res, format, upstream);
    readBody(proxyRes, MAX_JSON_BYTES, (text) => {
      if (text === undefined) return onError(ctx, brokeOff(ctx, upstream, 'the body is too large or broke off'));
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

  const relayStream = (ctx: Context, proxyRes: IncomingMessage, res: ServerResponse, format: Format, upstream: string): void => {
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
    const parser = new SseParser((data) => transformer.push(data, emit));
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
          return;
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
  };

  return { onResponse, onError };
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
