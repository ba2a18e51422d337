// The memory store of stored responses (no Redis): its total bound with
// least-recently-used eviction, each owner's bounds (the owner's oldest
// first), the per-response cap, the TTL on a clock of the test's own
// (dropped when read, and swept), owner isolation, and remembered ids.
import { ENTRY_OVERHEAD, MemoryResponseStore } from '../../../src/responses-store/memory-store';
import { ownerOf, type StoreLimits, type StoredResponse } from '../../../src/responses-store/store';
import { parseConfigText, ConfigError } from '../../../src/config/load';
import { storedRecord, storeLimits } from '../../support/responses-state';
import { until } from '../../support/wait';

const MB = 1024 * 1024;

function clockedStore(limits: Partial<StoreLimits> = {}) {
  let now = 1_000_000;
  const store = new MemoryResponseStore(storeLimits({ maxResponseBytes: MB, ...limits }), { now: () => now, sweepMs: 0 });
  return { store, advance: (ms: number) => { now += ms; } };
}

describe('MemoryResponseStore', () => {
  it('keeps thousands of responses within a small total, evicting the least recently used', async () => {
    const maxBytes = 64 * 1024;
    const { store } = clockedStore({ maxBytes, maxResponseBytes: 8 * 1024 });
    let most = 0;
    for (let i = 0; i < 5_000; i++) {
      expect(await store.put(`resp_${i}`, storedRecord(`resp_${i}`, 'org:a', 'x'.repeat(i % 700)))).toBe(true);
      most = Math.max(most, store.bytes);
    }
    expect(most).toBeLessThanOrEqual(maxBytes);
    expect(store.size).toBeGreaterThan(10);
    expect(store.size).toBeLessThan(5_000);
    // The newest are kept, the oldest went.
    expect(await store.get('resp_4999', 'org:a')).toBeDefined();
    expect(await store.get('resp_0', 'org:a')).toBeUndefined();
  });

  it('evicts by use, not by write: a response read stays', async () => {
    const record = (id: string) => storedRecord(id, 'org:a', 'y'.repeat(1000));
    const size = Buffer.byteLength(JSON.stringify(record('resp_a'))) + 'resp_a'.length + ENTRY_OVERHEAD;
    const { store } = clockedStore({ maxBytes: size * 3 });
    for (const id of ['resp_a', 'resp_b', 'resp_c']) await store.put(id, record(id));
    expect(await store.get('resp_a', 'org:a')).toBeDefined(); // now the most recently used
    await store.put('resp_d', record('resp_d'));
    expect(await store.get('resp_b', 'org:a')).toBeUndefined();
    expect(await store.get('resp_a', 'org:a')).toBeDefined();
    expect(await store.get('resp_c', 'org:a')).toBeDefined();
    expect(store.bytes).toBe(size * 3);
  });

  it('refuses a response over the cap, and drops what its id held', async () => {
    const { store } = clockedStore({ maxResponseBytes: 2_000 });
    expect(await store.put('resp_1', storedRecord('resp_1', 'org:a', 'small'))).toBe(true);
    // Bytes, not characters: 700 three-byte characters are over 2000 bytes.
    expect(await store.put('resp_1', storedRecord('resp_1', 'org:a', '€'.repeat(700)))).toBe(false);
    expect(await store.get('resp_1', 'org:a')).toBeUndefined();
    expect(store.bytes).toBe(0);
  });

  it('replaces a response in place, counting its bytes once', async () => {
    const { store } = clockedStore();
    await store.put('resp_1', storedRecord('resp_1', 'org:a', 'first'));
    const once = store.bytes;
    await store.put('resp_1', storedRecord('resp_1', 'org:a', 'again'));
    expect(store.bytes).toBe(once);
    expect((await store.get('resp_1', 'org:a'))?.input[0]).toMatchObject({ content: [{ text: 'again' }] });
  });

  it('forgets a response after its TTL: absent when read, and swept without a read', async () => {
    const { store, advance } = clockedStore({ ttlMs: 1_000 });
    await store.put('resp_1', storedRecord('resp_1', 'org:a', 'a'));
    advance(500);
    await store.put('resp_2', storedRecord('resp_2', 'org:a', 'b'));
    advance(499);
    expect(await store.get('resp_1', 'org:a')).toBeDefined();
    advance(1);
    expect(await store.get('resp_1', 'org:a')).toBeUndefined();
    advance(600);
    expect(store.size).toBe(1); // resp_2 expired, unread
    store.sweep();
    expect(store.size).toBe(0);
    expect(store.bytes).toBe(0);
  });

  it('sweeps on its own timer', async () => {
    const store = new MemoryResponseStore(storeLimits({ ttlMs: 20, maxResponseBytes: MB, maxBytes: MB }), { sweepMs: 10 });
    await store.put('resp_1', storedRecord('resp_1', 'org:a', 'a'));
    await until(() => store.size === 0, 'the sweep');
    await store.close();
  });

  it('reads, lists and deletes only for the owner that stored it', async () => {
    const { store } = clockedStore();
    await store.put('resp_1', storedRecord('resp_1', 'org:a', 'secret'));
    expect(await store.get('resp_1', 'org:b')).toBeUndefined();
    expect(await store.delete('resp_1', 'org:b')).toBe(false);
    expect(await store.get('resp_1', 'org:a')).toBeDefined();
    expect(await store.delete('resp_1', 'org:a')).toBe(true);
    expect(await store.delete('resp_1', 'org:a')).toBe(false);
  });

  it('hands out copies: a change to what it returned or was given never reaches it', async () => {
    const { store } = clockedStore();
    const record: StoredResponse = storedRecord('resp_1', 'org:a', 'kept');
    await store.put('resp_1', record);
    record.history.length = 0;
    const read = (await store.get('resp_1', 'org:a'))!;
    read.input.length = 0;
    expect((await store.get('resp_1', 'org:a'))!.input).toHaveLength(1);
    expect((await store.get('resp_1', 'org:a'))!.history).toHaveLength(2);
  });

  it('shrinks at once to a smaller total on a reload', async () => {
    const { store } = clockedStore();
    for (let i = 0; i < 50; i++) await store.put(`resp_${i}`, storedRecord(`resp_${i}`, 'org:a', 'z'.repeat(500)));
    store.configure(storeLimits({ maxResponseBytes: 4096, maxBytes: 8192 }));
    expect(store.bytes).toBeLessThanOrEqual(8192);
    expect(await store.get('resp_49', 'org:a')).toBeDefined();
  });
});

