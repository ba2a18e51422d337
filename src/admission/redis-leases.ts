// Leases in Redis, shared by every replica: per subject a sorted set of lease
// ids scored by expiry (Redis's own clock). A Lua script drops the expired
// ones and adds a lease only while fewer than the limit remain, atomically.
// Held leases are refreshed every third of `leaseMs` while their requests
// run, so a long stream keeps its slot and a replica that dies loses its slots
// at most `leaseMs` later. A release that cannot be sent (the link is down) is
// sent again when Redis is back. A release is sent even for an acquire whose
// answer never came: a Redis that hung runs that acquire when it wakes, and
// the release, written behind it on the same connection, undoes it.
import type { RedisClient } from '../contract/types';
import { ReleaseListeners, type LeaseAnswer, type LeaseStore } from './leases';

const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

// KEYS[1] the subject's leases; ARGV: lease ms, limit, lease id. Returns {admitted 0|1, leases held}.
const ACQUIRE = `${NOW}
local ttl = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZSCORE', KEYS[1], ARGV[3])
local n = redis.call('ZCARD', KEYS[1])
if held or n < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ttl)
  if not held then n = n + 1 end
  return {1, n}
end
return {0, n}`;

// KEYS[1] the subject's leases; ARGV: lease ms, lease id. Adds it back if it expired or Redis lost it: the request still runs.
const REFRESH = `${NOW}
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`;

interface LeaseCommands {
  sluiceLeaseAcquire(key: string, ttl: number, limit: number, lease: string): Promise<[number, number]>;
  sluiceLeaseRefresh(key: string, ttl: number, lease: string): Promise<number>;
}

function withCommands(client: RedisClient): RedisClient & LeaseCommands {
  const c = client as RedisClient & Partial<LeaseCommands>;
  if (typeof c.sluiceLeaseAcquire !== 'function') {
    client.defineCommand('sluiceLeaseAcquire', { numberOfKeys: 1, lua: ACQUIRE });
    client.defineCommand('sluiceLeaseRefresh', { numberOfKeys: 1, lua: REFRESH });
  }
  return c as RedisClient & LeaseCommands;
}

/** The error ioredis gives a command that was sent but got no answer in time: Redis may still run it. */
const sent = (err: unknown): boolean => err instanceof Error && err.message === 'Command timed out';
const ignore = (): void => undefined;
/** Releases kept for a Redis that is back, at most this many (the rest expire on their own). */
const MAX_UNSENT = 10_000;

export class RedisLeases implements LeaseStore {
  readonly shared = true;
  private readonly client: RedisClient & LeaseCommands;
  /** lease id + key → key, for every lease a request of this process holds or may hold. */
  private readonly live = new Map<string, { key: string; lease: string }>();
  private readonly unsent: Array<{ key: string; lease: string; until: number }> = [];
  private readonly released = new ReleaseListeners();
  private timer?: NodeJS.Timeout;

  constructor(client: RedisClient, private readonly leaseMs: number) {
    this.client = withCommands(client);
    client.on('ready', () => this.resend());
  }

  async acquire(key: string, limit: number, lease: string): Promise<LeaseAnswer> {
    // Kept alive from the first attempt: an answer lost in a timeout may still have taken it.
    this.keep(key, lease);
    try {
      const [admitted, inFlight] = await this.client.sluiceLeaseAcquire(key, this.leaseMs, limit, lease);
      if (admitted !== 1) this.live.delete(lease + key);
      return { admitted: admitted === 1, inFlight };
    } catch (err) {
      if (!sent(err)) this.live.delete(lease + key);
      throw err;
    }
  }

  /** Counts in Redis a lease the request took elsewhere (the in-process fallback): it is in flight all the same. */
  keep(key: string, lease: string): void {
    this.live.set(lease + key, { key, lease });
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.refresh(), Math.max(50, Math.floor(this.leaseMs / 3)));
      this.timer.unref();
    }
  }

  release(key: string, lease: string, quiet = false): void {
    const wasLive = this.live.delete(lease + key);
    if (this.live.size === 0 && this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    this.client.zrem(key, lease).catch((err: unknown) => {
      if (!sent(err) && this.unsent.length < MAX_UNSENT) this.unsent.push({ key, lease, until: Date.now() + this.leaseMs });
    });
    if (wasLive && !quiet) this.released.notify();
  }

  onRelease(listener: () => void): () => void {
    return this.released.add(listener);
  }

  private refresh(): void {
    for (const { key, lease } of this.live.values()) this.client.sluiceLeaseRefresh(key, this.leaseMs, lease).catch(ignore);
  }

  private resend(): void {
    const now = Date.now();
    for (const { key, lease, until } of this.unsent.splice(0)) {
      if (until > now) this.client.zrem(key, lease).catch(ignore);
    }
  }
}
