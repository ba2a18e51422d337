// The runtime keys of a process that keeps them itself: one gateway, or the
// primary of several workers (which hands them on, src/keys/primary-keys.ts).
// Each config says whether they are honoured (an `admin` section) and where
// they live: Redis when the config names it, else the keys file. A worker
// follows its primary instead (src/keys/cluster-keys.ts).
//
//   const host = new KeyHost(logger);
//   await host.apply(loaded, services.redis);   // at start and on each reload
//   buildKeyIndex(config.keys, host.keys);      // what a runtime's index consults
//   await host.store!.create(record);           // the admin API's writes
import { dirname, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { LoadedConfig } from '../config/load';
import type { AdminConfig } from '../config/schema';
import type { RedisClient } from '../contract/types';
import { FileKeyStore } from './file-store';
import { RedisKeyStore } from './redis-store';
import { RedisKeyWatch } from './redis-watch';
import { RuntimeKeys } from './runtime-keys';
import type { KeyStore } from './store';

/** Where a process's runtime keys come from; `keys` is what the key index consults. */
export interface KeySource {
  readonly keys: RuntimeKeys;
  /** Takes a config (at start and on each reload): without an `admin` section no runtime key is honoured. */
  apply(loaded: LoadedConfig, redis: RedisClient | undefined): Promise<void>;
  close(): Promise<void>;
}

/** The keys file of a config: admin.keysFile (relative to the config's folder), else beside the config. */
export const keysFilePath = (file: string, admin: AdminConfig): string =>
  (admin.keysFile !== undefined ? resolve(dirname(file), admin.keysFile) : `${file}.keys.json`);

interface Current {
  /** 'redis:<prefix>' or 'file:<path>'. */
  where: string;
  store: KeyStore;
  watch?: RedisKeyWatch;
}

export class KeyHost implements KeySource {
  readonly keys = new RuntimeKeys();
  private current: Current | undefined;

  constructor(private readonly logger: Logger) {}

  /** Where the admin API writes; undefined while the config has no `admin` section. */
  get store(): KeyStore | undefined {
    return this.current?.store;
  }

  async apply({ config, file }: LoadedConfig, redis: RedisClient | undefined): Promise<void> {
    const { admin } = config;
    this.keys.teams.applyConfig(config);
    if (admin === undefined) {
      await this.switchTo(undefined);
      this.keys.replace([], []);
      return;
    }
    const prefix = config.redis?.prefix;
    const where = prefix !== undefined && redis !== undefined ? `redis:${prefix}` : `file:${keysFilePath(file, admin)}`;
    if (where === this.current?.where) return;
    if (prefix !== undefined && redis !== undefined) {
      const store = new RedisKeyStore(redis, prefix, this.keys);
      const watch = new RedisKeyWatch(redis, store, this.keys, this.logger);
      await watch.loaded;
      await this.switchTo({ where, store, watch });
    } else {
      const store = new FileKeyStore(keysFilePath(file, admin), this.keys);
      store.load(); // a file that is not a keys file stops here: nothing overwrites it
      await this.switchTo({ where, store });
    }
    this.logger.info({ store: this.current!.store.where, keys: this.keys.list().length }, 'runtime keys loaded');
  }

  async close(): Promise<void> {
    await this.switchTo(undefined);
  }

  private async switchTo(next: Current | undefined): Promise<void> {
    const old = this.current;
    this.current = next;
    if (old === undefined) return;
    await old.watch?.close();
    await old.store.close();
  }
}
