import { fromChatJson } from '../../../../src/protocols/messages/from-chat';
import { GatewayError } from '../../../../src/contract/errors';

const meta = { id: 'msg_01', model: 'claude-sonnet-4-5' };
const answer = (message: Record<string, unknown>, finish_reason: string | null = 'stop', extra: Record<string, unknown> = {}, usage?: Record<string, unknown>) => ({
  id: 'chatcmpl-9', object: 'chat.completion', model: 'Qwen/Qwen3-32B',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason, ...extra }],
  ...(usage ? { usage } : {}),
});
const usage = { prompt_tokens: 1200, completion_tokens: 80, total_tokens: 1280, prompt_tokens_details: { cached_tokens: 1024 }, completion_tokens_details: { reasoning_tokens: 50 } };

describe('fromChatJson', () => {
  it('answers as a Messages message, the usage split as Anthropic reports it', () => {
    expect(fromChatJson(answer({ content: 'Hello.' }, 'stop', {}, usage), meta)).toEqual({
      body: {
        id: 'msg_01', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5',
        content: [{ type: 'text', text: 'Hello.' }],
        stop_reason: 'end_turn', stop_sequence: null,
        usage: { input_tokens: 176, output_tokens: 80, cache_creation_input_tokens: 0, cache_read_input_tokens: 1024 },
      },
      usage: { input_tokens: 1200, output_tokens: 80, cached_input_tokens: 1024, reasoning_tokens: 50 },
    });
  });

  it('puts reasoning first as a thinking block, then text, then each tool call', () => {
    const { body } = fromChatJson(answer({
      reasoning_content: 'The user wants two files.',
      content: 'Reading both.',
      tool_calls: [
        { id: 'chatcmpl-tool-1', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/a.ts"}' } },
        { id: 'chatcmpl-tool-2', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/b.ts"}' } },
      ],
    }, 'tool_calls'), meta);
    expect(body.content).toEqual([
      { type: 'thinking', thinking: 'The user wants two files.', signature: '' },
      { type: 'text', text: 'Reading both.' },
      { type: 'tool_use', id: 'chatcmpl-tool-1', name: 'Read', input: { file_path: '/a.ts' } },
      { type: 'tool_use', id: 'chatcmpl-tool-2', name: 'Read', input: { file_path: '/b.ts' } },
    ]);
    expect(body.stop_reason).toBe('tool_use');
  });

  it('reads `reasoning`, the newer name, too', () => {
    expect(fromChatJson(answer({ reasoning: 'r', content: 'a' }), meta).body.content[0]).toEqual({ type: 'thinking', thinking: 'r', signature: '' });
  });

  it.each([
    ['stop', 'stop', {}, 'end_turn', null],
    ['length', 'length', {}, 'max_tokens', null],
    ['tool_calls', 'tool_calls', {}, 'tool_use', null],
    ['content_filter', 'content_filter', {}, 'refusal', null],
    ['stop with vLLM\'s matched stop string', 'stop', { stop_reason: '###' }, 'stop_sequence', '###'],
    ['stop with SGLang\'s matched stop string', 'stop', { matched_stop: 'END' }, 'stop_sequence', 'END'],
    ['stop on a stop token id', 'stop', { stop_reason: 151645 }, 'end_turn', null],
    ['abort (an unknown reason)', 'abort', {}, 'end_turn', null],
  ])('maps finish_reason %s', (_what, finish, extra, stopReason, stopSequence) => {
    const { body } = fromChatJson(answer({ content: 'x' }, finish, extra), meta);
    expect([body.stop_reason, body.stop_sequence]).toEqual([stopReason, stopSequence]);
  });

  it('calls tool calls under a plain stop tool_use, as some servers finish them', () => {
    const { body } = fromChatJson(answer({ content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }, 'stop'), meta);
    expect(body.stop_reason).toBe('tool_use');
  });

  it.each([
    ['empty', '', {}],
    ['malformed', '{"path": "/a', {}],
    ['an array', '[1,2]', {}],
    ['a string', '"x"', {}],
    ['nested too deep to read safely', `{"a":${'['.repeat(100)}${']'.repeat(100)}}`, {}],
    ['an object', '{"q":"a","n":2}', { q: 'a', n: 2 }],
  ])('gives a tool call whose arguments are %s an input object', (_what, args, input) => {
    const { body } = fromChatJson(answer({ tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: args } }] }, 'tool_calls'), meta);
    expect(body.content).toEqual([{ type: 'tool_use', id: 'c', name: 'f', input }]);
  });

  it('makes an id for a tool call the backend gave none', () => {
    const { body } = fromChatJson(answer({ tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }, { id: '', function: { name: 'g', arguments: '{}' } }] }, 'tool_calls'), meta);
    expect(body.content.map((b) => (b as { id: string }).id)).toEqual(['toolu_msg_01_0', 'toolu_msg_01_1']);
  });

  it('keeps a refusal as text', () => {
    expect(fromChatJson(answer({ content: null, refusal: 'I cannot help with that.' }, 'content_filter'), meta).body).toMatchObject({
      content: [{ type: 'text', text: 'I cannot help with that.' }], stop_reason: 'refusal',
    });
  });

  it('estimates the usage when the backend reports none, and says it did not report', () => {
    const out = fromChatJson(answer({ content: 'x'.repeat(40) }), { ...meta, inputTokens: 300 });
    expect(out.body.usage).toEqual({ input_tokens: 300, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    expect(out.usage).toBeUndefined();
  });

  it.each([
    ['not an object', 'oops'],
    ['without choices', { id: 'x' }],
    ['with empty choices', { choices: [] }],
    ['without a message', { choices: [{ index: 0, finish_reason: 'stop' }] }],
  ])('refuses an answer %s as upstream_error', (_what, completion) => {
    let caught: unknown;
    try {
      fromChatJson(completion, meta);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(GatewayError);
    expect((caught as GatewayError).reason).toBe('upstream_error');
  });
});
