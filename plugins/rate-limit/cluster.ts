// The memory store across workers (server.workers above 1): every count
// lives in the primary, in one RateLimiterMemory per budget, so a budget of N
// admits exactly N across the workers of one machine. A worker's limiter
// sends its calls over services.cluster; the calls made in one tick (all
// of one request's budgets, and those of requests arriving together) go in
// one message (tick-batcher.ts). rate-limiter-flexible's RateLimiterCluster
// sends one message per call: with a request's four budgets that measured
// twice the IPC and half the throughput of one worker, so the primary became
// the bottleneck.
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { PrimaryLink, WorkerLink } from '../../src';
import { TickBatcher } from './tick-batcher';

const CHANNEL = 'rate-limit.calls';
/** How long a worker waits for the primary's counts before its requests are refused with 503 limiter_unavailable. */
export const PRIMARY_TIMEOUT_MS = 2_000;

type Fn = 'consume' | 'penalty' | 'reward' | 'get';

interface Call { points: number; duration: number; fn: Fn; key: string; arg: number }

/** A RateLimiterRes as plain fields; null: nothing counted yet (get). */
type ResFields = { remainingPoints: number; msBeforeNext: number; consumedPoints: number; isFirstInDuration: boolean } | null;
/** `refused`: the limiter rejected with a RateLimiterRes (over budget); `error`: it failed. */
type Answer = { res: ResFields; refused?: true } | { error: string };

const fields = (r: RateLimiterRes | null): ResFields =>
  r === null ? null : { remainingPoints: r.remainingPoints, msBeforeNext: r.msBeforeNext, consumedPoints: r.consumedPoints, isFirstInDuration: r.isFirstInDuration };

/** The primary's side: answers each batch of calls in order. */
export function servePrimary(primary: PrimaryLink): void {
  const limiters = new Map<string, RateLimiterMemory>();
  const limiterOf = (points: number, duration: number): RateLimiterMemory => {
    const id = `${points}/${duration}`;
    let limiter = limiters.get(id);
    if (limiter === undefined) limiters.set(id, (limiter = new RateLimiterMemory({ points, duration, keyPrefix: '' })));
    return limiter;
  };
  primary.handle(CHANNEL, (body) => Promise.all((body as Call[]).map(async ({ points, duration, fn, key, arg }): Promise<Answer> => {
    const limiter = limiterOf(points, duration);
    try {
      return { res: fields(fn === 'get' ? await limiter.get(key) : await limiter[fn](key, arg)) };
    } catch (err) {
      return err instanceof RateLimiterRes ? { res: fields(err), refused: true } : { error: (err as Error).message };
    }
  })));
}

/** One per worker: gathers the calls of a tick into one message (tick-batcher.ts). */
export class CallBatcher {
  private readonly batcher: TickBatcher<Call, Answer>;

  constructor(link: WorkerLink) {
    this.batcher = new TickBatcher(link, CHANNEL, PRIMARY_TIMEOUT_MS);
  }

  async send(call: Call): Promise<RateLimiterRes | null> {
    const a = await this.batcher.send(call);
    if ('error' in a) throw new Error(a.error);
    const res = a.res === null ? null : new RateLimiterRes(a.res.remainingPoints, a.res.msBeforeNext, a.res.consumedPoints, a.res.isFirstInDuration);
    if (a.refused) throw res;
    return res;
  }
}

/** A worker's limiter for one budget: counts in the primary. The calls the plugin makes, with RateLimiterMemory's answers. */
export class ClusterLimiter {
  constructor(readonly points: number, readonly duration: number, private readonly batcher: CallBatcher) {}

  private call(fn: Fn, key: string | number, arg: number): Promise<RateLimiterRes | null> {
    return this.batcher.send({ points: this.points, duration: this.duration, fn, key: String(key), arg });
  }

  consume(key: string | number, points = 1): Promise<RateLimiterRes> {
    return this.call('consume', key, points) as Promise<RateLimiterRes>;
  }

  penalty(key: string | number, points = 1): Promise<RateLimiterRes> {
    return this.call('penalty', key, points) as Promise<RateLimiterRes>;
  }

  reward(key: string | number, points = 1): Promise<RateLimiterRes> {
    return this.call('reward', key, points) as Promise<RateLimiterRes>;
  }

  get(key: string | number): Promise<RateLimiterRes | null> {
    return this.call('get', key, 0);
  }
}
