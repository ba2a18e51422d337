// Relays a backend's event stream to the client one chunk at a time: every
// complete event goes out in the same tick it arrived, through the format's
// transformer and the plugins' onEvent hooks, with the client's backpressure
// pausing the backend. Events that share a chunk with a failure still go out
// before the error event. The relay is the one place a stream's usage is
// recorded on the request: what its transformer says the answer cost, or,
// for a stream cut short, an estimate of what was relayed.
import { StringDecoder } from 'node:string_decoder';
import type { Context } from '../pipeline/context';
import type { Pipeline } from '../pipeline/pipeline';
import { runEventHooks, runStreamEndHooks } from '../pipeline/runner';
import { estimateUsage } from '../request/usage';
import type { Emit, StreamTransformer } from './formats/format';
import { SseParser } from './sse';
import { badAnswer } from './status';

/** What the relay needs from the backend call: the reply's head and end, pause, resume, and a way to fail. */
export interface RelaySource {
  /** Writes the stream's head: called before the first event goes out, never before. */
  head(): void;
  /** The client is not reading: the backend waits, and its silence is not counted against it. */
  pause(): void;
  resume(): void;
  fail(err: unknown): void;
  end(tail: string): void;
}

export class StreamRelay {
  private readonly decoder = new StringDecoder('utf8');
  private readonly parser: SseParser;
  private batch = '';
  /**
   * Nothing reaches the client before the backend's first event: until then a
   * failure (an error event first, a reset) can still be retried elsewhere.
   */
  private headSent = false;
  /** Waiting for the client's side to drain. */
  private draining = false;
  private readonly emit: Emit;
  /** While the backend is silent after the head, the transformer's ping every pingMs (Messages streams). */
  private pinger?: NodeJS.Timeout;
  private wrote = false;

  constructor(
    private readonly ctx: Context,
    private readonly pipeline: Pipeline,
    private readonly transformer: StreamTransformer,
    private readonly source: RelaySource,
    upstream: string,
    maxEventBytes: number,
    /** How long the backend may be silent before a transformer with a ping sends one (server.streamPingMs). */
    private readonly pingMs: number,
  ) {
    const emit = this.emit = (payload: string, event?: string): void => {
      if (payload === '[DONE]') {
        // Plugins' last events go out before [DONE], as the stream's final word.
        if (pipeline.onStreamEnd.length > 0) for (const extra of runStreamEndHooks(pipeline, ctx)) this.batch += `data: ${extra}\n\n`;
        this.batch += 'data: [DONE]\n\n';
        return;
      }
      const data = pipeline.onEvent.length === 0 ? payload : runEventHooks(pipeline, ctx, payload);
      if (data === null) return;
      // A sampled request's answer is read from the events as the client gets them.
      if (ctx.trace !== undefined) ctx.trace.event(data, event);
      this.batch += event === undefined ? `data: ${data}\n\n` : `event: ${event}\ndata: ${data}\n\n`;
    };
    ctx.forwarding.stream = transformer;
    this.parser = new SseParser((data) => transformer.push(data, emit), maxEventBytes,
      () => badAnswer(upstream, `an event is larger than ${maxEventBytes} bytes`, true));
  }

  get done(): boolean {
    return this.transformer.done;
  }

  /** An output rule cut the answer: the client's stream has ended, and the backend has nothing more to give it. */
  get cut(): boolean {
    return this.transformer.cutting === true;
  }

  /** The backend closed without [DONE]: ends the client's stream as a success if the answer was complete. */
  finishIfComplete(): boolean {
    if (!this.transformer.finishIfComplete(this.emit)) return false;
    this.recordUsage();
    const batch = this.batch;
    this.batch = '';
    this.sendHead();
    this.source.end(batch);
    return true;
  }

  private sendHead(): void {
    if (this.headSent) return;
    this.headSent = true;
    this.source.head();
    if (this.transformer.ping !== undefined) this.startPings();
  }

  /** A ping after every pingMs without an event; stops with the response. */
  private startPings(): void {
    const res = this.ctx.res;
    this.pinger = setInterval(() => {
      if (this.wrote || this.ctx.forwarding.settled || res.destroyed) { this.wrote = false; return; }
      const ping = this.transformer.ping!();
      if (ping !== undefined) res.write(ping);
    }, this.pingMs);
    this.pinger.unref();
    res.once('close', () => clearInterval(this.pinger));
  }

  /** What the transformer says the answer cost, once it says. */
  private recordUsage(): void {
    const usage = this.transformer.usage;
    if (usage !== undefined) this.ctx.usage = usage;
  }

  /**
   * The call is given up (the client left, the backend failed, a retry): a
   * stream that reached the client still cost tokens, so one that ended
   * without its usage is charged an estimate of what was relayed.
   */
  abandoned(): void {
    const { ctx } = this;
    if (ctx.forwarding.streaming && ctx.usage === undefined) ctx.usage = estimateUsage(ctx, ctx.forwarding.streamedChars);
  }

  /** One chunk from the backend. Returns true once [DONE] has ended the client's stream. */
  push(chunk: Buffer): boolean {
    const { ctx } = this;
    if (ctx.forwarding.settled) return false;
    let failure: unknown;
    try {
      this.parser.push(this.decoder.write(chunk));
    } catch (err) {
      failure = err ?? new Error('stream failed');
    }
    // A cut ends the answer here, whatever the rest of the backend's stream holds.
    if (this.transformer.cutting && !this.transformer.done) {
      failure = undefined;
      this.transformer.endCut!(this.emit);
    }
    this.recordUsage();
    const res = ctx.res;
    if (this.batch !== '') {
      if (ctx.timings.firstEvent === undefined) {
        ctx.timings.firstEvent = ctx.elapsed();
        ctx.trace?.firstToken();
      }
      this.wrote = true;
      const batch = this.batch;
      this.batch = '';
      this.sendHead();
      if (this.transformer.done && failure === undefined) {
        // [DONE] ends the client's stream now, whether or not the backend closes its side.
        this.source.end(batch);
        return true;
      }
      // The client is not reading: the backend waits until it drains (one wait at a time).
      if (!res.write(batch) && failure === undefined && !this.draining) {
        this.draining = true;
        this.source.pause();
        res.once('drain', () => { this.draining = false; this.source.resume(); });
      }
    }
    if (failure !== undefined) this.source.fail(failure);
    return false;
  }
}
