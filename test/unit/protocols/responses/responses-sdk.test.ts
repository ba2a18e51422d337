// The official openai client, unchanged, reads what the translation writes:
// its own SSE parser, stream accumulator (ResponseStream) and response parser
// get the events as an HTTP body would carry them, from a fetch that answers
// without a network. The streamed answer must end as the JSON answer does.
import OpenAI from 'openai';
import { fromChatJson } from '../../../../src/protocols/responses/from-chat';
import { ResponsesStream } from '../../../../src/protocols/responses/stream';
import type { ResponsesEvent, ResponsesRequest } from '../../../../src/protocols/responses/types';
import { capturedCodexRequest, chunk, codexRequest, agentsRequest, completion, metaFor, usageChunk } from '../../../support/responses-fixtures';

/** A client whose every request is answered with this body. */
function clientAnswering(body: string, contentType: string): OpenAI {
  return new OpenAI({
    apiKey: 'sk-made-up-for-this-test', baseURL: 'http://responses.test/v1', maxRetries: 0,
    fetch: async () => new Response(body, { status: 200, headers: { 'content-type': contentType } }),
  });
}

const sse = (events: ResponsesEvent[]) => events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');

function streamed(request: ResponsesRequest, chunks: object[]): ResponsesEvent[] {
  const stream = new ResponsesStream(metaFor(request));
  return [...stream.start(), ...chunks.flatMap((c) => stream.push(c)), ...stream.end()];
}

/** The SDK's parsed stream adds `parsed` fields the plain JSON answer does not have. */
function withoutParsed(response: any): any {
  const { output_parsed: _p, ...rest } = response;
  return {
    ...rest,
    output: rest.output.map(({ parsed_arguments: _a, ...item }: any) => (item.type === 'message' ? { ...item, content: item.content.map(({ parsed: _c, ...part }: any) => part) } : item)),
  };
}

describe.each<[string, ResponsesRequest, object[], object, string[]]>([
  ['a text answer (Agents SDK)', agentsRequest(),
    [chunk({ role: 'assistant', content: '' }), chunk({ content: 'It is ' }), chunk({ content: 'sunny.' }), chunk({}, 'stop'), usageChunk(40, 4)],
    completion({ content: 'It is sunny.' }, 'stop', { prompt_tokens: 40, completion_tokens: 4, total_tokens: 44 }), ['message']],
  ['reasoning, text and two tool calls, one namespaced (Codex CLI)', codexRequest(),
    [
      chunk({ role: 'assistant', reasoning_content: 'I should ' }), chunk({ reasoning_content: 'look.' }), chunk({ content: 'Looking.' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'shell', arguments: '{"command":' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'mcp__docs__search', arguments: '{"query":"x"}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '["ls"]}' } }] }),
      chunk({}, 'tool_calls'), usageChunk(900, 25, { completion_tokens_details: { reasoning_tokens: 5 } }),
    ],
    completion({
      reasoning_content: 'I should look.', content: 'Looking.',
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'shell', arguments: '{"command":["ls"]}' } },
        { id: 'call_b', type: 'function', function: { name: 'mcp__docs__search', arguments: '{"query":"x"}' } },
      ],
    }, 'tool_calls', { prompt_tokens: 900, completion_tokens: 25, total_tokens: 925, completion_tokens_details: { reasoning_tokens: 5 } }),
    ['reasoning', 'message', 'function_call', 'function_call']],
  ['text and a call of exec, the custom tool of Codex\'s default model, its input streamed', capturedCodexRequest('default'),
    [
      chunk({ role: 'assistant', content: 'Running.' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'exec', arguments: '{"input": "await tools.exec_' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: 'command({ cmd: \\"ls\\" })"}' } }] }),
      chunk({}, 'tool_calls'), usageChunk(9000, 25),
    ],
    completion({ content: 'Running.', tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'exec', arguments: '{"input": "await tools.exec_command({ cmd: \\"ls\\" })"}' } }] },
      'tool_calls', { prompt_tokens: 9000, completion_tokens: 25, total_tokens: 9025 }), ['message', 'custom_tool_call']],
  ['an answer cut by the token cap', agentsRequest(),
    [chunk({ content: 'It is sun' }), chunk({}, 'length'), usageChunk(40, 512)],
    completion({ content: 'It is sun' }, 'length', { prompt_tokens: 40, completion_tokens: 512, total_tokens: 552 }), ['message']],
])('the openai SDK reads %s', (_what, request, chunks, json, kinds) => {
  it('streamed, to the same response as the JSON answer', async () => {
    const events = streamed(request, chunks);
    const seen: string[] = [];
    const inputs = new Map<string, string>();
    const stream = clientAnswering(sse(events), 'text/event-stream').responses.stream({ model: request.model, input: 'x' });
    stream.on('response.output_text.delta', (e) => seen.push(e.snapshot));
    stream.on('response.custom_tool_call_input.delta', (e) => inputs.set(e.item_id, (inputs.get(e.item_id) ?? '') + e.delta));
    const final = await stream.finalResponse();

    const created = await clientAnswering(JSON.stringify(fromChatJson(json, metaFor(request)).body), 'application/json')
      .responses.create({ model: request.model, input: 'x' });
    expect(created.output.map((item) => item.type)).toEqual(kinds);
    expect(withoutParsed(final)).toEqual(created);
    expect(final.output_text).toBe(created.output_text);
    expect(seen.at(-1) ?? '').toBe(created.output_text);
    // The input deltas add up to each custom tool call's input.
    const custom = created.output.filter((item) => item.type === 'custom_tool_call');
    expect(new Map(custom.map((item) => [item.id!, item.input]))).toEqual(inputs);
  });
});
