// One pass-through request at the backend: what the proxy's events mean for
// it. The answer's head runs the head hooks; a timeout, a backend that cannot
// be reached or breaks off, or a body past its limit ends it once with the
// gateway's error (through ctx.forwarding.fail, so the error middleware writes it);
// after the client left, nothing more happens.
import type { ClientRequest, IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { tooLarge } from '../json-body';
import type { CallInFlight, Context } from '../../pipeline/context';
import type { Pipeline } from '../../pipeline/pipeline';
import { runHeadHooks } from '../../pipeline/runner';
import { fromSocketError, upstreamTimeout, type Phase } from '../../proxy/status';
import { dropHopByHop } from './hop-headers';

export interface CallSettings {
  upstream: string;
  timeoutMs: number;
  pipeline: Pipeline;
  logger: Logger;
}

const EVENT_STREAM = /^text\/event-stream\b/i;

export class PassthroughCall implements CallInFlight {
  private phase: Phase = 'queue';
  private timer?: NodeJS.Timeout;
  private proxyReq?: ClientRequest;
  private timedOut = false;
  /** Its end is decided: failed, or the client left. */
  private done = false;

  /** `unreadLimit`: the body passes unread and counts against this many bytes. */
  constructor(private readonly ctx: Context, private readonly settings: CallSettings, private readonly unreadLimit?: number) {
    // Until the answer's head: the wait for a free connection, the connection, the backend's think time.
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.fail(upstreamTimeout(settings.upstream, this.phase));
    }, settings.timeoutMs);
  }

  /**
   * Before the request stream is piped: a body passed unread is counted as it
   * flows. A declared Content-Length was checked on arrival and Node holds the
   * client to it, so only a chunked body needs counting.
   */
  started(req: IncomingMessage): void {
    const limit = this.unreadLimit;
    if (limit === undefined || req.headers['content-length'] !== undefined) return;
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit || this.done) return;
      this.ctx.setHeader('connection', 'close');
      this.fail(tooLarge(limit));
    });
  }

  /** The upstream request has its socket. */
  requestSent(proxyReq: ClientRequest): void {
    if (this.done) return void proxyReq.destroy();
    this.proxyReq = proxyReq;
    const socket = proxyReq.socket!;
    this.phase = socket.connecting ? 'connect' : 'head';
    if (socket.connecting) socket.once('connect', () => { if (this.phase === 'connect') this.phase = 'head'; });
    // The proxy's own timer (proxyTimeout: silence on the socket) aborts the request; this says why it failed.
    proxyReq.once('timeout', () => { this.timedOut = true; });
  }

  /** The backend's head, before the proxy copies it to the client. */
  answered(proxyRes: IncomingMessage): void {
    clearTimeout(this.timer);
    if (this.done) return;
    const { ctx } = this;
    this.phase = 'stream';
    ctx.timings.upstreamFirstByte = ctx.elapsed();
    ctx.stream = EVENT_STREAM.test(proxyRes.headers['content-type'] ?? '');
    runHeadHooks(this.settings.pipeline, ctx, { status: proxyRes.statusCode ?? 502, stream: ctx.stream }, this.settings.logger);
    // What the gateway set (x-request-id, rate-limit headers, what a head hook added) wins over the backend's own.
    for (const name of ctx.res.getHeaderNames()) delete proxyRes.headers[name];
    // The backend's connection is not the client's: its hop-by-hop headers stay here, and the client's
    // connection is kept or closed as the client (or the gateway) asked. The proxy copies a Connection
    // header it finds; without one it would write keep-alive, even to a client that asked to close.
    dropHopByHop(proxyRes.headers);
    if (!ctx.res.hasHeader('connection')) proxyRes.headers.connection = ctx.res.shouldKeepAlive ? 'keep-alive' : 'close';
    let broke: Error | undefined;
    proxyRes.once('error', (err) => { broke = err; });
    proxyRes.once('close', () => {
      if (proxyRes.complete) return;
      this.fail(this.timedOut ? upstreamTimeout(this.settings.upstream, 'stream') : fromSocketError(broke ?? new Error('the backend ended the answer early'), false, this.settings.upstream, 'stream'));
    });
  }

  /** The proxy's error event: the backend could not be reached, or went silent. */
  failed(err: Error): void {
    this.fail(fromSocketError(err, this.timedOut, this.settings.upstream, this.phase));
  }

  /** Ends the request with `err`, once: the error middleware answers it (mid-answer, it cuts the connection). */
  fail(err: Error): void {
    if (this.done) return;
    this.abandon();
    this.ctx.forwarding.fail(err);
  }

  /** The drain deadline: an error response if the answer has not started, else the connection is cut. */
  interrupt(err: Error): void {
    this.fail(err);
  }

  /** The client left, or the end is decided: give up on the backend. */
  abandon(): void {
    this.done = true;
    clearTimeout(this.timer);
    this.proxyReq?.destroy();
  }
}
