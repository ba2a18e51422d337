import { MessagesStream } from '../../../../src/protocols/messages/stream';
import { fromChatJson } from '../../../../src/protocols/messages/from-chat';
import type { MessagesEvent } from '../../../../src/protocols/messages/types';
import { assemble, chunk, toolDelta, usageChunk } from '../../../support/chat-chunks';

const meta = { id: 'msg_01', model: 'claude-sonnet-4-5', inputTokens: 30 };

/** Every event the stream sends for the chunks, then for the end. */
function run(chunks: object[]): { events: MessagesEvent[]; stream: MessagesStream; perChunk: MessagesEvent[][] } {
  const stream = new MessagesStream(meta);
  const perChunk = chunks.map((c) => stream.push(c));
  const events = [...perChunk.flat(), ...stream.end()];
  return { events, stream, perChunk };
}

/** Messages' order: one message, blocks numbered from 0, each started, fed and stopped before the next starts. */
function expectWellOrdered(events: MessagesEvent[]): void {
  expect(events[0].type).toBe('message_start');
  expect(events.at(-1)!.type).toBe('message_stop');
  expect(events.at(-2)!.type).toBe('message_delta');
  let open: number | undefined;
  let next = 0;
  for (const e of events) {
    if (e.type === 'content_block_start') {
      expect(open).toBeUndefined();
      expect(e.index).toBe(next++);
      open = e.index;
    } else if (e.type === 'content_block_delta') {
      expect(e.index).toBe(open);
    } else if (e.type === 'content_block_stop') {
      expect(e.index).toBe(open);
      open = undefined;
    }
  }
  expect(open).toBeUndefined();
}

