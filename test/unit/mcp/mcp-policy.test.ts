// The MCP relay's pure parts, table-tested: a key's lists, a POST read once,
// refused calls, tools/list answers filtered as JSON and event by event, and
// the config's mcp section (its servers, lists and limits) checked at load.
import { Readable } from 'node:stream';
import { compileAccess } from '../../../src/mcp/access';
import { isRefusedCall, listRequestIds, methodLabel, readPost } from '../../../src/mcp/messages';
import { filterToolLists } from '../../../src/mcp/list-filter';
import { EventFilter, filterEvent } from '../../../src/mcp/event-filter';
import { ConfigError, validateConfig } from '../../../src/config/load';

const access = compileAccess({ servers: ['files', 'git*'], tools: ['files/add', 'git*/read_*'] });

describe('a key\'s MCP lists', () => {
  it.each([
    ['files', 'add', true], ['files', 'delete', false], ['github', 'read_file', true], ['github', 'write_file', false], ['other', 'add', false],
  ])('%s/%s: %s', (server, tool, allowed) => {
    expect(access.tool(server, tool)).toBe(allowed);
  });

  it('allows nothing without lists, and no tool without a tools list', () => {
    expect(compileAccess(undefined).server('files')).toBe(false);
    const serversOnly = compileAccess({ servers: ['*'] });
    expect(serversOnly.server('files')).toBe(true);
    expect(serversOnly.tool('files', 'add')).toBe(false);
  });
});

