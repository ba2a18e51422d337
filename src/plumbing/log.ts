// JSON logs, one line per event. Never a prompt, a message, a key or a header value.
//
// With several workers every process writes its own lines to the one stdout
// they share. Each write() holds whole lines only and at most PIPE_BUF bytes
// (4096 on Linux), which a pipe writes atomically and a file appends in one
// piece, so lines from different processes never interleave mid-line (a
// single line longer than that, which the gateway's lines are not, could).
import pino, { type Logger } from 'pino';
import { logLevelFromEnv } from './env';
import { isoTime } from './iso-time';
import { LineWriter, PIPE_BUF } from './line-writer';

let stampedMs = -1;
let stamp = '';

/**
 * pino's isoTime field (`,"time":"2026-11-24T07:53:56.123Z"`), made once per
 * millisecond: under load many lines share one, and a Date and its ISO string
 * for every line were a measurable share of the access log's cost.
 */
export function isoTimeField(now = Date.now()): string {
  if (now !== stampedMs) {
    stampedMs = now;
    stamp = `,"time":"${isoTime(now)}"`;
  }
  return stamp;
}

/**
 * `level` must be one of env.ts's LOG_LEVELS: main() checks LOG_LEVEL before it calls this.
 * `base`: fields every line carries besides `service` (a worker's pid).
 */
export function createLogger(level: string = logLevelFromEnv(process.env), base: Record<string, unknown> = {}): Logger {
  // Written on this thread (pino's default), a turn's lines at a time (line-writer.ts): an asynchronous
  // destination hands every write to libuv's thread pool, which measured 11 µs of CPU per access line
  // (110 against 99 µs a request with the plugins off), and on a full pipe it waits just the same.
  return pino({ level, base: { service: 'sluice', ...base }, timestamp: () => isoTimeField() }, new LineWriter(pino.destination({ sync: true, maxWrite: PIPE_BUF })));
}

export type { Logger };
