import { GatewayError } from '../../../../src/contract/errors';
import { rejection } from '../../../support/rejection';
import { parseResponsesRequest } from '../../../../src/protocols/responses/request';
import { customParameters } from '../../../../src/protocols/responses/custom-tools';
import { toChat, type ToChatOptions } from '../../../../src/protocols/responses/to-chat';
import type { ResponsesRequest } from '../../../../src/protocols/responses/types';
import { agentsRequest, capturedCodexRequest, codexRequest, codexSecondTurn } from '../../../support/responses-fixtures';

const translate = (body: object, options?: ToChatOptions) => {
  const out = toChat(parseResponsesRequest({ model: 'm', ...body }), options);
  return { ...out, dropped: [...out.dropped].sort() };
};

const fn = (name: string, args: string, id: string) => ({ id, type: 'function', function: { name, arguments: args } });

describe('toChat: requests of real clients', () => {
  it('translates the Codex CLI first turn: one system message, its function and namespaced tools, web_search dropped', () => {
    const req = codexRequest();
    const { messages, params, dropped } = translate(req);
    expect(messages).toEqual([
      { role: 'system', content: `${req.instructions}\n\n<permissions instructions>Approval policy: on-request. Sandbox: workspace-write.</permissions instructions>` },
      { role: 'user', content: [{ type: 'text', text: '<environment_context>\n  <cwd>/home/dev/app</cwd>\n  <shell>bash</shell>\n</environment_context>' }] },
      { role: 'user', content: [{ type: 'text', text: 'List the files in this repository.' }] },
    ]);
    const tools = req.tools as any[];
    expect(params).toEqual({
      reasoning_effort: 'medium',
      tools: [
        { type: 'function', function: { name: 'shell', description: tools[0].description, parameters: tools[0].parameters, strict: false } },
        { type: 'function', function: { name: 'update_plan', description: tools[1].description, parameters: tools[1].parameters, strict: false } },
        { type: 'function', function: { name: 'mcp__docs__search', description: 'Searches the project documentation.', parameters: tools[3].tools[0].parameters, strict: false } },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: true,
    });
    expect(dropped).toEqual(['client_metadata', 'include', 'prompt_cache_key', 'tools:web_search']);
  });

  it('translates the Codex CLI second turn: the calls as one assistant message, their results as tool messages, reasoning dropped', () => {
    const { messages, dropped } = translate(codexSecondTurn());
    expect(messages.slice(3)).toEqual([
      { role: 'assistant', content: null, tool_calls: [fn('shell', '{"command":["ls"]}', 'call_1'), fn('mcp__docs__search', '{"query":"layout"}', 'call_2')] },
      { role: 'tool', tool_call_id: 'call_1', content: 'README.md\nsrc\n' },
      { role: 'tool', tool_call_id: 'call_2', content: 'src/ holds the code.' },
    ]);
    expect(dropped).toContain('input:reasoning');
  });

  it('translates an Agents SDK run with nothing dropped', () => {
    const req = agentsRequest();
    expect(translate(req)).toEqual({
      messages: [{ role: 'system', content: req.instructions }, { role: 'user', content: 'What is the weather in Paris?' }],
      params: {
        max_tokens: 512,
        temperature: 0.3,
        tools: [{ type: 'function', function: { name: 'get_weather', description: 'Gets the current weather for a city.', parameters: (req.tools as any[])[0].parameters, strict: true } }],
      },
      dropped: [],
    });
  });

  it('refuses the tools it cannot run, by name, when the route says so', () => {
    let err: unknown;
    try { toChat(codexRequest(), { hostedTools: 'refuse' }); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ reason: 'invalid_request', param: 'tools[2]' });
    expect((err as Error).message).toMatch(/web_search/);
    const custom = { tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'custom', name: 'apply_patch' }] }] };
    expect(translate({ input: 'x', ...custom }, { hostedTools: 'refuse' }).params.tools).toHaveLength(1);
    const hostedInItem = { input: [{ type: 'additional_tools', tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'custom', name: 'a' }, { type: 'teleport' }] }] }] };
    expect(rejection((body: object) => translate(body, { hostedTools: 'refuse' }), hostedInItem).param).toBe('input[0].tools[0].tools[1]');
  });
});

