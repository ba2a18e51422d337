import { parseMessagesRequest } from '../../../../src/protocols/messages/request';
import { toChat, type ToChatOptions } from '../../../../src/protocols/messages/to-chat';
import { GatewayError } from '../../../../src/contract/errors';
import { claudeCodeRequest, CLAUDE_CODE_TOOLS } from '../../../support/claude-code-request';

const minimal = { model: 'claude-x', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] };
const translate = (body: Record<string, unknown>, options?: ToChatOptions) => toChat(parseMessagesRequest({ ...minimal, ...body }), options);

describe('toChat: a Claude Code request', () => {
  const { messages, params, dropped } = toChat(parseMessagesRequest(claudeCodeRequest()));

  it('turns the conversation into chat messages, tool results before the rest of their turn', () => {
    expect(messages).toEqual([
      { role: 'system', content: "You are Claude Code, Anthropic's official CLI for Claude.\n\nYou are an interactive CLI tool that helps users with software engineering tasks." },
      { role: 'user', content: '<system-reminder>\nAs you answer, use the context below.\n</system-reminder>\n\nFix the failing test in src/sum.ts' },
      {
        role: 'assistant',
        content: "I'll read the file.",
        tool_calls: [{ id: 'toolu_01A', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/repo/src/sum.ts"}' } }],
      },
      { role: 'tool', tool_call_id: 'toolu_01A', content: '1\texport const sum = (a, b) => a - b;' },
      { role: 'system', content: 'The user switched to plan mode.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'toolu_01B', type: 'function', function: { name: 'Bash', arguments: '{"command":"npm test","timeout":120000}' } }],
      },
      { role: 'tool', tool_call_id: 'toolu_01B', content: 'Error: Exit code 1\nFAIL src/sum.test.ts' },
      { role: 'user', content: 'Keep going.' },
    ]);
  });

  it('maps the top-level fields to chat and vLLM names', () => {
    expect(params).toMatchObject({
      max_tokens: 32000,
      temperature: 1,
      user: 'user_0f3c_account_8d1e_session_42',
      tool_choice: 'auto',
      chat_template_kwargs: { enable_thinking: true },
      reasoning_effort: 'high',
    });
    expect(params).not.toHaveProperty('stream');
    const tools = params.tools as { type: string; function: { name: string; description: string; parameters: unknown } }[];
    expect(tools).toHaveLength(24);
    expect(tools[5]).toEqual({
      type: 'function',
      function: { name: 'Read', description: 'The Read tool. Use it when the task needs it.', parameters: CLAUDE_CODE_TOOLS[5].input_schema },
    });
  });

  it('names what a chat backend cannot use, and refuses none of it', () => {
    expect(dropped.sort()).toEqual(['cache_control', 'content.redacted_thinking', 'content.thinking', 'context_management']);
  });
});

describe('toChat: content', () => {
  it.each([
    ['a base64 image', { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBO' } }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBO' } }],
    ['a URL image', { type: 'image', source: { type: 'url', url: 'https://e.x/a.jpg' } }, { type: 'image_url', image_url: { url: 'https://e.x/a.jpg' } }],
  ])('sends %s as an image_url part beside the text', (_what, block, part) => {
    const { messages } = translate({ messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, block] }] });
    expect(messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, part] }]);
  });

  it('moves a tool result\'s images into the user message after the tool messages', () => {
    const { messages } = translate({
      messages: [{
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'a', content: [{ type: 'text', text: 'screenshot taken' }, { type: 'image', source: { type: 'url', url: 'https://e.x/s.png' } }] },
          { type: 'tool_result', tool_use_id: 'b', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }], is_error: true },
          { type: 'text', text: 'Look at it.' },
        ],
      }],
    });
    expect(messages).toEqual([
      { role: 'tool', tool_call_id: 'a', content: 'screenshot taken' },
      { role: 'tool', tool_call_id: 'b', content: 'Error: one\n\ntwo' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://e.x/s.png' } }, { type: 'text', text: 'Look at it.' }] },
    ]);
  });

  it('keeps a text document and drops what chat cannot carry, by name', () => {
    const { messages, dropped } = translate({
      messages: [{
        role: 'user',
        content: [
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBER' } },
          { type: 'image', source: { type: 'file', file_id: 'file_1' } },
          { type: 'search_result', source: 'https://e.x', title: 't', content: [] },
        ],
      }],
    });
    expect(messages).toEqual([{ role: 'user', content: 'notes' }]);
    expect(dropped.sort()).toEqual(['content.document', 'content.image.file', 'content.search_result']);
  });

  it('sends earlier thinking back as reasoning when asked', () => {
    const body = { messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 's' }, { type: 'text', text: 'a' }] }, { role: 'user', content: 'more' }] };
    expect(translate(body).messages[1]).toEqual({ role: 'assistant', content: 'a' });
    const kept = translate(body, { reasoningHistory: true });
    expect(kept.messages[1]).toEqual({ role: 'assistant', content: 'a', reasoning: 'hmm', reasoning_content: 'hmm' });
    expect(kept.dropped).toEqual([]);
  });

  it('sends no system message for an empty system', () => {
    expect(translate({ system: [] }).messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(translate({ system: '' }).messages).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('asks the backend to continue a final assistant message when the route says how, and names it dropped otherwise', () => {
    const prefill = { messages: [{ role: 'user', content: 'JSON please' }, { role: 'assistant', content: '{"' }] };
    const continued = translate(prefill, { assistantPrefix: { continue_final_message: true, add_generation_prompt: false } });
    expect(continued.params).toMatchObject({ continue_final_message: true, add_generation_prompt: false });
    expect(continued.messages.at(-1)).toEqual({ role: 'assistant', content: '{"' });
    expect(continued.dropped).toEqual([]);
    const plain = translate(prefill);
    expect(plain.params).not.toHaveProperty('continue_final_message');
    expect(plain.dropped).toEqual(['assistant_prefill']);
  });

  it('gives an assistant turn of only thinking an empty content', () => {
    const turns = [{ role: 'user', content: 'q' }, { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'x' }] }, { role: 'user', content: 'again' }];
    expect(translate({ messages: turns }).messages[1]).toEqual({ role: 'assistant', content: '' });
  });
});

