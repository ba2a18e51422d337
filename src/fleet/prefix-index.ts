// Prefix locality without the model server's help: the prompt (the messages
// as sent) is cut into blocks of `blockChars` characters, and block i's hash
// covers the model and everything up to its end (a rolling hash, so chaining
// costs nothing). Each endpoint remembers the hashes sent to it in a set kept
// in least-recently-used order with a fixed capacity; the endpoint holding the
// longest run of a prompt's leading blocks likely holds its KV cache too.
// Memory is bounded: at most `capacity` numbers per endpoint.

/** Bytes one remembered hash takes in a V8 Set, measured (a heap number and its slot in the hash table), rounded up. */
export const BYTES_PER_ENTRY = 48;

/** One lane of the rolling hash state (cyrb53's two 32-bit lanes). */
class RollingHash {
  h1 = 0xdeadbeef;
  h2 = 0x41c6ce57;

  feed(s: string, from = 0, to = s.length): void {
    let { h1, h2 } = this;
    for (let i = from; i < to; i++) {
      const c = s.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }
    this.h1 = h1;
    this.h2 = h2;
  }

  /** The 53-bit digest of everything fed so far; the state goes on unchanged. */
  digest(): number {
    let h1 = Math.imul(this.h1 ^ (this.h1 >>> 16), 2246822507);
    h1 ^= Math.imul(this.h2 ^ (this.h2 >>> 13), 3266489909);
    let h2 = Math.imul(this.h2 ^ (this.h2 >>> 16), 2246822507);
    h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    return 4294967296 * (2097151 & h2) + (h1 >>> 0);
  }
}

const textOf = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

/**
 * The chained hashes of a prompt's whole blocks, at most `maxBlocks` (a tail
 * shorter than a block is not hashed: it cannot be matched as a block).
 */
export function promptBlocks(model: string, messages: readonly unknown[], blockChars: number, maxBlocks: number): number[] {
  const hash = new RollingHash();
  hash.feed(model);
  hash.feed('\u0000');
  const out: number[] = [];
  let filled = 0; // characters of the current block fed so far
  const feed = (s: string): boolean => {
    let i = 0;
    while (i < s.length) {
      const take = Math.min(blockChars - filled, s.length - i);
      hash.feed(s, i, i + take);
      i += take;
      filled += take;
      if (filled === blockChars) {
        out.push(hash.digest());
        filled = 0;
        if (out.length === maxBlocks) return false;
      }
    }
    return true;
  };
  for (const m of messages) {
    const msg = m as { role?: unknown; content?: unknown; name?: unknown; tool_calls?: unknown; tool_call_id?: unknown };
    const more = feed(textOf(msg.role)) && feed('\u0001') && feed(textOf(msg.name)) && feed('\u0001') && feed(textOf(msg.content))
      && feed(msg.tool_calls === undefined ? '' : textOf(msg.tool_calls)) && feed(textOf(msg.tool_call_id)) && feed('\u0002');
    if (!more) break;
  }
  return out;
}

export class PrefixIndex {
  /** Per endpoint, its remembered hashes from least to most recently sent. */
  private readonly sets: Array<Set<number>>;

  constructor(endpoints: number, readonly capacityPerEndpoint: number) {
    this.sets = Array.from({ length: endpoints }, () => new Set<number>());
  }

  /** How many of the prompt's leading blocks endpoint `e` was sent (and still remembers). */
  match(e: number, blocks: readonly number[]): number {
    const set = this.sets[e];
    let n = 0;
    while (n < blocks.length && set.has(blocks[n])) n++;
    return n;
  }

  /** The prompt goes to endpoint `e`: its blocks become the most recent there, the first ones last so a shared prefix is evicted last. */
  record(e: number, blocks: readonly number[]): void {
    const set = this.sets[e];
    for (let i = blocks.length - 1; i >= 0; i--) {
      set.delete(blocks[i]);
      set.add(blocks[i]);
    }
    for (const oldest of set) {
      if (set.size <= this.capacityPerEndpoint) break;
      set.delete(oldest);
    }
  }

  /** Hashes remembered, over every endpoint. */
  get entries(): number {
    return this.sets.reduce((n, s) => n + s.size, 0);
  }

  get capacity(): number {
    return this.sets.length * this.capacityPerEndpoint;
  }

  /** An estimate of the memory the index holds. */
  get bytes(): number {
    return this.entries * BYTES_PER_ENTRY;
  }
}
