// One attempt at a backend, as an undici dispatch handler: it sees the head
// and each chunk as they arrive. An error status is read (bounded) into the
// catalogue's error; a JSON answer is collected (bounded) and reshaped by the
// format; an event stream is relayed chunk by chunk. The head timer covers the
// whole wait for the head, a wait for a free connection included.
import type { Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'undici/types/header';
import type { CallInFlight, Context } from '../pipeline/context';
import type { GatewayError } from '../errors';
import type { Pipeline } from '../pipeline/pipeline';
import type { Format } from './formats/format';
import type { Reply } from './reply';
import { StreamRelay } from './stream-relay';
import { retryAfterMs } from './retry-after';
import { runResponseBodyHooks } from '../pipeline/runner';
import { badAnswer, fromSocketError, fromUpstreamStatus, upstreamTimeout, type Phase } from './status';

const MAX_ERROR_BYTES = 64 * 1024;
/** How long a backend may keep a stream open after its [DONE] before its connection is dropped. */
const AFTER_DONE_MS = 250;
/** How an event stream opens: a field (data, event, id, retry) or a comment. */
const SSE_START = /^(data|event|id|retry)?:/;
// Errors only a connection attempt raises: name resolution, refusal, routing, TLS, connect timeout.
const CONNECT_ERRORS = /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ECONNABORTED|UND_ERR_CONNECT_TIMEOUT|ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_)/;
const TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);
// A connection that dies before any answer: the backend closed it while it sat idle in the pool.
const DROPPED = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

export interface CallSettings {
  upstream: string;
  format: Format;
  timeoutMs: number;
  /** Silence from slowness, per attempt: until the head, until a stream's first event, between chunks after it. */
  firstByteMs: number;
  firstEventMs: number;
  idleMs: number;
  maxAnswerBytes: number;
  maxEventBytes: number;
}

type Mode = 'error' | 'json' | 'sniff' | 'stream';

/**
 * What the upstream's fleet learns of an attempt. `retry` is asked only while
 * nothing has reached the client; true means another attempt has started and
 * this one is done. `done` is called exactly once: how the attempt ended, for
 * the endpoint's in-flight count and health.
 */
export type RetryReason = 'dropped' | 'failed' | 'timeout' | 'rate_limited';

export interface Attempt {
  /** A silent (timeout) or rate-limited backend is only tried elsewhere; a failed one may be tried again, after a backoff. */
  retry(why: RetryReason): boolean;
  done(result: 'ok' | 'failure' | 'neutral', rateLimitedMs?: number): void;
}

const NO_FLEET: Attempt = { retry: () => false, done: () => undefined };

/** Why the gateway itself abandoned the call: the client left, the head timer, [DONE], a bad answer. */
class Abandoned extends Error {}

export class UpstreamCall implements Dispatcher.DispatchHandler, CallInFlight {
  private controller?: Dispatcher.DispatchController;
  private mode?: Mode;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private chunks: Buffer[] = [];
  private size = 0;
  private relay?: StreamRelay;
  /** Bounds the wait for the head (a wait for a free connection included), then each silence between chunks. */
  private timer?: NodeJS.Timeout;
  private timedOut = false;
  private finished = false;
  private reported = false;

  constructor(
    private readonly ctx: Context,
    private readonly settings: CallSettings,
    private readonly pipeline: Pipeline,
    private readonly reply: Reply,
    /** The fleet's side of the attempt: whether to try again elsewhere, and how it ended. */
    private readonly attempt: Attempt = NO_FLEET,
    /** The request's format: the upstream's, or its exchange's (another client protocol). */
    private readonly format: Format = settings.format,
  ) {
    this.arm(settings.firstByteMs);
  }

  /** A stream's head came, its first event not yet: pings do not count as progress. */
  private awaitingFirstEvent = false;

