// The memory store across workers (server.workers above 1): every count
// lives in the primary, in one RateLimiterMemory per budget, so a budget of N
// admits exactly N across the workers of one machine (the rate-limit
// plugin's budgets and the MCP tool-call limits alike: their keys differ). A worker's limiter
// sends its calls over services.cluster; the calls made in one tick (all
// of one request's budgets, and those of requests arriving together) go in
// one message (tick-batcher.ts). rate-limiter-flexible's RateLimiterCluster
// sends one message per call: with a request's four budgets that measured
// twice the IPC and half the throughput of one worker, so the primary became
// the bottleneck.
import { RateLimiterRes } from 'rate-limiter-flexible';
import { memoryLimiter, type Limiter } from './long-window';
import type { PrimaryLink, WorkerLink } from '../contract/plugin';
import { PRIMARY_TIMEOUT_MS, TickBatcher } from '../worker-link/tick-batcher';

const CHANNEL = 'rate-limit.calls';

type Fn = 'consume' | 'penalty' | 'reward' | 'get';

/**
 * One call as it crosses: [limiter, fn, key, points]. The limiter is named
 * "points/duration", made once per budget. Tuples, not objects: a message
 * carries tens of calls under load, and every call is encoded and decoded twice.
 */
type Call = [limiter: string, fn: Fn, key: string, arg: number];

/**
 * A RateLimiterRes as a tuple, with `refused` set when the limiter rejected
 * with it (over budget); null: nothing counted yet (get); a string: the
 * limiter failed with that message.
 */
type Answer = [remainingPoints: number, msBeforeNext: number, consumedPoints: number, isFirstInDuration: 0 | 1, refused: 0 | 1] | null | string;

const answerOf = (r: RateLimiterRes | null, refused: 0 | 1): Answer =>
  r === null ? null : [r.remainingPoints, r.msBeforeNext, r.consumedPoints, r.isFirstInDuration ? 1 : 0, refused];

/** The primary's side: answers each batch of calls in order. */
export function serveLimiters(primary: PrimaryLink): void {
  const limiters = new Map<string, Limiter>();
  const limiterOf = (id: string): Limiter => {
    let limiter = limiters.get(id);
    if (limiter === undefined) {
      const [points, duration] = id.split('/').map(Number);
      limiters.set(id, (limiter = memoryLimiter(points, duration)));
    }
    return limiter;
  };
  const run = async ([id, fn, key, arg]: Call): Promise<Answer> => {
    const limiter = limiterOf(id);
    try {
      return answerOf(fn === 'get' ? await limiter.get(key) : await limiter[fn](key, arg), 0);
    } catch (err) {
      return err instanceof RateLimiterRes ? answerOf(err, 1) : (err as Error).message;
    }
  };
  primary.handle(CHANNEL, (body) => Promise.all((body as Call[]).map(run)));
}

/** One per worker: gathers the calls of a tick into one message (tick-batcher.ts). */
export class CallBatcher {
  private readonly batcher: TickBatcher<Call, Answer>;

  constructor(link: WorkerLink) {
    // A key's penalties (or rewards) waiting for the same message add up to one.
    this.batcher = new TickBatcher<Call, Answer>(link, CHANNEL, PRIMARY_TIMEOUT_MS, (into, call) => { into[3] += call[3]; });
  }

  /** `later`: a penalty or reward, which nothing waits on (see TickBatcher); those of one key and budget are merged. */
  async send(call: Call, later = false): Promise<RateLimiterRes | null> {
    const a = await this.batcher.send(call, later, later ? `${call[0]}\n${call[1]}\n${call[2]}` : undefined);
    if (typeof a === 'string') throw new Error(a);
    if (a === null) return null;
    const res = new RateLimiterRes(a[0], a[1], a[2], a[3] === 1);
    if (a[4] === 1) throw res;
    return res;
  }
}

/** A worker's limiter for one budget: counts in the primary. The calls a limiter's user makes, with RateLimiterMemory's answers. */
export class ClusterLimiter {
  private readonly id: string;

  constructor(readonly points: number, readonly duration: number, private readonly batcher: CallBatcher) {
    this.id = `${points}/${duration}`;
  }

  private call(fn: Fn, key: string | number, arg: number): Promise<RateLimiterRes | null> {
    // Only consume and get decide a request; a penalty or reward settles one already answered.
    const later = fn === 'penalty' || fn === 'reward';
    return this.batcher.send([this.id, fn, String(key), arg], later);
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
