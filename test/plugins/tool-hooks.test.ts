// The built-in plugins' tool hooks on a small call (src/mcp/tool-call.ts's
// ToolCall): the PII plugin redacts, refuses or counts personal data in a
// call's arguments and gives its output rules for results; the content filter
// refuses arguments holding a term (its message naming no term) and gives its
// output rules, none without `output`.
import type { PluginDefinition, PluginHooks, Principal } from '../../src';
import { GatewayError } from '../../src/contract/errors';
import { PluginRegistry } from '../../src/pipeline/registry';
import { ToolCall } from '../../src/mcp/tool-call';
import { plugin as pii } from '../../plugins/pii';
import { plugin as contentFilter } from '../../plugins/content-filter';
import { pluginEnv } from './helpers';

const principal: Principal = { id: 'k1', org: null, team: null, mayUse: () => true, anyModel: true, entry: {} };
const callOf = (args: Record<string, unknown>) => new ToolCall('req-1', principal, 'files', 'send', args, new AbortController().signal);

async function hooks(plugin: PluginDefinition<any>, entry: Record<string, unknown>): Promise<PluginHooks<any>> {
  new PluginRegistry([plugin]);
  return plugin.create(plugin.schema.parse(entry), pluginEnv(plugin));
}

describe('the PII plugin on tool calls', () => {
  it('redacts each value, keys too, one placeholder per value within the call', async () => {
    const h = await hooks(pii, {});
    const c = callOf({ to: 'bob@example.com', list: ['bob@example.com', 'ann@example.org'], 'ann@example.org': 1, n: 4111111111111111 });
    await h.onToolCall!(c, h.state!());
    expect(c.arguments).toEqual({ to: '[EMAIL_1]', list: ['[EMAIL_1]', '[EMAIL_2]'], '[EMAIL_2]': 1, n: 4111111111111111 });
    // A fresh state per call: the next call starts at 1 again.
    const next = callOf({ to: 'ann@example.org' });
    await h.onToolCall!(next, h.state!());
    expect(next.arguments).toEqual({ to: '[EMAIL_1]' });
  });

  it('refuses with input: refuse, naming the kinds and never a value; counts only with allow', async () => {
    const refusing = await hooks(pii, { input: 'refuse' });
    const err = await (async () => refusing.onToolCall!(callOf({ q: 'call +1 415 555 2671' }), refusing.state!()))().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).reason).toBe('pii_detected');
    expect((err as GatewayError).message).toContain('a phone number');
    expect((err as GatewayError).message).not.toContain('555');
    const allowing = await hooks(pii, { input: 'allow' });
    const c = callOf({ q: 'bob@example.com' });
    await allowing.onToolCall!(c, allowing.state!());
    expect(c.arguments).toEqual({ q: 'bob@example.com' });
  });

  it('gives its output rules for results, none with output: allow', async () => {
    expect((await hooks(pii, {})).toolResultRules!(callOf({}), undefined)).toBeDefined();
    expect((await hooks(pii, { output: 'allow' })).toolResultRules).toBeUndefined();
  });
});

describe('the content filter on tool calls', () => {
  it('refuses arguments holding a term (in a key, escaped, spaced) with a message naming no term, and passes others', async () => {
    const h = await hooks(contentFilter, { terms: ['forbidden plan'], contact: 'policy@example.com' });
    for (const args of [{ q: 'the FORBIDDEN  plan' }, { 'forbidden plan': 1 }, { q: 'forbidden \\u0070lan' }, { deep: [{ a: ['forbídden plan'] }] }]) {
      const err = await (async () => h.onToolCall!(callOf(args), undefined))().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).reason).toBe('content_filter');
      expect((err as GatewayError).message).toContain('policy@example.com');
      expect((err as GatewayError).message.toLowerCase()).not.toContain('forbidden');
    }
    expect(h.onToolCall!(callOf({ q: 'a forbidden planet' }), undefined)).toBeUndefined();
  });

  it('gives its output rules for results only with output', async () => {
    expect((await hooks(contentFilter, { terms: ['x'] })).toolResultRules).toBeUndefined();
    expect((await hooks(contentFilter, { output: { terms: ['x'] } })).toolResultRules!(callOf({}), undefined)?.maxHoldChars).toBe(1);
  });
});
