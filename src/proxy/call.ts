// One attempt at a backend, as an undici dispatch handler: it sees the head
// and each chunk as they arrive. An error status is read (bounded in size and
// time) into the catalogue's error; a JSON answer is collected (bounded) and
// reshaped by the format; an event stream is relayed chunk by chunk. One timer
// bounds each wait: for the head (a wait for a free connection included), a
// stream's first event, each silence after it, an error answer's body, and,
// while the client is not reading, the client.
import type { Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'undici/types/header';
import type { CallInFlight, Context } from '../pipeline/context';
import type { GatewayError } from '../contract/errors';
import type { Pipeline } from '../pipeline/pipeline';
import type { AttemptResult } from '../fleet/fleet-health';
import type { Attempt, CallSettings } from './attempt';
import type { Reply } from './reply';
import type { Format } from './formats/format';
import { StreamRelay } from './stream-relay';
import { ByteRelay } from './byte-relay';
import { retryAfterMs } from './retry-after';
import { jsonAnswer, opensEventStream } from './answer-body';
import { isTimeoutCode, phaseOf, silenceEnd, socketEnd, statusEnd } from './attempt-end';
import { badAnswer, clientStalled, fromSocketError, fromUpstreamStatus, upstreamTimeout, type Phase } from './status';

/** An error answer is read this far, and this long at most: the start of it says enough. */
const MAX_ERROR_BYTES = 64 * 1024;
const MAX_ERROR_MS = 1_000;
/** How long a backend may keep a stream open after its [DONE] before its connection is dropped. */
const AFTER_DONE_MS = 250;

type Mode = 'error' | 'json' | 'sniff' | 'stream';

/** Why the gateway itself abandoned the call: the client left, the head timer, [DONE], a bad answer. */
class Abandoned extends Error {}

export class UpstreamCall implements Dispatcher.DispatchHandler, CallInFlight {
  private controller?: Dispatcher.DispatchController;
  private mode?: Mode;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private chunks: Buffer[] = [];
  private size = 0;
  private relay?: StreamRelay | ByteRelay;
  /** The one timer of the wait under way (see the file's head). */
  private timer?: NodeJS.Timeout;
  private timedOut = false;
  private finished = false;
  private reported = false;
  /** The request's age when it started out on a connection; -1 before. */
  private sentAt = -1;
  /** The client is not reading: the backend is paused, and the timer is the client's. */
  private paused = false;
  /** What ended a failed attempt, for its span: the socket error's code, or timeout. */
  private code?: string;

  constructor(
    private readonly ctx: Context,
    private readonly settings: CallSettings,
    private readonly pipeline: Pipeline,
    private readonly reply: Reply,
    /** The fleet's side of the attempt: whether to try again elsewhere, and how it ended. */
    private readonly attempt: Attempt,
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

  private timeout(): void {
    if (this.paused) return this.clientStalled();
    if (this.mode === 'error') return this.finishError(true);
    // The backend was silent too long: tried elsewhere while nothing reached the client, else the timeout error.
    this.timedOut = true;
    this.code = 'timeout';
    const end = silenceEnd(this.mode !== undefined);
    this.report(end.result);
    if (!this.ctx.res.headersSent && this.attempt.retry(end.reason!)) return this.abandon();
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
    this.relay?.abandoned();
    this.finished = true;
    clearTimeout(this.timer);
    if (this.controller && !this.controller.aborted) this.controller.abort(new Abandoned('abandoned'));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    this.sentAt = this.ctx.elapsed();
    if (this.finished) controller.abort(new Abandoned('abandoned'));
  }

  onResponseStart(controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    const { ctx, settings } = this;
    ctx.timings.upstreamFirstByte = ctx.elapsed();
    this.status = status;
    this.attempt.span?.status(status);
    this.headers = headers;
    if (status < 200 || status >= 300) {
      this.mode = 'error';
      // Bounded in time from the head, however the body trickles.
      return this.arm(Math.min(settings.idleMs, MAX_ERROR_MS));
    }
    this.awaitingFirstEvent = ctx.stream;
    this.arm(this.awaitingFirstEvent ? settings.firstEventMs : settings.idleMs);
    const declaredStream = String(headers['content-type'] ?? '').startsWith('text/event-stream');
    if (declaredStream && !ctx.stream) return this.fail(badAnswer(settings.upstream, 'an event stream to a request without stream'));
    // Liberal in what backends send: a streamed request's answer is a stream when it carries events. Bytes are relayed as they come.
    this.mode = declaredStream || this.format.bytesUsage !== undefined ? 'stream' : ctx.stream ? 'sniff' : 'json';
    if (this.mode === 'stream') this.startRelay(String(headers['content-type'] ?? 'application/octet-stream'));
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.finished) return;
    if (this.mode === 'error') {
      this.size += chunk.length;
      if (this.size > MAX_ERROR_BYTES) return this.finishError(true); // the start of an error body says enough
      return void this.chunks.push(chunk);
    }
    if (!this.awaitingFirstEvent && !this.paused) this.timer?.refresh();
    if (this.mode === 'sniff') {
      if (!opensEventStream(chunk)) {
        return this.fail(badAnswer(this.settings.upstream, 'an answer that is not an event stream to a streamed request'));
      }
      this.mode = 'stream';
      this.startRelay('text/event-stream');
    }
    if (this.mode === 'stream') {
      // After a cut the backend is let go at once: it would only go on generating what nobody reads.
      if (this.relay!.push(chunk)) return this.relay!.cut ? this.abandon() : this.afterDone();
      return;
    }
    const limit = this.settings.maxAnswerBytes;
    this.size += chunk.length;
    if (this.size > limit) return this.fail(badAnswer(this.settings.upstream, `the body is larger than ${limit} bytes`));
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.finished) return;
    if (this.mode === 'error') return this.finishError(false);
    this.finished = true;
    clearTimeout(this.timer);
    const { ctx, settings } = this;
    if (this.mode === 'stream') {
      // Closed cleanly after every finish reason but without [DONE]: finished properly; cut before one: a failure.
      if (!this.relay!.done && !this.relay!.finishIfComplete()) { this.report('failed'); return this.fail(badAnswer(settings.upstream, 'the stream ended before it was complete', true), true); }
      this.report('ok');
      return this.reply.endStream(ctx); // no-op when finishIfComplete has ended it
    }
    if (this.mode === 'sniff') return this.fail(badAnswer(settings.upstream, 'the answer was empty'), true);
    let body: ReturnType<typeof jsonAnswer>;
    try {
      body = jsonAnswer(ctx, this.chunks, this.format, this.pipeline, settings.upstream);
    } catch (err) {
      this.report('failed');
      return this.fail(err, true);
    } finally {
      this.chunks = [];
    }
    this.report('ok');
    this.reply.json(ctx, body.body, body.contentType);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (error instanceof Abandoned || this.finished) return;
    const err = error as NodeJS.ErrnoException;
    const code = typeof err.code === 'string' ? err.code : undefined;
    const timedOut = this.timedOut || isTimeoutCode(code);
    this.code ??= code;
    if (this.mode === 'error') return this.finishError(false);
    if (this.mode !== undefined) {
      // The answer broke off: the backend's answer about this model.
      this.report('failed');
      return this.fail(fromSocketError(err, timedOut, this.settings.upstream, this.phase(code)));
    }
    const end = socketEnd(code, timedOut, this.sentAt < 0 ? undefined : this.ctx.elapsed() - this.sentAt, this.attempt.fresh);
    this.report(end.result);
    // Nothing reached the client yet: the request may go again, elsewhere or on a fresh connection.
    if (end.reason !== undefined && this.attempt.retry(end.reason)) {
      this.finished = true;
      clearTimeout(this.timer);
      return;
    }
    this.fail(fromSocketError(err, timedOut, this.settings.upstream, this.phase(code)));
  }

  private phase(code: string | undefined): Phase {
    return phaseOf(this.ctx.forwarding.streaming, this.mode !== undefined, code, this.controller !== undefined);
  }

  /** An error answer, read whole or as far as its bounds (`cut`): tried again if it may be, else the client's error. */
  private finishError(cut: boolean): void {
    this.finished = true;
    clearTimeout(this.timer);
    if (cut && this.controller && !this.controller.aborted) this.controller.abort(new Abandoned('error answer read'));
    const { status, headers } = this;
    const text = Buffer.concat(this.chunks).toString('utf8');
    this.chunks = [];
    const end = statusEnd(status);
    const after = status === 429 || status === 503 ? retryAfterMs(headers['retry-after']) : undefined;
    this.report(end.result, after);
    if (end.reason !== undefined && this.attempt.retry(end.reason, after)) return;
    this.fail(fromUpstreamStatus(status, text, this.settings.upstream, headers['retry-after']), true);
  }

  private startRelay(contentType: string): void {
    const { ctx, settings, format } = this;
    const source = {
      head: (type?: string) => {
        this.awaitingFirstEvent = false;
        this.arm(settings.idleMs);
        this.reply.startStream(ctx, type);
      },
      pause: () => this.pause(), resume: () => this.resume(),
      fail: (err: unknown) => this.failStream(err), end: (tail: string) => this.reply.endStream(ctx, tail),
    };
    this.relay = format.bytesUsage !== undefined ? new ByteRelay(ctx, source, contentType, () => format.bytesUsage!(ctx))
      : new StreamRelay(ctx, this.pipeline, format.streamTransformer(ctx, settings.upstream), source, settings.upstream, settings.maxEventBytes, settings.streamPingMs);
  }

  /** The client is not reading: the backend waits, its silence timer stops, and the client's own starts. */
  private pause(): void {
    if (this.paused || this.finished) return;
    this.paused = true;
    this.controller?.pause();
    this.arm(this.settings.clientStallMs);
  }

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.finished) return;
    this.arm(this.settings.idleMs);
    this.controller?.resume();
  }

  /**
   * The client left the stream unread for clientStallMs: it ends with the
   * error event, the backend is let go without blame, and what the client
   * has still not read is dropped after one more such wait.
   */
  private clientStalled(): void {
    const { res } = this.ctx;
    const ms = this.settings.clientStallMs;
    this.paused = false;
    this.fail(clientStalled(ms));
    if (!res.destroyed && !res.writableFinished) res.setTimeout(ms, () => res.destroy());
  }

  /** After [DONE] a connection the backend keeps open (with pings) would hold a pool connection for good: dropped unless it ends at once. */
  private afterDone(): void {
    setTimeout(() => { if (!this.finished) this.abandon(); }, AFTER_DONE_MS).unref();
  }

  /**
   * A stream that failed (an error event, a bad event): before its first event
   * reached the client it may go to another endpoint; after, it ends with the error event.
   */
  private failStream(err: unknown): void {
    this.report('failed');
    if (!this.ctx.res.headersSent && this.attempt.retry('failed')) {
      this.abandon();
      return;
    }
    this.fail(err);
  }

  private report(result: AttemptResult, retryAfter?: number): void {
    if (this.reported) return;
    this.reported = true;
    this.attempt.done(result, retryAfter);
    this.attempt.span?.end(result, this.status, this.code);
  }

  /** Ends the call with an error; `ended` when the backend's answer is already complete. */
  private fail(err: unknown, ended = false): void {
    if (!ended) this.abandon();
    this.finished = true;
    clearTimeout(this.timer);
    this.reply.fail(this.ctx, err);
  }
}
