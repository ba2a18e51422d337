import { parseResponsesRequest } from '../../../../src/protocols/responses/request';
import { itemTexts, responsesTexts } from '../../../../src/protocols/responses/texts';
import type { InputItem } from '../../../../src/protocols/responses/types';
import { codexSecondTurn } from '../../../support/responses-fixtures';

const textsOf = (body: object) => {
  const out: string[] = [];
  responsesTexts(parseResponsesRequest({ model: 'the-model', ...body }), out);
  return out;
};

describe('responsesTexts', () => {
  it('gathers every text of a Codex turn: instructions, messages, tool calls and results, reasoning summaries, tool definitions', () => {
    const out = textsOf(codexSecondTurn());
    for (const text of [
      'You are a coding agent running in the Codex CLI',
      '<permissions instructions>', 'List the files in this repository.',
      '**Listing files** I will run ls.',
      'shell', '{"command":["ls"]}', 'search', 'mcp__docs__', '{"query":"layout"}',
      'README.md\nsrc\n', 'src/ holds the code.',
      'Runs a shell command and returns its output.', 'The working directory to execute the command in', 'workdir', 'in_progress',
      'Searches the project documentation.', 'Tools in the mcp__docs__ namespace.',
      '0199a1c2-7d3e-7f10-9a2b-3c4d5e6f7a8b',
    ]) expect(out.some((t) => t.startsWith(text))).toBe(true);
    expect(out).not.toContain('the-model');
  });

  it.each<[string, object, string[]]>([
    ['a string input and instructions', { input: 'hello', instructions: 'be kind' }, ['be kind', 'hello']],
    ['text parts, not images or files', { input: [{ role: 'user', content: [{ type: 'input_text', text: 'see' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA' }, { type: 'input_file', file_data: 'JVBERi0' }] }] }, ['see']],
    ['assistant output text and refusals', { input: [{ role: 'assistant', content: [{ type: 'output_text', text: 'ok' }, { type: 'refusal', refusal: 'no' }] }] }, ['ok', 'no']],
    ['a custom tool call and its output', { input: [{ type: 'custom_tool_call', call_id: 'c', name: 'apply_patch', input: 'patch' }, { type: 'custom_tool_call_output', call_id: 'c', output: 'applied' }] }, ['apply_patch', 'patch', 'applied']],
    ['a local shell call and its output', { input: [{ type: 'local_shell_call', call_id: 'c', action: { command: ['rm', '-rf'] } }, { type: 'local_shell_call_output', id: 'c', output: 'gone' }] }, ['rm', '-rf', 'gone']],
    ['reasoning content', { input: [{ type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'because' }], encrypted_content: 'gAAAA' }] }, ['because']],
    ['the tools of an additional_tools item, a custom tool\'s grammar too', { input: [{ type: 'additional_tools', tools: [{ type: 'custom', name: 'exec', description: 'Runs JS.', format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' } }] }] },
      ['additional_tools', 'type', 'custom', 'name', 'exec', 'description', 'Runs JS.', 'format', 'type', 'grammar', 'syntax', 'lark', 'definition', 'start: /.+/']],
    ['an item of a kind it does not know: all its strings', { input: [{ type: 'mcp_call', name: 'lookup', arguments: '{"q":1}' }] }, ['mcp_call', 'lookup', '{"q":1}']],
    ['the output schema and stop-like fields', { input: 'x', text: { format: { type: 'json_schema', name: 'city', schema: { properties: { name: { description: 'the city' } } } } }, user: 'u1' },
      ['x', 'format', 'type', 'json_schema', 'name', 'city', 'schema', 'properties', 'name', 'description', 'the city', 'u1']],
  ])('gathers %s', (_what, body, expected) => {
    expect(textsOf(body)).toEqual(expected);
  });

  it('reads stored items the same way', () => {
    const out: string[] = [];
    itemTexts([{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'earlier' }] }, { id: 'msg_1' }] as InputItem[], out);
    expect(out).toEqual(['earlier']);
  });
});
