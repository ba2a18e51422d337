// Relays a backend's answer of bytes (speech's audio) to the client as each
// chunk arrives, under the backend's own content type: nothing is parsed or
// held, and the client's backpressure pauses the backend. The head goes out
// with the first chunk, so an answer that fails before any byte can still be
// tried elsewhere. The relay records the answer's usage, once: the request's
// own (`usage`), when the answer ended, or when it was cut after bytes went out
// (the backend spoke them).
//
//   const relay = new ByteRelay(ctx, source, 'audio/mpeg', () => usage);
import type { Usage } from '../contract/plugin';
import type { Context } from '../pipeline/context';

/** What the relay needs of the call: the head, pause and resume, the end. */
export interface ByteSource {
  head(contentType: string): void;
  pause(): void;
  resume(): void;
  end(tail: string): void;
}

export class ByteRelay {
  private headSent = false;
  private draining = false;
  /** A byte relay has no end of its own before the backend's: done stays false, and no output rule cuts it. */
  readonly done = false;
  readonly cut = false;

  constructor(private readonly ctx: Context, private readonly source: ByteSource, private readonly contentType: string, private readonly usage: () => Usage) {}

  private sendHead(): void {
    if (this.headSent) return;
    this.headSent = true;
    this.source.head(this.contentType);
  }

  /** One chunk from the backend, written at once. Always false: only the backend's end ends the answer. */
  push(chunk: Buffer): boolean {
    const { ctx } = this;
    if (ctx.forwarding.settled) return false;
    if (ctx.timings.firstEvent === undefined) ctx.timings.firstEvent = ctx.elapsed();
    this.sendHead();
    if (!ctx.res.write(chunk) && !this.draining) {
      this.draining = true;
      this.source.pause();
      ctx.res.once('drain', () => { this.draining = false; this.source.resume(); });
    }
    return false;
  }

  /** The backend ended its answer: so does the client's. */
  finishIfComplete(): boolean {
    this.sendHead();
    this.ctx.usage = this.usage();
    this.source.end('');
    return true;
  }

  /** Given up after bytes went out: they were generated, and are charged. */
  abandoned(): void {
    if (this.headSent && this.ctx.usage === undefined) this.ctx.usage = this.usage();
  }
}
