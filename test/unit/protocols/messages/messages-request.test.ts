import { parseCountTokensRequest, parseMessagesRequest } from '../../../../src/protocols/messages/request';
import { messagesTexts } from '../../../../src/protocols/messages/texts';
import { countTokens } from '../../../../src/protocols/messages/count-tokens';
import { claudeCodeRequest, CLAUDE_CODE_TOOLS } from '../../../support/claude-code-request';
import { rejection } from '../../../support/rejection';

const minimal = { model: 'claude-x', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] };
const withMessage = (message: unknown) => ({ ...minimal, messages: [message] });
const withBlock = (block: unknown) => withMessage({ role: 'user', content: [block] });

const textsOf = (body: unknown): string[] => {
  const out: string[] = [];
  messagesTexts(parseMessagesRequest(body), out);
  return out;
};

describe('parseMessagesRequest', () => {
  it('accepts what Claude Code sends, keeping the fields it does not know as sent', () => {
    const body = claudeCodeRequest();
    const req = parseMessagesRequest(body);
    expect(req).toEqual(body);
    expect(req.context_management).toEqual({ edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] });
    expect(req.tools).toHaveLength(24);
  });

  it.each([
    ['a base64 image', { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }],
    ['a URL image', { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }],
    ['a tool result as blocks with an image', { type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'x' }, { type: 'image', source: { type: 'url', url: 'https://e.x/i.png' } }] }],
    ['a tool result without content', { type: 'tool_result', tool_use_id: 't' }],
    ['a document (a type the gateway only carries)', { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' } }],
    ['a block type from a later API version', { type: 'container_upload', file_id: 'f_1' }],
  ])('accepts %s', (_what, block) => {
    expect(parseMessagesRequest(withBlock(block)).messages[0].content).toEqual([block]);
  });

  it.each([
    ['server tools beside custom ones', { tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 5 }, CLAUDE_CODE_TOOLS[0]] }],
    ['every tool_choice', { tool_choice: { type: 'tool', name: 'Read', disable_parallel_tool_use: true } }],
    ['tool_choice none', { tool_choice: { type: 'none' } }],
    ['thinking with a budget', { thinking: { type: 'enabled', budget_tokens: 10000 } }],
    ['a thinking type from a later API version', { thinking: { type: 'between_tools' } }],
    ['sampling fields and stop sequences', { temperature: 0.2, top_p: 0.9, top_k: 40, stop_sequences: ['###'] }],
    ['a system message between turns', { messages: [{ role: 'user', content: 'a' }, { role: 'system', content: [{ type: 'text', text: 'b' }] }] }],
  ])('accepts %s', (_what, patch) => {
    expect(parseMessagesRequest({ ...minimal, ...patch })).toEqual({ ...minimal, ...patch });
  });

  it.each([
    ['no max_tokens', { ...minimal, max_tokens: undefined }, 'max_tokens', 'max_tokens is required.'],
    ['a fractional max_tokens', { ...minimal, max_tokens: 1.5 }, 'max_tokens', undefined],
    ['no model', { ...minimal, model: undefined }, 'model', 'model is required.'],
    ['no messages', { ...minimal, messages: [] }, 'messages', undefined],
    ['an unknown role', withMessage({ role: 'tool', content: 'x' }), 'messages[0].role', undefined],
    ['a text block without text', withBlock({ type: 'text' }), 'messages[0].content[0].text', 'messages[0].content[0].text is required.'],
    ['a block without a type', withBlock({ text: 'x' }), 'messages[0].content[0].type', undefined],
    ['an image without media_type', withBlock({ type: 'image', source: { type: 'base64', data: 'x' } }), 'messages[0].content[0].source.media_type', undefined],
    ['a tool_use whose input is not an object', withMessage({ role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: '{}' }] }), 'messages[0].content[0].input', undefined],
    ['a tool_result without tool_use_id', withBlock({ type: 'tool_result', content: 'x' }), 'messages[0].content[0].tool_use_id', undefined],
    ['is_error as a string', withBlock({ type: 'tool_result', tool_use_id: 't', is_error: 'yes' }), 'messages[0].content[0].is_error', undefined],
    ['a tool without input_schema', { ...minimal, tools: [{ name: 'f' }] }, 'tools[0].input_schema', 'tools[0].input_schema is required.'],
    ['an unknown tool_choice', { ...minimal, tool_choice: { type: 'some' } }, 'tool_choice.type', undefined],
    ['a tool_choice tool without a name', { ...minimal, tool_choice: { type: 'tool' } }, 'tool_choice.name', undefined],
    ['stop_sequences as a string', { ...minimal, stop_sequences: '###' }, 'stop_sequences', undefined],
    ['a negative temperature', { ...minimal, temperature: -1 }, 'temperature', undefined],
    ['metadata.user_id as a number', { ...minimal, metadata: { user_id: 7 } }, 'metadata.user_id', undefined],
    ['system as an object', { ...minimal, system: { text: 'x' } }, 'system', undefined],
  ])('refuses %s, naming the input', (_what, body, param, message) => {
    const err = rejection(parseMessagesRequest, body);
    expect(err.param).toBe(param);
    if (message !== undefined) expect(err.message).toBe(message);
  });

  it('refuses a body that is not an object', () => {
    expect(rejection(parseMessagesRequest, [minimal]).param).toBeNull();
  });
});

