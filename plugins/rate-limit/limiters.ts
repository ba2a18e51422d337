// Turns a budget (points per window) into a rate-limiter-flexible limiter.
// With Redis: RateLimiterRedis, one per distinct budget, shared by every
// subject that has it; in failMode `open` each carries an in-process insurance
// limiter with the same budget, which decides while Redis cannot answer.
// Without Redis: RateLimiterMemory (one replica only). In-process limiters
// are kept on `services`, so a config reload does not reset their counts.
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Services } from '../../src';
import type { RedisClient } from '../../src/redis/client';

export type Limiter = RateLimiterAbstract;

export interface StoreOptions {
  /** Absent: count in memory. */
  client?: RedisClient;
  failMode: 'open' | 'closed';
  services: Services;
}

// Results an insurance limiter produced, so a request can tell it was decided in-process.
const inProcess = new WeakSet<object>();
export const decidedInProcess = (result: unknown): boolean => typeof result === 'object' && result !== null && inProcess.has(result);

const mark = (res: RateLimiterRes): RateLimiterRes => { inProcess.add(res); return res; };
const markRejected = (res: unknown): never => { if (res instanceof RateLimiterRes) inProcess.add(res); throw res; };

export class InsuranceLimiter extends RateLimiterMemory {
  override consume(key: string | number, points?: number, options?: Record<string, unknown>): Promise<RateLimiterRes> {
    return super.consume(key, points, options).then(mark, markRejected);
  }

  /** Never null, so even "nothing counted yet" is visibly an in-process answer. */
  override get(key: string | number, options?: Record<string, unknown>): Promise<RateLimiterRes | null> {
    return super.get(key, options).then((res) => mark(res ?? new RateLimiterRes(this.points, 0, 0)));
  }
}

interface Pools {
  memory: Map<string, RateLimiterMemory>;
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
  const redisLimiters = new Map<string, RateLimiterRedis>();
  return (points, windowSeconds) => {
    const id = `${points}/${windowSeconds}`;
    const base = { points, duration: windowSeconds, keyPrefix: '' };
    const { client } = options;
    if (client === undefined) return pooled(pools.memory, id, () => new RateLimiterMemory(base));
    return pooled(redisLimiters, id, () => new RateLimiterRedis({
      ...base,
      storeClient: client,
      useRedisPackage: false,
      // Fail at once (to the insurance limiter or a 503) rather than try a link that is down.
      rejectIfRedisNotReady: true,
      insuranceLimiter: options.failMode === 'open' ? pooled(pools.insurance, id, () => new InsuranceLimiter(base)) : undefined,
    }));
  };
}
