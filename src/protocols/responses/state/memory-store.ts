// Stored responses in this process's memory (no Redis): bounded in total
// bytes, least recently used first out, each kept for the TTL. Records are
// kept as their JSON, so a caller's later change to an object never reaches
// the store, and the bytes counted are the bytes held. Expired records are
// dropped when read, and swept on a timer so the memory goes back even when
// nothing reads them. Every operation is O(1): one Map in use order (the
// LRU), one in write order (with one TTL, the order they expire in).
//
//   const store = new MemoryResponseStore({ ttlMs, maxResponseBytes, maxBytes });
//   await store.put(id, record); await store.get(id, owner);
import { decodeRecord, encodeRecord, type ResponseStore, type StoreLimits, type StoredResponse } from './store';

export interface MemoryStoreOptions {
  /** Milliseconds since the epoch; tests pass a clock of their own. */
  now?: () => number;
  /** How often expired records are swept; 0: never (tests sweep by hand). */
  sweepMs?: number;
}

/** What one record costs besides its JSON (its id, the two Map entries, the entry object), so many tiny records stay bounded too. */
export const ENTRY_OVERHEAD = 256;
const SWEEP_MS = 60_000;

interface Entry { owner: string; json: string; bytes: number; expiresAt: number }

export class MemoryResponseStore implements ResponseStore {
  /** In use order: the first is the least recently used. */
  private readonly entries = new Map<string, Entry>();
  /** In write order: with one TTL, the first expires first. */
  private readonly written = new Map<string, Entry>();
  private total = 0;
  private readonly now: () => number;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(private limits: StoreLimits, options: MemoryStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    const sweepMs = options.sweepMs ?? SWEEP_MS;
    if (sweepMs > 0) {
      this.timer = setInterval(() => this.sweep(), sweepMs);
      this.timer.unref();
    }
  }

  /** New limits (a reload): a smaller total evicts at once; records keep the TTL they were written with. */
  configure(limits: StoreLimits): void {
    this.limits = limits;
    this.evict();
  }

  /** Bytes held, overheads included; never above maxBytes. */
  get bytes(): number { return this.total; }
  get size(): number { return this.entries.size; }

  async put(id: string, record: StoredResponse): Promise<boolean> {
    const encoded = encodeRecord(record, this.limits.maxResponseBytes);
    if (encoded === undefined) {
      this.remove(id);
      return false;
    }
    return this.putJson(id, record.owner, encoded.json, encoded.bytes);
  }

  /** Keeps an already encoded record (the primary's store takes the workers' records as JSON). */
  putJson(id: string, owner: string, json: string, bytes: number): boolean {
    this.remove(id);
    const cost = bytes + id.length + ENTRY_OVERHEAD;
    if (bytes > this.limits.maxResponseBytes || cost > this.limits.maxBytes) return false;
    const entry: Entry = { owner, json, bytes: cost, expiresAt: this.now() + this.limits.ttlMs };
    this.entries.set(id, entry);
    this.written.set(id, entry);
    this.total += entry.bytes;
    this.evict();
    return true;
  }

  async get(id: string, owner: string): Promise<StoredResponse | undefined> {
    const json = this.getJson(id, owner);
    return json === undefined ? undefined : decodeRecord(json);
  }

  /** The record's JSON, when it is there, alive and `owner`'s; a read makes it the most recently used. */
  getJson(id: string, owner: string): string | undefined {
    const entry = this.live(id);
    if (entry === undefined || entry.owner !== owner) return undefined;
    this.entries.delete(id);
    this.entries.set(id, entry);
    return entry.json;
  }

  async delete(id: string, owner: string): Promise<boolean> {
    return this.deleteOwned(id, owner);
  }

  deleteOwned(id: string, owner: string): boolean {
    const entry = this.live(id);
    if (entry === undefined || entry.owner !== owner) return false;
    this.remove(id);
    return true;
  }

  /**
   * Drops every expired record; stops at the first one alive, as those after
   * it were written later (after a reload shortened the TTL, some expire
   * sooner: they go when read, or when those before them have gone).
   */
  sweep(): void {
    const now = this.now();
    for (const [id, entry] of this.written) {
      if (entry.expiresAt > now) return;
      this.remove(id);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.entries.clear();
    this.written.clear();
    this.total = 0;
  }

  private live(id: string): Entry | undefined {
    const entry = this.entries.get(id);
    if (entry === undefined || entry.expiresAt > this.now()) return entry;
    this.remove(id);
    return undefined;
  }

  private remove(id: string): void {
    const entry = this.entries.get(id);
    if (entry === undefined) return;
    this.entries.delete(id);
    this.written.delete(id);
    this.total -= entry.bytes;
  }

  private evict(): void {
    for (const id of this.entries.keys()) {
      if (this.total <= this.limits.maxBytes) return;
      this.remove(id);
    }
  }
}
