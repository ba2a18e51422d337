// Pure pieces of the federated /mcp: names split at the first "__", cursors
// that only the gateway's own encoding opens, merged pages that cross
// servers, and the 2026-07-28 header checks.
import type { IncomingMessage } from 'node:http';
import { decodeCursor, encodeCursor, prefixed, splitName } from '../../../src/mcp/federation/names';
import { mergedPage, type ServerPage } from '../../../src/mcp/federation/lists';
import { decodeHeaderValue, headerMismatch } from '../../../src/mcp/modern';

const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('federated names', () => {
  it.each([
    ['github__search_code', { server: 'github', name: 'search_code' }],
    ['a-b__x__y', { server: 'a-b', name: 'x__y' }],
    ['github', undefined], ['__x', undefined], ['github__', undefined], ['', undefined],
  ])('splits %s', (name, parts) => expect(splitName(name)).toEqual(parts));

  it('round-trips a prefixed name and a cursor, and opens no cursor it did not make', () => {
    expect(splitName(prefixed('s', 'a__b'))).toEqual({ server: 's', name: 'a__b' });
    expect(decodeCursor(encodeCursor({ server: 's', cursor: 'c1' }))).toEqual({ server: 's', cursor: 'c1' });
    for (const bad of ['', 'x', 42, null, Buffer.from('[1]').toString('base64url'), Buffer.from('{"server":1}').toString('base64url'), 'a'.repeat(5000)]) {
      expect(decodeCursor(bad)).toBeUndefined();
    }
  });
});

describe('merged pages', () => {
  const pages: Record<string, Record<string, ServerPage | undefined>> = {
    a: { '': { items: [1, 2], next: 'a2' }, a2: { items: [3] } },
    b: { '': { items: [], next: 'b2' }, b2: { items: [4] } },
    c: { '': undefined },
    d: { '': { items: [5] } },
  };
  const read = async (server: string, cursor: string | undefined) => pages[server][cursor ?? ''];

  it('walks every server in order, across their own pages, leaving out one that fails', async () => {
    const seen: unknown[] = [];
    let position;
    let rounds = 0;
    do {
      const page = await mergedPage(['a', 'b', 'c', 'd'], position, read);
      seen.push(...page.items);
      position = page.next;
    } while (position !== undefined && ++rounds < 10);
    expect(seen).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('2026-07-28 request headers', () => {
  const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_weather' } };
  const modern = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' };

  it('leaves earlier eras alone and checks the modern one', () => {
    expect(headerMismatch(req({}), call)).toBeUndefined();
    expect(headerMismatch(req({ 'mcp-protocol-version': '2025-11-25' }), call)).toBeUndefined();
    expect(headerMismatch(req({ ...modern, 'mcp-name': 'get_weather' }), call)).toBeUndefined();
    expect(headerMismatch(req({ ...modern }), call)).toMatch(/Mcp-Name/);
    expect(headerMismatch(req({ ...modern, 'mcp-name': 'other' }), call)).toMatch(/does not match/);
    expect(headerMismatch(req({ 'mcp-protocol-version': '2026-07-28', 'mcp-name': 'get_weather' }), call)).toMatch(/Mcp-Method/);
    const meta = { ...call, params: { ...call.params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } };
    expect(headerMismatch(req({}), meta)).toMatch(/MCP-Protocol-Version/);
    // A notification carries no such headers in this revision.
    expect(headerMismatch(req(modern), { jsonrpc: '2.0', method: 'notifications/cancelled' })).toBeUndefined();
  });

  it('decodes the base64 sentinel and refuses what a header may not carry', () => {
    expect(decodeHeaderValue(`=?base64?${Buffer.from('Hello, 世界').toString('base64')}?=`)).toBe('Hello, 世界');
    expect(decodeHeaderValue('us-west1')).toBe('us-west1');
    expect(decodeHeaderValue('a\u0000b')).toBeUndefined();
  });
});
