// Counts in memory for windows longer than a timer can wait. rate-limiter-
// flexible's memory store ends each count with a timer, and Node's timers
// cannot wait past 2^31 - 1 ms (24.8 days): a month's dollar budget would
// expire at once. Counts for windows that long live here instead, with
// RateLimiterMemory's answers, ending when read past their window and in an
// hourly sweep of the ones nobody reads any more.
import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

/** What a limiter's user calls on it, whichever store counts. */
export type Limiter = Pick<RateLimiterAbstract, 'consume' | 'get' | 'penalty' | 'reward'>;

/** The longest window a RateLimiterMemory can keep: its timer's limit. */
export const TIMER_MAX_SECONDS = Math.floor((2 ** 31 - 1) / 1000);
const SWEEP_MS = 3_600_000;

interface Count { value: number; endsAt: number }

export class LongWindowMemory {
  private readonly counts = new Map<string, Count>();

  constructor(readonly points: number, readonly duration: number) {
    setInterval(() => this.sweep(Date.now()), SWEEP_MS).unref();
  }

  private sweep(now: number): void {
    for (const [key, c] of this.counts) if (c.endsAt <= now) this.counts.delete(key);
  }

  private current(key: string, now: number): Count | undefined {
    const c = this.counts.get(key);
    if (c === undefined || c.endsAt > now) return c;
    this.counts.delete(key);
    return undefined;
  }

  private add(key: string | number, points: number): RateLimiterRes {
    const now = Date.now();
    const k = String(key);
    let c = this.current(k, now);
    const first = c === undefined;
    if (c === undefined) this.counts.set(k, (c = { value: 0, endsAt: now + this.duration * 1000 }));
    c.value += points;
    return new RateLimiterRes(Math.max(this.points - c.value, 0), c.endsAt - now, c.value, first);
  }

  consume(key: string | number, points = 1): Promise<RateLimiterRes> {
    const res = this.add(key, points);
    return res.consumedPoints > this.points ? Promise.reject(res) : Promise.resolve(res);
  }

  penalty(key: string | number, points = 1): Promise<RateLimiterRes> {
    return Promise.resolve(this.add(key, points));
  }

  reward(key: string | number, points = 1): Promise<RateLimiterRes> {
    return Promise.resolve(this.add(key, -points));
  }

  get(key: string | number): Promise<RateLimiterRes | null> {
    const now = Date.now();
    const c = this.current(String(key), now);
    return Promise.resolve(c === undefined ? null : new RateLimiterRes(Math.max(this.points - c.value, 0), c.endsAt - now, c.value, false));
  }
}

/** An in-process limiter: rate-limiter-flexible's, or this one for a window longer than its timers can keep. */
export const memoryLimiter = (points: number, windowSeconds: number): Limiter =>
  (windowSeconds > TIMER_MAX_SECONDS ? new LongWindowMemory(points, windowSeconds) : new RateLimiterMemory({ points, duration: windowSeconds, keyPrefix: '' }));
