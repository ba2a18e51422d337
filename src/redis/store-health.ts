// Where the shared limits (in-flight leases and budgets) are being decided,
// so each change is logged once rather than on every request: shared (Redis,
// or the primary for the workers' in-flight leases), fallback (in-process,
// failMode open) or unavailable (failMode closed, requests refused with 503).
// One per shared store and process, on `services`: the admission subsystem and
// any plugin that counts in the same store note into the same one, so a
// Redis outage is one line, not one per user of it. Requests decided
// in-process are counted in sluice_limiter_fallback_total.
import { Counter, type Registry } from 'prom-client';
import type { Logger } from 'pino';

export type StoreMode = 'shared' | 'fallback' | 'unavailable';
/** The shared store: Redis, or the primary with several workers and no Redis (in-flight leases only). */
export type SharedStore = 'redis' | 'primary';

const MESSAGES: Record<SharedStore, Record<StoreMode, [level: 'info' | 'warn' | 'error', message: string]>> = {
  redis: {
    shared: ['info', 'limits: Redis answers again; limits are shared across replicas again'],
    fallback: ['warn', 'limits: Redis cannot answer; limits are counted in this process with the same values until it can (failMode open)'],
    unavailable: ['error', 'limits: Redis cannot answer; refusing requests with 503 limiter_unavailable until it can (failMode closed)'],
  },
  primary: {
    shared: ['info', 'limits: the primary answers again; in-flight limits are shared across workers again'],
    fallback: ['warn', 'limits: the primary cannot answer; in-flight limits are counted in this worker with the same limits until it can (failMode open)'],
    unavailable: ['error', 'limits: the primary cannot answer; refusing requests with 503 limiter_unavailable until it can (failMode closed)'],
  },
};

export const FALLBACK_TOTAL = 'sluice_limiter_fallback_total';

export class StoreHealth {
  private mode: StoreMode = 'shared';
  private readonly fallbacks?: Counter;

  constructor(private readonly logger: Logger, private readonly store: SharedStore, registry?: Registry) {
    this.fallbacks = registry && ((registry.getSingleMetric(FALLBACK_TOTAL) as Counter | undefined) ?? new Counter({
      name: FALLBACK_TOTAL,
      help: 'Requests whose limits were decided in-process because the shared store (Redis, or the primary for the workers\' in-flight limits) could not answer.',
      registers: [registry],
    }));
  }

  /** One request's limits were decided: in the shared store, in-process (failMode open), or not at all (failMode closed). */
  decided(inProcess: boolean, unavailable: boolean): void {
    if (inProcess) this.fallbacks?.inc();
    this.note(unavailable ? 'unavailable' : inProcess ? 'fallback' : 'shared');
  }

  note(mode: StoreMode): void {
    if (mode === this.mode) return;
    this.mode = mode;
    const [level, message] = MESSAGES[this.store][mode];
    this.logger[level]({ limiter: mode }, message);
  }
}
