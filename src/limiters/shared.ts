// Counts in Redis, and in failMode open falls back to the insurance limiter
// when Redis cannot answer. The fallback is made here, not by the library's
// insuranceLimiter option, so a refused request can tell a consume that was
// never sent (Redis not ready: nothing counted) from one that timed out. A
// command that timed out is still in the connection, and a frozen Redis runs
// it when it wakes: without a give-back, requests refused during the stall
// would use up the budget after it. giveBack() writes the reward right behind
// that command on the same connection, so Redis runs the two in order; if the
// connection closed in between, the command may be lost with it, and a reward
// alone would hand out budget nobody took, so nothing is given back.
import { Cluster } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RedisClient } from '../contract/types';
import { decidedInProcess } from './insurance';
import type { Limiter } from './long-window';

type RedisOptions = Omit<ConstructorParameters<typeof RateLimiterRedis>[0], 'storeClient' | 'insuranceLimiter'>;
type Options = Record<string, unknown>;

/** The error ioredis gives a command that got no answer within commandTimeout (it was sent). */
const TIMED_OUT = 'Command timed out';
const timedOut = (err: unknown): boolean => err instanceof Error && err.message === TIMED_OUT;
const ignore = (): void => undefined;

/** Connection closes of a client (a cluster: of any of its nodes), counted once per client however often a reload makes limiters. */
const closeCounts = new WeakMap<RedisClient, { count: number }>();
function closesOf(client: RedisClient): { count: number } {
  let closes = closeCounts.get(client);
  if (closes === undefined) {
    const counter = { count: 0 };
    const bump = (): void => { counter.count++; };
    if (client instanceof Cluster) {
      for (const node of client.nodes()) node.on('close', bump);
      client.on('+node', (node: { on(event: 'close', listener: () => void): unknown }) => node.on('close', bump));
    } else {
      client.on('close', bump);
    }
    closeCounts.set(client, counter);
    closes = counter;
  }
  return closes;
}

/** A consume whose command timed out: Redis may still run it, taking `points`. */
interface InDoubt { points: number; closes: number }

export class SharedLimiter extends RateLimiterRedis {
  private readonly inDoubt = new WeakMap<object, InDoubt>();
  private readonly closes: { count: number };

  constructor(options: RedisOptions, client: RedisClient, readonly insurance?: Limiter) {
    super({ ...options, storeClient: client });
    this.closes = closesOf(client);
  }

  override consume(key: string | number, points = 1, options: Options = {}): Promise<RateLimiterRes> {
    const closes = this.closes.count;
    return super.consume(key, points, options).catch((err: unknown) => {
      if (err instanceof RateLimiterRes) throw err; // over budget: Redis answered
      const doubt = timedOut(err) ? { points, closes } : undefined;
      const note = <T>(answer: T): T => {
        if (doubt !== undefined && typeof answer === 'object' && answer !== null) this.inDoubt.set(answer, doubt);
        return answer;
      };
      if (this.insurance === undefined) throw note(err);
      return this.insurance.consume(key, points, options).then(note, (res: unknown) => { throw note(res); });
    });
  }

  override get(key: string | number, options: Options = {}): Promise<RateLimiterRes | null> {
    return super.get(key, options).catch((err: unknown) => {
      if (this.insurance === undefined) throw err;
      return this.insurance.get(key, options);
    });
  }

  override penalty(key: string | number, points = 1, options: Options = {}): Promise<RateLimiterRes> {
    return super.penalty(key, points, options).catch((err: unknown) => {
      if (this.insurance === undefined) throw err;
      return this.insurance.penalty(key, points, options);
    });
  }

  // reward() has no fallback: a count is given back to the store that took it (giveBack).

  /**
   * Undoes what one consume() of a refused request took: the points it
   * `counted` (in Redis, or in the insurance limiter if that decided), and
   * whatever its timed-out command will take when Redis runs it.
   */
  giveBack(key: string, answer: unknown, counted: number): void {
    if (counted > 0) (decidedInProcess(answer) ? this.insurance! : this).reward(key, counted).catch(ignore);
    const doubt = typeof answer === 'object' && answer !== null ? this.inDoubt.get(answer) : undefined;
    if (doubt !== undefined && doubt.closes === this.closes.count) this.reward(key, doubt.points).catch(ignore);
  }
}