const start = (index: number, content_block: object) => ({ type: 'content_block_start', index, content_block });
const text = (index: number, t: string) => ({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: t } });
const thinking = (index: number, t: string) => ({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: t } });
const json = (index: number, partial_json: string) => ({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
const stop = (index: number) => ({ type: 'content_block_stop', index });
const messageStart = {
  type: 'message_start',
  message: {
    id: 'msg_01', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null,
    usage: { input_tokens: 30, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  },
};

describe('MessagesStream', () => {
  it('streams text as one text block, each piece as it arrives', () => {
    const chunks = [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hello' }), chunk({ content: ', world' }), chunk({}, 'stop'), usageChunk(100, 3, 64)];
    const { events, perChunk, stream } = run(chunks);
    expect(perChunk[0]).toEqual([messageStart]);
    expect(perChunk[1]).toEqual([start(0, { type: 'text', text: '' }), text(0, 'Hello')]);
    expect(perChunk[2]).toEqual([text(0, ', world')]);
    expect(perChunk[3]).toEqual([stop(0)]);
    expect(perChunk[4]).toEqual([]);
    expect(events.slice(-2)).toEqual([
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { input_tokens: 36, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 64 } },
      { type: 'message_stop' },
    ]);
    expect(stream.usage).toEqual({ input_tokens: 100, output_tokens: 3, cached_input_tokens: 64 });
    expect(stream.message).toEqual(fromChatJson(assemble(chunks), meta).body);
  });

  it('streams reasoning_content as a thinking block before the text', () => {
    const chunks = [chunk({ reasoning_content: 'The user ' }), chunk({ reasoning_content: 'greets.' }), chunk({ content: 'Hi!' }), chunk({}, 'stop'), usageChunk(10, 6)];
    const { events, stream } = run(chunks);
    expect(events.slice(1, -2)).toEqual([
      start(0, { type: 'thinking', thinking: '', signature: '' }), thinking(0, 'The user '), thinking(0, 'greets.'), stop(0),
      start(1, { type: 'text', text: '' }), text(1, 'Hi!'), stop(1),
    ]);
    expect(stream.message).toEqual(fromChatJson(assemble(chunks), meta).body);
  });

  it('gives two sequential tool calls a block each, every argument piece sent with the chunk that brought it', () => {
    const chunks = [
      chunk({ content: 'Reading both.' }),
      chunk(toolDelta(0, '', { id: 'call_a', name: 'Read' })), chunk(toolDelta(0, '{"file_path":')), chunk(toolDelta(0, '"/a.ts"}')),
      chunk(toolDelta(1, '', { id: 'call_b', name: 'Grep' })), chunk(toolDelta(1, '{"pattern":"sum",')), chunk(toolDelta(1, '"path":"src"}')),
      chunk({}, 'tool_calls'), usageChunk(500, 40),
    ];
    const { events, perChunk, stream } = run(chunks);
    expect(perChunk.slice(1, 8)).toEqual([
      [stop(0), start(1, { type: 'tool_use', id: 'call_a', name: 'Read', input: {} })],
      [json(1, '{"file_path":')],
      [json(1, '"/a.ts"}')],
      [stop(1), start(2, { type: 'tool_use', id: 'call_b', name: 'Grep', input: {} })],
      [json(2, '{"pattern":"sum",')],
      [json(2, '"path":"src"}')],
      [stop(2)],
    ]);
    expectWellOrdered(events);
    expect(stream.message).toEqual(fromChatJson(assemble(chunks), meta).body);
    expect(stream.message!.stop_reason).toBe('tool_use');
  });

  it('never merges interleaved tool calls: a later call waits, in order, until the open one is whole', () => {
    const chunks = [
      chunk(toolDelta(0, '{"a":', { id: 'call_a', name: 'A' })),
      chunk(toolDelta(1, '{"b":', { id: 'call_b', name: 'B' })),
      chunk(toolDelta(1, '[1,')),
      chunk(toolDelta(0, '"x"')),
      chunk(toolDelta(1, '2]}')),
      chunk(toolDelta(0, '}')),
      chunk(toolDelta(1, ' ')),
      chunk({}, 'tool_calls'), usageChunk(50, 20),
    ];
    const { events, perChunk, stream } = run(chunks);
    expect(perChunk.slice(0, 8)).toEqual([
      [messageStart, start(0, { type: 'tool_use', id: 'call_a', name: 'A', input: {} }), json(0, '{"a":')],
      [],
      [],
      [json(0, '"x"')],
      [],
      [json(0, '}'), stop(0), start(1, { type: 'tool_use', id: 'call_b', name: 'B', input: {} }), json(1, '{"b":'), json(1, '[1,'), json(1, '2]}')],
      [json(1, ' ')],
      [stop(1)],
    ]);
    expectWellOrdered(events);
    expect(stream.message!.content).toEqual([
      { type: 'tool_use', id: 'call_a', name: 'A', input: { a: 'x' } },
      { type: 'tool_use', id: 'call_b', name: 'B', input: { b: [1, 2] } },
    ]);
    expect(stream.message).toEqual(fromChatJson(assemble(chunks), meta).body);
  });

  it('sends text that arrives during an unfinished call after that call, in its own block', () => {
    const chunks = [chunk(toolDelta(0, '{"q":', { id: 'c', name: 'search' })), chunk({ content: 'Searching.' }), chunk(toolDelta(0, '"sum"}')), chunk({}, 'tool_calls')];
    const { events, perChunk } = run(chunks);
    expect(perChunk[1]).toEqual([]);
    expect(perChunk[2]).toEqual([json(0, '"sum"}'), stop(0), start(1, { type: 'text', text: '' }), text(1, 'Searching.')]);
    expectWellOrdered(events);
  });

  it('sends a piece for a call already whole on that call\'s block rather than lose it, and skips whitespace', () => {
    const chunks = [
      chunk(toolDelta(0, '{}', { id: 'a', name: 'A' })), chunk(toolDelta(1, '{}', { id: 'b', name: 'B' })),
      chunk(toolDelta(0, '  ')), chunk(toolDelta(0, 'oops')), chunk({}, 'tool_calls'),
    ];
    const { perChunk } = run(chunks);
    expect(perChunk[2]).toEqual([]);
    expect(perChunk[3]).toEqual([json(0, 'oops')]);
  });

  it('stops with max_tokens on a length cut-off, closing an unfinished call', () => {
    const chunks = [chunk({ content: 'Writing the file' }), chunk(toolDelta(0, '{"content": "partial', { id: 'c', name: 'Write' })), chunk({}, 'length'), usageChunk(80, 4096)];
    const { events, stream } = run(chunks);
    expectWellOrdered(events);
    expect(events.at(-2)).toMatchObject({ type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 4096 } });
    expect(stream.message!.content[1]).toEqual({ type: 'tool_use', id: 'c', name: 'Write', input: {} });
    expect(stream.message).toEqual(fromChatJson(assemble(chunks), meta).body);
  });

  it('names the stop sequence the backend matched', () => {
    const chunks = [chunk({ content: 'A' }), chunk({}, 'stop', { stop_reason: '###' })];
    const { events } = run(chunks);
    expect(events.at(-2)).toMatchObject({ delta: { stop_reason: 'stop_sequence', stop_sequence: '###' } });
  });

  it('reads the last usage when every chunk carries one (continuous usage stats)', () => {
    const withUsage = (c: object, completion: number) => ({ ...c, usage: { prompt_tokens: 9, completion_tokens: completion, total_tokens: 9 + completion } });
    const { events, stream } = run([withUsage(chunk({ content: 'a' }), 1), withUsage(chunk({ content: 'b' }, 'stop'), 2), usageChunk(9, 2)]);
    expect(events.at(-2)).toMatchObject({ usage: { input_tokens: 9, output_tokens: 2 } });
    expect(stream.usage).toEqual({ input_tokens: 9, output_tokens: 2 });
  });

  it('estimates output tokens when the backend reports no usage, and reports none itself', () => {
    const chunks = [chunk({ content: 'x'.repeat(40) }), chunk({}, 'stop')];
    const { events, stream } = run(chunks);
    expect(events.at(-2)).toEqual({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 10 } });
    expect(stream.usage).toBeUndefined();
    expect(stream.message).toEqual(fromChatJson(assemble(chunks), meta).body);
  });

  it('ends an answer that never said why it finished as end_turn', () => {
    const { events } = run([chunk({ content: 'cut' })]);
    expectWellOrdered(events);
    expect(events.at(-2)).toMatchObject({ delta: { stop_reason: 'end_turn' } });
  });

  it('sends message_start with the first ping, then pings, and nothing once ended', () => {
    const stream = new MessagesStream(meta);
    expect(stream.ping()).toEqual([messageStart, { type: 'ping' }]);
    expect(stream.ping()).toEqual([{ type: 'ping' }]);
    expect(stream.push(chunk({ content: 'a' }))).toEqual([start(0, { type: 'text', text: '' }), text(0, 'a')]);
    stream.end();
    expect(stream.ping()).toEqual([]);
    expect(stream.push(chunk({ content: 'more' }))).toEqual([]);
    expect(stream.end()).toEqual([]);
  });

  it('ends a failed stream with one error event and nothing after it', () => {
    const stream = new MessagesStream(meta);
    stream.push(chunk({ content: 'partial' }));
    expect(stream.fail({ type: 'server_error', code: 'upstream_unavailable', message: 'No backend could answer.' }, 'req_7')).toEqual([{
      type: 'error', error: { type: 'overloaded_error', message: 'No backend could answer.', details: { error_code: 'upstream_unavailable' } }, request_id: 'req_7',
    }]);
    expect(stream.end()).toEqual([]);
    expect(stream.fail({ type: 'x', code: 'y', message: 'z' })).toEqual([]);
    expect(stream.message).toBeUndefined();
  });

  it('gives a call without an index or id its place and a made-up id', () => {
    const { stream } = run([chunk({ tool_calls: [{ function: { name: 'f', arguments: '{}' } }, { function: { name: 'g', arguments: '{}' } }] }), chunk({}, 'tool_calls')]);
    expect(stream.message!.content).toEqual([
      { type: 'tool_use', id: 'toolu_msg_01_0', name: 'f', input: {} },
      { type: 'tool_use', id: 'toolu_msg_01_1', name: 'g', input: {} },
    ]);
  });
});