describe('toChat: a tool-use round trip', () => {
  it('gives each tool_use its call and each tool_result its tool message, in order', () => {
    const { messages } = translate({
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { role: 'assistant', content: [
          { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_2', name: 'weather', input: { city: 'Rome', unit: 'C' } },
        ] },
        { role: 'user', content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '18C' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: '24C' }] },
        ] },
      ],
    });
    expect(messages).toEqual([
      { role: 'user', content: 'Weather in Paris and Rome?' },
      { role: 'assistant', content: null, tool_calls: [
        { id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
        { id: 'toolu_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome","unit":"C"}' } },
      ] },
      { role: 'tool', tool_call_id: 'toolu_1', content: '18C' },
      { role: 'tool', tool_call_id: 'toolu_2', content: '24C' },
    ]);
  });
});

const tool = { name: 'f', description: 'does f', input_schema: { type: 'object' } };

describe('toChat: parameters', () => {
  it.each([
    ['auto', { type: 'auto' }, { tool_choice: 'auto' }],
    ['any', { type: 'any' }, { tool_choice: 'required' }],
    ['tool', { type: 'tool', name: 'f' }, { tool_choice: { type: 'function', function: { name: 'f' } } }],
    ['none', { type: 'none' }, { tool_choice: 'none' }],
    ['auto without parallel calls', { type: 'auto', disable_parallel_tool_use: true }, { tool_choice: 'auto', parallel_tool_calls: false }],
    ['any without parallel calls', { type: 'any', disable_parallel_tool_use: true }, { tool_choice: 'required', parallel_tool_calls: false }],
  ])('maps tool_choice %s', (_what, choice, expected) => {
    const { params } = translate({ tools: [tool], tool_choice: choice });
    expect(params.tools).toEqual([{ type: 'function', function: { name: 'f', description: 'does f', parameters: { type: 'object' } } }]);
    expect({ tool_choice: params.tool_choice, parallel_tool_calls: params.parallel_tool_calls }).toEqual({ parallel_tool_calls: undefined, ...expected });
  });

  it.each([
    ['enabled with a small budget', { thinking: { type: 'enabled', budget_tokens: 2048 } }, { chat_template_kwargs: { enable_thinking: true }, reasoning_effort: 'low' }, []],
    ['enabled with a medium budget', { thinking: { type: 'enabled', budget_tokens: 10000 } }, { chat_template_kwargs: { enable_thinking: true }, reasoning_effort: 'medium' }, []],
    ['enabled with a large budget', { thinking: { type: 'enabled', budget_tokens: 31999 } }, { chat_template_kwargs: { enable_thinking: true }, reasoning_effort: 'high' }, []],
    ['adaptive', { thinking: { type: 'adaptive' } }, { chat_template_kwargs: { enable_thinking: true } }, []],
    ['adaptive, shown as the client asks', { thinking: { type: 'adaptive', display: 'omitted' } }, { chat_template_kwargs: { enable_thinking: true } }, ['thinking.display']],
    ['adaptive with an effort', { thinking: { type: 'adaptive' }, output_config: { effort: 'max' } }, { chat_template_kwargs: { enable_thinking: true }, reasoning_effort: 'high' }, []],
    ['disabled', { thinking: { type: 'disabled' } }, { chat_template_kwargs: { enable_thinking: false } }, []],
    ['a type chat has no switch for', { thinking: { type: 'between_tools' } }, {}, ['thinking']],
    ['an unknown effort', { output_config: { effort: 'extreme' } }, {}, ['output_config.effort']],
    ['an effort named like an Object member', { output_config: { effort: 'constructor' } }, {}, ['output_config.effort']],
  ])('maps thinking %s', (_what, body, expected, dropped) => {
    const out = translate(body);
    expect({ chat_template_kwargs: out.params.chat_template_kwargs, reasoning_effort: out.params.reasoning_effort }).toEqual({ chat_template_kwargs: undefined, reasoning_effort: undefined, ...expected });
    expect(out.dropped).toEqual(dropped);
  });

  it('maps sampling, stop sequences, the user and a JSON schema output', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } } };
    const { params, dropped } = translate({
      temperature: 0.3, top_p: 0.8, top_k: 20, stop_sequences: ['###', 'END'], metadata: { user_id: 'u-1' },
      output_config: { format: { type: 'json_schema', schema } },
    });
    expect(params).toEqual({
      max_tokens: 64, temperature: 0.3, top_p: 0.8, top_k: 20, stop: ['###', 'END'], user: 'u-1',
      response_format: { type: 'json_schema', json_schema: { name: 'output', schema } },
    });
    expect(dropped).toEqual([]);
  });

  it('drops server tools by name, and a tool_choice left with no tool to choose', () => {
    const out = translate({ tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }], tool_choice: { type: 'any' } });
    expect(out.params).not.toHaveProperty('tools');
    expect(out.params).not.toHaveProperty('tool_choice');
    expect(out.dropped).toEqual(['tools.web_search', 'tool_choice']);
  });

  it('refuses server tools when told to, naming the tool', () => {
    let caught: unknown;
    try {
      translate({ tools: [tool, { type: 'code_execution_20250825', name: 'code_execution' }] }, { serverTools: 'refuse' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(GatewayError);
    expect(caught).toMatchObject({ reason: 'invalid_request', param: 'tools[1]' });
  });

  it('keeps a tool\'s strict flag and names the tool fields it drops', () => {
    const out = translate({ tools: [{ ...tool, strict: true, defer_loading: true, input_examples: [{}], cache_control: { type: 'ephemeral' } }] });
    expect(out.params.tools).toEqual([{ type: 'function', function: { name: 'f', description: 'does f', parameters: { type: 'object' }, strict: true } }]);
    expect(out.dropped.sort()).toEqual(['cache_control', 'tools.defer_loading', 'tools.input_examples']);
  });

  it.each([
    ['context_management', { edits: [] }],
    ['container', 'c_1'],
    ['service_tier', 'auto'],
    ['mcp_servers', [{ type: 'url', url: 'https://e.x', name: 'm' }]],
    ['cache_control', { type: 'ephemeral' }],
  ])('drops the top-level field %s by name', (name, value) => {
    const out = translate({ [name]: value });
    expect(out.dropped).toEqual([name]);
    expect(out.params).not.toHaveProperty(name);
  });
});
