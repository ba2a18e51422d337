// failMode open's insurance: an in-process limiter with the same budget that
// decides while Redis cannot answer. Its answers are marked, so a request can
// tell it was decided in-process (metrics, logs, and where to give a count back).
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { LongWindowMemory, TIMER_MAX_SECONDS, type Limiter } from './long-window';

const inProcess = new WeakSet<object>();
export const decidedInProcess = (result: unknown): boolean => typeof result === 'object' && result !== null && inProcess.has(result);

const mark = (res: RateLimiterRes): RateLimiterRes => { inProcess.add(res); return res; };
const markRejected = (res: unknown): never => { if (res instanceof RateLimiterRes) inProcess.add(res); throw res; };

/** An in-process store of counts, as the marking below needs it. */
type InProcess = new (...args: any[]) => {
  readonly points: number;
  consume(key: string | number, points?: number, options?: Record<string, unknown>): Promise<RateLimiterRes>;
  get(key: string | number, options?: Record<string, unknown>): Promise<RateLimiterRes | null>;
};

/** `Base` with its answers marked as decided in-process. */
function marking<T extends InProcess>(Base: T) {
  return class extends Base {
    override consume(key: string | number, points?: number, options?: Record<string, unknown>): Promise<RateLimiterRes> {
      return super.consume(key, points, options).then(mark, markRejected);
    }

    override get(key: string | number, options?: Record<string, unknown>): Promise<RateLimiterRes | null> {
      return super.get(key, options).then((res) => mark(res ?? new RateLimiterRes(this.points, 0, 0)));
    }
  };
}

export const InsuranceLimiter = marking(RateLimiterMemory);
/** The same, for a window longer than RateLimiterMemory's timers can keep (see long-window.ts). */
const LongInsurance = marking(LongWindowMemory);

/** The insurance for a budget of `points` per `duration` seconds. */
export const insuranceFor = (options: { points: number; duration: number; keyPrefix: string }): Limiter =>
  (options.duration > TIMER_MAX_SECONDS ? new LongInsurance(options.points, options.duration) : new InsuranceLimiter(options));