describe('toChat: the Codex CLI as captured', () => {
  const execInput = {
    type: 'object', required: ['input'], additionalProperties: false,
    properties: { input: { type: 'string', description: expect.stringMatching(/^The tool's input: raw text \(not JSON\) matching this lark grammar:\n\nstart: pragma_source \| plain_source\n/) } },
  };

  it('default model: the tools of its additional_tools item reach the backend, exec as a function of one input', () => {
    const req = capturedCodexRequest('default');
    const { messages, params, dropped } = translate(req);
    const namespaces = (req.input as any[])[0].tools;
    const tools = params.tools as any[];
    expect(tools.map((t) => t.function.name)).toEqual([
      'exec', 'wait', 'request_user_input', 'request_user_input_async', 'clock__sleep',
      'collaboration__followup_task', 'collaboration__interrupt_agent', 'collaboration__list_agents', 'collaboration__send_message',
      'collaboration__spawn_agent', 'collaboration__wait_agent',
    ]);
    expect(tools[0]).toEqual({ type: 'function', function: { name: 'exec', description: namespaces[0].tools[0].description, parameters: execInput } });
    expect(tools[1]).toEqual({ type: 'function', function: { name: 'wait', description: namespaces[0].tools[1].description, parameters: namespaces[0].tools[1].parameters, strict: false } });
    expect(params).toMatchObject({ tool_choice: 'auto', parallel_tool_calls: false, reasoning_effort: 'low' });
    // The item is no message: the developer messages merge into the one leading system message, then the two user turns.
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'user']);
    expect(dropped).toEqual(['client_metadata', 'include', 'prompt_cache_key', 'text.verbosity']);
  });

  it('default model, turn 2: the exec call as a call of that function, its output parts as one tool message', () => {
    const { messages, dropped } = translate(capturedCodexRequest('default', 2));
    const input = 'const r = await tools.exec_command({ cmd: "echo sluice-token > marker.txt && cat marker.txt" });\ntext(r.output);';
    expect(messages.slice(3)).toEqual([
      { role: 'assistant', content: 'Running the tool first.', tool_calls: [fn('exec', JSON.stringify({ input }), 'call_1')] },
      { role: 'tool', tool_call_id: 'call_1', content: 'Script completed\nWall time 0.1 seconds\nOutput:\nsluice-token\n' },
    ]);
    expect(dropped).toEqual(['client_metadata', 'include', 'prompt_cache_key', 'text.verbosity']);
  });

  it('a model Codex does not know: its function tools, one namespace flattened, web_search dropped', () => {
    const { messages, params, dropped } = translate(capturedCodexRequest('named-model', 2));
    expect((params.tools as any[]).map((t) => t.function.name)).toEqual([
      'exec_command', 'write_stdin', 'request_user_input', 'view_image',
      'multi_agent_v1__close_agent', 'multi_agent_v1__resume_agent', 'multi_agent_v1__send_input', 'multi_agent_v1__spawn_agent', 'multi_agent_v1__wait_agent',
      'get_goal', 'create_goal', 'update_goal',
    ]);
    expect(messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'Running the tool first.', tool_calls: [fn('exec_command', '{"cmd":"echo sluice-token > marker.txt && cat marker.txt"}', 'call_1')] },
      { role: 'tool', tool_call_id: 'call_1', content: expect.stringContaining('Output:\nsluice-token\n') },
    ]);
    expect(dropped).toEqual(['client_metadata', 'include', 'prompt_cache_key', 'tools:web_search']);
  });
});