describe('a POST read once', () => {
  it.each([
    [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add' } }, 'tools/call'],
    [{ jsonrpc: '2.0', method: 'notifications/initialized' }, 'notifications/initialized'],
    [{ jsonrpc: '2.0', id: 1, result: {} }, 'response'],
    [{ jsonrpc: '2.0', id: 1, method: 'x-vendor/thing' }, 'other'],
    [[{ jsonrpc: '2.0', id: 1, method: 'ping' }], 'batch'],
  ])('%j is %s', (body, label) => {
    expect(methodLabel(readPost(body))).toBe(label);
  });

  it.each([[null], [[]], [{ id: 1, method: 'ping' }], [{ jsonrpc: '2.0' }], [[{ jsonrpc: '2.0', id: 1, method: 'ping' }, 3]]])('refuses %j', (body) => {
    expect(readPost(body)).toBeUndefined();
  });

  it('refuses a call of a tool the key may not call, or one named by no string', () => {
    const post = readPost([
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add' } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'delete' } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 7 } },
      { jsonrpc: '2.0', id: 4, method: 'tools/list' },
    ])!;
    expect(post.messages.map((m) => isRefusedCall(m, 'files', access))).toEqual([false, true, true, false]);
    expect([...listRequestIds(post)]).toEqual([4]);
  });
});

describe('tools/list answers filtered', () => {
  const allowed = (name: string) => access.tool('files', name);
  const list = (id: number | string) => ({ jsonrpc: '2.0', id, result: { tools: [{ name: 'add' }, { name: 'delete' }], nextCursor: 'c' } });

  it('filters the response whose id is a list request\'s, and leaves the rest', () => {
    expect(filterToolLists(list(4), new Set([4]), allowed)).toEqual({ jsonrpc: '2.0', id: 4, result: { tools: [{ name: 'add' }], nextCursor: 'c' } });
    expect(filterToolLists(list(5), new Set([4]), allowed)).toBeUndefined();
    expect(filterToolLists(list('4'), new Set([4]), allowed)).toBeUndefined();
    expect(filterToolLists([list(5), list(4)], new Set([4]), allowed)).toEqual([list(5), { jsonrpc: '2.0', id: 4, result: { tools: [{ name: 'add' }], nextCursor: 'c' } }]);
  });

  it('rewrites an event\'s data and keeps its other fields', () => {
    const event = `event: message\nid: e-1\ndata: ${JSON.stringify(list(4))}`;
    expect(filterEvent(event, new Set([4]), allowed)).toBe(`event: message\nid: e-1\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 4, result: { tools: [{ name: 'add' }], nextCursor: 'c' } })}`);
    expect(filterEvent('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress"}', new Set([4]), allowed)).toBeUndefined();
  });

  it('passes an event stream event by event, however it is split, other events as their bytes', async () => {
    const progress = 'event: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\r\n\r\n';
    const answer = `id: 7\ndata: ${JSON.stringify(list(4))}\n\n`;
    const whole = progress + answer;
    for (let cut = 1; cut < whole.length; cut += 7) {
      const out: string[] = [];
      await new Promise<void>((resolve, reject) => Readable.from([Buffer.from(whole.slice(0, cut)), Buffer.from(whole.slice(cut))])
        .pipe(new EventFilter(new Set([4]), allowed, 1 << 20)).on('data', (c: Buffer) => out.push(c.toString())).on('end', resolve).on('error', reject));
      expect(out.join('')).toBe(`${progress}id: 7\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 4, result: { tools: [{ name: 'add' }], nextCursor: 'c' } })}\n\n`);
    }
  });

  it('ends a stream whose event grows past its limit', async () => {
    const filter = new EventFilter(new Set([4]), allowed, 100);
    const failed = new Promise<Error>((resolve) => filter.on('error', resolve));
    filter.write(Buffer.from(`data: ${'x'.repeat(200)}`));
    expect((await failed).message).toMatch(/too large/);
  });
});

describe('the mcp section at load', () => {
  const problems = (config: Record<string, unknown>): string[] => {
    try {
      validateConfig(config, 'inline.yaml', {});
      return [];
    } catch (err) {
      return (err as ConfigError).problems;
    }
  };
  const digest = 'a'.repeat(64);

  it('accepts servers and lists that name them', () => {
    expect(problems({ mcp: { servers: { files: { url: 'http://127.0.0.1:9/mcp' } } }, keys: [{ id: 'k', sha256: digest, mcp: { servers: ['files'], tools: ['files/add', '*/read_*'] } }] })).toEqual([]);
  });

  it('names a bad server name, a bad URL, a tool without its server, and a list naming no server', () => {
    const found = problems({
      mcp: { servers: { Files: { url: 'http://127.0.0.1:9/mcp' }, git: { url: 'ftp://x' } } },
      keys: [{ id: 'k', sha256: digest, mcp: { tools: ['add'] } }, { id: 'k2', sha256: 'b'.repeat(64), mcp: { servers: ['nope'] } }],
      orgs: { acme: { mcp: { tools: ['ghost/add'] } } },
    }).join('\n');
    expect(found).toMatch(/mcp\.servers\.Files: must be 1-64 lowercase/);
    expect(found).toMatch(/mcp\.servers\.git\.url/);
    expect(found).toMatch(/keys\[0\]\.mcp\.tools\[0\]/);
    expect(found).toMatch(/keys\[1\]\.mcp\.servers\[0\]: no MCP server "nope"/);
    expect(found).toMatch(/orgs\.acme\.mcp\.tools\[0\]: no MCP server "ghost"/);
  });

  describe('mcp.limits', () => {
    const servers = { files: { url: 'http://127.0.0.1:9/mcp' } };
    const key = (limits: unknown) => ({ mcp: { servers }, keys: [{ id: 'k', sha256: 'a'.repeat(64), mcp: { servers: ['files'], tools: ['files/*'], limits } }] });

    it('accepts limits by glob, a number as a string, and the window left to its default', () => {
      expect(problems(key({ 'files/*': { requests: 60 }, 'files/add': { requests: '5', windowSeconds: '3600' }, '*/*': { requests: 1000 } }))).toEqual([]);
      expect(problems({ mcp: { servers }, orgs: { acme: { mcp: { limits: { 'files/*': { requests: 1 } } } } } })).toEqual([]);
    });

    it('names each bad limit at its path', () => {
      const found = problems(key({ add: { requests: 1 }, 'files/a/b': { requests: 1 }, 'files/x': { requests: 0 }, 'files/y': { requests: 1.5 }, 'files/z': { requests: 1, windowSeconds: 0 }, 'files/w': { requests: 1, per: 'tool' }, 'files/v': {} }));
      expect(found).toEqual(expect.arrayContaining([
        expect.stringMatching(/^keys\[0\]\.mcp\.limits\.add: must be "<server>\/<tool>"/),
        expect.stringMatching(/^keys\[0\]\.mcp\.limits\.files\/a\/b: must be "<server>\/<tool>"/),
        expect.stringMatching(/^keys\[0\]\.mcp\.limits\.files\/x\.requests: /),
        expect.stringMatching(/^keys\[0\]\.mcp\.limits\.files\/y\.requests: /),
        expect.stringMatching(/^keys\[0\]\.mcp\.limits\.files\/z\.windowSeconds: /),
        expect.stringMatching(/^keys\[0\]\.mcp\.limits\.files\/w\.per: unknown field/),
        expect.stringMatching(/^keys\[0\]\.mcp\.limits\.files\/v\.requests: /),
      ]));
      expect(found).toHaveLength(7);
    });

    it('refuses more than 32 limits, a window past 31 days, and a limit naming a server the config does not hold', () => {
      const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`files/t${i}`, { requests: 1 }]));
      expect(problems(key(many))).toEqual([expect.stringMatching(/^keys\[0\]\.mcp\.limits: at most 32 limits/)]);
      expect(problems(key({ 'files/add': { requests: 1, windowSeconds: 86_400 * 31 + 1 } }))).toEqual([expect.stringMatching(/^keys\[0\]\.mcp\.limits\.files\/add\.windowSeconds: /)]);
      expect(problems(key({ 'github/*': { requests: 1 }, 'git*/x': { requests: 1 } }))).toEqual(['keys[0].mcp.limits.github/*: no MCP server "github" under mcp.servers']);
    });
  });
});
