// The plugins' tool hooks on one call (src/mcp/tool-hooks.ts over a real
// pipeline): chain order (a transform plugin's rewrite is what a validate
// plugin reads), a fresh state per call, a refusal's JSON-RPC error, a
// failing hook (the call refused; a result hook skipped), and the load-time
// checks of the new hooks.
import pino from 'pino';
import { z } from 'zod';
import { GatewayError, type PluginDefinition, type Principal, type Stage, type ToolResult } from '../../../src';
import { validateConfig } from '../../../src/config/load';
import { Admission } from '../../../src/admission';
import { LeasePools } from '../../../src/admission/stores';
import { createPipeline, type Pipeline } from '../../../src/pipeline/pipeline';
import { ToolStates } from '../../../src/pipeline/tool-runner';
import { PluginRegistry } from '../../../src/pipeline/registry';
import { compilePrices } from '../../../src/pricing/prices';
import { ToolCall } from '../../../src/mcp/tool-call';
import { checkToolCall, checkToolResult } from '../../../src/mcp/tool-hooks';

const def = (name: string, stage: Stage, hooks: Record<string, unknown>): PluginDefinition =>
  ({ name, stage, schema: z.strictObject({}), create: () => hooks as never });

async function chain(defs: PluginDefinition[], lines: string[] = []): Promise<Pipeline> {
  const config = validateConfig({}, '(inline)', {});
  const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
  const admission = new Admission(config, { leases: new LeasePools(undefined) } as never, logger);
  const sorted = new PluginRegistry(defs).resolveChain(defs.map((d) => ({ name: d.name })), '/', []);
  return createPipeline(sorted, { config, logger, services: {}, admission, prices: compilePrices([]), keptOf: () => undefined });
}

const principal: Principal = { id: 'k1', org: null, team: null, mayUse: () => true, anyModel: true, entry: {} };
const callOf = (args: Record<string, unknown>) => new ToolCall('req-1', principal, 'files', 'search', args, new AbortController().signal);
const answer = (id: number, result: ToolResult) => ({ jsonrpc: '2.0', id, result });

describe('tool hooks on one call', () => {
  it('runs in stage order, each plugin with a fresh state per call: the redaction is what the filter reads', async () => {
    const read: string[][] = [];
    const states: number[] = [];
    const p = await chain([
      def('filter', 'validate', { onToolCall: (c: ToolCall) => void read.push([...c.texts]) }),
      def('redact', 'transform', { state: () => ({ n: 0 }), onToolCall: (c: ToolCall, s: { n: number }) => { states.push(++s.n); c.rewriteArguments((t) => t.replace('secret', '[x]')); } }),
    ]);
    for (let i = 0; i < 2; i++) {
      const c = callOf({ q: 'a secret', deep: [{ secret: 1 }] });
      expect(await checkToolCall(p, c, new ToolStates(p), 1)).toBeUndefined();
      expect(c.arguments).toEqual({ q: 'a [x]', deep: [{ '[x]': 1 }] });
    }
    expect(read).toEqual([['q', 'a [x]', 'deep', '[x]'], ['q', 'a [x]', 'deep', '[x]']]);
    expect(states).toEqual([1, 1]);
  });

  it('answers a refusal with its message and reason: -32602 for the arguments, -32000 for a limit', async () => {
    const refuse = (status?: number) => chain([def('guard', 'validate', { onToolCall: () => { throw new GatewayError(status ? 'rate_limited' : 'invalid_request', 'Change the arguments.', { status }); } })]);
    const p = await refuse();
    expect(await checkToolCall(p, callOf({}), new ToolStates(p), 'a')).toEqual({ jsonrpc: '2.0', id: 'a', error: { code: -32602, message: 'Change the arguments.', data: { reason: 'invalid_request' } } });
    const limited = await refuse(429);
    expect((await checkToolCall(limited, callOf({}), new ToolStates(limited), 2) as any).error.code).toBe(-32000);
  });

  it('refuses a call whose hook fails (never sends it unchecked), logging the plugin', async () => {
    const lines: string[] = [];
    const p = await chain([def('buggy', 'validate', { onToolCall: () => { throw new TypeError('boom'); } })], lines);
    expect((await checkToolCall(p, callOf({ q: 'x' }), new ToolStates(p), 3) as any).error.code).toBe(-32603);
    expect(lines.map((l) => JSON.parse(l))).toEqual([expect.objectContaining({ msg: 'plugin hook failed', plugin: 'buggy', hook: 'onToolCall', requestId: 'req-1' })]);
  });

  it('skips a failing result hook (the result kept), refuses on a GatewayError (-32000), replaces on a result', async () => {
    const lines: string[] = [];
    const given = answer(4, { content: [{ type: 'text', text: 'hi' }] });
    const failing = await chain([def('buggy', 'observe', { onToolResult: () => { throw new Error('boom'); } })], lines);
    expect(await checkToolResult(failing, callOf({}), new ToolStates(failing), given)).toBe(given);
    expect(lines.length).toBe(1);
    const refusing = await chain([def('guard', 'validate', { onToolResult: async () => { throw new GatewayError('content_filter', 'Withheld.'); } })]);
    expect(await checkToolResult(refusing, callOf({}), new ToolStates(refusing), given)).toEqual({ jsonrpc: '2.0', id: 4, error: { code: -32000, message: 'Withheld.', data: { reason: 'content_filter' } } });
    const replacing = await chain([def('note', 'observe', { onToolResult: (_c: unknown, r: ToolResult) => ({ ...r, content: [] }) })]);
    expect(await checkToolResult(replacing, callOf({}), new ToolStates(replacing), given)).toEqual(answer(4, { content: [] }));
  });

  it('refuses at load an async toolResultRules and a misspelt tool hook', async () => {
    await expect(chain([def('a', 'validate', { toolResultRules: async () => undefined })])).rejects.toThrow(/"toolResultRules" is async/);
    await expect(chain([def('b', 'validate', { onToolCal: () => undefined })])).rejects.toThrow(/unknown hook "onToolCal"/);
  });
});