describe('MemoryResponseStore, per owner', () => {
  it('keeps each owner within its count and bytes, its oldest out first, another owner untouched, each counted once', async () => {
    const evicted: Array<[string, number]> = [];
    const store = new MemoryResponseStore(storeLimits({ ownerMaxResponses: 3, ownerMaxBytes: 8 * 1024 }), { sweepMs: 0, evicted: (bound, n) => void evicted.push([bound, n]) });
    await store.put('resp_b', storedRecord('resp_b', 'org:b', 'other'));
    for (let i = 0; i < 5; i++) await store.put(`resp_${i}`, storedRecord(`resp_${i}`, 'org:a', `turn ${i}`));
    expect(await store.get('resp_0', 'org:a')).toBeUndefined();
    expect(await store.get('resp_1', 'org:a')).toBeUndefined();
    expect(await store.get('resp_4', 'org:a')).toBeDefined();
    expect(await store.get('resp_b', 'org:b')).toBeDefined();
    expect(evicted).toEqual([['owner', 1], ['owner', 1]]);
    // Two large ones go over the bytes: the older goes, the newer (just written) always stays.
    await store.put('resp_big1', storedRecord('resp_big1', 'org:a', 'x'.repeat(1_500)));
    await store.put('resp_big2', storedRecord('resp_big2', 'org:a', 'y'.repeat(1_500)));
    expect(await store.get('resp_big2', 'org:a')).toBeDefined();
    expect(await store.get('resp_big1', 'org:a')).toBeUndefined();
    expect(store.size).toBeLessThanOrEqual(4);
    await store.close();
  });

  it('remembers an id as its owner\'s only, reads it as no response, and counts it in the owner\'s bounds', async () => {
    const store = new MemoryResponseStore(storeLimits({ ownerMaxResponses: 2 }), { sweepMs: 0 });
    await store.remember('resp_backend1', 'org:a');
    expect(await store.owns('resp_backend1', 'org:a')).toBe(true);
    expect(await store.owns('resp_backend1', 'org:b')).toBe(false);
    expect(await store.get('resp_backend1', 'org:a')).toBeUndefined();
    expect(await store.delete('resp_backend1', 'org:a')).toBe(false);
    await store.remember('resp_backend2', 'org:a');
    await store.remember('resp_backend3', 'org:a');
    expect(await store.owns('resp_backend1', 'org:a')).toBe(false);
    expect(await store.owns('resp_backend3', 'org:a')).toBe(true);
    await store.close();
  });

  it('brings each owner within smaller bounds at once on a reload', async () => {
    const store = new MemoryResponseStore(storeLimits(), { sweepMs: 0 });
    for (let i = 0; i < 10; i++) await store.put(`resp_${i}`, storedRecord(`resp_${i}`, i % 2 === 0 ? 'org:a' : 'org:b', 'hi'));
    store.configure(storeLimits({ ownerMaxResponses: 2 }));
    expect(store.size).toBe(4);
    expect(await store.get('resp_8', 'org:a')).toBeDefined();
    expect(await store.get('resp_9', 'org:b')).toBeDefined();
    await store.close();
  });
});

