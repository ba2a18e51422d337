import { fromChatJson } from '../../../../src/protocols/responses/from-chat';
import { ResponsesStream } from '../../../../src/protocols/responses/stream';
import type { ResponsesEvent, ResponsesRequest } from '../../../../src/protocols/responses/types';
import { agentsRequest, capturedCodexRequest, chunk, codexRequest, completion, metaFor, usageChunk } from '../../../support/responses-fixtures';

/** Feeds the chunks one at a time; returns each push's events, then end()'s. */
function run(request: ResponsesRequest, chunks: object[]) {
  const stream = new ResponsesStream(metaFor(request));
  const perPush = chunks.map((c) => stream.push(c));
  const last = stream.end();
  return { stream, perPush, events: [...perPush.flat(), ...last] };
}

const types = (events: ResponsesEvent[]) => events.map((e) => e.type);
const text = (t: string) => ({ type: 'output_text', annotations: [], logprobs: [], text: t });

describe('ResponsesStream', () => {
  it('streams a text answer as OpenAI does, event by event', () => {
    const req = agentsRequest();
    const { events } = run(req, [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hello' }), chunk({ content: ' world' }), chunk({}, 'stop'), usageChunk(10, 2)]);
    const inProgress = expect.objectContaining({ id: 'resp_test', object: 'response', status: 'in_progress', output: [], usage: null, completed_at: null, model: req.model });
    const at = { item_id: 'msg_1', output_index: 0 };
    expect(events).toEqual([
      { type: 'response.created', sequence_number: 0, response: inProgress },
      { type: 'response.in_progress', sequence_number: 1, response: inProgress },
      { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: { id: 'msg_1', type: 'message', status: 'in_progress', content: [], role: 'assistant' } },
      { type: 'response.content_part.added', sequence_number: 3, ...at, content_index: 0, part: text('') },
      { type: 'response.output_text.delta', sequence_number: 4, ...at, content_index: 0, delta: 'Hello', logprobs: [] },
      { type: 'response.output_text.delta', sequence_number: 5, ...at, content_index: 0, delta: ' world', logprobs: [] },
      { type: 'response.output_text.done', sequence_number: 6, ...at, content_index: 0, text: 'Hello world', logprobs: [] },
      { type: 'response.content_part.done', sequence_number: 7, ...at, content_index: 0, part: text('Hello world') },
      { type: 'response.output_item.done', sequence_number: 8, output_index: 0, item: { id: 'msg_1', type: 'message', status: 'completed', content: [text('Hello world')], role: 'assistant' } },
      { type: 'response.completed', sequence_number: 9, response: expect.objectContaining({
        status: 'completed', completed_at: 1760000001, output: [{ id: 'msg_1', type: 'message', status: 'completed', content: [text('Hello world')], role: 'assistant' }],
        usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 12 },
      }) },
    ]);
  });

  it('sends each delta in the push of the chunk that carries it, and the terminal event only at the end', () => {
    const { perPush } = run(agentsRequest(), [chunk({ content: 'a' }), chunk({ content: 'b' }), chunk({}, 'stop'), usageChunk(1, 2)]);
    expect(types(perPush[0])).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta']);
    expect(types(perPush[1])).toEqual(['response.output_text.delta']);
    expect(types(perPush[2])).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done']);
    expect(perPush[3]).toEqual([]);
  });

  it('gives two interleaved tool calls an item each, their arguments streamed as they arrive', () => {
    const { events, stream } = run(codexRequest(), [
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'shell', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'mcp__docs__search', arguments: '{"qu' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"command":' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: 'ery":"x"}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '["ls"]}' } }] }),
      chunk({}, 'tool_calls'),
      usageChunk(900, 40),
    ]);
    const pick = (type: string) => events.filter((e) => e.type === type).map(({ type: _t, sequence_number: _s, ...rest }) => rest);
    expect(pick('response.output_item.added')).toEqual([
      { output_index: 0, item: { id: 'fc_1', type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_a', name: 'shell' } },
      { output_index: 1, item: { id: 'fc_2', type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_b', name: 'search', namespace: 'mcp__docs__' } },
    ]);
    expect(pick('response.function_call_arguments.delta')).toEqual([
      { item_id: 'fc_2', output_index: 1, delta: '{"qu' },
      { item_id: 'fc_1', output_index: 0, delta: '{"command":' },
      { item_id: 'fc_2', output_index: 1, delta: 'ery":"x"}' },
      { item_id: 'fc_1', output_index: 0, delta: '["ls"]}' },
    ]);
    expect(pick('response.function_call_arguments.done')).toEqual([
      { item_id: 'fc_1', output_index: 0, name: 'shell', arguments: '{"command":["ls"]}' },
      { item_id: 'fc_2', output_index: 1, name: 'search', arguments: '{"query":"x"}' },
    ]);
    expect(stream.response!.output).toEqual([
      { id: 'fc_1', type: 'function_call', status: 'completed', arguments: '{"command":["ls"]}', call_id: 'call_a', name: 'shell' },
      { id: 'fc_2', type: 'function_call', status: 'completed', arguments: '{"query":"x"}', call_id: 'call_b', name: 'search', namespace: 'mcp__docs__' },
    ]);
  });

  it('streams a call of Codex\'s exec as a custom_tool_call, its input decoded out of the arguments as they arrive', () => {
    const call = (args: string, head?: object) => chunk({ tool_calls: [{ index: 0, ...head, function: { ...(head && { name: 'exec' }), arguments: args } }] });
    const { events, perPush, stream } = run(capturedCodexRequest('default'), [
      call('', { id: 'call_1', type: 'function' }), call('{"inp'), call('ut": "const r = await tools.exec_command({ cmd: \\"ec'),
      call('ho hi\\" });\\ntext(r.'), call('output);"}'), chunk({}, 'tool_calls'), usageChunk(900, 30),
    ]);
    const input = 'const r = await tools.exec_command({ cmd: "echo hi" });\ntext(r.output);';
    const at = { item_id: 'ctc_1', output_index: 0 };
    expect(events.slice(2).map(({ sequence_number: _s, ...e }) => e)).toEqual([
      { type: 'response.output_item.added', output_index: 0, item: { id: 'ctc_1', type: 'custom_tool_call', status: 'in_progress', call_id: 'call_1', name: 'exec', input: '' } },
      { type: 'response.custom_tool_call_input.delta', ...at, delta: 'const r = await tools.exec_command({ cmd: "ec' },
      { type: 'response.custom_tool_call_input.delta', ...at, delta: 'ho hi" });\ntext(r.' },
      { type: 'response.custom_tool_call_input.delta', ...at, delta: 'output);' },
      { type: 'response.custom_tool_call_input.done', ...at, input },
      { type: 'response.output_item.done', output_index: 0, item: { id: 'ctc_1', type: 'custom_tool_call', status: 'completed', call_id: 'call_1', name: 'exec', input } },
      { type: 'response.completed', response: expect.objectContaining({ status: 'completed' }) },
    ]);
    // Each delta goes out with the chunk that completes it.
    expect(perPush.map((p) => types(p).filter((t) => t.endsWith('input.delta')).length)).toEqual([0, 0, 1, 1, 1, 0, 0]);
    expect(stream.response!.output).toEqual([{ id: 'ctc_1', type: 'custom_tool_call', status: 'completed', call_id: 'call_1', name: 'exec', input }]);
  });

  it('sends a custom tool\'s input whole at the end when the arguments are not its one argument, and keeps what came of a failed call', () => {
    const req = { ...agentsRequest(), tools: [{ type: 'namespace', name: 'editor', tools: [{ type: 'custom', name: 'patch' }] }] };
    const raw = run(req, [chunk({ tool_calls: [{ index: 0, id: 'c', type: 'function', function: { name: 'editor__patch', arguments: '*** Begin' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ' Patch' } }] }), chunk({}, 'tool_calls')]);
    expect(raw.events.filter((e) => e.type.startsWith('response.custom_tool_call_input'))).toEqual([
      expect.objectContaining({ type: 'response.custom_tool_call_input.delta', delta: '*** Begin Patch' }),
      expect.objectContaining({ type: 'response.custom_tool_call_input.done', input: '*** Begin Patch' }),
    ]);
    expect(raw.stream.response!.output).toEqual([{ id: 'ctc_1', type: 'custom_tool_call', status: 'completed', call_id: 'c', name: 'patch', namespace: 'editor', input: '*** Begin Patch' }]);

    const failed = new ResponsesStream(metaFor(req));
    failed.push(chunk({ tool_calls: [{ index: 0, id: 'c', type: 'function', function: { name: 'editor__patch', arguments: '{"input":"*** Beg' } }] }));
    failed.fail({ type: 'server_error', code: 'upstream_error', message: 'cut' });
    expect(failed.response!.output).toEqual([{ id: 'ctc_1', type: 'custom_tool_call', status: 'incomplete', call_id: 'c', name: 'patch', namespace: 'editor', input: '*** Beg' }]);
  });

  it('streams reasoning_content as a reasoning item\'s summary text, closed when the answer starts', () => {
    const { events, stream } = run(codexRequest(), [
      chunk({ role: 'assistant', reasoning_content: 'Let me' }), chunk({ reasoning_content: ' think.' }), chunk({ content: 'Done.' }), chunk({}, 'stop'),
    ]);
    expect(types(events)).toEqual([
      'response.created', 'response.in_progress',
      'response.output_item.added', 'response.reasoning_summary_part.added', 'response.reasoning_summary_text.delta', 'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done', 'response.reasoning_summary_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.content_part.added', 'response.output_text.delta',
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
      'response.completed',
    ]);
    expect(events[4]).toMatchObject({ item_id: 'rs_1', output_index: 0, summary_index: 0, delta: 'Let me' });
    expect(events.find((e) => e.type === 'response.reasoning_summary_part.done')).toMatchObject({ part: { type: 'summary_text', text: 'Let me think.' } });
    expect(stream.response!.output).toEqual([
      { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Let me think.' }] },
      { id: 'msg_1', type: 'message', status: 'completed', content: [text('Done.')], role: 'assistant' },
    ]);
  });

  it('ends a stream cut by the token cap as incomplete', () => {
    const { events, stream } = run(agentsRequest(), [chunk({ content: 'It is sun' }), chunk({}, 'length'), usageChunk(40, 512)]);
    expect(events.at(-1)).toMatchObject({ type: 'response.incomplete', response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, completed_at: null } });
    expect(events.find((e) => e.type === 'response.output_item.done')).toMatchObject({ item: { status: 'incomplete' } });
    expect(stream.usage).toEqual({ input_tokens: 40, output_tokens: 512 });
  });

  it('takes the usage of the last, choice-less chunk, and none when the backend sends none', () => {
    const withUsage = run(agentsRequest(), [chunk({ content: 'x' }, 'stop'), usageChunk(7, 1, { prompt_tokens_details: { cached_tokens: 4 } })]);
    expect(withUsage.stream.usage).toEqual({ input_tokens: 7, output_tokens: 1, cached_input_tokens: 4 });
    expect(withUsage.stream.response!.usage).toMatchObject({ input_tokens: 7, input_tokens_details: { cached_tokens: 4 } });
    const without = run(agentsRequest(), [chunk({ content: 'x' }, 'stop')]);
    expect(without.stream.usage).toBeUndefined();
    expect(without.stream.response!.usage).toBeNull();
  });

  it('numbers events from 0, one by one, across start, pushes and end', () => {
    const stream = new ResponsesStream(metaFor(agentsRequest()));
    const events = [...stream.start(), ...stream.start(), ...stream.push(chunk({ content: 'a' })), ...stream.push(chunk({ reasoning_content: 'b' })), ...stream.end()];
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_e, i) => i));
    expect(types(events).filter((t) => t === 'response.created')).toHaveLength(1);
  });

  it('answers a stream with no output as one empty message', () => {
    const { events, stream } = run(agentsRequest(), [chunk({ role: 'assistant', content: '' }, 'stop')]);
    expect(types(events).slice(2)).toEqual(['response.output_item.added', 'response.content_part.added', 'response.output_text.done', 'response.content_part.done',
      'response.output_item.done', 'response.completed']);
    expect(stream.response!.output).toEqual([{ id: 'msg_1', type: 'message', status: 'completed', content: [text('')], role: 'assistant' }]);
  });

  it('fails with an error event, then response.failed holding what came so far; nothing after', () => {
    const stream = new ResponsesStream(metaFor(agentsRequest()));
    stream.push(chunk({ content: 'Half an ans' }));
    const events = stream.fail({ type: 'server_error', code: 'upstream_error', message: 'The backend closed the stream.' });
    expect(events).toEqual([
      { type: 'error', sequence_number: 5, code: 'upstream_error', message: 'The backend closed the stream.', param: null },
      { type: 'response.failed', sequence_number: 6, response: expect.objectContaining({
        status: 'failed', error: { code: 'upstream_error', message: 'The backend closed the stream.' },
        output: [{ id: 'msg_1', type: 'message', status: 'incomplete', content: [text('Half an ans')], role: 'assistant' }],
      }) },
    ]);
    expect(stream.done).toBe(true);
    expect([...stream.push(chunk({ content: 'x' })), ...stream.end(), ...stream.fail({ type: 't', code: 'c', message: 'm' })]).toEqual([]);
  });

  it('ends as the JSON answer of the same completion does', () => {
    const req = codexRequest();
    const { stream } = run(req, [
      chunk({ role: 'assistant', reasoning_content: 'Plan.' }), chunk({ content: 'Running ls.' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'shell', arguments: '{"command":["ls"]}' } }] }),
      chunk({}, 'tool_calls'), usageChunk(100, 20),
    ]);
    const json = completion({ reasoning_content: 'Plan.', content: 'Running ls.', tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'shell', arguments: '{"command":["ls"]}' } }] },
      'tool_calls', { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 });
    expect(stream.response).toEqual(fromChatJson(json, metaFor(req)).body);
  });

  it('ends a custom tool call as the JSON answer of the same completion does', () => {
    const req = capturedCodexRequest('default');
    const args = '{"input":"text(\\"\\u00e9\\ud83d\\ude00\\")"}';
    const { stream } = run(req, [
      chunk({ content: 'Running.' }),
      ...args.split('').map((c, i) => chunk({ tool_calls: [{ index: 0, ...(i === 0 && { id: 'call_a', type: 'function' }), function: { ...(i === 0 && { name: 'exec' }), arguments: c } }] })),
      chunk({}, 'tool_calls'), usageChunk(100, 20),
    ]);
    const json = completion({ content: 'Running.', tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'exec', arguments: args } }] },
      'tool_calls', { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 });
    expect(stream.response).toEqual(fromChatJson(json, metaFor(req)).body);
    expect(stream.response!.output[1]).toMatchObject({ type: 'custom_tool_call', input: 'text("é😀")' });
  });

  it('does not change an event after sending it', () => {
    const stream = new ResponsesStream(metaFor(agentsRequest()));
    const first = stream.push(chunk({ content: 'a' }));
    const snapshot = structuredClone(first);
    stream.push(chunk({ content: 'b' }, 'stop'));
    stream.end();
    expect(first).toEqual(snapshot);
  });
});
