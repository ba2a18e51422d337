// The log's writer: the lines of one turn of the event loop go out together,
// in writes of whole lines and at most PIPE_BUF bytes, at the end of the turn.
// Each write is a system call, and under load one turn ends tens of requests
// (one access line each): a call per line measured about 10 µs of CPU per
// request here. A line never waits longer than the turn it was logged in,
// and lines still pending when the process exits are written then.
import type { DestinationStream } from 'pino';

/** What a write to a pipe may hold and still go in one piece (Linux). */
export const PIPE_BUF = 4096;

interface Destination extends DestinationStream {
  flush?(cb?: (err?: Error) => void): void;
  flushSync?(): void;
}

const live = new Set<WeakRef<LineWriter>>();
process.once('exit', () => {
  for (const ref of live) ref.deref()?.flushSync();
});

export class LineWriter implements DestinationStream {
  private pending = '';
  private bytes = 0;
  private scheduled = false;
  private readonly drainSoon = (): void => {
    this.scheduled = false;
    this.drain();
  };

  constructor(private readonly dest: Destination) {
    live.add(new WeakRef(this));
  }

  write(line: string): void {
    const size = Buffer.byteLength(line);
    if (this.bytes + size > PIPE_BUF) this.drain();
    this.pending += line;
    this.bytes += size;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.drainSoon);
    }
  }

  /** pino's logger.flush(): what is pending now, then the destination's own flush. */
  flush(cb?: (err?: Error) => void): void {
    this.drain();
    if (this.dest.flush) this.dest.flush(cb);
    else cb?.();
  }

  flushSync(): void {
    this.drain();
    this.dest.flushSync?.();
  }

  private drain(): void {
    if (this.pending === '') return;
    const text = this.pending;
    this.pending = '';
    this.bytes = 0;
    this.dest.write(text);
  }
}
