// What a tool call leaves, as pure functions: its usage record (the bytes of
// a batch shared so they sum to the request's) and the tool label of its
// metrics (only an allowed, well-formed name, and at most 100 a server).
import { toolCallRecord, toolCallsOf, type ToolCallsEnd } from '../../../src/mcp/tool-calls';
import { MAX_TOOLS_PER_SERVER, toolLabel } from '../../../src/mcp/tool-metrics';
import { compileAccess } from '../../../src/mcp/access';
import { readPost } from '../../../src/mcp/messages';

const end = (over: Partial<ToolCallsEnd> = {}): ToolCallsEnd => ({
  requestId: 'req-1', principal: { id: 'ci', org: 'acme' } as ToolCallsEnd['principal'], server: 'github',
  calls: [{ id: 1, tool: 'search_code', allowed: true }], outcome: 'ok', status: 200,
  startTime: Date.parse('2026-03-01T10:00:00Z'), durationMs: 12.345, bytesIn: 101, bytesOut: 250, headers: {}, ...over,
});

describe('a tool call\'s usage record', () => {
  it('carries the key, the org, the server, the tool, the outcome, the duration and the bytes, at no cost', () => {
    expect(toolCallRecord(end(), 0, Date.parse('2026-03-01T10:00:01Z'))).toEqual({
      time: '2026-03-01T10:00:01.000Z', request_id: 'req-1', key: 'ci', org: 'acme', user: null, model: null, protocol: 'mcp', endpoint: 'tools/call',
      status: 200, reason: null, prompt_tokens: 0, cached_tokens: 0, completion_tokens: 0, reasoning_tokens: 0, estimated: false, cost: 0,
      server: 'github', tool: 'search_code', outcome: 'ok', duration_ms: 12.35, bytes_in: 101, bytes_out: 250,
    });
  });

  it('shares a batch\'s bytes among its calls so the records sum to the request\'s, and names the outcome as the reason', () => {
    const batch = end({ calls: [{ id: 1, tool: 'a', allowed: true }, { id: 2, tool: 'x'.repeat(500), allowed: false }, { id: 3, allowed: false }], outcome: 'refused' });
    const records = [0, 1, 2].map((i) => toolCallRecord(batch, i, 0));
    expect(records.map((r) => r.bytes_in)).toEqual([35, 33, 33]);
    expect(records.reduce((n, r) => n + r.bytes_out!, 0)).toBe(250);
    expect(records.map((r) => [r.reason, r.outcome])).toEqual([['refused', 'refused'], ['refused', 'refused'], ['refused', 'refused']]);
    // A refused name is the client's text: kept to the longest name the tools specification allows; none named, null.
    expect(records.map((r) => r.tool?.length ?? null)).toEqual([1, 128, null]);
  });

  it('is made for each tools/call request of a POST, not for its notifications or other methods', () => {
    const access = compileAccess({ servers: ['github'], tools: ['github/get_*'] });
    const post = readPost([
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_issue', _meta: { traceparent: '00-aa-bb-01' } } },
      { jsonrpc: '2.0', id: 'b', method: 'tools/call', params: { name: 'delete_repo' } },
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
    ])!;
    expect(toolCallsOf(post, 'github', access)).toEqual([
      { id: 1, tool: 'get_issue', allowed: true, traceparent: '00-aa-bb-01' },
      { id: 'b', tool: 'delete_repo', allowed: false, traceparent: undefined },
    ]);
  });
});

describe('the tool label', () => {
  it('is the name only for a tool the key may call, shaped as the specification shapes names', () => {
    const seen = new Map<string, Set<string>>();
    expect(toolLabel(seen, 's', 'get_issue', true)).toBe('get_issue');
    expect(toolLabel(seen, 's', 'ns.tool-2', true)).toBe('ns.tool-2');
    for (const hostile of ['delete_repo']) expect(toolLabel(seen, 's', hostile, false)).toBe('other');
    for (const odd of ['', 'a b', 'x"}\n', 'é', '{server="x"}', 'x'.repeat(129)]) expect(toolLabel(seen, 's', odd, true)).toBe('other');
    expect(toolLabel(seen, 's', undefined, true)).toBe('other');
  });

  it('gives each server at most 100 names; the rest are "other", the first ones keep theirs', () => {
    const seen = new Map<string, Set<string>>();
    const labels = Array.from({ length: MAX_TOOLS_PER_SERVER + 20 }, (_, i) => toolLabel(seen, 'a', `t${i}`, true));
    expect(new Set(labels).size).toBe(MAX_TOOLS_PER_SERVER + 1);
    expect(labels.slice(MAX_TOOLS_PER_SERVER)).toEqual(Array(20).fill('other'));
    expect(toolLabel(seen, 'a', 't0', true)).toBe('t0');
    expect(toolLabel(seen, 'b', 't500', true)).toBe('t500');
  });
});
