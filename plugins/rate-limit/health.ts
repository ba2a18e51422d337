// Where the limits are being decided, so each change is logged once rather
// than on every request: shared (Redis, or the primary for the workers'
// in-flight limits), fallback (in-process, failMode open) or unavailable
// (failMode closed, requests refused with 503).
import type { Logger } from 'pino';

export type StoreMode = 'shared' | 'fallback' | 'unavailable';
/** The shared store: Redis, or the primary with several workers and no Redis (in-flight limits only). */
export type SharedStore = 'redis' | 'primary';

const MESSAGES: Record<SharedStore, Record<StoreMode, [level: 'info' | 'warn' | 'error', message: string]>> = {
  redis: {
    shared: ['info', 'rate-limit: Redis answers again; limits are shared across replicas again'],
    fallback: ['warn', 'rate-limit: Redis cannot answer; limits are counted in this process with the same budgets until it can (failMode open)'],
    unavailable: ['error', 'rate-limit: Redis cannot answer; refusing requests with 503 limiter_unavailable until it can (failMode closed)'],
  },
  primary: {
    shared: ['info', 'rate-limit: the primary answers again; in-flight limits are shared across workers again'],
    fallback: ['warn', 'rate-limit: the primary cannot answer; in-flight limits are counted in this worker with the same limits until it can (failMode open)'],
    unavailable: ['error', 'rate-limit: the primary cannot answer; refusing requests with 503 limiter_unavailable until it can (failMode closed)'],
  },
};

export class StoreHealth {
  private mode: StoreMode = 'shared';

  constructor(private readonly logger: Logger, private readonly store: SharedStore = 'redis') {}

  note(mode: StoreMode): void {
    if (mode === this.mode) return;
    this.mode = mode;
    const [level, message] = MESSAGES[this.store][mode];
    this.logger[level]({ limiter: mode }, message);
  }
}
