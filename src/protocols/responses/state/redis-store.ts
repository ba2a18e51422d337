// Stored responses in Redis, shared by every replica: one key per response,
// `<prefix>{resp:<id>}`, written with its TTL (SET … PX), so Redis expires
// it on every replica at once and its own memory policy bounds the total.
// The value is the owner's line, then the record's JSON; a read of another
// owner's key reads as absent, and a delete checks the owner in the same
// Lua script that deletes, so no one deletes what another owner stored.
// A Redis that cannot answer is `store_unavailable` (503), never "absent".
import type { RedisClient } from '../../../types';
import { decodeRecord, encodeRecord, storeUnavailable, type ResponseStore, type StoreLimits, type StoredResponse } from './store';

// KEYS[1] the response; ARGV[1] the owner's line. Reads only that many bytes of the value.
const DELETE_OWNED = `
if redis.call('GETRANGE', KEYS[1], 0, #ARGV[1] - 1) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

interface StoreCommands {
  sluiceResponseDelete(key: string, ownerLine: string): Promise<number>;
}

function withCommands(client: RedisClient): RedisClient & StoreCommands {
  const c = client as RedisClient & Partial<StoreCommands>;
  if (typeof c.sluiceResponseDelete !== 'function') client.defineCommand('sluiceResponseDelete', { numberOfKeys: 1, lua: DELETE_OWNED });
  return c as RedisClient & StoreCommands;
}

/** The value's first line: the owner as a JSON string (which holds no raw newline), then the newline. */
const ownerLine = (owner: string): string => `${JSON.stringify(owner)}\n`;

export class RedisResponseStore implements ResponseStore {
  private readonly client: RedisClient & StoreCommands;

  constructor(client: RedisClient, readonly prefix: string, private limits: StoreLimits) {
    this.client = withCommands(client);
  }

  configure(limits: StoreLimits): void {
    this.limits = limits;
  }

  /** One key per response; the braces put it in one slot of a Redis Cluster. */
  key(id: string): string {
    return `${this.prefix}{resp:${id}}`;
  }

  async put(id: string, record: StoredResponse): Promise<boolean> {
    const encoded = encodeRecord(record, this.limits.maxResponseBytes);
    try {
      if (encoded === undefined) {
        await this.client.del(this.key(id));
        return false;
      }
      await this.client.set(this.key(id), ownerLine(record.owner) + encoded.json, 'PX', this.limits.ttlMs);
      return true;
    } catch (err) {
      throw storeUnavailable(err);
    }
  }

  async get(id: string, owner: string): Promise<StoredResponse | undefined> {
    let value: string | null;
    try {
      value = await this.client.get(this.key(id));
    } catch (err) {
      throw storeUnavailable(err);
    }
    const line = ownerLine(owner);
    if (value === null || !value.startsWith(line)) return undefined;
    return decodeRecord(value.slice(line.length));
  }

  async delete(id: string, owner: string): Promise<boolean> {
    try {
      return await this.client.sluiceResponseDelete(this.key(id), ownerLine(owner)) === 1;
    } catch (err) {
      throw storeUnavailable(err);
    }
  }

  /** The connection is the gateway's, closed with it. */
  async close(): Promise<void> {}
}