  private arm(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.timeout(), ms);
  }

  /** The backend was silent too long: tried elsewhere while nothing reached the client, else the timeout error. */
  private timeout(): void {
    this.timedOut = true;
    this.report('failure');
    if (!this.ctx.res.headersSent && this.attempt.retry('timeout')) return this.abandon();
    this.fail(upstreamTimeout(this.settings.upstream, this.phase(undefined)));
  }

  /** Ends the request with an error now, however far it got (the drain deadline). */
  interrupt(err: GatewayError): void {
    this.reply.fail(this.ctx, err);
  }

  /** Gives up on the backend (the client left, or the answer is decided). */
  abandon(): void {
    // After [DONE] the answer was whole; otherwise the gateway gave up, which says nothing of the backend.
    this.report(this.relay?.done ? 'ok' : 'neutral');
    this.finished = true;
    clearTimeout(this.timer);
    if (this.controller && !this.controller.aborted) this.controller.abort(new Abandoned('abandoned'));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.finished) controller.abort(new Abandoned('abandoned'));
  }

  onResponseStart(controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    const { ctx, settings } = this;
    this.awaitingFirstEvent = ctx.stream && status >= 200 && status < 300;
    this.arm(this.awaitingFirstEvent ? settings.firstEventMs : settings.idleMs);
    ctx.timings.upstreamFirstByte = ctx.elapsed();
    this.status = status;
    this.headers = headers;
    if (status < 200 || status >= 300) return void (this.mode = 'error');
    const declaredStream = String(headers['content-type'] ?? '').startsWith('text/event-stream');
    if (declaredStream && !ctx.stream) return this.fail(badAnswer(settings.upstream, 'an event stream to a request without stream'));
    // Liberal in what backends send: a streamed request's answer is a stream when it carries events.
    this.mode = declaredStream ? 'stream' : ctx.stream ? 'sniff' : 'json';
    if (this.mode === 'stream') this.startRelay();
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.finished) return;
    if (!this.awaitingFirstEvent) this.timer?.refresh();
    if (this.mode === 'sniff') {
      if (!SSE_START.test(chunk.toString('latin1', 0, Math.min(chunk.length, 64)).trimStart())) {
        return this.fail(badAnswer(this.settings.upstream, 'an answer that is not an event stream to a streamed request'));
      }
      this.mode = 'stream';
      this.startRelay();
    }
    if (this.mode === 'stream') {
      if (this.relay!.push(chunk)) this.afterDone();
      return;
    }
    const limit = this.mode === 'error' ? MAX_ERROR_BYTES : this.settings.maxAnswerBytes;
    this.size += chunk.length;
    if (this.size > limit) {
      if (this.mode === 'error') return; // the start of an error body says enough
      return this.fail(badAnswer(this.settings.upstream, `the body is larger than ${limit} bytes`));
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    const { ctx, settings } = this;
    if (this.mode === 'stream') {
      // Closed cleanly after every finish reason but without [DONE]: finished properly; cut before one: a failure.
      if (!this.relay!.done && !this.relay!.finishIfComplete()) { this.report('failure'); return this.fail(badAnswer(settings.upstream, 'the stream ended before it was complete', true), true); }
      this.report('ok');
      return this.reply.endStream(ctx); // no-op when finishIfComplete has ended it
    }
    if (this.mode === 'sniff') return this.fail(badAnswer(settings.upstream, 'the answer was empty'), true);
    const text = this.chunks.length === 1 ? this.chunks[0].toString('utf8') : Buffer.concat(this.chunks).toString('utf8');
    this.chunks = [];
    if (this.mode === 'error') {
      const status = this.status;
      // 5xx and 429 say nothing about the request: another endpoint may answer it. Other 4xx would only repeat.
      if (status === 429) this.report('failure', retryAfterMs(this.headers['retry-after']) ?? 0);
      else this.report(status >= 500 ? 'failure' : 'neutral');
      if ((status >= 500 || status === 429) && this.attempt.retry(status === 429 ? 'rate_limited' : 'failed')) return;
      return this.fail(fromUpstreamStatus(status, text, settings.upstream, this.headers['retry-after']), true);
    }
    let body: string;
    try {
      const answer = this.format.respondJson(ctx, text, settings.upstream);
      ctx.usage = answer.usage;
      body = answer.body;
      // Output policy on JSON answers: only when a plugin asks is the answer parsed again.
      if (this.pipeline.onResponseBody.length > 0) body = JSON.stringify(runResponseBodyHooks(this.pipeline, ctx, JSON.parse(body) as Record<string, unknown>));
    } catch (err) {
      this.report('failure');
      return this.fail(err, true);
    }
    this.report('ok');
    this.reply.json(ctx, body);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (error instanceof Abandoned || this.finished) return;
    const err = error as NodeJS.ErrnoException;
    const code = typeof err.code === 'string' ? err.code : undefined;
    const timedOut = this.timedOut || (code !== undefined && TIMEOUTS.has(code));
    const phase = this.phase(code);
    // A dropped idle connection says nothing of the backend's health; a refusal, a reset or a timeout does.
    const dropped = this.mode === undefined && code !== undefined && DROPPED.has(code) && !timedOut;
    this.report(dropped ? 'neutral' : 'failure');
    // Nothing reached the client yet: the request may go again, elsewhere or on a fresh connection.
    if (this.mode === undefined && !timedOut && (dropped || phase === 'connect') && this.attempt.retry(dropped ? 'dropped' : 'failed')) {
      this.finished = true;
      clearTimeout(this.timer);
      return;
    }
    this.fail(fromSocketError(err, timedOut, this.settings.upstream, phase));
  }

  private phase(code: string | undefined): Phase {
    if (this.ctx.forwarding.streaming) return 'stream';
    if (this.mode !== undefined) return 'body';
    if (code !== undefined && CONNECT_ERRORS.test(code)) return 'connect';
    return this.controller === undefined ? 'queue' : 'head';
  }

  private startRelay(): void {
    const { ctx, settings } = this;
    this.relay = new StreamRelay(ctx, this.pipeline, this.format.streamTransformer(ctx, settings.upstream), {
      head: () => {
        this.awaitingFirstEvent = false;
        this.arm(settings.idleMs);
        this.reply.startStream(ctx);
      },
      pause: () => this.controller?.pause(),
      resume: () => this.controller?.resume(),
      fail: (err) => this.failStream(err),
      end: (tail) => this.reply.endStream(ctx, tail),
    }, settings.upstream, settings.maxEventBytes);
  }

  /**
   * After [DONE] the backend has nothing more to say: a connection it keeps
   * open (with pings) would hold a pool connection for good, so it is dropped
   * unless the answer ends on its own right away.
   */
  private afterDone(): void {
    setTimeout(() => { if (!this.finished) this.abandon(); }, AFTER_DONE_MS).unref();
  }

  /**
   * A stream that failed (an error event, a bad event): before its first event
   * reached the client it may go to another endpoint; after, it ends with the error event.
   */
  private failStream(err: unknown): void {
    this.report('failure');
    if (!this.ctx.res.headersSent && this.attempt.retry('failed')) {
      this.abandon();
      return;
    }
    this.fail(err);
  }

  private report(result: 'ok' | 'failure' | 'neutral', rateLimitedMs?: number): void {
    if (this.reported) return;
    this.reported = true;
    this.attempt.done(result, rateLimitedMs);
  }

  /** Ends the call with an error; `ended` when the backend's answer is already complete. */
  private fail(err: unknown, ended = false): void {
    if (this.timedOut) this.report('failure');
    if (!ended) this.abandon();
    this.finished = true;
    clearTimeout(this.timer);
    this.reply.fail(this.ctx, err);
  }
}
