// Keeps this process's runtime keys (and teams) in step with Redis: a subscription to
// <prefix>keys:changed (on a connection of its own: a subscribed connection
// can do nothing else) reads the one key a message names, and a full read
// runs whenever the subscription is made (at start, and after Redis comes
// back, for the messages missed meanwhile) and every RELOAD_MS as a safety
// net. A key named while a full read runs is read again after it, so a full
// read that started before a change never undoes it.
import type { Logger } from 'pino';
import { closeRedisClient } from '../redis/client';
import type { RedisClient } from '../contract/types';
import { keysChannel, TEAM_FIELD, type RedisKeyStore } from './redis-store';
import type { RuntimeKeys } from './runtime-keys';

/** The safety net: a full read this often, whatever the messages said. */
export const RELOAD_MS = 30_000;

export class RedisKeyWatch {
  private readonly sub: RedisClient;
  private readonly timer: NodeJS.Timeout;
  private failing = false;
  /** Full reads running, and the ids messages named meanwhile. */
  private reading = 0;
  private heard: string[] = [];
  /** Resolves once the first full read is done (or failed): a start waits on it. */
  readonly loaded: Promise<void>;

  constructor(client: RedisClient, private readonly store: RedisKeyStore, private readonly keys: RuntimeKeys, private readonly logger: Logger, reloadMs = RELOAD_MS) {
    const channel = keysChannel(store.prefix);
    let first: () => void;
    this.loaded = new Promise((resolve) => { first = resolve; });
    this.sub = client.duplicate();
    // The main connection logs an outage; this one would only repeat it.
    this.sub.on('error', () => undefined);
    this.sub.on('ready', () => void this.sub.subscribe(channel).then(() => this.reload(), () => undefined).finally(() => first()));
    this.sub.on('message', (from: string, id: string) => {
      if (from !== channel) return;
      if (this.reading > 0) this.heard.push(id);
      void this.refresh(id);
    });
    this.timer = setInterval(() => void this.reload(), reloadMs);
    this.timer.unref();
    // Redis down at start: the keys come with the first subscription; meanwhile none are honoured.
    setTimeout(() => first(), 2_000).unref();
  }

  /** Reads every key; the set becomes exactly what Redis holds. */
  async reload(): Promise<void> {
    this.reading++;
    const from = this.heard.length;
    try {
      const skipped: string[] = [];
      const { keys, teams } = await this.store.readAll(skipped);
      this.keys.replace(keys, teams);
      for (const id of new Set(this.heard.slice(from))) void this.refresh(id);
      if (skipped.length > 0) this.logger.warn({ keyIds: skipped.slice(0, 10), count: skipped.length }, 'runtime keys: records that are not runtime keys were skipped');
      if (this.failing) this.logger.info('runtime keys: read from redis again');
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.logger.warn({ err: (err as Error).message }, 'runtime keys: cannot read them from redis; the last ones read stay in force');
      this.failing = true;
    } finally {
      if (--this.reading === 0) this.heard = [];
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await closeRedisClient(this.sub);
  }

  /** One key or team changed: read it (gone: revoked, deleted). A read that fails is made good by the next full read. */
  private async refresh(id: string): Promise<void> {
    try {
      if (id.startsWith(TEAM_FIELD)) {
        const name = id.slice(TEAM_FIELD.length);
        const team = await this.store.getTeam(name);
        if (team === undefined) this.keys.removeTeam(name); else this.keys.putTeam(team);
        return;
      }
      const record = await this.store.get(id);
      if (record === undefined) this.keys.remove(id); else this.keys.put(record);
    } catch {
      void this.reload();
    }
  }
}
