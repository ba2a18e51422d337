// Anthropic's SDK (@anthropic-ai/sdk), used as its docs say, against the
// gateway's Messages API, on a backend the request is translated for (chat
// completions with tool calls and reasoning_content) and on one that serves
// Messages itself: messages.create and messages.stream with text, a tool-use
// round trip, extended thinking, and countTokens. The SDK's own stream reader
// checks the event order and rebuilds the message, so a frame out of place fails here.
import Anthropic from '@anthropic-ai/sdk';
import { AGENT_MODEL } from '../../support/agent-backend';
import { THINKING_SIGNATURE } from '../../support/agent-messages';
import { FINAL_PREFIX, PLAIN_ANSWER, roughTokens } from '../../support/agent-script';
import { READ_QUESTION, READ_TOOL, readRoundTrip } from '../../support/anthropic-round-trip';
import { MODES, startMessagesStack, type MessagesStack } from '../../support/messages-stack';

const READ_PATH = '/work/project/secret.txt';
const THOUGHT = 'The user wants the file; reading it is the first step.';
const RESULT = 'The secret line is 42.';
const tools = [READ_TOOL];
const question = READ_QUESTION;

describe.each(MODES)('@anthropic-ai/sdk through the gateway, %s backend', (mode, model) => {
  let stack: MessagesStack;
  let client: Anthropic;
  const native = mode === 'native';

  beforeAll(async () => {
    stack = await startMessagesStack({ command: 'true', readPath: READ_PATH, thinking: THOUGHT });
    client = new Anthropic({ baseURL: stack.gw.url, apiKey: stack.key, maxRetries: 0, timeout: 5_000 });
  });
  afterAll(() => stack?.close());

  /** The last request the backend got: a Messages body on native, a chat one on translated. */
  const sent = () => stack.backend.requests.at(-1)!;

  it('messages.create: a text answer with usage, the client\'s model and the gateway\'s request id', async () => {
    const { data: message, response, request_id: requestId } = await client.messages.create({ model, max_tokens: 256, messages: [{ role: 'user', content: 'Hi' }] }, { headers: { 'anthropic-beta': 'sluice-test-2025-01-01' } }).withResponse();
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model, stop_reason: 'end_turn', content: [{ type: 'text', text: PLAIN_ANSWER }] });
    expect(message.id).toMatch(/^msg_/);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(requestId).toBe(response.headers.get('x-request-id'));
    expect(requestId).toMatch(/./);
    expect(sent().url).toBe(native ? '/v1/messages' : '/v1/chat/completions');
    // The SDK's anthropic-version and anthropic-beta reach a backend that serves Messages as sent, and only that one.
    const { 'anthropic-version': version, 'anthropic-beta': beta } = sent().headers;
    expect({ version, beta }).toEqual(native ? { version: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), beta: 'sluice-test-2025-01-01' } : { version: undefined, beta: undefined });
    expect(sent().body).toMatchObject(native ? { model: AGENT_MODEL, max_tokens: 256 } : { model: AGENT_MODEL, max_tokens: 256, messages: [{ role: 'user', content: 'Hi' }] });
  });

  it('messages.stream: text as it comes, and the final message', async () => {
    const stream = client.messages.stream({ model, max_tokens: 256, messages: [{ role: 'user', content: 'Hi' }] });
    const pieces: string[] = [];
    stream.on('text', (text) => pieces.push(text));
    const message = await stream.finalMessage();
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe(PLAIN_ANSWER);
    expect(message).toMatchObject({ model, stop_reason: 'end_turn', content: [{ type: 'text', text: PLAIN_ANSWER }] });
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it.each([false, true])('a tool-use round trip (stream: %s)', async (streamed) => {
    const ask = (messages: Anthropic.MessageParam[]) => (streamed
      ? client.messages.stream({ model, max_tokens: 1024, messages, tools }).finalMessage()
      : client.messages.create({ model, max_tokens: 1024, messages, tools }));
    const use = await readRoundTrip(ask, READ_PATH, RESULT);
    // The backend got the call and its result in its own protocol's terms.
    const messages = sent().body.messages;
    if (native) expect(messages.at(-1).content).toEqual([{ type: 'tool_result', tool_use_id: use.id, content: RESULT }]);
    else expect(messages.slice(-2)).toEqual([expect.objectContaining({ role: 'assistant', tool_calls: [expect.objectContaining({ id: use.id })] }), { role: 'tool', tool_call_id: use.id, content: RESULT }]);
  });

  it.each([false, true])('extended thinking: the reasoning as a thinking block before the text (stream: %s)', async (streamed) => {
    const params = { model, max_tokens: 4096, thinking: { type: 'enabled' as const, budget_tokens: 2048 }, messages: [{ role: 'user' as const, content: 'Hi' }] };
    const thoughts: string[] = [];
    let message: Anthropic.Message;
    if (streamed) {
      const stream = client.messages.stream(params);
      stream.on('thinking', (delta) => thoughts.push(delta));
      message = await stream.finalMessage();
      expect(thoughts.join('')).toBe(THOUGHT);
    } else {
      message = await client.messages.create(params);
    }
    expect(message.content).toEqual([
      { type: 'thinking', thinking: THOUGHT, signature: native ? THINKING_SIGNATURE : '' },
      expect.objectContaining({ type: 'text', text: PLAIN_ANSWER }),
    ]);
    // A chat backend is asked to think through its chat template, at the effort the budget suggests.
    if (native) expect(sent().body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    else expect(sent().body).toMatchObject({ chat_template_kwargs: { enable_thinking: true }, reasoning_effort: 'low' });
  });

  it('a next turn carrying the thinking block back is answered (a chat backend has it dropped, and says so)', async () => {
    const params = { model, max_tokens: 4096, thinking: { type: 'enabled' as const, budget_tokens: 2048 }, tools };
    const first = await client.messages.create({ ...params, messages: [question] });
    expect(first.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    const use = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
    const { data: second, response } = await client.messages.create({ ...params, messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: RESULT }] }] }).withResponse();
    expect(second.content.at(-1)).toEqual(expect.objectContaining({ type: 'text', text: `${FINAL_PREFIX}\n${RESULT}` }));
    expect(response.headers.get('x-sluice-dropped')).toBe(native ? null : 'content.thinking');
    if (native) expect(sent().body.messages[1].content[0]).toEqual({ type: 'thinking', thinking: THOUGHT, signature: THINKING_SIGNATURE });
  });

  it(native ? 'countTokens: the backend\'s own count, relayed' : 'countTokens: the gateway\'s estimate, about four characters a token', async () => {
    const request = { model, system: 'a'.repeat(40), messages: [{ role: 'user' as const, content: 'b'.repeat(80) }] };
    const { data: counted, response } = await client.messages.countTokens(request).withResponse();
    const sent = stack.backend.requests.filter((r) => r.url.includes('count_tokens'));
    if (native) {
      expect(counted).toEqual({ input_tokens: roughTokens({ ...request, model: AGENT_MODEL }) });
      expect(sent).toHaveLength(1);
      expect(response.headers.get('x-sluice-estimated')).toBeNull();
    } else {
      expect(counted).toEqual({ input_tokens: 30 });
      expect(sent).toEqual([]);
      expect(response.headers.get('x-sluice-estimated')).toBe('true');
    }
    const withTools = await client.messages.countTokens({ model, tools, messages: [question] });
    expect(withTools.input_tokens).toBeGreaterThan(10);
  });
});