describe('ownerOf', () => {
  it('scopes a key by its org, a key without one by its id, and keeps the two apart', () => {
    expect(ownerOf({ id: 'k1', org: 'acme' })).toBe(ownerOf({ id: 'k2', org: 'acme' }));
    expect(ownerOf({ id: 'k1', org: null })).not.toBe(ownerOf({ id: 'k2', org: null }));
    expect(ownerOf({ id: 'x', org: null })).not.toBe(ownerOf({ id: 'y', org: 'key:x' }));
    expect(ownerOf({ id: 'x', org: null })).not.toBe(ownerOf({ id: 'y', org: 'x' }));
  });

  it('scopes a runtime key without an org by its identity too, so a key made again under its id is another scope', () => {
    expect(ownerOf({ id: 'k1', org: null, uid: 'first' })).not.toBe(ownerOf({ id: 'k1', org: null, uid: 'second' }));
    expect(ownerOf({ id: 'k1', org: null, uid: 'first' })).not.toBe(ownerOf({ id: 'k1', org: null }));
    expect(ownerOf({ id: 'k1', org: 'acme', uid: 'first' })).toBe(ownerOf({ id: 'k2', org: 'acme', uid: 'second' }));
  });
});

describe('the responses config section', () => {
  it('defaults to keeping responses 30 days, 4 MB each, 64 MB in memory', () => {
    expect(parseConfigText('{}', '(inline)', {}).responses)
      .toEqual({ store: true, ttlSeconds: 2_592_000, maxResponseBytes: 4 * MB, memoryMaxBytes: 64 * MB, ownerMaxResponses: 10_000, ownerMaxBytes: 64 * MB });
    expect(parseConfigText('responses: { store: false, ttlSeconds: "60", maxResponseBytes: 1mb, memoryMaxBytes: 8mb, ownerMaxResponses: 50, ownerMaxBytes: 2mb }', '(inline)', {}).responses)
      .toEqual({ store: false, ttlSeconds: 60, maxResponseBytes: MB, memoryMaxBytes: 8 * MB, ownerMaxResponses: 50, ownerMaxBytes: 2 * MB });
  });

  it('names a setting it cannot use, and a memory bound smaller than one response', () => {
    const problems = (text: string): string[] => {
      try { parseConfigText(text, '(inline)', {}); } catch (err) { return (err as ConfigError).problems; }
      return [];
    };
    expect(problems('responses: { ttlSeconds: 0 }')).toEqual([expect.stringMatching(/^responses\.ttlSeconds: /)]);
    expect(problems('responses: { keep: true }')).toEqual(['responses.keep: unknown field']);
    expect(problems('responses: { maxResponseBytes: 8mb, memoryMaxBytes: 4mb }')).toEqual([expect.stringMatching(/^responses\.memoryMaxBytes: must be at least maxResponseBytes/)]);
    expect(problems('responses: { maxResponseBytes: 8mb, memoryMaxBytes: 8mb, ownerMaxBytes: 4mb }')).toEqual([expect.stringMatching(/^responses\.ownerMaxBytes: must be at least maxResponseBytes/)]);
    expect(problems('responses: { ownerMaxResponses: 0 }')).toEqual([expect.stringMatching(/^responses\.ownerMaxResponses: /)]);
  });
});
