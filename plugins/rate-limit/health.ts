// Where the limits are being decided, so each change is logged once rather
// than on every request: shared (Redis), fallback (in-process insurance,
// failMode open) or unavailable (failMode closed, requests refused with 503).
import type { Logger } from 'pino';

export type StoreMode = 'shared' | 'fallback' | 'unavailable';

const MESSAGES: Record<StoreMode, [level: 'info' | 'warn' | 'error', message: string]> = {
  shared: ['info', 'rate-limit: Redis answers again; limits are shared across replicas again'],
  fallback: ['warn', 'rate-limit: Redis cannot answer; limits are counted in this process with the same budgets until it can (failMode open)'],
  unavailable: ['error', 'rate-limit: Redis cannot answer; refusing requests with 503 limiter_unavailable until it can (failMode closed)'],
};

export class StoreHealth {
  private mode: StoreMode = 'shared';

  constructor(private readonly logger: Logger) {}

  note(mode: StoreMode): void {
    if (mode === this.mode) return;
    this.mode = mode;
    const [level, message] = MESSAGES[mode];
    this.logger[level]({ limiter: mode }, message);
  }
}
