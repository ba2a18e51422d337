// Stored responses in Redis, shared by every replica. An owner's keys share
// one hash tag, `<prefix>{resp:<tag>}` (the tag: a digest of the owner, so
// no org name can break out of the braces): a key per response, written
// with its TTL (SET … PX) so Redis expires it on every replica at once, and
// an index of the owner's ids and their sizes, so one script writes a
// record and lets the owner's oldest go, within the owner's bounds
// (redis-scripts.ts). The value is the owner's line, then the record's JSON;
// a read of another owner's id finds another key, and checks the line all
// the same. A Redis that cannot answer is `store_unavailable` (503), never
// "absent".
import { createHash } from 'node:crypto';
import type { RedisClient } from '../contract/types';
import { DELETE_OWNED, PUT } from './redis-scripts';
import { decodeRecord, encodeRecord, storeUnavailable, type EvictionSink, type ResponseStore, type StoreLimits, type StoredResponse } from './store';

interface StoreCommands {
  sluiceResponsePut(record: string, index: string, sizes: string, ...args: Array<string | number>): Promise<number>;
  sluiceResponseDelete(record: string, index: string, sizes: string, ownerLine: string, id: string): Promise<number>;
}

function withCommands(client: RedisClient): RedisClient & StoreCommands {
  const c = client as RedisClient & Partial<StoreCommands>;
  if (typeof c.sluiceResponsePut !== 'function') client.defineCommand('sluiceResponsePut', { numberOfKeys: 3, lua: PUT });
  if (typeof c.sluiceResponseDelete !== 'function') client.defineCommand('sluiceResponseDelete', { numberOfKeys: 3, lua: DELETE_OWNED });
  return c as RedisClient & StoreCommands;
}

/** The value's first line: the owner as a JSON string (which holds no raw newline), then the newline. */
const ownerLine = (owner: string): string => `${JSON.stringify(owner)}\n`;

export class RedisResponseStore implements ResponseStore {
  private readonly client: RedisClient & StoreCommands;

  /** `evicted`: told of the records an owner's bounds let go. */
  constructor(client: RedisClient, readonly prefix: string, private limits: StoreLimits, private readonly evicted?: EvictionSink) {
    this.client = withCommands(client);
  }

  configure(limits: StoreLimits): void {
    this.limits = limits;
  }

  /** The keys every record of `owner` starts with; the braces put them in one slot of a Redis Cluster. */
  base(owner: string): string {
    return `${this.prefix}{resp:${createHash('sha256').update(owner).digest('hex').slice(0, 32)}}:`;
  }

  /** The key of `owner`'s response `id`. */
  key(id: string, owner: string): string {
    return this.base(owner) + id;
  }

  async put(id: string, record: StoredResponse): Promise<boolean> {
    const encoded = encodeRecord(record, this.limits.maxResponseBytes);
    if (encoded === undefined) {
      await this.delete(id, record.owner);
      return false;
    }
    await this.write(id, record.owner, ownerLine(record.owner) + encoded.json);
    return true;
  }

  async remember(id: string, owner: string): Promise<void> {
    await this.write(id, owner, ownerLine(owner));
  }

  async owns(id: string, owner: string): Promise<boolean> {
    const line = ownerLine(owner);
    return await this.ask(() => this.client.getrange(this.key(id, owner), 0, line.length - 1)) === line;
  }

  async get(id: string, owner: string): Promise<StoredResponse | undefined> {
    const value = await this.ask(() => this.client.get(this.key(id, owner)));
    const line = ownerLine(owner);
    // The line alone: a remembered id, not a response.
    if (value === null || value.length === line.length || !value.startsWith(line)) return undefined;
    return decodeRecord(value.slice(line.length));
  }

  async delete(id: string, owner: string): Promise<boolean> {
    const base = this.base(owner);
    return await this.ask(() => this.client.sluiceResponseDelete(base + id, `${base}ids`, `${base}bytes`, ownerLine(owner), id)) === 1;
  }

  /** The connection is the gateway's, closed with it. */
  async close(): Promise<void> {}

  private async write(id: string, owner: string, value: string): Promise<void> {
    const base = this.base(owner);
    const { ttlMs, ownerMaxResponses, ownerMaxBytes } = this.limits;
    const evicted = await this.ask(() => this.client.sluiceResponsePut(base + id, `${base}ids`, `${base}bytes`, id, value, ttlMs, Date.now(), ownerMaxResponses, ownerMaxBytes, base));
    if (evicted > 0) this.evicted?.('owner', evicted);
  }

  private async ask<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (err) {
      throw storeUnavailable(err);
    }
  }
}