describe('toChat: input items', () => {
  it.each<[string, unknown, object[], string[]]>([
    ['a string', 'hi', [{ role: 'user', content: 'hi' }], []],
    ['an assistant turn with output_text, then the calls it made', [
      { role: 'user', content: 'weather?' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me check.', annotations: [] }] },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'c1', output: '{"temp":21}' },
      { type: 'message', role: 'assistant', content: 'It is 21°C.' },
    ], [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: 'Let me check.', tool_calls: [fn('get_weather', '{"city":"Paris"}', 'c1')] },
      { role: 'tool', tool_call_id: 'c1', content: '{"temp":21}' },
      { role: 'assistant', content: 'It is 21°C.' },
    ], []],
    ['a system message after the first turn, kept in place', [
      { role: 'user', content: 'a' }, { role: 'system', content: 'b' }, { role: 'developer', content: [{ type: 'input_text', text: 'c' }] },
    ], [{ role: 'user', content: 'a' }, { role: 'system', content: 'b' }, { role: 'system', content: 'c' }], []],
    ['images by url, by file id, and a file', [{ role: 'user', content: [
      { type: 'input_text', text: 'look' }, { type: 'input_image', image_url: 'https://x/y.png', detail: 'low' },
      { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'original' }, { type: 'input_image', file_id: 'file_1' }, { type: 'input_file', file_id: 'file_2' },
    ] }], [{ role: 'user', content: [
      { type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
    ] }], ['content:input_file', 'content:input_image']],
    ['a user message whose only part a chat backend cannot take', [{ role: 'user', content: [{ type: 'input_file', file_id: 'file_2' }] }],
      [{ role: 'user', content: '' }], ['content:input_file']],
    ['a custom tool call and a local shell call, with their outputs', [
      { type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: '*** Begin Patch' },
      { type: 'custom_tool_call_output', call_id: 'c1', output: 'Done' },
      { type: 'local_shell_call', id: 'lsh_1', call_id: 'c2', status: 'completed', action: { type: 'exec', command: ['ls'] } },
      { type: 'local_shell_call_output', id: 'c2', output: 'a.txt' },
    ], [
      { role: 'assistant', content: null, tool_calls: [fn('apply_patch', '{"input":"*** Begin Patch"}', 'c1')] },
      { role: 'tool', tool_call_id: 'c1', content: 'Done' },
      { role: 'assistant', content: null, tool_calls: [fn('local_shell', '{"type":"exec","command":["ls"]}', 'c2')] },
      { role: 'tool', tool_call_id: 'c2', content: 'a.txt' },
    ], []],
    ['items only OpenAI runs, a reference and a kind it does not know', [
      { type: 'web_search_call', id: 'ws_1', status: 'completed' }, { id: 'msg_0' }, { type: 'teleport_call', id: 'x' }, { role: 'user', content: 'go on' },
    ], [{ role: 'user', content: 'go on' }], ['input:item_reference', 'input:other', 'input:web_search_call']],
  ])('%s', (_what, input, messages, dropped) => {
    const out = translate({ input });
    expect(out.messages).toEqual(messages);
    expect(out.dropped).toEqual(dropped);
  });

  it('continues from stored history, after the instructions and before the new input', () => {
    const history = [{ id: 'msg_1', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'first' }] },
      { id: 'msg_2', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'answer', annotations: [], logprobs: [] }] }];
    const body = { instructions: 'be brief', previous_response_id: 'resp_1', input: 'second' };
    expect(translate(body, { history: history as any }).messages).toEqual([
      { role: 'system', content: 'be brief' }, { role: 'user', content: [{ type: 'text', text: 'first' }] }, { role: 'assistant', content: 'answer' }, { role: 'user', content: 'second' },
    ]);
    expect(translate(body, { history: history as any }).dropped).toEqual([]);
    expect(translate(body).dropped).toEqual(['previous_response_id']);
  });

  it('offers the tools of an additional_tools item in stored history, after the request\'s own', () => {
    const history = [{ id: 'at_1', type: 'additional_tools', role: 'developer', tools: [{ type: 'custom', name: 'exec', description: 'Runs code.' }] }];
    const out = translate({ previous_response_id: 'resp_1', input: 'go on', tools: [{ type: 'function', name: 'get' }] }, { history: history as any });
    expect(out.messages).toEqual([{ role: 'user', content: 'go on' }]);
    expect(out.params.tools).toEqual([
      { type: 'function', function: { name: 'get' } },
      { type: 'function', function: { name: 'exec', description: 'Runs code.', parameters: customParameters(undefined) } },
    ]);
    expect(out.dropped).toEqual([]);
  });
});

