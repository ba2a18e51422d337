// The runtime keys in Redis, shared by every replica: one hash,
// <prefix>keys, field = key id, value = the record's JSON (one key, so a
// Redis Cluster keeps it whole and a full read is one HGETALL). Every write
// is a script that changes the hash and publishes the key's id on
// <prefix>keys:changed in the same step, so no replica hears of a change
// before it can read it. A change is compared and set: a concurrent one
// (another admin, another replica) is read again, never overwritten, and a
// revoked key cannot come back through a late update.
import type { RedisClient } from '../contract/types';
import { parseStoredKey, type StoredKey } from './stored-key';
import type { RuntimeKeys } from './runtime-keys';
import { keyStoreUnavailable, type KeyStore } from './store';

export const keysHash = (prefix: string): string => `${prefix}keys`;
export const keysChannel = (prefix: string): string => `${prefix}keys:changed`;

// KEYS[1] the hash; ARGV[1] the channel (not a key: a cluster would refuse it in another slot), ARGV[2] the id, ARGV[3] the record.
const CREATE = `if redis.call('HSETNX', KEYS[1], ARGV[2], ARGV[3]) == 1 then redis.call('PUBLISH', ARGV[1], ARGV[2]) return 1 end return 0`;
// ARGV[4] the record as it was read: 1 set, 0 gone, -1 changed meanwhile.
const SWAP = `local now = redis.call('HGET', KEYS[1], ARGV[2])
if not now then return 0 end
if now ~= ARGV[4] then return -1 end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3]) redis.call('PUBLISH', ARGV[1], ARGV[2]) return 1`;
const REMOVE = `local now = redis.call('HGET', KEYS[1], ARGV[2])
if now then redis.call('HDEL', KEYS[1], ARGV[2]) redis.call('PUBLISH', ARGV[1], ARGV[2]) end return now`;

/** Tries of a compare-and-set before it gives up (each lost to another writer). */
const SWAP_TRIES = 5;

export class RedisKeyStore implements KeyStore {
  readonly where = 'redis';
  private readonly hash: string;
  private readonly channel: string;

  constructor(private readonly client: RedisClient, readonly prefix: string, private readonly keys: RuntimeKeys) {
    this.hash = keysHash(prefix);
    this.channel = keysChannel(prefix);
  }

  /** Every record in the hash; fields that are not records are left out (and named in `skipped`). */
  async readAll(skipped: string[] = []): Promise<StoredKey[]> {
    const all = await this.ask(() => this.client.hgetall(this.hash));
    const out: StoredKey[] = [];
    for (const [id, json] of Object.entries(all)) {
      const record = parseStoredKey(json);
      if (record?.id === id) out.push(record); else skipped.push(id);
    }
    return out;
  }

  async list(): Promise<StoredKey[]> {
    return (await this.readAll()).sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  async get(id: string): Promise<StoredKey | undefined> {
    const json = await this.ask(() => this.client.hget(this.hash, id));
    return json === null ? undefined : parseStoredKey(json);
  }

  async create(record: StoredKey): Promise<boolean> {
    const made = await this.ask(() => this.client.eval(CREATE, 1, this.hash, this.channel, record.id, JSON.stringify(record)));
    if (made === 1) this.keys.put(record);
    return made === 1;
  }

  async update(id: string, change: (current: StoredKey) => StoredKey): Promise<StoredKey | undefined> {
    for (let i = 0; i < SWAP_TRIES; i++) {
      const json = await this.ask(() => this.client.hget(this.hash, id));
      const current = json === null ? undefined : parseStoredKey(json);
      if (current === undefined) return undefined;
      const next = change(current);
      const set = await this.ask(() => this.client.eval(SWAP, 1, this.hash, this.channel, id, JSON.stringify(next), json!));
      if (set === 0) return undefined;
      if (set === 1) {
        this.keys.put(next);
        return next;
      }
    }
    throw keyStoreUnavailable(this.where, new Error(`key ${id} kept changing under ${SWAP_TRIES} tries`));
  }

  async remove(id: string): Promise<StoredKey | undefined> {
    const json = await this.ask(() => this.client.eval(REMOVE, 1, this.hash, this.channel, id)) as string | null;
    this.keys.remove(id);
    return json === null ? undefined : parseStoredKey(json);
  }

  async close(): Promise<void> {}

  private async ask<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (err) {
      throw keyStoreUnavailable(this.where, err);
    }
  }
}
