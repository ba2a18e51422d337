// The scripted agent backend's three wire protocols, read by the official
// SDKs (openai for Responses and chat completions, @anthropic-ai/sdk for
// Messages), streamed and not: their stream readers check the event order
// and rebuild the message, so a frame out of place fails here before a CLI
// or a translated route ever meets it. Each protocol plays both turns: a
// tool call, then an answer quoting the tool result.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { AGENT_MODEL, startAgentBackend, type AgentBackend } from '../../support/agent-backend';
import { FINAL_PREFIX, PREAMBLE } from '../../support/agent-script';
import { READ_TOOL, readRoundTrip } from '../../support/anthropic-round-trip';

const COMMAND = 'echo wire-ok';
const READ_PATH = '/work/project/secret.txt';
const RESULT = 'the tool said wire-ok';
const schema = { type: 'object' as const, properties: { cmd: { type: 'string' } }, required: ['cmd'] };

describe('agent backend wire protocols, read by the official SDKs', () => {
  let backend: AgentBackend;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    backend = await startAgentBackend({ command: COMMAND, readPath: READ_PATH });
    openai = new OpenAI({ baseURL: backend.base, apiKey: 'sk-test-wire', maxRetries: 0, timeout: 5_000 });
    anthropic = new Anthropic({ baseURL: backend.url, apiKey: 'sk-test-wire', maxRetries: 0, timeout: 5_000 });
  });
  afterAll(() => backend?.close());

  it.each([true, false])('Responses (stream: %s): a function call, then an answer quoting its output', async (stream) => {
    const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'exec_command', parameters: schema, strict: false }];
    const ask = (input: OpenAI.Responses.ResponseInput): Promise<OpenAI.Responses.Response> => (stream
      ? openai.responses.stream({ model: AGENT_MODEL, input, tools }).finalResponse()
      : openai.responses.create({ model: AGENT_MODEL, input, tools }));
    const first = await ask([{ role: 'user', content: 'Run it' }]);
    expect(first.status).toBe('completed');
    expect(first.output_text).toBe(PREAMBLE);
    const call = first.output.find((item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === 'function_call')!;
    expect(call).toMatchObject({ name: 'exec_command', call_id: expect.any(String) });
    expect(JSON.parse(call.arguments)).toEqual({ cmd: COMMAND });
    const second = await ask([{ role: 'user', content: 'Run it' }, call, { type: 'function_call_output', call_id: call.call_id, output: RESULT }]);
    expect(second.output_text).toBe(`${FINAL_PREFIX}\n${RESULT}`);
    expect(second.usage?.total_tokens).toBeGreaterThan(0);
  });

  it.each([true, false])('Messages (stream: %s): a Read tool_use, then an answer quoting its result', async (stream) => {
    const tools = [READ_TOOL];
    const ask = (messages: Anthropic.MessageParam[]) => (stream
      ? anthropic.messages.stream({ model: AGENT_MODEL, max_tokens: 1024, messages, tools }).finalMessage()
      : anthropic.messages.create({ model: AGENT_MODEL, max_tokens: 1024, messages, tools }));
    await readRoundTrip(ask, READ_PATH, [{ type: 'text', text: RESULT }]);
  });

  it.each([true, false])('chat completions (stream: %s): a tool call, then an answer quoting the tool message', async (stream) => {
    const tools: OpenAI.Chat.ChatCompletionTool[] = [{ type: 'function', function: { name: 'exec_command', parameters: schema } }];
    const ask = (messages: OpenAI.Chat.ChatCompletionMessageParam[]) => (stream
      ? openai.chat.completions.stream({ model: AGENT_MODEL, messages, tools, stream_options: { include_usage: true } }).finalChatCompletion()
      : openai.chat.completions.create({ model: AGENT_MODEL, messages, tools }));
    const question: OpenAI.Chat.ChatCompletionMessageParam = { role: 'user', content: 'Run it' };
    const first = await ask([question]);
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const message = first.choices[0].message;
    expect(message.content).toBe(PREAMBLE);
    const call = message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    expect(JSON.parse(call.function.arguments)).toEqual({ cmd: COMMAND });
    const second = await ask([question, { role: 'assistant', content: message.content, tool_calls: [call] }, { role: 'tool', tool_call_id: call.id, content: RESULT }]);
    expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: `${FINAL_PREFIX}\n${RESULT}` } });
    expect(second.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('answers count_tokens, the model lists in both shapes, and a request that offers no tool with plain text', async () => {
    expect((await anthropic.messages.countTokens({ model: AGENT_MODEL, messages: [{ role: 'user', content: 'hi' }] })).input_tokens).toBeGreaterThan(0);
    expect((await anthropic.models.list()).data.map((m) => m.id)).toEqual([AGENT_MODEL]);
    expect((await openai.models.list()).data.map((m) => m.id)).toEqual([AGENT_MODEL]);
    const title = await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'A title for this chat' }] });
    expect(title.content).toEqual([expect.objectContaining({ type: 'text', text: expect.any(String) })]);
    expect(backend.to('/v1/messages/count_tokens')).toHaveLength(1);
  });
});
