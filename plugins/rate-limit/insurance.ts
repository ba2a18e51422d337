// failMode open's insurance: an in-process limiter with the same budget that
// decides while Redis cannot answer. Its answers are marked, so a request can
// tell it was decided in-process (metrics, logs, and where to give a count back).
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { LongWindowMemory, TIMER_MAX_SECONDS } from './long-window';

const inProcess = new WeakSet<object>();
export const decidedInProcess = (result: unknown): boolean => typeof result === 'object' && result !== null && inProcess.has(result);

const mark = (res: RateLimiterRes): RateLimiterRes => { inProcess.add(res); return res; };
const markRejected = (res: unknown): never => { if (res instanceof RateLimiterRes) inProcess.add(res); throw res; };

/** What the shared limiter falls back on. */
export type Insurance = Pick<RateLimiterMemory, 'consume' | 'get' | 'penalty' | 'reward'>;

export class InsuranceLimiter extends RateLimiterMemory {
  override consume(key: string | number, points?: number, options?: Record<string, unknown>): Promise<RateLimiterRes> {
    return super.consume(key, points, options).then(mark, markRejected);
  }

  /** Never null, so even "nothing counted yet" is visibly an in-process answer. */
  override get(key: string | number, options?: Record<string, unknown>): Promise<RateLimiterRes | null> {
    return super.get(key, options).then((res) => mark(res ?? new RateLimiterRes(this.points, 0, 0)));
  }
}

/** The same, for a window longer than RateLimiterMemory's timers can keep (see long-window.ts). */
class LongInsurance extends LongWindowMemory {
  override consume(key: string | number, points?: number): Promise<RateLimiterRes> {
    return super.consume(key, points).then(mark, markRejected);
  }

  override get(key: string | number): Promise<RateLimiterRes | null> {
    return super.get(key).then((res) => mark(res ?? new RateLimiterRes(this.points, 0, 0)));
  }
}

/** The insurance for a budget of `points` per `duration` seconds. */
export const insuranceFor = (options: { points: number; duration: number; keyPrefix: string }): Insurance =>
  (options.duration > TIMER_MAX_SECONDS ? new LongInsurance(options.points, options.duration) : new InsuranceLimiter(options));
