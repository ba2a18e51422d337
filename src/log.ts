// JSON logs, one line per event. Never a prompt, a message, a key or a header value.
import pino, { type Logger } from 'pino';
import { logLevelFromEnv } from './env';

/** `level` must be one of env.ts's LOG_LEVELS: main() checks LOG_LEVEL before it calls this. */
export function createLogger(level: string = logLevelFromEnv(process.env)): Logger {
  return pino({ level, base: { service: 'sluice' }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ sync: false }));
}

export type { Logger };
