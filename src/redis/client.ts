// The process-wide Redis connection (services.redis). One per process, made
// from the first config that names `redis` and kept across reloads, so a
// reload never drops the shared counts' connection. It never makes a request
// wait on a dead server: no offline queue (a command fails at once while the
// link is down), a short command timeout, and a reconnect loop that keeps
// trying in the background. Transitions are logged once each.
import Redis, { Cluster, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema';

import type { RedisClient } from '../contract/types';

export type { RedisClient };
export type RedisSettings = NonNullable<GatewayConfig['redis']>;

/** Delay before the next reconnect attempt: quick at first, then once a second, forever. */
export const reconnectDelay = (attempt: number): number => Math.min(attempt * 100, 1000);

/** What a reload cannot change on a live connection. */
const connectionOf = (s: RedisSettings): string => JSON.stringify([s.url ?? null, s.nodes ?? null, s.commandTimeoutMs]);
const madeFrom = new WeakMap<RedisClient, string>();

export function createRedisClient(settings: RedisSettings, logger: Logger): RedisClient {
  const common: RedisOptions = {
    commandTimeout: settings.commandTimeoutMs,
    maxRetriesPerRequest: 1,
    connectTimeout: 1000,
    enableOfflineQueue: false,
  };
  const client: RedisClient = settings.nodes
    ? new Cluster(settings.nodes.map(parseNode), {
      enableOfflineQueue: false,
      clusterRetryStrategy: reconnectDelay,
      // A master that is down or a cluster that is down fails the command at once (to the
      // insurance limiter or a 503) instead of being retried every 100 ms, up to 16 times.
      retryDelayOnFailover: 0,
      retryDelayOnClusterDown: 0,
      redisOptions: { commandTimeout: common.commandTimeout, maxRetriesPerRequest: common.maxRetriesPerRequest, connectTimeout: common.connectTimeout },
    })
    : new Redis(settings.url!, { ...common, retryStrategy: reconnectDelay });
  madeFrom.set(client, connectionOf(settings));
  watchConnection(client, settings.nodes ? 'cluster' : 'server', logger);
  return client;
}

function parseNode(node: string): { host: string; port: number } {
  const i = node.lastIndexOf(':');
  return { host: node.slice(0, i), port: Number(node.slice(i + 1)) };
}

/** Logs going down and coming back once each; ioredis repeats 'error' on every failed attempt. */
function watchConnection(client: RedisClient, kind: string, logger: Logger): void {
  let up: boolean | undefined;
  client.on('ready', () => {
    if (up !== true) logger.info({ redis: kind }, up === undefined ? 'redis connected' : 'redis reachable again');
    up = true;
  });
  const down = (err?: Error) => {
    if (up === false) return;
    logger.warn({ redis: kind, err: err?.message }, up === undefined ? 'redis unreachable; retrying in the background' : 'redis connection lost; retrying in the background');
    up = false;
  };
  client.on('error', down);
  client.on('close', () => { if (up === true) down(); });
}

/** Resolves true once the client is ready (a cluster: with a link open to every master), false after `timeoutMs`; it keeps trying after that. */
export async function whenReady(client: RedisClient, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs); });
  try {
    return await Promise.race([expired, readyNow(client)]);
  } finally {
    clearTimeout(timer);
  }
}

async function readyNow(client: RedisClient): Promise<true> {
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
  // A cluster opens its links to the masters lazily, and a command that finds one still
  // connecting fails at once (no retry delay, see above): open them before taking traffic.
  if (client instanceof Cluster) await Promise.all(client.nodes('master').map((node) => node.ping().catch(() => undefined)));
  return true;
}

/**
 * Makes sure `services.redis` exists when the config names Redis. The first
 * config's connection settings stay in force until a restart; a reload that
 * changes them is logged, not applied.
 */
export async function attachRedis(services: { redis?: RedisClient }, config: GatewayConfig, logger: Logger, readyTimeoutMs = 2000): Promise<void> {
  if (config.redis === undefined) return;
  if (services.redis !== undefined) {
    if (madeFrom.get(services.redis) !== connectionOf(config.redis)) {
      logger.warn('redis: url, nodes and commandTimeoutMs apply at the next restart; the running connection is kept');
    }
    return;
  }
  services.redis = createRedisClient(config.redis, logger);
  await whenReady(services.redis, readyTimeoutMs);
}

export async function closeRedisClient(client: RedisClient | undefined): Promise<void> {
  if (client === undefined || client.status === 'end') return;
  try {
    await client.quit();
  } catch {
    client.disconnect();
  }
}