describe('toChat: request fields', () => {
  it.each<[string, object, Record<string, unknown>, string[]]>([
    ['structured output (json_schema)', { text: { format: { type: 'json_schema', name: 'city', schema: { type: 'object' }, strict: true } } },
      { response_format: { type: 'json_schema', json_schema: { name: 'city', schema: { type: 'object' }, strict: true } } }, []],
    ['json_object', { text: { format: { type: 'json_object' }, verbosity: 'low' } }, { response_format: { type: 'json_object' } }, ['text.verbosity']],
    ['sampling, caps and the end user', { temperature: 0, top_p: 0.9, max_output_tokens: 64, user: 'u1', safety_identifier: 's1', service_tier: 'auto' },
      { temperature: 0, top_p: 0.9, max_tokens: 64, user: 'u1', service_tier: 'auto' }, ['safety_identifier']],
    ['reasoning effort beyond what chat servers take', { reasoning: { effort: 'minimal' } }, { reasoning_effort: 'low' }, []],
    ['the highest reasoning effort', { reasoning: { effort: 'xhigh', summary: 'detailed' } }, { reasoning_effort: 'high' }, []],
    ['an effort named like an Object member, passed on as given', { reasoning: { effort: 'constructor' } }, { reasoning_effort: 'constructor' }, []],
    ['what only OpenAI keeps', { store: true, metadata: { k: 'v' }, stream: true, truncation: 'auto', background: true, top_logprobs: 3 }, {}, ['background', 'top_logprobs', 'truncation']],
    ['what asks for nothing', { truncation: 'disabled', include: [], background: false, client_metadata: {}, top_logprobs: 0 }, {}, []],
    ['a chat server\'s own fields', { top_k: 20, repetition_penalty: 1.05, chat_template_kwargs: { enable_thinking: false } },
      { top_k: 20, repetition_penalty: 1.05, chat_template_kwargs: { enable_thinking: false } }, []],
    ['chat\'s own structure, which the translation writes', { messages: [{ role: 'user', content: 'other' }], n: 3 }, {}, []],
  ])('%s', (_what, fields, params, dropped) => {
    expect(translate({ input: 'x', ...fields })).toMatchObject({ params, dropped });
    expect(Object.keys(translate({ input: 'x', ...fields }).params).sort()).toEqual(Object.keys(params).sort());
  });

  const get = { type: 'function', name: 'get', parameters: { type: 'object' } };
  const put = { type: 'function', name: 'put' };
  const chatGet = { type: 'function', function: { name: 'get', parameters: { type: 'object' } } };
  const chatPatch = { type: 'function', function: { name: 'patch', parameters: customParameters(undefined) } };
  it.each<[string, object, Record<string, unknown>, string[]]>([
    ['a named function', { tools: [get, put], tool_choice: { type: 'function', name: 'put' } },
      { tools: [chatGet, { type: 'function', function: { name: 'put' } }], tool_choice: { type: 'function', function: { name: 'put' } } }, []],
    ['allowed tools: its mode over those tools only', { tools: [get, put], tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'get' }] } },
      { tools: [chatGet], tool_choice: 'required' }, []],
    ['a hosted tool', { tools: [get, { type: 'web_search' }], tool_choice: { type: 'web_search' }, parallel_tool_calls: false },
      { tools: [chatGet], parallel_tool_calls: false }, ['tool_choice', 'tools:web_search']],
    ['a named custom tool, in an additional_tools item', { input: [{ type: 'additional_tools', tools: [put, { type: 'custom', name: 'patch' }] }], tool_choice: { type: 'custom', name: 'patch' } },
      { tools: [{ type: 'function', function: { name: 'put' } }, chatPatch], tool_choice: { type: 'function', function: { name: 'patch' } } }, []],
    ['allowed tools naming a custom tool', { tools: [get, { type: 'custom', name: 'patch' }], tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'custom', name: 'patch' }] } },
      { tools: [chatPatch], tool_choice: 'auto' }, []],
    ['required, when no tool is left', { tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }], tool_choice: 'required', parallel_tool_calls: true },
      {}, ['tool_choice', 'tools:file_search']],
  ])('tool_choice: %s', (_what, fields, params, dropped) => {
    const out = translate({ input: 'x', ...fields } as object);
    expect(out.params).toEqual(params);
    expect(out.dropped).toEqual(dropped);
  });

  it('leaves the request it was given unchanged', () => {
    const req: ResponsesRequest = codexSecondTurn();
    const before = structuredClone(req);
    toChat(req);
    expect(req).toEqual(before);
  });
});
