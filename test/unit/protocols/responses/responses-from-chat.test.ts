import { fromChatJson } from '../../../../src/protocols/responses/from-chat';
import { newResponseId } from '../../../../src/protocols/responses/output';
import { rejection } from '../../../support/rejection';
import { agentsRequest, capturedCodexRequest, codexRequest, completion, metaFor } from '../../../support/responses-fixtures';

const text = (t: string) => ({ type: 'output_text', annotations: [], logprobs: [], text: t });

describe('fromChatJson', () => {
  it('answers an Agents SDK run with the whole response object, its request fields echoed', () => {
    const req = agentsRequest();
    const chat = completion({ content: 'It is sunny in Paris.' }, 'stop', { prompt_tokens: 40, completion_tokens: 8, total_tokens: 48 });
    expect(fromChatJson(chat, metaFor(req))).toEqual({
      body: {
        id: 'resp_test', object: 'response', created_at: 1760000000, status: 'completed', background: false, completed_at: 1760000001,
        error: null, incomplete_details: null, instructions: req.instructions, max_output_tokens: 512, max_tool_calls: null, model: 'llama-3.3-70b',
        output: [{ id: 'msg_1', type: 'message', status: 'completed', content: [text('It is sunny in Paris.')], role: 'assistant' }],
        parallel_tool_calls: true, previous_response_id: null, prompt_cache_key: null, reasoning: { effort: null, summary: null }, safety_identifier: null,
        service_tier: 'default', store: true, temperature: 0.3, text: { format: { type: 'text' }, verbosity: 'medium' }, tool_choice: 'auto', tools: req.tools,
        top_logprobs: 0, top_p: null, truncation: 'disabled',
        usage: { input_tokens: 40, input_tokens_details: { cached_tokens: 0 }, output_tokens: 8, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 48 },
        user: null, metadata: {},
      },
      usage: { input_tokens: 40, output_tokens: 8 },
    });
  });

  it('answers a Codex turn with reasoning and tool calls, a namespaced function named back', () => {
    const req = codexRequest();
    const chat = completion({
      reasoning_content: 'The user wants a listing.',
      tool_calls: [
        { id: 'chatcmpl-tool-a', type: 'function', function: { name: 'shell', arguments: '{"command":["ls"]}' } },
        { id: 'chatcmpl-tool-b', type: 'function', function: { name: 'mcp__docs__search', arguments: '{"query":"layout"}' } },
      ],
    }, 'tool_calls', { prompt_tokens: 900, completion_tokens: 30, total_tokens: 930, prompt_tokens_details: { cached_tokens: 512 }, completion_tokens_details: { reasoning_tokens: 12 } });
    const { body, usage } = fromChatJson(chat, metaFor(req));
    expect(body.output).toEqual([
      { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'The user wants a listing.' }] },
      { id: 'fc_1', type: 'function_call', status: 'completed', arguments: '{"command":["ls"]}', call_id: 'chatcmpl-tool-a', name: 'shell' },
      { id: 'fc_2', type: 'function_call', status: 'completed', arguments: '{"query":"layout"}', call_id: 'chatcmpl-tool-b', name: 'search', namespace: 'mcp__docs__' },
    ]);
    expect(body).toMatchObject({
      status: 'completed', store: false, parallel_tool_calls: true, reasoning: { effort: 'medium', summary: 'auto' }, prompt_cache_key: req.prompt_cache_key,
      tools: req.tools, instructions: req.instructions,
      usage: { input_tokens: 900, input_tokens_details: { cached_tokens: 512 }, output_tokens: 30, output_tokens_details: { reasoning_tokens: 12 }, total_tokens: 930 },
    });
    expect(usage).toEqual({ input_tokens: 900, output_tokens: 30, cached_input_tokens: 512, reasoning_tokens: 12 });
  });

  it('answers the Codex default model\'s turn: a call of exec is a custom_tool_call with its input, a namespaced function named back', () => {
    const input = 'const r = await tools.exec_command({ cmd: "ls" });\ntext(r.output);';
    const chat = completion({
      content: 'Running the tool first.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'exec', arguments: JSON.stringify({ input }) } },
        { id: 'call_2', type: 'function', function: { name: 'clock__sleep', arguments: '{"ms":10}' } },
        { id: 'call_3', type: 'function', function: { name: 'wait', arguments: '{"cell_id":"1"}' } },
      ],
    }, 'tool_calls');
    expect(fromChatJson(chat, metaFor(capturedCodexRequest('default'))).body.output).toEqual([
      { id: 'msg_1', type: 'message', status: 'completed', content: [text('Running the tool first.')], role: 'assistant' },
      { id: 'ctc_1', type: 'custom_tool_call', status: 'completed', call_id: 'call_1', name: 'exec', input },
      { id: 'fc_1', type: 'function_call', status: 'completed', arguments: '{"ms":10}', call_id: 'call_2', name: 'sleep', namespace: 'clock' },
      { id: 'fc_2', type: 'function_call', status: 'completed', arguments: '{"cell_id":"1"}', call_id: 'call_3', name: 'wait' },
    ]);
  });

  const patch = { type: 'custom', name: 'patch' };
  it.each<[string, object, object, object]>([
    ['arguments that are not JSON: the input as written', { tools: [patch] }, { name: 'patch', arguments: '*** Begin Patch' }, {}],
    ['a custom tool in a namespace: named back', { tools: [{ type: 'namespace', name: 'editor', tools: [patch] }] }, { name: 'editor__patch', arguments: '{"input":"*** Begin Patch"}' },
      { namespace: 'editor' }],
    ['a custom tool of stored history\'s additional_tools item', { previous_response_id: 'resp_0', history: [{ type: 'additional_tools', tools: [patch] }] },
      { name: 'patch', arguments: '{"input":"*** Begin Patch"}' }, {}],
  ])('answers a custom tool call: %s', (_what, offer, fn, namespace) => {
    const { history, ...fields } = offer as { history?: object[] };
    const chat = completion({ tool_calls: [{ id: 'call_1', type: 'function', function: fn }] }, 'tool_calls');
    expect(fromChatJson(chat, { ...metaFor({ ...agentsRequest(), ...fields }), history: history as any }).body.output).toEqual([
      { id: 'ctc_1', type: 'custom_tool_call', status: 'completed', call_id: 'call_1', name: 'patch', input: '*** Begin Patch', ...namespace },
    ]);
  });

  it.each([
    ['length', 'max_output_tokens'],
    ['content_filter', 'content_filter'],
  ])('answers a finish_reason of %s as incomplete (%s)', (finish, reason) => {
    const { body } = fromChatJson(completion({ content: 'It is sun' }, finish), metaFor(agentsRequest()));
    expect(body).toMatchObject({ status: 'incomplete', incomplete_details: { reason }, completed_at: null });
    expect(body.output).toEqual([{ id: 'msg_1', type: 'message', status: 'incomplete', content: [text('It is sun')], role: 'assistant' }]);
  });

  it.each([
    ['an empty answer as one empty message', { content: '' }, [{ id: 'msg_1', type: 'message', status: 'completed', content: [text('')], role: 'assistant' }]],
    ['reasoning sent as `reasoning` (SGLang, newer vLLM), with text', { reasoning: 'Think.', content: 'Done.' },
      [{ id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Think.' }] }, { id: 'msg_1', type: 'message', status: 'completed', content: [text('Done.')], role: 'assistant' }]],
    ['reasoning alone, without a message', { reasoning_content: 'Hmm.' }, [{ id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Hmm.' }] }]],
    ['text and a call without an id', { content: 'Checking.', tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] }, [
      { id: 'msg_1', type: 'message', status: 'completed', content: [text('Checking.')], role: 'assistant' },
      { id: 'fc_1', type: 'function_call', status: 'completed', arguments: '{}', call_id: 'call_1', name: 'f' },
    ]],
  ])('answers %s', (_what, message, output) => {
    expect(fromChatJson(completion(message, 'stop'), metaFor(agentsRequest())).body.output).toEqual(output);
  });

  it.each([
    ['none', undefined],
    ['counts that are not counts', { prompt_tokens: -3, completion_tokens: 2 }],
    ['one count only', { prompt_tokens: 3 }],
  ])('reports no usage when the backend sent %s, so the caller can estimate', (_what, raw) => {
    const { body, usage } = fromChatJson(completion({ content: 'x' }, 'stop', raw), metaFor(agentsRequest()));
    expect(usage).toBeUndefined();
    expect(body.usage).toBeNull();
  });

  it.each([
    ['not an object', 'hello'],
    ['without choices', { id: 'x' }],
    ['with no choice', { choices: [] }],
    ['with a choice that is not an object', { choices: [null] }],
  ])('refuses an answer %s as upstream_error', (_what, chat) => {
    rejection((c: unknown) => fromChatJson(c, metaFor(agentsRequest())), chat, 'upstream_error');
  });

  it('makes ids in OpenAI\'s form when the caller gives no id maker', () => {
    const { body } = fromChatJson(completion({ content: 'x' }, 'stop'), { ...metaFor(agentsRequest()), id: newResponseId(), newId: undefined });
    expect(body.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(body.output[0].id).toMatch(/^msg_[0-9a-f]{48}$/);
  });
});