describe('parseCountTokensRequest', () => {
  it('takes a Messages request without max_tokens', () => {
    const { max_tokens: _cap, ...body } = minimal;
    expect(parseCountTokensRequest(body)).toEqual(body);
    expect(rejection(parseCountTokensRequest, { ...body, messages: 'hi' }).param).toBe('messages');
  });
});

describe('messagesTexts', () => {
  it('reads system, messages, tool calls and results, thinking, tool definitions and every other string', () => {
    const texts = textsOf({
      ...minimal,
      system: [{ type: 'text', text: 'SYS' }],
      stop_sequences: ['STOP'],
      output_config: { format: { type: 'json_schema', schema: { properties: { answer: { description: 'SCHEMA-DESC' } } } } },
      context_management: { note: 'KEPT-FIELD' },
      tools: [{ name: 'TOOL', description: 'TOOL-DESC', input_schema: { properties: { p: { enum: ['ENUM'] } } } }],
      messages: [
        { role: 'user', content: 'PLAIN' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'THOUGHT', signature: 's' }, { type: 'tool_use', id: 't', name: 'CALL', input: { q: 'ARG' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'RESULT' }] }, { type: 'document', title: 'DOC-TITLE', source: { type: 'text', data: 'DOC-TEXT' } }] },
        { role: 'system', content: 'MID-SYSTEM' },
      ],
    });
    for (const t of ['SYS', 'STOP', 'SCHEMA-DESC', 'KEPT-FIELD', 'TOOL', 'TOOL-DESC', 'ENUM', 'PLAIN', 'THOUGHT', 'CALL', '{"q":"ARG"}', 'RESULT', 'DOC-TITLE', 'DOC-TEXT', 'MID-SYSTEM']) {
      expect(texts).toContain(t);
    }
    expect(texts).not.toContain('claude-x');
  });

  it('does not read image data, encoded document sources or redacted thinking', () => {
    const texts = textsOf(withMessage({
      role: 'user',
      content: [
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'IMAGEDATA' } },
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'PDFDATA' } },
        { type: 'redacted_thinking', data: 'CIPHER' },
      ],
    }));
    expect(texts.join(' ')).not.toMatch(/IMAGEDATA|PDFDATA|CIPHER/);
  });
});

describe('countTokens', () => {
  it('estimates about four characters a token over the texts', () => {
    expect(countTokens(parseCountTokensRequest({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(400) }] }))).toEqual({ input_tokens: 100 });
    expect(countTokens(parseCountTokensRequest({ model: 'm', system: 'abc', messages: [{ role: 'user', content: 'de' }] }))).toEqual({ input_tokens: 2 });
  });

  it('counts the tool definitions of a Claude Code request', () => {
    const bare = countTokens(parseCountTokensRequest({ ...claudeCodeRequest(), tools: undefined })).input_tokens;
    const full = countTokens(parseCountTokensRequest(claudeCodeRequest())).input_tokens;
    expect(full - bare).toBeGreaterThan(24 * 20);
  });
});
