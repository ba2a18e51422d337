// JSON logs, one line per event. Never a prompt, a message, a key or a header value.
import pino, { type Logger } from 'pino';

export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: { service: 'sluice' }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ sync: false }));
}

export type { Logger };
