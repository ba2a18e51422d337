// The runtime keys of the workers (server.workers above 1), handed on by the
// primary, which keeps them (src/keys/host.ts: the keys file or Redis). A
// worker keeps one poll open, carrying the version it holds; the primary
// answers at once with every key when it holds a newer version, else when
// the keys change (or with nothing after KEYS_POLL_MS). A worker is never
// more than one message behind, and no message flows while nothing changes.
import type { Logger } from 'pino';
import type { LoadedConfig } from '../config/load';
import type { PrimaryLink } from '../contract/plugin';
import { WorkerPolls } from '../worker-link/worker-polls';
import { attachRedis, closeRedisClient } from '../redis/client';
import type { RedisClient } from '../contract/types';
import { KeyHost } from './host';
import type { RuntimeKeys } from './runtime-keys';
import type { StoredTeam } from '../teams/stored-team';
import type { StoredKey } from './stored-key';

export const KEYS_CHANNEL = 'sluice.keys';
/** Longest the primary holds a worker's poll with no change. */
export const KEYS_POLL_MS = 5_000;

export interface KeysSnapshot {
  version: number;
  keys: StoredKey[];
  teams: StoredTeam[];
}

/** The primary's side: answers each worker's poll (its body: the version the worker holds, -1 at first). */
export function serveKeys(primary: PrimaryLink, keys: RuntimeKeys): void {
  const polls = new WorkerPolls<KeysSnapshot | null>(null);
  const snapshot = (): KeysSnapshot => ({ version: keys.version, keys: keys.list(), teams: keys.teams.list() });
  primary.handle(KEYS_CHANNEL, (held, worker) => (held !== keys.version ? snapshot() : polls.hold(worker, KEYS_POLL_MS)));
  keys.onChange(() => polls.answerAll(snapshot()));
  primary.onWorkerExit((worker) => polls.answer(worker, null));
}

/**
 * The primary's runtime keys: kept here (the keys file, or Redis on a
 * connection of the primary's own, made only when the config has an admin
 * section) and handed to the workers. `apply` each config before the workers
 * get it; `host` is what the admin listener writes to.
 */
export function keepKeysForWorkers(primary: PrimaryLink, logger: Logger) {
  const host = new KeyHost(logger);
  const services: { redis?: RedisClient } = {};
  serveKeys(primary, host.keys);
  return {
    host,
    services,
    async apply(loaded: LoadedConfig): Promise<void> {
      if (loaded.config.admin !== undefined) await attachRedis(services, loaded.config, logger);
      await host.apply(loaded, services.redis);
    },
    async close(): Promise<void> {
      await host.close();
      await closeRedisClient(services.redis);
    },
  };
}
