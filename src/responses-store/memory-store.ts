// Stored responses in this process's memory (no Redis): bounded in total
// bytes, least recently used first out, and per owner in count and bytes,
// the owner's oldest first out; each kept for the TTL. Records are kept as
// their JSON, so a caller's later change to an object never reaches the
// store, and the bytes counted are the bytes held. Expired records are
// dropped when read, and swept on a timer so the memory goes back even when
// nothing reads them. Every operation is O(1) but the evictions it makes:
// one Map in use order (the LRU), one in write order (with one TTL, the
// order they expire in), and per owner a Set in write order.
//
//   const store = new MemoryResponseStore(limits, { evicted: (bound, n) => counter.inc({ bound }, n) });
//   await store.put(id, record); await store.get(id, owner);
import { decodeRecord, encodeRecord, ENTRY_OVERHEAD, reportPut, type EvictionSink, type PutOutcome, type ResponseStore, type StoreLimits, type StoredResponse } from './store';

export { ENTRY_OVERHEAD } from './store';

export interface MemoryStoreOptions {
  /** Milliseconds since the epoch; tests pass a clock of their own. */
  now?: () => number;
  /** How often expired records are swept; 0: never (tests sweep by hand). */
  sweepMs?: number;
  /** Told of the records let go to stay within a bound. */
  evicted?: EvictionSink;
}

const SWEEP_MS = 60_000;

/** A remembered id (a relayed response): no JSON, read only by `owns`. */
const MARK = '';

interface Entry { owner: string; json: string; bytes: number; expiresAt: number }
interface Owned { ids: Set<string>; bytes: number }

export class MemoryResponseStore implements ResponseStore {
  /** In use order: the first is the least recently used. */
  private readonly entries = new Map<string, Entry>();
  /** In write order: with one TTL, the first expires first. */
  private readonly written = new Map<string, Entry>();
  /** Each owner's ids, in write order, and their bytes. */
  private readonly owners = new Map<string, Owned>();
  private total = 0;
  private readonly now: () => number;
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly evicted: EvictionSink | undefined;

  constructor(private limits: StoreLimits, options: MemoryStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    this.evicted = options.evicted;
    const sweepMs = options.sweepMs ?? SWEEP_MS;
    if (sweepMs > 0) {
      this.timer = setInterval(() => this.sweep(), sweepMs);
      this.timer.unref();
    }
  }

  /** New limits (a reload): smaller bounds evict at once; records keep the TTL they were written with. */
  configure(limits: StoreLimits): void {
    this.limits = limits;
    let owner = 0;
    for (const owned of [...this.owners.values()]) owner += this.evictOwner(owned);
    this.tell({ owner, total: this.evict() });
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
    return this.tell(this.putJson(id, record.owner, encoded.json, encoded.bytes));
  }

  /** Keeps an already encoded record (the primary's store takes the workers' records as JSON); what it pushed out, by bound. */
  putJson(id: string, owner: string, json: string, bytes: number): PutOutcome {
    this.remove(id);
    const cost = bytes + id.length + ENTRY_OVERHEAD;
    if (bytes > this.limits.maxResponseBytes || cost > this.limits.maxBytes || cost > this.limits.ownerMaxBytes) return false;
    const entry: Entry = { owner, json, bytes: cost, expiresAt: this.now() + this.limits.ttlMs };
    this.entries.set(id, entry);
    this.written.set(id, entry);
    this.total += cost;
    let owned = this.owners.get(owner);
    if (owned === undefined) this.owners.set(owner, (owned = { ids: new Set(), bytes: 0 }));
    owned.ids.add(id);
    owned.bytes += cost;
    return { owner: this.evictOwner(owned), total: this.evict() };
  }

  async remember(id: string, owner: string): Promise<void> {
    this.tell(this.mark(id, owner));
  }

  /** Remembers `id` as `owner`'s, with no content (the primary's store takes the workers' ids so). */
  mark(id: string, owner: string): PutOutcome {
    return this.putJson(id, owner, MARK, 0);
  }

  async owns(id: string, owner: string): Promise<boolean> {
    return this.ownsId(id, owner);
  }

  ownsId(id: string, owner: string): boolean {
    return this.live(id)?.owner === owner;
  }

  async get(id: string, owner: string): Promise<StoredResponse | undefined> {
    const json = this.getJson(id, owner);
    return json === undefined ? undefined : decodeRecord(json);
  }

  /** The record's JSON, when it is there, alive and `owner`'s; a read makes it the most recently used. */
  getJson(id: string, owner: string): string | undefined {
    const entry = this.live(id);
    if (entry === undefined || entry.owner !== owner || entry.json === MARK) return undefined;
    this.entries.delete(id);
    this.entries.set(id, entry);
    return entry.json;
  }

  async delete(id: string, owner: string): Promise<boolean> {
    return this.deleteOwned(id, owner);
  }

  deleteOwned(id: string, owner: string): boolean {
    const entry = this.live(id);
    if (entry === undefined || entry.owner !== owner || entry.json === MARK) return false;
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
    this.owners.clear();
    this.total = 0;
  }

  private tell(outcome: PutOutcome): boolean {
    return reportPut(outcome, this.evicted);
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
    const owned = this.owners.get(entry.owner)!;
    owned.ids.delete(id);
    owned.bytes -= entry.bytes;
    if (owned.ids.size === 0) this.owners.delete(entry.owner);
  }

  /** The owner's oldest out until it is within its bounds (the newest, just written, always fits); how many went. */
  private evictOwner(owned: Owned): number {
    let count = 0;
    for (const id of owned.ids) {
      if (owned.ids.size <= this.limits.ownerMaxResponses && owned.bytes <= this.limits.ownerMaxBytes) break;
      this.remove(id);
      count++;
    }
    return count;
  }

  /** The least recently used out until the total is within maxBytes; how many went. */
  private evict(): number {
    let count = 0;
    for (const id of this.entries.keys()) {
      if (this.total <= this.limits.maxBytes) break;
      this.remove(id);
      count++;
    }
    return count;
  }
}
