import { NativeMessagesObserver, usageOfJson } from '../../../../src/protocols/messages/native';

describe('usageOfJson', () => {
  it.each([
    ['plain counts', { input_tokens: 20, output_tokens: 5 }, { input_tokens: 20, output_tokens: 5 }],
    ['cache reads and writes (which Anthropic leaves out of input_tokens)', { input_tokens: 3, output_tokens: 5, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200 },
      { input_tokens: 1203, output_tokens: 5, cached_input_tokens: 1000, cache_creation_input_tokens: 200 }],
    ['nulls for the cache', { input_tokens: 3, output_tokens: 5, cache_read_input_tokens: null, cache_creation_input_tokens: null }, { input_tokens: 3, output_tokens: 5 }],
    ['thinking tokens', { input_tokens: 3, output_tokens: 50, output_tokens_details: { thinking_tokens: 40 } }, { input_tokens: 3, output_tokens: 50, reasoning_tokens: 40 }],
  ])('reads %s', (_what, usage, expected) => {
    expect(usageOfJson({ id: 'msg_1', type: 'message', content: [], usage })).toEqual(expected);
  });

  it.each([
    ['no body', null],
    ['no usage', { id: 'msg_1' }],
    ['a count that is not a count', { usage: { input_tokens: -1, output_tokens: 2 } }],
    ['a missing count', { usage: { input_tokens: 1 } }],
  ])('reads nothing from %s', (_what, body) => {
    expect(usageOfJson(body)).toBeUndefined();
  });
});

// A native backend's stream, as Anthropic sends it.
const events = [
  { type: 'message_start', message: { id: 'msg_n', type: 'message', role: 'assistant', model: 'claude-x', content: [], stop_reason: null, stop_sequence: null,
    usage: { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 2048, output_tokens: 1 } } },
  { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Plan.' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig==' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'ping' },
  { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '', citations: null } },
  { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Running it.' } },
  { type: 'content_block_stop', index: 1 },
  { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {} } },
  { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"command":' } },
  { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '"ls"}' } },
  { type: 'content_block_stop', index: 2 },
  { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 42, input_tokens: null } },
  { type: 'message_stop' },
];

describe('NativeMessagesObserver', () => {
  it('reads the usage from message_start, then message_delta, and rebuilds the message', () => {
    const seen = new NativeMessagesObserver();
    seen.observe(events[0]);
    expect(seen.usage).toEqual({ input_tokens: 2060, output_tokens: 1, cached_input_tokens: 2048 });
    expect(seen.done).toBe(false);
    for (const e of events.slice(1)) seen.observe(e);
    expect(seen.usage).toEqual({ input_tokens: 2060, output_tokens: 42, cached_input_tokens: 2048 });
    expect(seen.done).toBe(true);
    expect(seen.message).toEqual({
      id: 'msg_n', type: 'message', role: 'assistant', model: 'claude-x', stop_reason: 'tool_use', stop_sequence: null,
      usage: { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 2048, output_tokens: 42 },
      content: [
        { type: 'thinking', thinking: 'Plan.', signature: 'sig==' },
        { type: 'text', text: 'Running it.', citations: null },
        { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls' } },
      ],
    });
  });

  it('keeps the usage seen so far and the error of a stream that failed', () => {
    const seen = new NativeMessagesObserver();
    for (const e of events.slice(0, 8)) seen.observe(e);
    const error = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
    seen.observe(error);
    expect(seen.done).toBe(false);
    expect(seen.error).toEqual(error);
    expect(seen.usage).toEqual({ input_tokens: 2060, output_tokens: 1, cached_input_tokens: 2048 });
    expect(seen.message).toBeUndefined();
  });

  it('ignores events it cannot read, and anything before message_start', () => {
    const seen = new NativeMessagesObserver();
    for (const e of [{ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x' } }, { type: 'message_delta' }, { type: 'x' }]) seen.observe(e);
    expect(seen.usage).toBeUndefined();
    seen.observe(events[0]);
    for (const e of [{ type: 'content_block_delta', index: 9, delta: { type: 'text_delta', text: 'x' } }, { type: 'content_block_start', index: 'a' }, { type: 'message_delta', delta: 5, usage: 'x' },
      { type: 'content_block_start', index: 1e9, content_block: { type: 'text', text: '' } },
      { type: 'message_delta', delta: {}, usage: JSON.parse('{"__proto__": {"polluted": true}}') }]) seen.observe(e);
    seen.observe({ type: 'message_stop' });
    expect(seen.message?.content).toEqual([]);
    expect((seen.message?.usage as unknown as Record<string, unknown>).polluted).toBeUndefined();
  });
});
