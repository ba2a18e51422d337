// Waiting on a reader that fell behind: the one wait a writer needs after
// write() returned false, used by every loop that writes many times.
import type { Writable } from 'node:stream';

/** Resolves when the stream has taken what was written (drain), or has closed; leaves no listener behind, however often a loop waits. */
export function drained(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => { stream.off('drain', done); stream.off('close', done); resolve(); };
    stream.on('drain', done);
    stream.on('close', done);
  });
}
