// Replicas of the built gateway (two workers each) sharing the suite's Redis
// under a prefix of their own, as a fleet runs: for the budgets that must hold
// across replicas. `redis` reads the shared counts; `close` kills the
// replicas and removes the prefix's keys.
//
//   const stack = await startSharedReplicas({ keys, upstreams, routes, plugins: [{ name: 'rate-limit' }] });
import Redis from 'ioredis';
import { freePort, spawnGateway, type GatewayProcess } from './process';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from './redis';

export interface SharedReplicas {
  replicas: GatewayProcess[];
  /** The key prefix the replicas share (a budget's count: `<prefix>{key:<id>}:tokens`). */
  prefix: string;
  redis: Redis;
  close(): Promise<void>;
}

/** `count` replicas of `config` (everything but server and redis). */
export async function startSharedReplicas(config: Record<string, unknown>, count = 2): Promise<SharedReplicas> {
  const prefix = uniquePrefix();
  const redis = new Redis(sharedRedisUrl());
  const replicas: GatewayProcess[] = [];
  for (let i = 0; i < count; i++) {
    replicas.push(await spawnGateway(JSON.stringify({
      server: { host: '127.0.0.1', port: 0, workers: 2, drainSeconds: 1, metrics: { port: await freePort() } },
      redis: { url: sharedRedisUrl(), prefix, commandTimeoutMs: 2000 },
      ...config,
    })));
  }
  return {
    replicas, prefix, redis,
    close: async () => {
      for (const gw of replicas) gw.kill();
      await deletePrefix(sharedRedisUrl(), prefix);
      redis.disconnect();
    },
  };
}
