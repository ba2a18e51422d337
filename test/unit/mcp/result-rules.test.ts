// A tool result under output rules (src/mcp/result-rules.ts), with the real
// content filter's and PII plugin's rules: a term split across blocks, at a
// word boundary between blocks, escaped, in structured content; what a mask
// and a cut leave of the blocks; a clean result returned as it came.
import type { ToolResult } from '../../../src/contract/plugin';
import { applyResultRules, WITHHELD } from '../../../src/mcp/result-rules';
import { outputRules } from '../../../plugins/content-filter/output';
import { piiOutputRules } from '../../../plugins/pii/output';
import { email } from '../../../plugins/pii/detectors';

const filter = (action: 'block' | 'mask') => ({ plugin: 'content-filter', rules: outputRules({ terms: ['project bluebird'], patterns: [], action, mask: '[held]' })! });
const pii = { plugin: 'pii', rules: piiOutputRules([email], [], 'mask') };
const text = (t: string) => ({ type: 'text', text: t });
const result = (...content: Array<Record<string, unknown>>): ToolResult => ({ content });

describe('a tool result under output rules', () => {
  it.each([
    ['in one block', [text('a project bluebird b')], [text('a [held] b')]],
    ['split inside a word across blocks', [text('a project blue'), text('bird b')], [text('a [held]'), text(' b')]],
    ['split at a word boundary between blocks', [text('a project'), text('bluebird b')], [text('a [held]'), text(' b')]],
    ['across three blocks', [text('project '), text('blue'), text('bird!')], [text('[held]'), text(''), text('!')]],
    ['escaped, in a block that holds JSON', [text('{"q":"project \\u0062luebird"}')], [text('{"q":"[held]"}')]],
    ['in an embedded resource', [{ type: 'resource', resource: { uri: 'file:///a', text: 'Project  Bluebird' } }], [{ type: 'resource', resource: { uri: 'file:///a', text: '[held]' } }]],
  ])('masks a term %s', (_what, content, expected) => {
    const { result: out, filtered } = applyResultRules({ rules: [filter('mask')] }, result(...content));
    expect(out.content).toEqual(expected);
    expect(filtered).toBe('mask');
  });

  it('cuts at a block: the text before stays, every later block (an image too) and the structured content go', () => {
    const given: ToolResult = { content: [text('intro'), text('see project blue'), text('bird now'), { type: 'image', data: 'AAAA', mimeType: 'image/png' }], structuredContent: { a: 1 } };
    const { result: out, filtered } = applyResultRules({ rules: [filter('block')] }, given);
    expect(out).toEqual({ content: [text('intro'), text('see '), text(WITHHELD)], isError: true });
    expect(filtered).toBe('block');
  });

  it('cuts at a match that begins with a block: the blocks before it stay whole, and it goes', () => {
    const { result: out } = applyResultRules({ rules: [filter('block')] }, result(text('first'), text('project bluebird'), text('x')));
    expect(out.content).toEqual([text('first'), text(WITHHELD)]);
  });

  it('masks structured content, its keys too, and cuts on a block there', () => {
    const given: ToolResult = { content: [text('ok')], structuredContent: { note: 'Project Bluebird', list: ['project bluebird'], 'project bluebird': true } };
    expect(applyResultRules({ rules: [filter('mask')] }, given).result.structuredContent).toEqual({ note: '[held]', list: ['[held]'], '[held]': true });
    expect(applyResultRules({ rules: [filter('block')] }, given).result).toEqual({ content: [text('ok'), text(WITHHELD)], isError: true });
  });

  it('chains plugins in order: what one masks, the next reads', () => {
    const { result: out } = applyResultRules({ rules: [filter('mask'), pii] }, result(text('project bluebird: bob@'), text('example.com')));
    expect(out.content).toEqual([text('[held]: [EMAIL]'), text('')]);
  });

  it('returns a clean result as it came, however its text is split', () => {
    const given = result(text('a project'), text('blue bird'), { type: 'image', data: 'AAAA', mimeType: 'image/png' });
    const checked = applyResultRules({ rules: [filter('block'), pii] }, given);
    expect(checked.result).toBe(given);
    expect(checked.filtered).toBeUndefined();
  });
});
