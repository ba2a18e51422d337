// Turns a budget (points per window) into a rate-limiter-flexible limiter.
// With Redis: a SharedLimiter (RateLimiterRedis), one per distinct budget,
// shared by every subject that has it; in failMode `open` each carries an
// in-process insurance limiter with the same budget, which decides while Redis
// cannot answer.
// Without Redis: RateLimiterMemory (one replica only); with several workers,
// RateLimiterCluster, which counts in the primary (RateLimiterClusterMaster,
// set up by the plugin's setUpPrimary), so a budget of N admits exactly N
// across the workers of one machine. In-process limiters are kept on
// `services`, so a config reload does not reset their counts.
import { RateLimiterCluster, RateLimiterMemory, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Services } from '../../src';
import type { RedisClient } from '../../src';
import { InsuranceLimiter } from './insurance';
import { SharedLimiter } from './shared';

export { decidedInProcess, InsuranceLimiter } from './insurance';

export type Limiter = RateLimiterAbstract;

export interface StoreOptions {
  /** Absent: count in memory. */
  client?: RedisClient;
  failMode: 'open' | 'closed';
  services: Services;
}

interface Pools {
  memory: Map<string, RateLimiterMemory | RateLimiterCluster>;
  insurance: Map<string, InsuranceLimiter>;
}

const POOLS = 'rate-limit.pools';

function poolsOf(services: Services): Pools {
  let pools = services[POOLS] as Pools | undefined;
  if (pools === undefined) {
    pools = { memory: new Map(), insurance: new Map() };
    services[POOLS] = pools;
  }
  return pools;
}

function pooled<T>(pool: Map<string, T>, id: string, make: () => T): T {
  let limiter = pool.get(id);
  if (limiter === undefined) {
    limiter = make();
    pool.set(id, limiter);
  }
  return limiter;
}

/** Returns a function that gives the limiter for a budget; equal budgets share one. */
export function limiterSource(options: StoreOptions): (points: number, windowSeconds: number) => Limiter {
  const pools = poolsOf(options.services);
  const redisLimiters = new Map<string, SharedLimiter>();
  return (points, windowSeconds) => {
    const id = `${points}/${windowSeconds}`;
    const base = { points, duration: windowSeconds, keyPrefix: '' };
    const { client } = options;
    if (client === undefined) return pooled(pools.memory, id, () => memoryLimiter(base, options.services));
    return pooled(redisLimiters, id, () => new SharedLimiter(
      // Fail at once (to the insurance limiter or a 503) rather than try a link that is down.
      { ...base, useRedisPackage: false, rejectIfRedisNotReady: true },
      client,
      options.failMode === 'open' ? pooled(pools.insurance, id, () => new InsuranceLimiter(base)) : undefined,
    ));
  };
}

/**
 * How long a worker waits for the primary's count before the request is
 * refused with 503 limiter_unavailable (the primary answers in microseconds
 * unless it is gone).
 */
const PRIMARY_TIMEOUT_MS = 2_000;

/** A budget counted in this process, or in the primary when there are several workers (the budget names the primary's limiter). */
function memoryLimiter(base: { points: number; duration: number; keyPrefix: string }, services: Services): RateLimiterMemory | RateLimiterCluster {
  if (services.cluster === undefined) return new RateLimiterMemory(base);
  return new RateLimiterCluster({ ...base, keyPrefix: `sluice-rate-limit:${base.points}/${base.duration}`, timeoutMs: PRIMARY_TIMEOUT_MS });
}

const ignore = (): void => undefined;

/**
 * Gives back what a refused request's consume() took from `limiter`: the
 * point it `counted`, and with Redis whatever a timed-out command of it will
 * still take (see SharedLimiter), so a refused request never uses up budget.
 */
export function giveBack(limiter: Limiter, key: string, answer: unknown, counted: boolean): void {
  if (limiter instanceof SharedLimiter) limiter.giveBack(key, answer, counted);
  else if (counted) limiter.reward(key, 1).catch(ignore);
}
