// Turns a budget (points per window) into a rate-limiter-flexible limiter.
// With Redis: a SharedLimiter (RateLimiterRedis), one per distinct budget,
// shared by every subject that has it; in failMode `open` each carries an
// in-process insurance limiter with the same budget, which decides while Redis
// cannot answer.
// Without Redis: RateLimiterMemory (one replica only); with several workers,
// a ClusterLimiter, which counts in the primary (cluster.ts), so a budget of
// N admits exactly N across the workers of one machine. In-process limiters
// are kept for the process (the rate-limit plugin's `keep`; the core's, for
// the MCP tool-call limits, on its services), so a config reload does not
// reset their counts. The rate-limit plugin's budgets and the MCP limits
// (src/mcp/limits.ts) both count here.
import type { WorkerLink } from '../contract/plugin';
import type { RedisClient } from '../contract/types';
import { CallBatcher, ClusterLimiter } from './cluster';
import { decidedInProcess, insuranceFor } from './insurance';
import { memoryLimiter, type Limiter } from './long-window';
import { SharedLimiter } from './shared';

export { decidedInProcess, InsuranceLimiter } from './insurance';
export type { Limiter } from './long-window';

function pooled<T>(pool: Map<string, T>, id: string, make: () => T): T {
  let limiter = pool.get(id);
  if (limiter === undefined) {
    limiter = make();
    pool.set(id, limiter);
  }
  return limiter;
}

/** The limiters kept for the whole process: in-process counts survive a reload. */
export class LimiterPools {
  private readonly memory = new Map<string, Limiter>();
  private readonly insurance = new Map<string, Limiter>();
  /** With several workers: the one batcher of this worker's calls to the primary. */
  private readonly batcher?: CallBatcher;

  constructor(link: WorkerLink | undefined) {
    this.batcher = link && new CallBatcher(link);
  }

  /** Returns a function that gives the limiter for a budget; equal budgets share one. `client` absent: count in memory. */
  source(client: RedisClient | undefined, failMode: 'open' | 'closed'): (points: number, windowSeconds: number) => Limiter {
    const redisLimiters = new Map<string, SharedLimiter>();
    return (points, windowSeconds) => {
      const id = `${points}/${windowSeconds}`;
      const base = { points, duration: windowSeconds, keyPrefix: '' };
      if (client === undefined) return pooled(this.memory, id, () => (this.batcher ? new ClusterLimiter(points, windowSeconds, this.batcher) : memoryLimiter(points, windowSeconds)));
      return pooled(redisLimiters, id, () => new SharedLimiter(
        // Fail at once (to the insurance limiter or a 503) rather than try a link that is down.
        { ...base, useRedisPackage: false, rejectIfRedisNotReady: true },
        client,
        failMode === 'open' ? pooled(this.insurance, id, () => insuranceFor(base)) : undefined,
      ));
    };
  }
}

const ignore = (): void => undefined;

/**
 * Gives back what a refused request's consume() took from `limiter`: the
 * points it `counted`, and with Redis whatever a timed-out command of it will
 * still take (see SharedLimiter), so a refused request never uses up budget.
 */
export function giveBack(limiter: Limiter, key: string, answer: unknown, counted: number): void {
  if (limiter instanceof SharedLimiter) limiter.giveBack(key, answer, counted);
  else if (counted > 0) limiter.reward(key, counted).catch(ignore);
}

/**
 * Settles a reservation with the store that took it: `points` more charged
 * (penalty), or given back when negative. A charge falls back to the
 * insurance limiter while Redis cannot answer; a give-back goes only to the
 * store the reservation was counted in.
 */
export function settle(limiter: Limiter, key: string, answer: unknown, points: number, failed: () => void): void {
  if (points > 0) limiter.penalty(key, points).catch(failed);
  else if (points < 0) {
    const store = limiter instanceof SharedLimiter && decidedInProcess(answer) ? limiter.insurance! : limiter;
    store.reward(key, -points).catch(failed);
  }
}
