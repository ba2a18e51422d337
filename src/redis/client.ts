// The process-wide Redis connection (services.redis). One per process, made
// from the first config that names `redis` and kept across reloads, so a
// reload never drops the shared counts' connection. It never makes a request
// wait on a dead server: no offline queue (a command fails at once while the
// link is down), a short command timeout, and a reconnect loop that keeps
// trying in the background. Transitions are logged once each.
import Redis, { Cluster, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema';

export type RedisClient = Redis | Cluster;
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

/** Resolves true once the client is ready, false after `timeoutMs` (it keeps trying after that). */
export function whenReady(client: RedisClient, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => { clearTimeout(timer); client.off('ready', onReady); resolve(ok); };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    client.once('ready', onReady);
  });
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
