import { parseResponsesRequest } from '../../../../src/protocols/responses/request';
import { rejection } from '../../../support/rejection';
import { agentsRequest, capturedCodexRequest, codexRequest, codexSecondTurn } from '../../../support/responses-fixtures';

const paramOf = (body: unknown) => rejection(parseResponsesRequest, body).param;
const withInput = (input: unknown) => ({ model: 'm', input });

describe('parseResponsesRequest', () => {
  it.each([
    ['the Codex CLI (first turn)', codexRequest()],
    ['the Codex CLI (a turn with reasoning, namespaced calls and their results)', codexSecondTurn()],
    ['the Agents SDK', agentsRequest()],
    ['the Codex CLI as captured, its default model (tools in an additional_tools item, a custom tool call and its output)', capturedCodexRequest('default', 2)],
    ['the Codex CLI as captured, a model it does not know', capturedCodexRequest('named-model', 2)],
  ])('accepts a request of %s unchanged', (_who, body) => {
    expect(parseResponsesRequest(structuredClone(body))).toEqual(body);
  });

  it('keeps fields it does not know, at the top level and inside items and tools', () => {
    const body = {
      model: 'm', input: [{ type: 'message', role: 'user', content: 'hi', phase: 'final_answer' }],
      tools: [{ type: 'function', name: 'f', defer_loading: true }], top_k: 20, chat_template_kwargs: { enable_thinking: false },
    };
    expect(parseResponsesRequest(structuredClone(body))).toEqual(body);
  });

  it('accepts item, part and tool kinds newer than it knows', () => {
    const body = {
      model: 'm',
      input: [
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } },
        { id: 'msg_earlier' },
        { type: 'message', role: 'user', content: [{ type: 'input_file', file_id: 'file_1' }, { type: 'input_audio', input_audio: { data: 'AAAA' } }] },
      ],
      tools: [{ type: 'code_interpreter', container: { type: 'auto' } }, { type: 'custom', name: 'apply_patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: x' } }],
      tool_choice: { type: 'web_search_preview' },
    };
    expect(parseResponsesRequest(structuredClone(body))).toEqual(body);
  });

  it('takes a string input, or none when it continues an earlier response', () => {
    expect(parseResponsesRequest(withInput('hi')).input).toBe('hi');
    expect(parseResponsesRequest({ model: 'm', previous_response_id: 'resp_1' }).input).toBeUndefined();
    expect(rejection(parseResponsesRequest, { model: 'm' }).param).toBe('input');
  });

  it.each([
    ['a missing model', { input: 'x' }, 'model'],
    ['input of the wrong type', withInput(5), 'input'],
    ['a message without a known role', withInput([{ content: 'x' }]), 'input[0].role'],
    ['a message role that does not exist', withInput([{ role: 'user', content: 'x' }, { role: 'robot', content: 'x' }]), 'input[1].role'],
    ['a text part without text', withInput([{ role: 'user', content: [{ type: 'input_text' }] }]), 'input[0].content[0].text'],
    ['an image url that is not a string', withInput([{ role: 'user', content: [{ type: 'input_image', image_url: 5 }] }]), 'input[0].content[0].image_url'],
    ['a function call without call_id', withInput([{ type: 'function_call', name: 'f', arguments: '{}' }]), 'input[0].call_id'],
    ['a function call with object arguments', withInput([{ type: 'function_call', call_id: 'c', name: 'f', arguments: {} }]), 'input[0].arguments'],
    ['a function call output without output', withInput([{ type: 'function_call_output', call_id: 'c' }]), 'input[0].output'],
    ['a reasoning summary without text', withInput([{ type: 'reasoning', summary: [{ type: 'summary_text' }] }]), 'input[0].summary[0].text'],
    ['a function tool without a name', { ...withInput('x'), tools: [{ type: 'function' }] }, 'tools[0].name'],
    ['a namespace function without a name', { ...withInput('x'), tools: [{ type: 'namespace', name: 'n', tools: [{ type: 'function' }] }] }, 'tools[0].tools[0].name'],
    ['a custom tool without a name', { ...withInput('x'), tools: [{ type: 'custom', description: 'd' }] }, 'tools[0].name'],
    ['a grammar without its definition', { ...withInput('x'), tools: [{ type: 'custom', name: 'c', format: { type: 'grammar', syntax: 'lark' } }] }, 'tools[0].format.definition'],
    ['an additional_tools item without tools', withInput([{ type: 'additional_tools', role: 'developer' }]), 'input[0].tools'],
    ['a custom tool without a name in an additional_tools namespace',
      withInput([{ role: 'user', content: 'x' }, { type: 'additional_tools', tools: [{ type: 'namespace', name: 'functions', tools: [{ type: 'custom' }] }] }]), 'input[1].tools[0].tools[0].name'],
    ['a custom tool call namespace that is not a string', withInput([{ type: 'custom_tool_call', call_id: 'c', name: 'exec', input: 'x', namespace: 5 }]), 'input[0].namespace'],
    ['a tool_choice custom tool without a name', { ...withInput('x'), tool_choice: { type: 'custom' } }, 'tool_choice.name'],
    ['a tool_choice function without a name', { ...withInput('x'), tool_choice: { type: 'function' } }, 'tool_choice.name'],
    ['a tool_choice word that does not exist', { ...withInput('x'), tool_choice: 'sometimes' }, 'tool_choice'],
    ['a json_schema format without a name', { ...withInput('x'), text: { format: { type: 'json_schema', schema: {} } } }, 'text.format.name'],
    ['max_output_tokens of zero', { ...withInput('x'), max_output_tokens: 0 }, 'max_output_tokens'],
    ['temperature as a string', { ...withInput('x'), temperature: 'hot' }, 'temperature'],
    ['metadata with a number value', { ...withInput('x'), metadata: { a: 1 } }, 'metadata.a'],
    ['truncation that does not exist', { ...withInput('x'), truncation: 'sometimes' }, 'truncation'],
    ['stream as a string', { ...withInput('x'), stream: 'yes' }, 'stream'],
  ])('refuses %s, naming it', (_what, body, param) => {
    expect(paramOf(body)).toBe(param);
  });

  it('says what to fix', () => {
    expect(rejection(parseResponsesRequest, withInput([{ type: 'function_call', name: 'f', arguments: '{}' }])).message).toBe('input[0].call_id is required.');
    expect(rejection(parseResponsesRequest, { ...withInput('x'), temperature: 'hot' }).message).toBe('temperature must be a number, got a string.');
    expect(rejection(parseResponsesRequest, []).message).toBe('The request body must be a JSON object.');
  });
});
